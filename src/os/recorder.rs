//! `mcp-shutdown __recorder`: an MCP stdio server that never exits on its own and logs, as
//! JSON lines on CLOCK_MONOTONIC, everything a host or client does to it (shipped inside the
//! binary, so `host measure` and the client-ladder test need nothing else).
//!
//! Events (`ev`): `start` (pid, ppid, pgid, sid, fd kinds, controlling terminal, the
//! parent's command and whether it is a shell), `tree` (child and grandchild pids),
//! `message`/`reply`, `stdin_eof`, `stdout_unwritable`, `signal` (signo, name, si_pid,
//! si_code, the sender's command, how long the logging thread waited for a CPU), `reparented` (the parent changed: the host walked away
//! or died), `lifetime` (about to `_exit(124)`). SIGKILL cannot be logged: the measuring
//! side sees it as death by pidfd.
//!
//! The server spawns a `child` in its own process group, and the child a `grandchild` in a
//! session of its own; both log the signals they receive. A signal that reaches the child
//! too went to the group; one that reaches the grandchild went to the whole tree. SIGTERM,
//! SIGINT, SIGHUP and SIGQUIT are blocked in every thread and read from a signalfd, so none
//! is lost and none is obeyed.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use serde_json::{json, Map, Value};

/// The environment variable naming the log (`--log PATH` wins).
pub const LOG_ENV: &str = "MCP_SHUTDOWN_RECORDER_LOG";
/// Every recorder process exits after this many seconds, whatever happens.
pub const LIFETIME_ENV: &str = "MCP_SHUTDOWN_RECORDER_LIFETIME_S";
const LIFETIME_EXIT: i32 = 124;
const WATCHED: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

struct Log {
    file: std::fs::File,
    role: &'static str,
    pid: u32,
}

impl Log {
    fn open(path: &Path, role: &'static str) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o644)
            .open(path)?;
        Ok(Self {
            file,
            role,
            pid: std::process::id(),
        })
    }

    /// One `write` per line (O_APPEND): lines from the three processes never interleave.
    fn event(&self, ev: &str, fields: Value) {
        let mut rec = Map::new();
        rec.insert("t_ns".into(), json!(super::mono_ns()));
        rec.insert("role".into(), json!(self.role));
        rec.insert("pid".into(), json!(self.pid));
        rec.insert("ev".into(), json!(ev));
        if let Value::Object(m) = fields {
            rec.extend(m);
        }
        let mut line = Value::Object(rec).to_string();
        line.push('\n');
        let _ = (&self.file).write_all(line.as_bytes());
    }
}

fn fd_kind(fd: i32) -> &'static str {
    let Ok(meta) = std::fs::metadata(format!("/proc/self/fd/{fd}")) else {
        return "closed";
    };
    let t = meta.file_type();
    if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "chr"
    } else if t.is_file() {
        "file"
    } else {
        "other"
    }
}

fn comm(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Field 7 of /proc/self/stat: the controlling terminal's device number (0: none).
fn tty_nr() -> i64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1.to_string();
            after.split_whitespace().nth(4)?.parse().ok()
        })
        .unwrap_or(0)
}

fn watched_set() -> SigSet {
    let mut set = SigSet::empty();
    for s in WATCHED {
        set.add(s);
    }
    set
}

/// This thread's time runnable but waiting for a CPU so far (schedstat's run delay).
fn queued_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// The signal thread runs real-time (it only blocks and writes a line), so a signal is
/// logged before a SIGKILL sent a few ms later; `queued_ns` says how long it still waited
/// for a CPU: under load a signal is logged late, and was sent at least that long before.
fn start_signal_thread(log: Arc<Log>) -> std::io::Result<()> {
    let sfd = SignalFd::with_flags(&watched_set(), SfdFlags::SFD_CLOEXEC)?;
    std::thread::spawn(move || {
        super::sched::realtime_this_thread();
        signal_loop(&sfd, &log)
    });
    Ok(())
}

fn signal_loop(sfd: &SignalFd, log: &Log) -> ! {
    loop {
        let before = queued_ns();
        match sfd.read_signal() {
            Ok(Some(info)) => {
                let name = Signal::try_from(info.ssi_signo as i32)
                    .map(|s| s.as_str())
                    .unwrap_or("?");
                let sender = info.ssi_pid as i32;
                log.event(
                    "signal",
                    json!({"signo": info.ssi_signo, "name": name, "si_pid": sender,
                           "si_uid": info.ssi_uid, "si_code": info.ssi_code,
                           "sender_comm": comm(sender),
                           "queued_ns": queued_ns().saturating_sub(before)}),
                );
            }
            Ok(None) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn start_lifetime_thread(log: Arc<Log>) {
    let secs: f64 = std::env::var(LIFETIME_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120.0);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs_f64(secs));
        log.event("lifetime", json!({"seconds": secs}));
        // SAFETY: _exit ends the process at once; nothing is shared with other threads
        // beyond what the kernel reclaims.
        unsafe { libc::_exit(LIFETIME_EXIT) };
    });
}

/// The parent changes when the host exits without taking the server with it.
fn start_parent_watch(log: Arc<Log>) {
    let first = nix::unistd::getppid().as_raw();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = nix::unistd::getppid().as_raw();
        if now != first {
            log.event(
                "reparented",
                json!({"from": first, "to": now, "to_comm": comm(now)}),
            );
            return;
        }
    });
}

fn common_start(role: &'static str, log_path: &Path) -> std::io::Result<Arc<Log>> {
    // Blocked before any thread exists: every thread, and every process spawned (the mask
    // survives exec), leaves them pending for the signalfd.
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&watched_set()), None)?;
    // SAFETY: setting SIGPIPE to SIG_IGN has no handler to run.
    unsafe {
        let _ = nix::sys::signal::signal(Signal::SIGPIPE, nix::sys::signal::SigHandler::SigIgn);
    }
    let log = Arc::new(Log::open(log_path, role)?);
    let ppid = nix::unistd::getppid().as_raw();
    let parent = comm(ppid);
    let shell = parent
        .as_deref()
        .is_some_and(|c| matches!(c, "sh" | "bash" | "dash" | "zsh" | "fish" | "ksh"));
    let parent_pgid = nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(ppid)))
        .map(|p| p.as_raw())
        .ok();
    let parent_sid = nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(ppid)))
        .map(|p| p.as_raw())
        .ok();
    log.event(
        "start",
        json!({"ppid": ppid, "parent_comm": parent, "via_shell": shell,
               "parent_pgid": parent_pgid, "parent_sid": parent_sid,
               "pgid": nix::unistd::getpgrp().as_raw(),
               "sid": nix::unistd::getsid(None).map(|p| p.as_raw()).unwrap_or(-1),
               "stdin": fd_kind(0), "stdout": fd_kind(1), "tty_nr": tty_nr()}),
    );
    start_signal_thread(log.clone())?;
    start_lifetime_thread(log.clone());
    Ok(log)
}

/// Starts `role` and waits for its `ready` line: its signals are blocked by then.
fn spawn_ready(role: &str, new_session: bool, log_path: &Path) -> std::io::Result<Vec<i32>> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["__recorder", "--role", role, "--log"])
        .arg(log_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if new_session {
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(Into::into));
        }
    }
    let mut child = cmd.spawn()?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    // Reaped by a thread of its own so its death is logged by whoever spawned it.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    let mut words = line.split_whitespace();
    if words.next() != Some("ready") {
        return Ok(Vec::new());
    }
    Ok(words.filter_map(|w| w.parse().ok()).collect())
}

fn park() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn descendant(role: &'static str, log_path: &Path) -> std::io::Result<()> {
    let _log = common_start(role, log_path)?;
    let mut pids = vec![std::process::id() as i32];
    if role == "child" {
        pids.extend(spawn_ready("grandchild", true, log_path)?);
    }
    let words: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready {}", words.join(" "));
    let _ = out.flush();
    // Hold none of the spawner's pipes from here on.
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    nix::unistd::dup2_stdout(&null)?;
    park()
}

fn answer(msg: &Value) -> Option<Value> {
    let id = msg.get("id")?.clone();
    let method = msg.get("method")?.as_str().unwrap_or("");
    let result = match method {
        "initialize" => {
            let version = msg
                .pointer("/params/protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("2025-06-18");
            json!({"protocolVersion": version, "capabilities": {"tools": {}},
                   "serverInfo": {"name": "recorder", "version": env!("CARGO_PKG_VERSION")}})
        }
        "ping" => json!({}),
        "tools/list" => json!({"tools": [{"name": "noop", "description": "Does nothing.",
                                          "inputSchema": {"type": "object", "properties": {}}}]}),
        "resources/list" => json!({"resources": []}),
        "prompts/list" => json!({"prompts": []}),
        "resources/templates/list" => json!({"resourceTemplates": []}),
        _ => {
            return Some(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("Method not found: {method}")}}))
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn watch_stdout(log: Arc<Log>) {
    std::thread::spawn(move || {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        // Real-time, as the signal thread: it wakes once and writes a line.
        super::sched::realtime_this_thread();
        let stdout = std::io::stdout();
        let fd = std::os::fd::AsFd::as_fd(&stdout);
        loop {
            let before = queued_ns();
            let mut fds = [PollFd::new(fd, PollFlags::empty())];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(n) if n > 0 => {
                    let revents = fds[0].revents().map(|r| r.bits()).unwrap_or(0);
                    log.event(
                        "stdout_unwritable",
                        json!({"revents": revents,
                               "queued_ns": queued_ns().saturating_sub(before)}),
                    );
                    return;
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
}

fn serve(log: &Log) {
    let kind = fd_kind(0);
    let mut input = std::io::stdin().lock();
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 65536];
    loop {
        // How long the read waited for a CPU after its data or its end came.
        let before = queued_ns();
        match input.read(&mut chunk) {
            Ok(0) => {
                log.event(
                    "stdin_eof",
                    json!({"how": "eof", "stdin": kind, "unparsed": buf.len(),
                           "queued_ns": queued_ns().saturating_sub(before)}),
                );
                return;
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                log.event(
                    "stdin_eof",
                    json!({"how": "error", "errno": e.raw_os_error(), "error": e.to_string(),
                           "stdin": kind}),
                );
                return;
            }
        }
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            handle(log, &line);
        }
    }
}

fn handle(log: &Log, line: &[u8]) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let Ok(msg) = serde_json::from_slice::<Value>(line) else {
        log.event("message", json!({"invalid": true, "length": line.len()}));
        return;
    };
    log.event(
        "message",
        json!({"method": msg.get("method"), "id": msg.get("id")}),
    );
    if msg.get("method").is_none() {
        return;
    }
    if let Some(reply) = answer(&msg) {
        let mut text = reply.to_string();
        text.push('\n');
        let mut out = std::io::stdout().lock();
        match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            Ok(()) => log.event(
                "reply",
                json!({"id": msg.get("id"), "method": msg.get("method")}),
            ),
            Err(e) => log.event("stdout_write_error", json!({"error": e.to_string()})),
        }
    }
}

/// `__recorder [--role server|child|grandchild] [--log PATH]`; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    let mut role: &'static str = "server";
    let mut log_path: Option<PathBuf> = std::env::var_os(LOG_ENV).map(PathBuf::from);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match (flag.as_str(), it.next()) {
            ("--role", Some(r)) => {
                role = match r.as_str() {
                    "child" => "child",
                    "grandchild" => "grandchild",
                    _ => "server",
                }
            }
            ("--log", Some(p)) => log_path = Some(PathBuf::from(p)),
            _ => {
                eprintln!("recorder: unknown argument {flag:?}");
                return 2;
            }
        }
    }
    let Some(log_path) = log_path else {
        eprintln!("recorder: set {LOG_ENV} or pass --log PATH");
        return 2;
    };
    let run = || -> std::io::Result<()> {
        if role != "server" {
            return descendant(role, &log_path);
        }
        let log = common_start("server", &log_path)?;
        let pids = spawn_ready("child", false, &log_path)?;
        log.event(
            "tree",
            json!({"child": pids.first(), "grandchild": pids.get(1)}),
        );
        start_parent_watch(log.clone());
        watch_stdout(log.clone());
        serve(&log);
        // EOF is recorded, not obeyed: the rest of the host's ladder is what is measured.
        park()
    };
    match run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("recorder: {e}");
            1
        }
    }
}
