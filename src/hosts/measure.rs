//! One host release × its quit paths × R repeats: install (once), configure an isolated
//! HOME, launch the host with the recorder as its one server, drive the quit, watch by
//! pidfd, read the log, and kill everything the run left (hosts, daemons, servers) by pid.
//!
//! A host whose run leaves a daemon that detached itself (a session of its own: Codex's
//! app-server, Cline's hub) is measured in both states a user meets: a first run (no
//! daemon) and, in the same HOME with the last first run's daemon left up, a second run
//! (the daemon may adopt the server). The daemon is killed after the second runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::analyze::{self, RunFacts, RunReading};
use super::catalogue::{Drive, HostSpec, QuitPath, TuiQuit};
use super::reading::{word, Ev, Role};
use super::standin::StandIn;
use super::start::{launch, launch_in, screen_line, stalled, ConfiguredServer, Launched};
use super::HostError;
use crate::os::hostproc::{self, HostProc};

/// How long a host gets to start its server.
pub(super) const START_LIMIT: Duration = Duration::from_secs(40);
/// How long a host gets to quit once told.
pub(super) const QUIT_LIMIT: Duration = Duration::from_secs(10);
/// How long the server is watched after the host exited ("walked away" after this).
pub const WALK_WINDOW: Duration = Duration::from_secs(3);
/// A TUI's input is live a moment after its servers are up (and its tree has settled: see
/// [`wait_quiet`]).
const SETTLE: Duration = Duration::from_millis(500);

/// One run of one path.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Run {
    pub reading: Option<RunReading>,
    /// Why there is no reading (never started the server, did not quit, ...).
    pub failure: Option<String>,
    /// Processes the host left behind after it exited (its daemons), killed by pid.
    pub daemons: Vec<String>,
}

/// All runs of one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PathRuns {
    pub trigger: String,
    pub runs: Vec<Run>,
    /// Run with the daemon an earlier run left already up (a user's second session).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub daemon_up: bool,
}

/// Where a run's HOME comes from.
#[derive(Clone, Copy)]
enum Home<'a> {
    /// A fresh one; with `keep_daemons`, a daemon that detached itself is left up in it.
    Fresh { keep_daemons: bool },
    /// The HOME of an earlier run whose daemon is still up.
    Shared(&'a Path),
}

/// A HOME with the host's daemon still up in it: the daemon (and whatever carries its
/// run's marker) is killed, then the HOME removed, when dropped.
struct Kept {
    _daemons: hostproc::Daemons,
    dir: tempfile::TempDir,
}

/// One release measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Measurement {
    pub host: String,
    pub package: String,
    pub version: String,
    pub date: String,
    pub repeats: u32,
    pub paths: Vec<PathRuns>,
    pub wall_ms: u64,
    pub installed: bool,
}

pub struct Options<'a> {
    pub repeats: u32,
    /// Only these triggers (empty: all).
    pub only: &'a [String],
    /// The suite's binary, which runs the recorder.
    pub helper: &'a Path,
}

fn wait_for(log: &Path, limit: Duration, pred: impl Fn(&[analyze::RecorderLine]) -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if pred(&analyze::parse_log(&text)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

fn read_events(log: &Path) -> Vec<analyze::RecorderLine> {
    analyze::parse_log(&std::fs::read_to_string(log).unwrap_or_default())
}

/// The recorder's processes once it has started: the server, its child (same group) and
/// grandchild (own session), and the server's parent.
struct Recorders {
    server: Option<i32>,
    child: Option<i32>,
    grandchild: Option<i32>,
    parent: Option<i32>,
}

impl Recorders {
    fn read(events: &[analyze::RecorderLine]) -> Self {
        let tree = events.iter().find(|e| e.ev == Ev::Tree);
        let start = events
            .iter()
            .find(|e| e.role == Role::Server && e.ev == Ev::Start);
        Self {
            server: start.map(|e| e.pid),
            child: tree.and_then(|t| t.child),
            grandchild: tree.and_then(|t| t.grandchild),
            parent: start.and_then(|e| e.ppid),
        }
    }

    fn pids(&self) -> Vec<i32> {
        [self.server, self.child, self.grandchild]
            .into_iter()
            .flatten()
            .collect()
    }
}

type DeathWatch = Option<std::sync::mpsc::Receiver<u64>>;

/// Quits the host the way `path` says. Returns when the quit was triggered and when the
/// host exited (CLOCK_MONOTONIC ns), or why it did not.
fn quit(
    host: &mut HostProc,
    log: &Path,
    path: &QuitPath,
    api: &StandIn,
) -> (u64, Result<u64, String>) {
    let mut trigger_ns = crate::os::mono_ns();
    let limit = match path.drive {
        Drive::OneShot(_) => START_LIMIT,
        Drive::Tui(quit) => {
            let ready = |ev: &[analyze::RecorderLine]| {
                ev.iter().any(|e| {
                    e.role == Role::Server
                        && e.ev == Ev::Reply
                        && e.method.as_deref() == Some("tools/list")
                })
            };
            wait_for(log, START_LIMIT, ready);
            wait_quiet(host.pid(), SETTLE, START_LIMIT);
            let from = crate::os::mono_ns();
            // Anything the recorder logs from now on is the host ending its session.
            let began = || {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                analyze::parse_log(&text)
                    .iter()
                    .any(|e| e.t_ns >= from && e.is_delivery())
            };
            trigger_ns = quit_tui(host, quit, &began);
            QUIT_LIMIT
        }
    };
    let exit = host.wait_exit(limit).ok_or_else(|| {
        let seen = api.seen();
        format!(
            "the host did not quit within {} s: screen {:?}; model API requests: {}",
            limit.as_secs(),
            screen_line(&host.screen_text()),
            if seen.is_empty() {
                "none".into()
            } else {
                seen.join(", ")
            }
        )
    });
    (trigger_ns, exit)
}

/// Waits at least `min`, then until the host's tree has settled: its own CPU time over the
/// last half second under a tenth of a CPU (time it waited for a CPU does not count, so a
/// loaded machine only makes it wait longer), at most `cap`. A TUI reads its input once its
/// start-up work is done; how long that takes is the machine's, not a fixed sleep's.
pub(super) fn wait_quiet(root: i32, min: Duration, cap: Duration) {
    const WINDOW: Duration = Duration::from_millis(500);
    const QUIET_NS: u64 = 50_000_000;
    let started = Instant::now();
    std::thread::sleep(min);
    let mut sampler = crate::os::procfs::TreeSampler::new(root);
    let mut last = sampler.sample().cpu_ns;
    while started.elapsed() < cap {
        std::thread::sleep(WINDOW);
        let now = sampler.sample().cpu_ns;
        if now.saturating_sub(last) < QUIET_NS {
            return;
        }
        last = now;
    }
}

/// The processes of the run still alive after the host exited, other than the host, its
/// terminal (its shell, a tmux server) and the recorder: its daemons.
fn daemons_left(l: &Launched, recorders: &[i32]) -> Vec<hostproc::MarkedProcess> {
    let (host_pid, shell) = (l.host.pid(), l.host.spawned_pid());
    let terminal = l.host.terminal_pids();
    hostproc::leftovers(&l.marker)
        .into_iter()
        .filter(|x| !recorders.contains(&x.pid) && x.pid != host_pid)
        .filter(|x| !terminal.contains(&x.pid) && x.ppid != shell)
        .collect()
}

fn describe(x: &hostproc::MarkedProcess) -> String {
    format!("pid {} (parent {}): {}", x.pid, x.ppid, x.cmdline)
}

fn one_run(
    spec: &HostSpec,
    exe: &Path,
    path: &QuitPath,
    api: &StandIn,
    opts: &Options,
    home: Home,
) -> Result<(Run, Option<Kept>), HostError> {
    let server = ConfiguredServer::Recorder(opts.helper);
    let mut l = match home {
        Home::Fresh { .. } => launch(spec, exe, path, server, api)?,
        Home::Shared(dir) => launch_in(spec, exe, path, server, api, dir)?,
    };
    let host_pid = l.host.pid();
    let mut run = Run::default();
    let started = wait_for(&l.log, START_LIMIT, |ev| {
        ev.iter()
            .any(|e| e.role == Role::Server && e.ev == Ev::Tree)
    });
    if !started {
        run.failure = Some(stalled(&l.host.screen_text(), api));
        let _ = hostproc::kill_all(&l.marker, &[host_pid]);
        return Ok((run, None));
    }
    let rec = Recorders::read(&read_events(&l.log));
    let recorder_pids = rec.pids();
    let host_tree = host_tree(host_pid, &recorder_pids);
    let watch = |p: Option<i32>| -> DeathWatch { p.and_then(hostproc::watch_death) };
    let (ws, wc, wg) = (watch(rec.server), watch(rec.child), watch(rec.grandchild));
    let (trigger_ns, exit) = quit(&mut l.host, &l.log, path, api);
    let host_exit_ns = exit.as_ref().ok().copied();
    run.failure = exit.err();
    // Watch the server until it dies or the walk-away window, counted from the host's exit
    // (the moment `quit` returns), passes.
    let server_death = ws.as_ref().and_then(|rx| rx.recv_timeout(WALK_WINDOW).ok());
    std::thread::sleep(Duration::from_millis(60));
    let take = |rx: &DeathWatch| rx.as_ref().and_then(|r| r.try_recv().ok());
    let (child_death, grand_death) = (take(&wc), take(&wg));
    let parent_outlived_host = outlived(rec.parent, host_pid, host_exit_ns);
    let left = daemons_left(&l, &recorder_pids);
    run.daemons = left.iter().map(describe).collect();
    let facts = RunFacts {
        events: read_events(&l.log),
        host_pid,
        host_tree,
        parent_outlived_host,
        trigger_ns,
        host_exit_ns,
        server_death_ns: server_death,
        child_death_ns: child_death,
        grandchild_death_ns: grand_death,
        walk_window_s: WALK_WINDOW.as_secs_f64(),
    };
    if run.failure.is_none() {
        run.reading = Some(analyze::read_run(&timed(facts, path)));
    }
    let kept = clean_up(&mut l, &left, &recorder_pids, home);
    Ok((run, kept))
}

/// The host as it was when the server started (a Node wrapper's native binary is the host
/// too), the recorder aside.
fn host_tree(host_pid: i32, recorder_pids: &[i32]) -> Vec<i32> {
    crate::os::procfs::descendants(host_pid)
        .into_iter()
        .map(|p| p.pid)
        .filter(|p| !recorder_pids.contains(p))
        .collect()
}

/// A one-shot command's quit is its own: timed from the server's last reply.
fn timed(mut f: RunFacts, path: &QuitPath) -> RunFacts {
    if matches!(path.drive, Drive::OneShot(_)) {
        if let Some(last) = f
            .events
            .iter()
            .rfind(|e| e.role == Role::Server && e.ev == Ev::Reply)
        {
            f.trigger_ns = last.t_ns;
        }
    }
    f.events.retain(|e| e.ev != Ev::Unknown);
    f
}

/// Kills what the run left, by pid, but a daemon that detached itself (leads a session of
/// its own: what a user's next session finds), which is kept up, with its HOME, when the
/// second runs are to use it.
fn clean_up(
    l: &mut Launched,
    left: &[hostproc::MarkedProcess],
    recorders: &[i32],
    home: Home,
) -> Option<Kept> {
    let detached: Vec<i32> = left
        .iter()
        .filter(|x| x.sid == x.pid)
        .map(|x| x.pid)
        .collect();
    if !matches!(home, Home::Fresh { keep_daemons: true }) || detached.is_empty() {
        let _ = hostproc::kill_all(&l.marker, recorders);
        return None;
    }
    let _ = hostproc::kill_all_but(&l.marker, recorders, &detached);
    let daemons = l.host.spare(&detached);
    l.dir.take().map(|dir| Kept {
        _daemons: daemons,
        dir,
    })
}

/// Measures one installed release.
pub fn measure(
    spec: &HostSpec,
    exe: &Path,
    version: &str,
    installed: bool,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Measurement, HostError> {
    let started = Instant::now();
    let api = StandIn::start().map_err(|e| HostError::io(Path::new("127.0.0.1"), e))?;
    let mut paths = Vec::new();
    for path in spec.paths {
        if !opts.only.is_empty() && !opts.only.iter().any(|o| o == path.trigger) {
            continue;
        }
        let one = |i: u32, home: Home, progress: &mut dyn FnMut(&str)| {
            let (run, kept) = one_run(spec, exe, path, &api, opts, home)?;
            let state = if matches!(home, Home::Shared(_)) {
                " (daemon up)"
            } else {
                ""
            };
            let (id, trigger) = (spec.id, path.trigger);
            progress(&format!(
                "{id}@{version} {trigger}{state} #{}: {}",
                i + 1,
                summary(&run)
            ));
            Ok::<_, HostError>((run, kept))
        };
        paths.extend(path_runs(path, opts.repeats.max(1), progress, &one)?);
    }
    Ok(Measurement {
        host: spec.id.to_string(),
        package: spec.package.to_string(),
        version: version.to_string(),
        date: jiff::Timestamp::now().strftime("%Y-%m-%d").to_string(),
        repeats: opts.repeats,
        paths,
        wall_ms: started.elapsed().as_millis() as u64,
        installed,
    })
}

type OneRun<'a> =
    dyn Fn(u32, Home, &mut dyn FnMut(&str)) -> Result<(Run, Option<Kept>), HostError> + 'a;

/// One path's runs: the first runs, and, when the last of them left a daemon up, the
/// second runs in its HOME (a user's next session).
fn path_runs(
    path: &QuitPath,
    repeats: u32,
    progress: &mut dyn FnMut(&str),
    one: &OneRun,
) -> Result<Vec<PathRuns>, HostError> {
    let mut runs = Vec::new();
    let mut kept = None;
    for i in 0..repeats {
        let last = i + 1 == repeats;
        let (r, k) = one(i, Home::Fresh { keep_daemons: last }, progress)?;
        kept = k;
        let stop = r
            .failure
            .as_deref()
            .is_some_and(|f| f.starts_with("not measurable"));
        runs.push(r);
        if stop {
            break;
        }
    }
    let trigger = path.trigger.to_string();
    let mut out = vec![PathRuns {
        trigger: trigger.clone(),
        runs,
        daemon_up: false,
    }];
    if let Some(k) = kept {
        let mut runs = Vec::new();
        for i in 0..repeats {
            runs.push(one(i, Home::Shared(k.dir.path()), progress)?.0);
        }
        out.push(PathRuns {
            trigger,
            runs,
            daemon_up: true,
        });
    }
    Ok(out)
}

/// One line for a run.
pub fn summary(run: &Run) -> String {
    if let Some(f) = &run.failure {
        return f.clone();
    }
    let Some(r) = &run.reading else {
        return "no reading".into();
    };
    let mut parts: Vec<String> = r
        .deliveries
        .iter()
        .map(|d| {
            format!(
                "{}→{} @{:.0}ms ({})",
                d.action,
                word(&d.to),
                d.at_ms,
                d.from
            )
        })
        .collect();
    if let Some(w) = &r.walked_away {
        parts.push(format!("walked away: {w}"));
    }
    if parts.is_empty() {
        parts.push("nothing".into());
    }
    format!(
        "[{} {} {}] {}",
        word(&r.plumbing.stdio),
        word(&r.plumbing.group),
        r.plumbing.via,
        parts.join(", ")
    )
}

/// A server's parent that outlives the host only while it finishes its own exit (a
/// launcher's native binary that got the terminal's hang-up too) is not the host's daemon:
/// one still alive this long after the host exited is.
const PARENT_SETTLE: Duration = Duration::from_secs(1);

/// Whether the server's parent, when it is not the host, outlived the host's exit (counted
/// from it: after a walk-away window the parent has had its time).
fn outlived(parent: Option<i32>, host_pid: i32, host_exit_ns: Option<u64>) -> bool {
    host_exit_ns.is_some_and(|exit| {
        let since = Duration::from_nanos(crate::os::mono_ns().saturating_sub(exit));
        parent.is_some_and(|p| p != host_pid && alive_after(p, PARENT_SETTLE.saturating_sub(since)))
    })
}

/// Whether `pid` is still alive (not a zombie) `window` from now.
fn alive_after(pid: i32, window: Duration) -> bool {
    let alive = || crate::os::procfs::proc_info(pid).is_some_and(|i| !i.is_zombie());
    let end = Instant::now() + window;
    while Instant::now() < end {
        if !alive() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    alive()
}

/// Whether, within `window`, the host exits or begins ending the server's session.
fn exits_or_begins(host: &mut HostProc, window: Duration, began: &dyn Fn() -> bool) -> bool {
    let end = Instant::now() + window;
    while Instant::now() < end {
        if host.wait_exit(Duration::from_millis(20)).is_some() || began() {
            return true;
        }
    }
    false
}

/// The time between the two Ctrl-C of "Ctrl-C twice", as a user types them.
pub const CTRL_C_GAP: Duration = Duration::from_millis(300);

/// Where a measurement's JSON is kept (history reads these).
pub fn saved_path(cache: &Path, host: &str, version: &str) -> PathBuf {
    cache
        .join("hosts")
        .join("measurements")
        .join(format!("{host}@{version}.json"))
}

/// Quits a host's TUI the way `quit` says and returns when the quit was triggered
/// (CLOCK_MONOTONIC ns): for a typed command, the moment its Enter is typed. `began` says
/// whether the host has begun ending the server's session (a Ctrl-D that ends it is the
/// trigger even when the host takes longer than the confirmation window to exit).
pub(super) fn quit_tui(host: &mut HostProc, quit: TuiQuit, began: &dyn Fn() -> bool) -> u64 {
    let mut trigger_ns = crate::os::mono_ns();
    match quit {
        TuiQuit::Command(c) => {
            host.type_slowly(c.as_bytes(), Duration::from_millis(30));
            std::thread::sleep(Duration::from_millis(400));
            trigger_ns = crate::os::mono_ns();
            host.type_slowly(b"\r", Duration::ZERO);
        }
        // The quit is the key press that completes it: a second Ctrl-D, where the host asks
        // for one to confirm. Ctrl-C twice starts at the first: a host may begin ending its
        // servers before the second (Cline closes stdin), which then comes as the user types.
        TuiQuit::CtrlD => {
            host.type_slowly(b"\x04", Duration::ZERO);
            if !exits_or_begins(host, Duration::from_millis(300), began) {
                trigger_ns = crate::os::mono_ns();
                host.type_slowly(b"\x04", Duration::ZERO);
            }
        }
        TuiQuit::CtrlCTwice => {
            host.type_slowly(b"\x03", Duration::ZERO);
            std::thread::sleep(CTRL_C_GAP);
            host.type_slowly(b"\x03", Duration::ZERO);
        }
        TuiQuit::TerminalClosed => host.close_terminal(),
        TuiQuit::Sigterm => host.signal(crate::model::SignalName::Term),
        TuiQuit::Sigkill => host.signal(crate::model::SignalName::Kill),
    }
    trigger_ns
}
