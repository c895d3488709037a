//! Starting the server (its own process group, stdout to a reader thread, stderr to a file)
//! and confirming it serves: the parts both the supervisor and the stand-in client do.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::link::spawn_guard;
use crate::config::manifest::{Launch, Protocol};
use crate::mcp::handshake::{handshake as mcp_handshake, HandshakeFailure};
use crate::mcp::wire::{read_stdout, WireEvent};
use crate::model::{Budgets, CaseError, ErrorKind, ExitStatus, HandshakeInfo, StdoutRecord};
use crate::os::{mono_ns, sched, Pidfd};

/// How much of the server's stderr a report keeps.
const STDERR_TAIL: u64 = 4096;

/// The last few KiB of the server's stderr.
pub fn stderr_tail(path: &Path) -> String {
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
pub struct Running {
    pub child: Child,
    pub pidfd: Pidfd,
    pub stdin: Option<ChildStdin>,
    pub record: Arc<Mutex<StdoutRecord>>,
    pub rx: Receiver<WireEvent>,
    pub started_ns: u64,
}

impl Running {
    pub fn stdout_record(&self) -> StdoutRecord {
        self.record
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn harness_error(message: String) -> CaseError {
    CaseError {
        kind: ErrorKind::Harness,
        message,
    }
}

/// Starts the server: own process group, stdout to a reader thread, stderr to a file.
pub fn launch(launch: &Launch, stderr_path: &Path, stdin_null: bool) -> Result<Running, CaseError> {
    let stderr = File::create(stderr_path)
        .map_err(|e| harness_error(format!("cannot create {}: {e}", stderr_path.display())))?;
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
    let pidfd = Pidfd::open(child.id()).map_err(|e| harness_error(format!("pidfd_open: {e}")))?;
    let record = Arc::new(Mutex::new(StdoutRecord::default()));
    let (tx, rx) = channel();
    let stdout = child.stdout.take().expect("stdout is piped");
    let rec = record.clone();
    std::thread::spawn(move || {
        // It wakes on EOF in the middle of the server's exit: it must not preempt it.
        sched::batch_this_thread();
        read_stdout(stdout, rec, tx)
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
pub fn handshake(
    run: &mut Running,
    protocol: Protocol,
    budgets: &Budgets,
    stderr_path: &Path,
) -> Result<HandshakeInfo, CaseError> {
    let stdin = run.stdin.as_mut().expect("stdin open during handshake");
    let failure = match mcp_handshake(
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
    let record = run.stdout_record();
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
