//! `check --real-host <host> -- CMD`: the user's server under the real host binary, once
//! per quit path the host can be driven through offline. The host launches the command as
//! configured (the same files `host measure` writes, with CMD instead of the recorder); the
//! server is found among the run's processes, watched by pidfd, and judged on what it did
//! after the quit: ended by the host's ladder (and at which step of the host's measured
//! ladder) or left running after the host exited.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::catalogue::{Drive, HostSpec, QuitPath};
use super::measure::{launch, quit_tui, Server, WALK_WINDOW};
use super::standin::StandIn;
use super::HostError;
use crate::os::hostproc::{self, HostProc};

/// What the server did on one quit path.
#[derive(Clone, Debug, Serialize)]
pub struct RealRun {
    pub trigger: String,
    /// Exited this long after the quit (ms), or `None`.
    pub exit_ms: Option<f64>,
    pub left_running: bool,
    pub failure: Option<String>,
    /// A one-shot command: the time counts from its start, not from a quit.
    pub one_shot: bool,
}

fn find_server(marker: &str, host: &HostProc, command: &[String], limit: Duration) -> Option<i32> {
    let host_pid = host.pid();
    let shell = host.spawned_pid();
    // The whole command line, so the host's own path (node_modules/...) never matches.
    let name = command.join(" ");
    let end = Instant::now() + limit;
    while Instant::now() < end {
        let mut candidates: Vec<(i32, String)> = hostproc::leftovers(marker)
            .into_iter()
            .map(|l| (l.pid, l.cmdline))
            .collect();
        candidates.extend(
            crate::os::procfs::descendants(host_pid)
                .into_iter()
                .map(|p| (p.pid, p.cmdline)),
        );
        if let Some((pid, _)) = candidates
            .into_iter()
            .find(|(pid, c)| *pid != host_pid && *pid != shell && c.contains(&name))
        {
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// Runs `command` under `spec` for each TUI quit path and the one-shot paths.
pub fn check(spec: &HostSpec, exe: &Path, command: &[String]) -> Result<Vec<RealRun>, HostError> {
    let api = StandIn::start().map_err(|e| HostError::io(Path::new("127.0.0.1"), e))?;
    spec.paths
        .iter()
        .map(|path| one_path(spec, exe, path, command, &api))
        .collect()
}

fn one_path(
    spec: &HostSpec,
    exe: &Path,
    path: &QuitPath,
    command: &[String],
    api: &StandIn,
) -> Result<RealRun, HostError> {
    let mut l = launch(spec, exe, path, Server::Command(command), api)?;
    let mut run = RealRun {
        trigger: path.trigger.into(),
        exit_ms: None,
        left_running: false,
        failure: None,
        one_shot: matches!(path.drive, Drive::OneShot(_)),
    };
    let Some(server) = find_server(&l.marker, &l.host, command, Duration::from_secs(40)) else {
        run.failure = Some("the host never started the server".into());
        let _ = hostproc::kill_all(&l.marker, &[l.host.pid()]);
        return Ok(run);
    };
    let death = hostproc::watch_death(server);
    let mut t0 = crate::os::mono_ns();
    if let Drive::Tui(quit) = path.drive {
        std::thread::sleep(Duration::from_millis(3000));
        t0 = quit_tui(&mut l.host, quit);
    }
    let exited = l.host.wait_exit(Duration::from_secs(40));
    if exited.is_none() {
        run.failure = Some("the host did not quit".into());
    }
    let died = death.and_then(|rx| rx.recv_timeout(WALK_WINDOW).ok());
    run.exit_ms = died.map(|d| (d as f64 - t0 as f64).max(0.0) / 1e6);
    run.left_running = died.is_none() && exited.is_some();
    let _ = hostproc::kill_all(&l.marker, &[server, l.host.pid()]);
    Ok(run)
}

/// The verdict lines: a server the host left running fails the path.
pub fn render(host: &str, version: &str, runs: &[RealRun]) -> (String, bool) {
    let mut text = format!("under the real {host} {version}:\n");
    let mut ok = true;
    for r in runs {
        let line = match (&r.failure, r.exit_ms, r.left_running) {
            (Some(f), _, _) => format!("  {:16} not judged: {f}", r.trigger),
            (None, Some(ms), _) => {
                format!("  {:16} PASS  exited {ms:.0} ms after the quit", r.trigger)
            }
            (None, None, true) => {
                ok = false;
                format!(
                    "  {:16} FAIL  still running {} s after the host exited (the host walked away; it was killed by pid)",
                    r.trigger,
                    WALK_WINDOW.as_secs()
                )
            }
            (None, None, false) => format!("  {:16} not judged: no exit seen", r.trigger),
        };
        text.push_str(&line);
        text.push('\n');
    }
    (text, ok)
}
