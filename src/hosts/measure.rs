//! One host release × its quit paths × R repeats: install (once), configure an isolated
//! HOME, launch the host with the recorder as its one server, drive the quit, watch by
//! pidfd, read the log, and kill everything the run left (hosts, daemons, servers) by pid.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::analyze::{self, RunFacts, RunReading};
use super::catalogue::{Drive, HostSpec, QuitPath, TuiQuit};
use super::standin::StandIn;
use super::HostError;
use crate::os::hostproc::{self, HostProc, Launch};

/// How long a host gets to start its server.
const START_LIMIT: Duration = Duration::from_secs(40);
/// How long a host gets to quit once told.
const QUIT_LIMIT: Duration = Duration::from_secs(10);
/// How long the server is watched after the host exited ("walked away" after this).
pub const WALK_WINDOW: Duration = Duration::from_secs(3);
/// A TUI's input is live a moment after its servers are up.
const SETTLE: Duration = Duration::from_millis(1500);

/// One run of one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    pub helper: &'a Path,
    /// The server to launch instead of the recorder (`check --real-host`), with the
    /// recorder still wrapped around it? No: the user's command, run as is.
    pub server: Option<&'a [String]>,
}

fn wait_for(log: &Path, limit: Duration, pred: impl Fn(&[analyze::Event]) -> bool) -> bool {
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

fn screen_line(text: &str) -> String {
    let plain = strip_ansi(text);
    plain
        .lines()
        .map(str::trim)
        .filter(|l| l.len() > 3)
        .rfind(|l| l.chars().any(char::is_alphabetic))
        .unwrap_or("")
        .chars()
        .take(120)
        .collect()
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            match chars.peek() {
                Some('[') => {
                    chars.next();
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    for d in chars.by_ref() {
                        if d == '\u{7}' {
                            break;
                        }
                    }
                }
                _ => {
                    chars.next();
                }
            }
        } else if c == '\r' {
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    out
}

/// A stall that asks for credentials is not a failure of the measurement.
fn stalled(screen: &str, api: &StandIn) -> String {
    let line = screen_line(screen);
    let low = strip_ansi(screen).to_lowercase();
    let creds = [
        "log in",
        "login",
        "sign in",
        "api key",
        "authenticate",
        "auth method",
    ];
    if creds.iter().any(|c| low.contains(c)) {
        return format!("not measurable without credentials: {line}");
    }
    let seen = api.seen();
    format!(
        "never started the server: screen {line:?}; model API requests: {}",
        if seen.is_empty() {
            "none".into()
        } else {
            seen.join(", ")
        }
    )
}

fn one_run(
    spec: &HostSpec,
    exe: &Path,
    path: &QuitPath,
    api: &StandIn,
    opts: &Options,
) -> Result<Run, HostError> {
    let dir = tempfile::Builder::new()
        .prefix("mcp-shutdown-host-")
        .tempdir()
        .map_err(|e| HostError::io(Path::new("/tmp"), e))?;
    let home = dir.path().join("home");
    let cwd = dir.path().join("work");
    let log = dir.path().join("recorder.log");
    for d in [&home, &cwd] {
        std::fs::create_dir_all(d).map_err(|e| HostError::io(d, e))?;
    }
    let recorder: Vec<String> = match opts.server {
        Some(cmd) => cmd.to_vec(),
        None => vec![
            opts.helper.display().to_string(),
            "__recorder".into(),
            "--log".into(),
            log.display().to_string(),
        ],
    };
    let setup = spec.setup(&home, &cwd, &recorder, &api.base_url());
    for (file, text) in &setup.files {
        if let Some(p) = file.parent() {
            std::fs::create_dir_all(p).map_err(|e| HostError::io(p, e))?;
        }
        std::fs::write(file, text).map_err(|e| HostError::io(file, e))?;
    }
    let mut env: BTreeMap<String, OsString> = setup
        .env
        .into_iter()
        .map(|(k, v)| (k, OsString::from(v)))
        .collect();
    env.insert(
        crate::os::recorder::LIFETIME_ENV.into(),
        OsString::from("90"),
    );
    env.insert(
        crate::os::recorder::LOG_ENV.into(),
        log.clone().into_os_string(),
    );
    let marker = format!("{}-{}", std::process::id(), crate::os::mono_ns());
    let (args, pty): (Vec<String>, bool) = match path.drive {
        Drive::OneShot(a) => (a.iter().map(|s| s.to_string()).collect(), false),
        Drive::Tui(_) => (spec.tui_args.iter().map(|s| s.to_string()).collect(), true),
    };
    let mut host = HostProc::spawn(&Launch {
        program: exe,
        args: &args,
        env: &env,
        cwd: &cwd,
        marker: &marker,
        pty,
    })
    .map_err(|e| HostError::io(exe, e))?;
    let host_pid = host.pid();
    let ready = |ev: &[analyze::Event]| {
        ev.iter()
            .any(|e| e.role == "server" && e.ev == "reply" && e.raw["method"] == "tools/list")
    };
    let measured_server = opts.server.is_none();
    let started = measured_server
        && wait_for(&log, START_LIMIT, |ev| {
            ev.iter().any(|e| e.role == "server" && e.ev == "tree")
        });
    let mut run = Run {
        reading: None,
        failure: None,
        daemons: Vec::new(),
    };
    if !started && measured_server {
        run.failure = Some(stalled(&host.screen_text(), api));
        let _ = hostproc::kill_all(&marker, &[host_pid]);
        return Ok(run);
    }
    let events = analyze::parse_log(&std::fs::read_to_string(&log).unwrap_or_default());
    let tree = events.iter().find(|e| e.ev == "tree");
    let pid_of = |k: &str| tree.and_then(|t| t.raw[k].as_i64()).map(|p| p as i32);
    let server_pid = events
        .iter()
        .find(|e| e.role == "server" && e.ev == "start")
        .map(|e| e.pid);
    let (child_pid, grand_pid) = (pid_of("child"), pid_of("grandchild"));
    let host_tree: Vec<i32> = crate::os::procfs::descendants(host_pid)
        .into_iter()
        .map(|p| p.pid)
        .filter(|p| Some(*p) != server_pid && Some(*p) != child_pid && Some(*p) != grand_pid)
        .collect();
    let watch = |p: Option<i32>| p.and_then(hostproc::watch_death);
    let (ws, wc, wg) = (watch(server_pid), watch(child_pid), watch(grand_pid));
    let recorder_pids: Vec<i32> = [server_pid, child_pid, grand_pid]
        .into_iter()
        .flatten()
        .collect();
    let mut trigger_ns = crate::os::mono_ns();
    match path.drive {
        Drive::OneShot(_) => {}
        Drive::Tui(quit) => {
            wait_for(&log, START_LIMIT, ready);
            std::thread::sleep(SETTLE);
            trigger_ns = quit_tui(&mut host, quit);
        }
    }
    let limit = match path.drive {
        Drive::OneShot(_) => START_LIMIT,
        Drive::Tui(_) => QUIT_LIMIT,
    };
    let host_exit_ns = host.wait_exit(limit);
    if host_exit_ns.is_none() {
        run.failure = Some(format!(
            "the host did not quit within {} s: screen {:?}",
            limit.as_secs(),
            screen_line(&host.screen_text())
        ));
    }
    // Watch the server until it dies or the walk-away window passes.
    let mut server_death = None;
    if let Some(rx) = &ws {
        server_death = rx.recv_timeout(WALK_WINDOW + Duration::from_secs(2)).ok();
    }
    std::thread::sleep(Duration::from_millis(60));
    let take =
        |rx: &Option<std::sync::mpsc::Receiver<u64>>| rx.as_ref().and_then(|r| r.try_recv().ok());
    let (child_death, grand_death) = (take(&wc), take(&wg));
    let parent = events
        .iter()
        .find(|e| e.role == "server" && e.ev == "start")
        .and_then(|e| e.raw["ppid"].as_i64())
        .map(|p| p as i32);
    let parent_outlived_host = host_exit_ns.is_some()
        && parent.is_some_and(|p| {
            p != host_pid && crate::os::procfs::proc_info(p).is_some_and(|i| !i.is_zombie())
        });
    let after: Vec<String> = hostproc::leftovers(&marker)
        .into_iter()
        .filter(|l| !recorder_pids.contains(&l.pid) && l.pid != host_pid)
        .filter(|l| l.pid != host.spawned_pid() && l.ppid != host.spawned_pid())
        .map(|l| format!("pid {} (parent {}): {}", l.pid, l.ppid, l.cmdline))
        .collect();
    run.daemons = after;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let mut events = analyze::parse_log(&text);
    if matches!(path.drive, Drive::OneShot(_)) {
        if let Some(last) = events
            .iter()
            .rfind(|e| e.role == "server" && e.ev == "reply")
        {
            trigger_ns = last.t_ns;
        }
    }
    events.retain(|e| !e.ev.is_empty());
    let facts = RunFacts {
        events,
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
        run.reading = Some(analyze::read_run(&facts));
    }
    let _ = hostproc::kill_all(&marker, &recorder_pids);
    drop(host);
    Ok(run)
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
        let mut runs = Vec::new();
        for i in 0..opts.repeats.max(1) {
            let run = one_run(spec, exe, path, &api, opts)?;
            progress(&format!(
                "{}@{version} {} #{}: {}",
                spec.id,
                path.trigger,
                i + 1,
                summary(&run)
            ));
            let stop = run
                .failure
                .as_deref()
                .is_some_and(|f| f.starts_with("not measurable"));
            runs.push(run);
            if stop {
                break;
            }
        }
        paths.push(PathRuns {
            trigger: path.trigger.to_string(),
            runs,
        });
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
        .map(|d| format!("{}→{} @{:.0}ms ({})", d.action, d.to, d.at_ms, d.from))
        .collect();
    if let Some(w) = &r.walked_away {
        parts.push(format!("walked away: {w}"));
    }
    if parts.is_empty() {
        parts.push("nothing".into());
    }
    format!(
        "[{} {} {}] {}",
        r.plumbing.stdio,
        r.plumbing.group,
        r.plumbing.via,
        parts.join(", ")
    )
}

/// Where a measurement's JSON is kept (history reads these).
pub fn saved_path(cache: &Path, host: &str, version: &str) -> PathBuf {
    cache
        .join("hosts")
        .join("measurements")
        .join(format!("{host}@{version}.json"))
}

/// Quits a host's TUI the way `quit` says and returns when the quit was triggered
/// (CLOCK_MONOTONIC ns): for a typed command, the moment its Enter is typed.
pub(super) fn quit_tui(host: &mut HostProc, quit: TuiQuit) -> u64 {
    let mut trigger_ns = crate::os::mono_ns();
    match quit {
        TuiQuit::Command(c) => {
            host.type_slowly(c.as_bytes(), Duration::from_millis(30));
            std::thread::sleep(Duration::from_millis(400));
            trigger_ns = crate::os::mono_ns();
            host.type_slowly(b"\r", Duration::ZERO);
        }
        TuiQuit::CtrlD => {
            // Hosts that ask for a second Ctrl-D to confirm get it 300 ms later.
            host.type_slowly(b"\x04", Duration::ZERO);
            if host.wait_exit(Duration::from_millis(300)).is_none() {
                host.type_slowly(b"\x04", Duration::ZERO);
            }
        }
        TuiQuit::CtrlCTwice => {
            host.type_slowly(b"\x03", Duration::ZERO);
            std::thread::sleep(Duration::from_millis(300));
            host.type_slowly(b"\x03", Duration::ZERO);
        }
        TuiQuit::TerminalClosed => host.close_terminal(),
        TuiQuit::Sigterm => host.signal(crate::model::SignalName::Term),
        TuiQuit::Sigkill => host.signal(crate::model::SignalName::Kill),
    }
    trigger_ns
}
