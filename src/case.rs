//! One case, run in its own supervisor process (`mcp-shutdown __case`).
//!
//! The supervisor is a child subreaper, so a server orphaned by its client is reparented to
//! it (not to init) and stays observable; it owns every process below it, so it can kill them
//! all at the end. Its stdin is a lifeline from the harness: when the harness goes away for
//! any reason, even SIGKILL, the lifeline reaches EOF and the supervisor kills its whole tree.
//!
//! Process tree of a case:
//! ```text
//! harness ── __case (subreaper) ──┬── server                   (driver = direct)
//!                                 └── __client ── server       (driver = client)
//! ```

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::budgets::Budgets;
use crate::manifest::{InflightRequest, Launch, Protocol};
use crate::mcp::{self, HandshakeFailure, HandshakeInfo, StdoutRecord, WireEvent};
use crate::observation::{leftovers, CaseError, CaseResult, ErrorKind, StepRecord};
use crate::process::{self, mono_ns, ms_between, ExitStatus, Pidfd, ProcInfo, SignalName};
use crate::scenario::{stage_after, Action, Driver, Scenario, Stage, Target};

/// Everything a supervisor needs, sent by the harness as one JSON line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseSpec {
    pub server: String,
    pub launch: Launch,
    pub protocol: Protocol,
    pub scenario: Scenario,
    pub budgets: Budgets,
    pub inflight: InflightRequest,
}

impl CaseSpec {
    /// Hard deadline for the whole case: beyond it the supervisor aborts.
    pub fn deadline_ms(&self) -> u64 {
        // Waits stretch by up to their own length under load (see `wait_step`).
        self.budgets.handshake_ms
            + 2 * self.scenario.max_wait_ms()
            + self.budgets.prompt_ms
            + 30_000
    }
}

/// Messages from the client process to the supervisor, one JSON line each.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
enum ClientEvent {
    Spawned {
        pid: u32,
    },
    Ready {
        handshake: HandshakeInfo,
        stdout: StdoutRecord,
    },
    Failed {
        error: CaseError,
        stdout: StdoutRecord,
    },
    Exiting {
        at_ns: u64,
    },
}

const STDERR_TAIL: u64 = 4096;

/// Held while this process starts a child. `abort` takes it and never gives it back, so no
/// process can be born after the final kill loop has looked.
static SPAWN_LOCK: Mutex<()> = Mutex::new(());

fn spawn_guard() -> std::sync::MutexGuard<'static, ()> {
    SPAWN_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Lines of the supervisor ↔ harness protocol (besides the spec and the result).
pub const NEED_CPU: &str = "need-cpu";
pub const FREE_CPU: &str = "free-cpu";
pub const GO: &str = "go";

/// The supervisor's side of the CPU-token protocol. Start-up and the window from a trigger
/// to the exit are CPU-heavy (an interpreter starting or tearing down) and timed; the harness
/// lets only as many run at once as there are CPUs, so that other cases cannot stretch them.
/// Idle waits (grace periods, orphan watching) hold no token.
struct Link {
    go: Receiver<()>,
    deadline_ms: u64,
}

/// The case deadline, pushed forward whenever the harness grants a token, so that time spent
/// queueing for one never counts against the case.
static DEADLINE_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

impl Link {
    fn say(line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    /// Blocks until the harness grants a CPU token.
    fn need_cpu(&self) {
        Self::say(NEED_CPU);
        if self.go.recv().is_err() {
            abort("the harness went away");
        }
        DEADLINE_NS.store(
            mono_ns() + self.deadline_ms * 1_000_000,
            std::sync::atomic::Ordering::SeqCst,
        );
    }

    fn free_cpu(&self) {
        Self::say(FREE_CPU);
    }
}

fn stderr_tail(path: &Path) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(STDERR_TAIL)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// A launched server with its reader running.
struct Running {
    child: Child,
    pidfd: Pidfd,
    stdin: Option<ChildStdin>,
    record: Arc<Mutex<StdoutRecord>>,
    rx: Receiver<WireEvent>,
    started_ns: u64,
}

/// Starts the server: own process group, stdout to a reader thread, stderr to a file.
fn launch(launch: &Launch, stderr_path: &Path, stdin_null: bool) -> Result<Running, CaseError> {
    let stderr = File::create(stderr_path).map_err(|e| CaseError {
        kind: ErrorKind::Harness,
        message: format!("cannot create {}: {e}", stderr_path.display()),
    })?;
    let mut cmd = Command::new(&launch.command);
    cmd.args(&launch.args)
        .current_dir(&launch.cwd)
        .envs(&launch.env)
        .stdin(if stdin_null {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    // Its own group, so that group signals reach it and its children but never the harness.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let started_ns = mono_ns();
    let spawning = spawn_guard();
    let spawned = cmd.spawn();
    drop(spawning);
    let mut child = spawned.map_err(|e| CaseError {
        kind: ErrorKind::SpawnFailed,
        message: if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "command `{}` not found (cwd {})",
                launch.command,
                launch.cwd.display()
            )
        } else {
            format!("cannot start `{}`: {e}", launch.command)
        },
    })?;
    let pidfd = Pidfd::open(child.id()).map_err(|e| CaseError {
        kind: ErrorKind::Harness,
        message: format!("pidfd_open: {e}"),
    })?;
    let record = Arc::new(Mutex::new(StdoutRecord::default()));
    let (tx, rx) = channel();
    let stdout = child.stdout.take().expect("stdout is piped");
    let rec = record.clone();
    std::thread::spawn(move || {
        // It wakes on EOF in the middle of the server's exit: it must not preempt it.
        process::batch_this_thread();
        mcp::read_stdout(stdout, rec, tx)
    });
    Ok(Running {
        stdin: child.stdin.take(),
        child,
        pidfd,
        record,
        rx,
        started_ns,
    })
}

/// Runs the handshake and, if it fails, says why in terms of what the process did.
fn handshake(
    run: &mut Running,
    protocol: Protocol,
    budgets: &Budgets,
    stderr_path: &Path,
) -> Result<HandshakeInfo, CaseError> {
    let stdin = run.stdin.as_mut().expect("stdin open during handshake");
    let failure = match mcp::handshake(
        stdin,
        &run.rx,
        protocol,
        Duration::from_millis(budgets.handshake_ms),
        run.started_ns,
    ) {
        Ok(info) => return Ok(info),
        Err(f) => f,
    };
    // A crash shows up as closed stdout or a failed write; give the exit a moment to land.
    let settle = match failure {
        HandshakeFailure::Timeout { .. } => Duration::ZERO,
        _ => Duration::from_millis(500),
    };
    let exited = run.pidfd.wait_exit(settle).ok().flatten().is_some();
    let record = run.record.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut message = failure.to_string();
    let kind = if exited {
        let status = run.child.try_wait().ok().flatten().map(ExitStatus::from);
        message = format!(
            "the server exited ({}) before completing the handshake",
            status.map_or_else(|| "status unknown".into(), |s| s.to_string())
        );
        ErrorKind::ExitedBeforeHandshake
    } else if matches!(failure, HandshakeFailure::Timeout { .. }) {
        ErrorKind::HandshakeTimeout
    } else {
        ErrorKind::HandshakeFailed
    };
    if let Some(v) = &record.first_violation {
        message.push_str(&format!(
            "; its stdout had {} line(s) that are not JSON-RPC, first ({:?}): {}",
            record.violations, v.kind, v.excerpt
        ));
    } else if record.bytes == 0 {
        message.push_str("; it wrote nothing to stdout");
    }
    let tail = stderr_tail(stderr_path);
    if let Some(last) = tail.lines().rev().find(|l| !l.trim().is_empty()) {
        message.push_str(&format!("; last stderr line: {}", last.trim()));
    }
    Err(CaseError { kind, message })
}

/// Performs one ladder action on the server. Returns the trigger time (just before the
/// syscall that does it).
fn perform(action: &Action, run: &mut Running) -> u64 {
    let t = mono_ns();
    match action {
        Action::Nothing => {}
        Action::CloseStdin => drop(run.stdin.take()),
        Action::Signal {
            signal,
            to: Target::Tree,
        } => {
            let _ = run.pidfd.signal(*signal);
            for p in process::descendants(run.pidfd.pid()) {
                process::signal_pid(p.pid, *signal);
            }
        }
        Action::Signal {
            signal,
            to: Target::Process,
        } => {
            let _ = run.pidfd.signal(*signal);
        }
        Action::Signal {
            signal,
            to: Target::Group,
        } => {
            let _ = process::signal_group(run.pidfd.pid(), *signal);
        }
        Action::ClientExit | Action::ClientKill => unreachable!("client actions are not direct"),
    }
    t
}

/// Live (non-zombie) descendants of this supervisor, excluding `except`.
fn live_tree(except: &[i32]) -> Vec<ProcInfo> {
    process::descendants(process::own_pid())
        .into_iter()
        .filter(|p| !p.is_zombie() && !except.contains(&p.pid))
        .collect()
}

/// After the server ended, gives what it started up to the prompt budget to go away.
/// Polling `/proc` is fine here: it bounds a wait, it does not time an exit.
fn settle_descendants(prompt_ms: u64, except: &[i32]) -> Vec<ProcInfo> {
    let deadline = mono_ns() + prompt_ms * 1_000_000;
    loop {
        process::reap_any_children();
        let live = live_tree(except);
        if live.is_empty() || mono_ns() >= deadline {
            return live;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Ended {
    stage: Stage,
    runqueue_ns: u64,
    trigger_ns: Option<u64>,
    exit_ns: Option<u64>,
    exit_ms: Option<f64>,
    steps: Vec<StepRecord>,
    diagnostics: Option<process::Diagnostics>,
}

/// How a wait for the server's exit ended.
struct Waited {
    /// When the kernel reported the exit, if it happened within the wait.
    exit_ns: Option<u64>,
    /// How long the server's threads were runnable but waiting for a CPU during the wait
    /// (sampled every slice, so the last slice before the exit may be missed): time the
    /// machine's load took, not the server.
    runqueue_ns: u64,
}

/// Samples taken just *before* a trigger: reading `/proc` while the server is exiting could
/// slow its exit down, so nothing heavy happens between the trigger and the first slice.
struct Baseline {
    queue: process::RunqueueSampler,
    rq_start: u64,
    cpu: u64,
}

impl Baseline {
    fn take(server: &Pidfd) -> Self {
        let mut queue = process::RunqueueSampler::new(server.pid());
        let rq_start = queue.sample();
        Self {
            queue,
            rq_start,
            cpu: process::tree_cpu_ns(server.pid()),
        }
    }
}

/// Waits for the server's exit during a step. Every wait counts only the server's own time:
/// time its tree spent runnable but waiting for a CPU extends the wait (up to doubling it), so
/// a busy machine cannot push a server to the next step. The CPU token is held for at most
/// the prompt window after the trigger, and given back early once the tree sits idle: a
/// process that neither exits nor computes is not racing anyone for a CPU.
fn wait_step(
    server: &Pidfd,
    wait_ms: u64,
    prompt_ms: u64,
    link: &Link,
    token: &mut bool,
    before: Baseline,
    watcher: Option<&std::sync::mpsc::Receiver<u64>>,
) -> Waited {
    const SLICE_MS: u64 = 50;
    /// Below this much CPU per slice (5 %) the tree counts as idle.
    const IDLE_NS: u64 = 2_500_000;
    let start = mono_ns();
    let elapsed_ms = || (mono_ns() - start) / 1_000_000;
    let window = wait_ms.min(prompt_ms);
    let Baseline {
        mut queue,
        rq_start,
        mut cpu,
    } = before;
    let mut rq = 0u64;

    let give_back = |token: &mut bool| {
        if *token {
            link.free_cpu();
            *token = false;
        }
    };
    loop {
        let limit = wait_ms + (rq / 1_000_000).min(wait_ms);
        let left = Duration::from_millis(SLICE_MS.min(limit.saturating_sub(elapsed_ms())));
        let exit = match watcher {
            Some(w) => w.recv_timeout(left).ok(),
            None => server.wait_exit(left).ok().flatten(),
        };
        if exit.is_some() || elapsed_ms() >= limit {
            give_back(token);
            return Waited {
                exit_ns: exit,
                runqueue_ns: rq,
            };
        }
        rq = queue.sample().saturating_sub(rq_start);
        if *token {
            let now = process::tree_cpu_ns(server.pid());
            let idle = now.saturating_sub(cpu) < IDLE_NS;
            cpu = now;
            if idle || elapsed_ms() >= window {
                give_back(token);
            }
        }
    }
}

/// Drives the ladder until the server exits or the ladder is exhausted. `origin` is the
/// trigger time when it precedes the first step (a server started with stdin at EOF).
fn run_ladder(
    scenario: &Scenario,
    run: &mut Running,
    prompt_ms: u64,
    link: &Link,
    origin: Option<u64>,
) -> Ended {
    let mut steps = Vec::new();
    let mut diagnostics = None;
    let mut t0 = origin;
    // The caller holds the CPU token from the launch; `wait_step` gives it back.
    let mut token = true;
    // The exit is stamped by a watcher thread started before any trigger, so neither
    // sampling here nor starting a thread can delay the stamp.
    let watcher = run.pidfd.watch().ok();
    for step in &scenario.steps {
        if let (Some(prev), None) = (
            scenario
                .steps
                .get(steps.len().wrapping_sub(1))
                .filter(|_| !steps.is_empty()),
            &diagnostics,
        ) {
            // It should have exited by now: record what holds it before escalating.
            let mut d = process::diagnose(run.pidfd.pid());
            if let Action::Signal { signal, .. } = prev.action {
                d.hint = process::signal_hint(d.runtime.as_deref(), signal);
            }
            diagnostics = Some(d);
        }
        let baseline = Baseline::take(&run.pidfd);
        let t = perform(&step.action, run);
        let origin = *t0.get_or_insert(t);
        steps.push(StepRecord {
            action: step.action,
            at_ms: ms_between(origin, t),
        });
        let waited = wait_step(
            &run.pidfd,
            step.wait_ms,
            prompt_ms,
            link,
            &mut token,
            baseline,
            watcher.as_ref(),
        );
        if let Some(exit_ns) = waited.exit_ns {
            return Ended {
                stage: stage_after(&step.action),
                runqueue_ns: waited.runqueue_ns,
                trigger_ns: Some(origin),
                exit_ns: Some(exit_ns),
                exit_ms: Some(ms_between(origin, exit_ns)),
                steps,
                diagnostics,
            };
        }
    }
    Ended {
        stage: Stage::Survived,
        runqueue_ns: 0,
        trigger_ns: t0,
        exit_ns: None,
        exit_ms: None,
        steps,
        diagnostics: diagnostics.or_else(|| Some(process::diagnose(run.pidfd.pid()))),
    }
}

/// The id of the request the `inflight` scenario leaves in flight.
const INFLIGHT_ID: i64 = 3;

/// Did a response to `id` arrive before stdout closed? Waits briefly for the reader to drain.
fn answered(rx: &Receiver<WireEvent>, id: i64) -> bool {
    let deadline = mono_ns() + 500_000_000;
    while let Ok(ev) = rx.recv_timeout(Duration::from_nanos(deadline.saturating_sub(mono_ns()))) {
        match ev {
            WireEvent::Message(m)
                if m.get("id").and_then(serde_json::Value::as_i64) == Some(id) =>
            {
                return true
            }
            WireEvent::Eof => return false,
            WireEvent::Message(_) => {}
        }
    }
    false
}

fn base_result(spec: &CaseSpec) -> CaseResult {
    let mut r = CaseResult::failed(
        &spec.server,
        &spec.scenario.id,
        ErrorKind::Harness,
        String::new(),
    );
    r.error = None;
    r
}

/// The `direct` driver: the supervisor is the server's parent.
fn run_direct(spec: &CaseSpec, stderr_path: &Path, link: &Link) -> CaseResult {
    let mut result = base_result(spec);
    link.need_cpu();
    let mut run = match launch(&spec.launch, stderr_path, spec.scenario.stdin_null) {
        Ok(r) => r,
        Err(e) => {
            link.free_cpu();
            result.error = Some(e);
            return result;
        }
    };
    // The token is held on through the trigger: the gap between handshake and ending must
    // not depend on load (some servers finish starting up after the handshake).
    let hs = if spec.scenario.stdin_null {
        Ok(None)
    } else {
        handshake(&mut run, spec.protocol, &spec.budgets, stderr_path).map(Some)
    };
    match hs {
        Ok(h) => result.handshake = h,
        Err(e) => {
            link.free_cpu();
            result.error = Some(e);
            finish(&mut result, &run.record, stderr_path, &[], &[]);
            return result;
        }
    }
    if !spec.scenario.stdin_null && run.pidfd.has_exited() {
        link.free_cpu();
        let status = run.child.wait().ok().map(ExitStatus::from);
        result.exit_status = status;
        result.error = Some(CaseError {
            kind: ErrorKind::ExitedBeforeEnd,
            message: format!(
                "the server exited ({}) right after the handshake, before the session was ended",
                status.map_or_else(|| "status unknown".into(), |s| s.to_string())
            ),
        });
        finish(&mut result, &run.record, stderr_path, &[], &[]);
        return result;
    }
    let before = live_tree(&[]);
    // Nothing is started from this thread any more (children would inherit the class): from
    // here on its wake-ups must not preempt the server (the watcher thread stamps the exit).
    process::batch_this_thread();
    if spec.scenario.inflight {
        let req = serde_json::json!({"jsonrpc": "2.0", "id": INFLIGHT_ID, "method": spec.inflight.method, "params": spec.inflight.params});
        if let Some(stdin) = run.stdin.as_mut() {
            let _ = writeln!(stdin, "{req}").and_then(|_| stdin.flush());
        }
    }
    let origin = spec.scenario.stdin_null.then_some(run.started_ns);
    let ended = run_ladder(
        &spec.scenario,
        &mut run,
        spec.budgets.prompt_ms,
        link,
        origin,
    );
    result.stage = Some(ended.stage);
    result.exit_ms = ended.exit_ms;
    result.trigger_ns = ended.trigger_ns;
    result.exit_ns = ended.exit_ns;
    result.runqueue_ms = ended.exit_ns.map(|_| ended.runqueue_ns as f64 / 1e6);
    result.steps = ended.steps;
    result.diagnostics = ended.diagnostics;
    if ended.stage == Stage::Survived && spec.scenario.unbounded {
        result.note = Some(format!(
            "this client's last wait has no end: it would wait forever (the harness stopped after {} ms)",
            spec.scenario.steps.last().map_or(0, |s| s.wait_ms)
        ));
    }
    if spec.scenario.inflight {
        result.inflight_answered = Some(answered(&run.rx, INFLIGHT_ID));
    }
    if ended.stage != Stage::Survived {
        result.exit_status = run.child.wait().ok().map(ExitStatus::from);
    }
    let server = run.pidfd.pid();
    let alive = settle_descendants(spec.budgets.prompt_ms, &[server]);
    finish(&mut result, &run.record, stderr_path, &alive, &before);
    result
}

/// The `client` driver: a separate client process is the server's parent and dies.
fn run_via_client(spec: &CaseSpec, stderr_path: &Path, helper: &Path, link: &Link) -> CaseResult {
    let mut result = base_result(spec);
    let action = spec
        .scenario
        .steps
        .first()
        .map(|s| s.action)
        .unwrap_or(Action::ClientExit);
    let observe_ms = spec
        .scenario
        .steps
        .first()
        .map_or(spec.budgets.observe_ms, |s| s.wait_ms);
    let spawning = spawn_guard();
    let spawned = Command::new(helper)
        .arg("__client")
        .arg(stderr_path)
        .arg(if action == Action::ClientKill {
            "crash"
        } else {
            "exit"
        })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    drop(spawning);
    let mut client = match spawned {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(CaseError {
                kind: ErrorKind::Harness,
                message: format!("cannot start the client helper {}: {e}", helper.display()),
            });
            return result;
        }
    };
    let client_pidfd = Pidfd::open(client.id()).ok();
    // Kept open: `go` on it tells an `exit` client when to exit.
    let mut client_stdin = client.stdin.take().expect("piped");
    // The client launches the server as soon as it has the spec: that is the start-up phase.
    link.need_cpu();
    let _ = writeln!(
        client_stdin,
        "{}",
        serde_json::to_string(spec).expect("spec serializes")
    );
    let _ = client_stdin.flush();
    let mut events = BufReader::new(client.stdout.take().expect("piped")).lines();
    let mut next = || -> Option<ClientEvent> { serde_json::from_str(&events.next()?.ok()?).ok() };
    let mut server: Option<Pidfd> = None;
    let mut record = StdoutRecord::default();
    let mut ready = false;
    while let Some(ev) = next() {
        match ev {
            ClientEvent::Spawned { pid } => server = Pidfd::open(pid).ok(),
            ClientEvent::Failed { error, stdout } => {
                result.error = Some(error);
                record = stdout;
                break;
            }
            ClientEvent::Ready { handshake, stdout } => {
                result.handshake = Some(handshake);
                record = stdout;
                ready = true;
                break;
            }
            ClientEvent::Exiting { .. } => break,
        }
    }
    let (Some(server), true) = (server, ready) else {
        link.free_cpu();
        if result.error.is_none() {
            result.error = Some(CaseError {
                kind: ErrorKind::Harness,
                message: "the client helper ended without reporting a handshake".into(),
            });
        }
        let _ = client.kill();
        let _ = client.wait();
        finish(
            &mut result,
            &Arc::new(Mutex::new(record)),
            stderr_path,
            &[],
            &[],
        );
        return result;
    };
    let client_pid = client.id() as i32;
    let before = live_tree(&[client_pid]);
    // As in `run_direct`: this thread's wake-ups must not preempt the exiting server.
    process::batch_this_thread();
    let watcher = server.watch().ok();
    let baseline = Baseline::take(&server);
    let t0 = if action == Action::ClientKill {
        let t = mono_ns();
        match &client_pidfd {
            Some(fd) => {
                let _ = fd.signal(SignalName::Kill);
            }
            None => {
                let _ = client.kill();
            }
        }
        t
    } else {
        let _ = writeln!(client_stdin, "{GO}");
        let _ = client_stdin.flush();
        match next() {
            Some(ClientEvent::Exiting { at_ns }) => at_ns,
            _ => mono_ns(),
        }
    };
    // Once the client is reaped, its orphans are certainly ours.
    let _ = client.wait();
    result.steps = vec![StepRecord { action, at_ms: 0.0 }];
    result.trigger_ns = Some(t0);
    let left = observe_ms.saturating_sub(ms_between(t0, mono_ns()) as u64);
    let mut token = true;
    let waited = wait_step(
        &server,
        left,
        spec.budgets.prompt_ms,
        link,
        &mut token,
        baseline,
        watcher.as_ref(),
    );
    match waited.exit_ns {
        Some(exit_ns) => {
            result.exit_ns = Some(exit_ns);
            result.runqueue_ms = Some(waited.runqueue_ns as f64 / 1e6);
            result.stage = Some(stage_after(&action));
            result.exit_ms = Some(ms_between(t0, exit_ns));
            result.exit_status = server.reap();
        }
        None => {
            result.stage = Some(Stage::Survived);
            result.diagnostics = Some(process::diagnose(server.pid()));
        }
    }
    let alive = settle_descendants(
        if result.stage == Some(Stage::Survived) {
            0
        } else {
            spec.budgets.prompt_ms
        },
        &[server.pid()],
    );
    finish(
        &mut result,
        &Arc::new(Mutex::new(record)),
        stderr_path,
        &alive,
        &before,
    );
    result
}

fn finish(
    result: &mut CaseResult,
    record: &Arc<Mutex<StdoutRecord>>,
    stderr_path: &Path,
    alive: &[ProcInfo],
    before: &[ProcInfo],
) {
    result.leftovers = leftovers(alive, before);
    // Everything still running is killed now; the survivors were recorded above.
    process::kill_all_descendants();
    result.stdout = record.lock().unwrap_or_else(|p| p.into_inner()).clone();
    result.stderr_tail = stderr_tail(stderr_path);
}

/// Entry point of `mcp-shutdown __case`: reads a [`CaseSpec`] line from stdin, runs it, prints
/// a [`CaseResult`] line to stdout. Never leaves a process behind.
pub fn supervisor_main(helper: &Path) -> i32 {
    // Before any thread or child exists: everything this case starts inherits the mark.
    std::env::set_var(
        process::CASE_MARK,
        format!("{}-{}", process::own_pid(), mono_ns()),
    );
    if let Err(e) = process::become_subreaper() {
        say_err(&format!("mcp-shutdown: cannot become a subreaper: {e}"));
        return 70;
    }
    let mut lifeline = BufReader::new(std::io::stdin());
    let mut line = String::new();
    if lifeline.read_line(&mut line).is_err() || line.trim().is_empty() {
        say_err("mcp-shutdown __case: expected a case spec on stdin");
        return 2;
    }
    let spec: CaseSpec = match serde_json::from_str(&line) {
        Ok(s) => s,
        Err(e) => {
            say_err(&format!("mcp-shutdown __case: bad case spec: {e}"));
            return 2;
        }
    };
    // Abort paths: the harness went away (lifeline EOF), a signal, or the hard deadline.
    let (go_tx, go_rx) = channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        while matches!(lifeline.read_line(&mut line), Ok(n) if n > 0) {
            if line.trim() == GO {
                let _ = go_tx.send(());
            }
            line.clear();
        }
        abort("the harness went away");
    });
    let link = Link {
        go: go_rx,
        deadline_ms: spec.deadline_ms(),
    };
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ]) {
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                abort("interrupted");
            }
        });
    }
    DEADLINE_NS.store(
        mono_ns() + spec.deadline_ms() * 1_000_000,
        std::sync::atomic::Ordering::SeqCst,
    );
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_millis(200));
        if mono_ns() > DEADLINE_NS.load(std::sync::atomic::Ordering::SeqCst) {
            abort("case deadline exceeded");
        }
    });

    let dir = match tempfile::Builder::new()
        .prefix("mcp-shutdown-case-")
        .tempdir()
    {
        Ok(d) => d,
        Err(e) => {
            say_err(&format!("mcp-shutdown __case: temp dir: {e}"));
            return 70;
        }
    };
    let stderr_path = dir.path().join("server.stderr");
    let result = match spec.scenario.driver {
        Driver::Direct => run_direct(&spec, &stderr_path, &link),
        Driver::Client => run_via_client(&spec, &stderr_path, helper, &link),
    };
    process::kill_all_descendants();
    let out = serde_json::to_string(&result).expect("results serialize");
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{out}");
    let _ = stdout.flush();
    0
}

/// Kills the whole case and exits. Called from any thread (signal, lifeline, deadline, or
/// the main thread when the harness is gone); only the first call acts, later ones wait for
/// the exit. Nothing here may panic: a panicking thread would die without ending the process
/// (the harness's stderr may already be closed, so `eprintln!` is not an option).
fn abort(why: &str) -> ! {
    static ABORTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if ABORTING.swap(true, std::sync::atomic::Ordering::SeqCst) {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    // No process may be born after the kill loop has looked.
    std::mem::forget(spawn_guard());
    process::kill_all_descendants();
    say_err(&format!("mcp-shutdown __case: aborted: {why}"));
    std::process::exit(3)
}

/// One line to stderr, ignoring errors (a closed pipe must not panic).
fn say_err(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Entry point of `mcp-shutdown __client STDERR_PATH exit|crash`: a stand-in for a real MCP
/// client process. It launches the server, does the handshake, reports, and then exits
/// without closing anything (`exit`) or waits to be killed (`crash`).
pub fn client_main(stderr_path: &Path, mode: &str) -> i32 {
    // If the supervisor dies, so does the stand-in client (never the server: not inherited).
    let _ = process::die_with_parent(SignalName::Kill);
    let mut line = String::new();
    if std::io::stdin().read_line(&mut line).is_err() {
        return 2;
    }
    let Ok(spec) = serde_json::from_str::<CaseSpec>(&line) else {
        return 2;
    };
    let mut out = std::io::stdout().lock();
    let mut emit = |ev: &ClientEvent| {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(ev).expect("events serialize")
        );
        let _ = out.flush();
    };
    let mut run = match launch(&spec.launch, stderr_path, spec.scenario.stdin_null) {
        Ok(r) => r,
        Err(error) => {
            emit(&ClientEvent::Failed {
                error,
                stdout: StdoutRecord::default(),
            });
            return 0;
        }
    };
    emit(&ClientEvent::Spawned {
        pid: run.child.id(),
    });
    match handshake(&mut run, spec.protocol, &spec.budgets, stderr_path) {
        Ok(handshake) => {
            let stdout = run.record.lock().unwrap_or_else(|p| p.into_inner()).clone();
            emit(&ClientEvent::Ready { handshake, stdout });
        }
        Err(error) => {
            let stdout = run.record.lock().unwrap_or_else(|p| p.into_inner()).clone();
            emit(&ClientEvent::Failed { error, stdout });
            // Leave the server to the supervisor, which kills the whole tree.
            std::process::exit(0);
        }
    }
    if mode == "crash" {
        // Keep reading the server's output like a live client until we are killed.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    // Wait for the supervisor's word, then exit with the server's pipes still open: the
    // kernel closes them as the process ends.
    let mut go = String::new();
    let _ = std::io::stdin().read_line(&mut go);
    emit(&ClientEvent::Exiting { at_ns: mono_ns() });
    std::process::exit(0)
}

/// Where the helper binary is, for the harness's own `__case` and `__client` processes.
pub fn default_helper() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MCP_SHUTDOWN_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_stem().is_some_and(|s| s == "mcp-shutdown") {
        return Some(exe);
    }
    // From a test binary in target/<profile>/deps/, the binary is one level up.
    for dir in exe.ancestors().skip(1).take(2) {
        let cand = dir.join("mcp-shutdown");
        if cand.is_file() {
            return Some(cand);
        }
    }
    // Installed (`cargo install`), for crates that use this one as a dev-dependency.
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("mcp-shutdown"))
            .find(|p| p.is_file())
    })
}
