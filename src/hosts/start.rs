//! Starting a host for one run: an isolated HOME with the host's configuration naming one
//! MCP server (the recorder, or the user's command), the host spawned the way its quit path
//! drives it (a pseudo-terminal for a TUI), and what its screen says when it stalls.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::catalogue::{Drive, HostSpec, QuitPath};
use super::standin::StandIn;
use super::HostError;
use crate::os::hostproc::{HostLaunch, HostProc, Terminal};

pub(super) fn screen_line(text: &str) -> String {
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

/// A terminal's text without its escape sequences, carriage returns as line ends.
fn strip_ansi(text: &str) -> String {
    strip_ansi_escapes::strip_str(text).replace('\r', "\n")
}

/// A stall that asks for credentials is not a failure of the measurement.
pub(super) fn stalled(screen: &str, api: &StandIn) -> String {
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

/// The server a run's host is configured to launch.
#[derive(Clone, Copy)]
pub(super) enum ConfiguredServer<'a> {
    /// The suite's recorder (`helper __recorder`), logging to the run's log.
    Recorder(&'a Path),
    /// The user's command, run as is (`check --real-host`).
    Command(&'a [String]),
}

/// One run's host, started in an isolated HOME configured for it.
pub(super) struct Launched {
    // Dropped first: the host and its terminal go before their HOME is removed.
    pub host: HostProc,
    /// Every process of the run carries it (found and killed by it).
    pub marker: String,
    /// The recorder's log (unused for a user's command).
    pub log: PathBuf,
    /// The run's HOME and working directory; `None` when the run shares another's (a
    /// daemon the first run left is still up in it).
    pub dir: Option<tempfile::TempDir>,
}

fn write_files(files: &[(PathBuf, String)]) -> Result<(), HostError> {
    for (file, text) in files {
        if let Some(p) = file.parent() {
            std::fs::create_dir_all(p).map_err(|e| HostError::io(p, e))?;
        }
        std::fs::write(file, text).map_err(|e| HostError::io(file, e))?;
    }
    Ok(())
}

/// Writes the host's configuration into a fresh HOME, with `server` as its one MCP server,
/// and starts the host the way `path` drives it (a pseudo-terminal for a TUI).
pub(super) fn launch(
    spec: &HostSpec,
    exe: &Path,
    path: &QuitPath,
    server: ConfiguredServer,
    api: &StandIn,
) -> Result<Launched, HostError> {
    let dir_prefix = match server {
        ConfiguredServer::Recorder(_) => "mcp-shutdown-host-",
        ConfiguredServer::Command(_) => "mcp-shutdown-real-host-",
    };
    let dir = tempfile::Builder::new()
        .prefix(dir_prefix)
        .tempdir()
        .map_err(|e| HostError::io(Path::new("/tmp"), e))?;
    let mut l = launch_in(spec, exe, path, server, api, dir.path())?;
    l.dir = Some(dir);
    Ok(l)
}

/// [`launch`] in a HOME an earlier run used, as a user's second session runs in their own:
/// what that run left (a daemon, its state files) is there. The recorder's log starts
/// afresh (the earlier run's recorders are gone).
pub(super) fn launch_in(
    spec: &HostSpec,
    exe: &Path,
    path: &QuitPath,
    server: ConfiguredServer,
    api: &StandIn,
    dir: &Path,
) -> Result<Launched, HostError> {
    let marker_prefix = match server {
        ConfiguredServer::Recorder(_) => "",
        ConfiguredServer::Command(_) => "real-",
    };
    let home = dir.join("home");
    let cwd = dir.join("work");
    let log = dir.join("recorder.log");
    let _ = std::fs::remove_file(&log);
    for d in [&home, &cwd] {
        std::fs::create_dir_all(d).map_err(|e| HostError::io(d, e))?;
    }
    let mut env: BTreeMap<String, OsString> = BTreeMap::new();
    let command = server_command(server, &log, &mut env);
    let setup = spec.setup(&home, &cwd, &command, &api.base_url());
    write_files(&setup.files)?;
    env.extend(setup.env.into_iter().map(|(k, v)| (k, OsString::from(v))));
    let marker = format!(
        "{marker_prefix}{}-{}",
        std::process::id(),
        crate::os::mono_ns()
    );
    let (args, terminal): (Vec<String>, Terminal) = match path.drive {
        Drive::OneShot(a) => (a.iter().map(|s| s.to_string()).collect(), Terminal::None),
        Drive::Tui(_) => (
            spec.tui_args.iter().map(|s| s.to_string()).collect(),
            spec.terminal,
        ),
    };
    let host = HostProc::spawn(&HostLaunch {
        program: exe,
        args: &args,
        env: &env,
        cwd: &cwd,
        marker: &marker,
        terminal,
    })
    .map_err(|e| HostError::io(exe, e))?;
    Ok(Launched {
        host,
        marker,
        log,
        dir: None,
    })
}

/// The command the host is configured to run as its server, and the environment the
/// recorder needs.
fn server_command(
    server: ConfiguredServer,
    log: &Path,
    env: &mut BTreeMap<String, OsString>,
) -> Vec<String> {
    match server {
        // In the user's directory (the host runs in its own), a relative path in the command
        // meaning what it meant where it was typed; `exec` leaves the command itself as the
        // host's child, with the host's own pipes, no shell between.
        ConfiguredServer::Command(cmd) => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            let mut c: Vec<String> = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\""]
                .map(String::from)
                .to_vec();
            c.push(cwd.display().to_string());
            c.extend(cmd.iter().cloned());
            c
        }
        ConfiguredServer::Recorder(helper) => {
            env.insert(
                crate::os::recorder::LIFETIME_ENV.into(),
                OsString::from("90"),
            );
            env.insert(
                crate::os::recorder::LOG_ENV.into(),
                log.as_os_str().to_os_string(),
            );
            vec![
                helper.display().to_string(),
                "__recorder".into(),
                "--log".into(),
                log.display().to_string(),
            ]
        }
    }
}
