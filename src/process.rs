//! Process control: the only module that touches pids, pidfds, signals and `/proc`.
//!
//! Linux only. Exit is observed through a pidfd (readable the moment the process exits),
//! orphans are kept track of by making the per-case supervisor a child subreaper, and zombies
//! are judged dead by their `/proc` state, never by `kill(pid, 0)`.

use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags};
use rustix::process::{
    pidfd_open, pidfd_send_signal, waitid, Pid, PidfdFlags, Signal, WaitId, WaitIdOptions,
    WaitOptions,
};
use serde::{Deserialize, Serialize};

/// Nanoseconds on `CLOCK_MONOTONIC`: the one clock every process of a case shares, so a
/// timestamp taken in the client process compares with one taken in the supervisor.
pub fn mono_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Milliseconds between two [`mono_ns`] readings, with microsecond resolution.
pub fn ms_between(from_ns: u64, to_ns: u64) -> f64 {
    let us = to_ns.saturating_sub(from_ns) / 1_000;
    us as f64 / 1_000.0
}

/// How a process ended, as data (never a string to parse).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitStatus {
    /// Exited by itself with this code.
    Code(i32),
    /// Ended by this signal (its conventional name, e.g. `SIGTERM`).
    Signal(SignalName),
}

/// Signals the suite sends or reports, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
pub enum SignalName {
    #[serde(rename = "SIGHUP")]
    Hup,
    #[serde(rename = "SIGINT")]
    Int,
    #[serde(rename = "SIGKILL")]
    Kill,
    #[serde(rename = "SIGPIPE")]
    Pipe,
    #[serde(rename = "SIGTERM")]
    Term,
    #[serde(rename = "SIGABRT")]
    Abrt,
    #[serde(rename = "SIGSEGV")]
    Segv,
    /// Any other signal, by number.
    #[serde(untagged)]
    Other(i32),
}

impl SignalName {
    pub fn from_raw(n: i32) -> Self {
        match n {
            1 => Self::Hup,
            2 => Self::Int,
            6 => Self::Abrt,
            9 => Self::Kill,
            11 => Self::Segv,
            13 => Self::Pipe,
            15 => Self::Term,
            n => Self::Other(n),
        }
    }

    pub fn raw(self) -> i32 {
        match self {
            Self::Hup => 1,
            Self::Int => 2,
            Self::Abrt => 6,
            Self::Kill => 9,
            Self::Segv => 11,
            Self::Pipe => 13,
            Self::Term => 15,
            Self::Other(n) => n,
        }
    }

    fn to_signal(self) -> Signal {
        match self {
            Self::Hup => Signal::HUP,
            Self::Int => Signal::INT,
            Self::Abrt => Signal::ABORT,
            Self::Kill => Signal::KILL,
            Self::Segv => Signal::SEGV,
            Self::Pipe => Signal::PIPE,
            Self::Term => Signal::TERM,
            // Only named signals are ever sent.
            Self::Other(_) => Signal::TERM,
        }
    }
}

impl std::fmt::Display for SignalName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Hup => f.write_str("SIGHUP"),
            Self::Int => f.write_str("SIGINT"),
            Self::Kill => f.write_str("SIGKILL"),
            Self::Pipe => f.write_str("SIGPIPE"),
            Self::Term => f.write_str("SIGTERM"),
            Self::Abrt => f.write_str("SIGABRT"),
            Self::Segv => f.write_str("SIGSEGV"),
            Self::Other(n) => write!(f, "signal {n}"),
        }
    }
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Code(c) => write!(f, "exit code {c}"),
            Self::Signal(s) => write!(f, "killed by {s}"),
        }
    }
}

impl From<std::process::ExitStatus> for ExitStatus {
    fn from(s: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (s.code(), s.signal()) {
            (Some(c), _) => Self::Code(c),
            (None, Some(sig)) => Self::Signal(SignalName::from_raw(sig)),
            (None, None) => Self::Code(-1),
        }
    }
}

/// A race-free handle on one process: it cannot be confused with a later process that
/// reuses the pid, and it becomes readable the moment the process exits.
#[derive(Debug)]
pub struct Pidfd {
    pid: i32,
    fd: OwnedFd,
}

impl Pidfd {
    pub fn open(pid: u32) -> io::Result<Self> {
        let raw = i32::try_from(pid).map_err(|_| io::Error::other("pid out of range"))?;
        let p = Pid::from_raw(raw).ok_or_else(|| io::Error::other("pid 0"))?;
        let fd = pidfd_open(p, PidfdFlags::empty())?;
        Ok(Self { pid: raw, fd })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Waits up to `timeout` for the process to exit. Returns the [`mono_ns`] time at which
    /// the kernel reported the exit, or `None` if it is still running.
    pub fn wait_exit(&self, timeout: Duration) -> io::Result<Option<u64>> {
        let deadline = mono_ns() + timeout.as_nanos() as u64;
        loop {
            let now = mono_ns();
            let left = deadline.saturating_sub(now);
            let ts = rustix::time::Timespec {
                tv_sec: (left / 1_000_000_000) as i64,
                tv_nsec: (left % 1_000_000_000) as i64,
            };
            let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
            match poll(&mut fds, Some(&ts)) {
                Ok(0) if left == 0 => return Ok(None),
                Ok(0) => continue,
                Ok(_) => return Ok(Some(mono_ns())),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Starts a thread that does nothing but block on this pidfd and stamp the exit the
    /// moment the kernel reports it: the exit time then does not depend on what the caller
    /// is busy with. The thread runs in the real-time class and ends when the process exits.
    /// Returns once the thread is running, so start it *before* the trigger: a thread still
    /// being created when the exit lands would stamp it late, by as long as a loaded machine
    /// takes to schedule it.
    pub fn watch(&self) -> io::Result<std::sync::mpsc::Receiver<u64>> {
        let fd = self.fd.try_clone()?;
        let (tx, rx) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            realtime_this_thread();
            let _ = ready_tx.send(());
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            loop {
                match poll(&mut fds, None) {
                    Ok(n) if n > 0 => {
                        let _ = tx.send(mono_ns());
                        return;
                    }
                    Ok(_) | Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => return,
                }
            }
        });
        ready_rx
            .recv()
            .map_err(|_| io::Error::other("the exit watcher thread did not start"))?;
        Ok(rx)
    }

    pub fn has_exited(&self) -> bool {
        matches!(self.wait_exit(Duration::ZERO), Ok(Some(_)))
    }

    /// Sends a signal to exactly this process (not a reused pid).
    pub fn signal(&self, sig: SignalName) -> io::Result<()> {
        match pidfd_send_signal(self.fd.as_fd(), sig.to_signal()) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Reaps the process once it has exited; only works for our own children (which orphans
    /// become, since the supervisor is a subreaper). `None` if it is not ours or still running.
    pub fn reap(&self) -> Option<ExitStatus> {
        let st = waitid(
            WaitId::PidFd(self.fd.as_fd()),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
        )
        .ok()??;
        if let Some(code) = st.exit_status() {
            Some(ExitStatus::Code(code))
        } else {
            st.terminating_signal()
                .map(|s| ExitStatus::Signal(SignalName::from_raw(s)))
        }
    }
}

/// Sends a signal to a whole process group.
pub fn signal_group(pgid: i32, sig: SignalName) -> io::Result<()> {
    let Some(p) = Pid::from_raw(pgid) else {
        return Ok(());
    };
    match rustix::process::kill_process_group(p, sig.to_signal()) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Sends a signal to one pid (used for descendants found in `/proc`, which have no pidfd).
pub fn signal_pid(pid: i32, sig: SignalName) {
    if let Some(p) = Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(p, sig.to_signal());
    }
}

/// Puts the calling thread in the SCHED_BATCH class: same CPU share as before, but its
/// wake-ups never preempt the task on the CPU (only the tick does). For the supervisor's
/// threads that wake while a server exits (the stdout reader sees EOF during the server's
/// teardown): preempting the exiting server there can hand its CPU to the machine's load for
/// a whole time slice, which would show up as exit latency that is not the server's. Call it
/// after the last child is started: children inherit the class of the forking thread.
pub fn batch_this_thread() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 names the calling thread; `param` is a valid sched_param for the call.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) == 0 }
}

/// Puts the calling thread in the lowest real-time class (SCHED_FIFO, priority 1), so its
/// wake-up preempts any ordinary process at once instead of waiting for a time slice to end.
/// Only for a thread that blocks and then does a few microseconds of work (the exit watcher):
/// a real-time thread that computed would starve the machine. Needs CAP_SYS_NICE (or
/// RLIMIT_RTPRIO); returns whether the real-time class took.
pub fn realtime_this_thread() -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: pid 0 names the calling thread; `param` is a valid sched_param for the call.
    let ok = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0;
    if !ok {
        // Second best, with the same privilege: a raised nice value (per thread on Linux).
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), -10);
    }
    ok
}

/// Orphaned descendants of this process are reparented to it rather than to init, so they
/// stay observable and killable. Process-wide; only the per-case supervisor calls it.
pub fn become_subreaper() -> io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    Ok(())
}

/// Makes the kernel send `sig` to this process when its parent thread dies.
pub fn die_with_parent(sig: SignalName) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(sig.to_signal()))?;
    Ok(())
}

pub fn own_pid() -> i32 {
    rustix::process::getpid().as_raw_nonzero().get()
}

/// One process as seen in `/proc`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// `/proc/<pid>/stat` state letter; `Z` is a zombie (dead, not yet reaped).
    pub state: char,
    pub cmdline: String,
}

impl ProcInfo {
    pub fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }
}

/// Reads one process from `/proc`; `None` if it is gone.
/// The fields of `/proc/<pid>/stat` the suite uses: command name, state, ppid, pgid, sid.
fn read_stat(pid: i32) -> Option<(String, char, i32, i32, i32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain ") ".
    let close = stat.rfind(')')?;
    let comm = stat
        .get(stat.find('(')? + 1..close)
        .unwrap_or("")
        .to_string();
    let mut rest = stat.get(close + 2..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgid = rest.next()?.parse().ok()?;
    let sid = rest.next()?.parse().ok()?;
    Some((comm, state, ppid, pgid, sid))
}

pub fn proc_info(pid: i32) -> Option<ProcInfo> {
    let (comm, state, ppid, pgid, sid) = read_stat(pid)?;
    let cmdline = fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|b| {
            let s: Vec<String> = b
                .split(|&c| c == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            s.join(" ")
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("[{comm}]"));
    Some(ProcInfo {
        pid,
        ppid,
        pgid,
        sid,
        state,
        cmdline,
    })
}

/// Every process on the machine, from `/proc`.
pub fn all_processes() -> Vec<ProcInfo> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_info)
        .collect()
}

/// All descendants of `root` (children, grandchildren, ...), zombies included, parents
/// before children.
pub fn descendants(root: i32) -> Vec<ProcInfo> {
    let all = all_processes();
    let mut out: Vec<ProcInfo> = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for child in all.iter().filter(|c| c.ppid == p) {
            if !out.iter().any(|o| o.pid == child.pid) {
                frontier.push(child.pid);
                out.push(child.clone());
            }
        }
    }
    out
}

/// The environment variable that marks every process of one case: set by the supervisor on
/// itself before it starts anything, so every process of the case inherits it.
pub const CASE_MARK: &str = "MCP_SHUTDOWN_CASE";

/// Live processes (other than this one) whose environment holds `var=value`: every process
/// that inherited a marker, even one that escaped the process tree.
pub fn with_env(var: &str, value: &str) -> Vec<ProcInfo> {
    let needle = format!("{var}={value}");
    let me = own_pid();
    all_processes()
        .into_iter()
        .filter(|p| p.pid != me && !p.is_zombie())
        .filter(|p| {
            fs::read(format!("/proc/{}/environ", p.pid))
                .is_ok_and(|e| e.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// The processes of one case: those carrying its `CASE_MARK`.
pub fn marked(mark: &str) -> Vec<ProcInfo> {
    with_env(CASE_MARK, mark)
}

/// Kills every descendant of this process, and every process carrying this process's case
/// mark, and reaps them. Used by the per-case supervisor, which is a subreaper and owns every
/// process below it, so reaping any child is safe here. Loops because a dying process can
/// fork and orphans arrive by reparenting; it stops only after two empty scans in a row, so a
/// process caught between parents in one scan is seen in the next.
pub fn kill_all_descendants() -> Vec<ProcInfo> {
    let me = own_pid();
    let mark = std::env::var(CASE_MARK).ok();
    let mut killed: Vec<ProcInfo> = Vec::new();
    let mut empty_scans = 0;
    for _ in 0..500 {
        reap_any_children();
        let mut live: Vec<ProcInfo> = descendants(me)
            .into_iter()
            .filter(|p| !p.is_zombie())
            .collect();
        if let Some(m) = &mark {
            for p in marked(m) {
                if !live.iter().any(|l| l.pid == p.pid) {
                    live.push(p);
                }
            }
        }
        if live.is_empty() {
            empty_scans += 1;
            if empty_scans >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        empty_scans = 0;
        for p in &live {
            signal_pid(p.pid, SignalName::Kill);
            if !killed.iter().any(|k| k.pid == p.pid) {
                killed.push(p.clone());
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    reap_any_children();
    killed
}

/// Reaps every exited child without blocking.
pub fn reap_any_children() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}

/// What keeps a process alive, read from `/proc` at the moment it should have exited.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics {
    pub pid: i32,
    /// The runtime recognised from the executable: node, python, jvm, or null.
    pub runtime: Option<String>,
    pub threads: usize,
    /// Thread names with counts, e.g. `"pool-1-thread-1"` or `"node (x7)"`.
    pub thread_names: Vec<String>,
    /// Open file descriptors by kind: pipe, socket, file, device, eventfd, timerfd, epoll, ...
    pub fds: std::collections::BTreeMap<String, usize>,
    /// Command lines of its live children.
    pub children: Vec<String>,
    /// What usually holds such a process, and the fix.
    pub hint: String,
}

fn fd_kind(target: &str) -> &'static str {
    if target.starts_with("pipe:") {
        "pipe"
    } else if target.starts_with("socket:") {
        "socket"
    } else if target.contains("[eventfd") {
        "eventfd"
    } else if target.contains("[timerfd") {
        "timerfd"
    } else if target.contains("[eventpoll") {
        "epoll"
    } else if target.contains("[signalfd") {
        "signalfd"
    } else if target.starts_with("anon_inode:") {
        "anon"
    } else if target.starts_with("/dev/") {
        "device"
    } else {
        "file"
    }
}

/// Recognises the runtime from the executable's file name.
pub fn runtime_of(exe: &str) -> Option<&'static str> {
    let name = exe.rsplit('/').next().unwrap_or(exe);
    if name.starts_with("node") || name == "bun" || name == "deno" {
        Some("node")
    } else if name.starts_with("python") {
        Some("python")
    } else if name == "java" {
        Some("jvm")
    } else {
        None
    }
}

/// The fix most likely to help, by runtime.
pub fn hint_for(runtime: Option<&str>) -> &'static str {
    match runtime {
        Some("node") => "Node stays alive while a timer, socket or other handle is active, and the SDK's stdio transport does not exit on EOF: listen for process.stdin 'end' and 'close' and call process.exit().",
        Some("python") => "Python waits for non-daemon threads (and pending asyncio.to_thread calls) before exiting: when the stdio server's run() returns, stop them or call os._exit().",
        Some("jvm") => "The JVM stays up while any non-daemon thread runs (executors, timers): when the session closes, shut them down or call System.exit().",
        _ => "Exit when reading stdin returns end-of-file: stop or detach background work first, and return from main.",
    }
}

/// The fix most likely to help a process that ignored `signal`, by runtime.
pub fn signal_hint(runtime: Option<&str>, signal: SignalName) -> String {
    let how = match runtime {
        Some("node") => "a process.on(...) handler that never calls process.exit()",
        Some("python") => "asyncio/anyio taking the KeyboardInterrupt while a worker thread blocks reading stdin, or a signal handler that returns without exiting",
        Some("jvm") => "a shutdown hook that never returns",
        _ => "a handler that catches it and carries on",
    };
    format!("It ignored {signal}; usually {how}. Exit from the handler (after brief cleanup).")
}

/// Reads what holds `pid` from `/proc`. Best effort: missing entries are skipped.
pub fn diagnose(pid: i32) -> Diagnostics {
    let exe = fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let runtime = runtime_of(&exe);
    let mut names: Vec<String> = fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| fs::read_to_string(e.ok()?.path().join("comm")).ok())
                .map(|s| s.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let threads = names.len();
    let mut thread_names: Vec<String> = Vec::new();
    let mut i = 0;
    while i < names.len() {
        let n = names[i..].iter().take_while(|x| **x == names[i]).count();
        thread_names.push(if n > 1 {
            format!("{} (x{n})", names[i])
        } else {
            names[i].clone()
        });
        i += n;
    }
    let mut fds = std::collections::BTreeMap::new();
    if let Ok(d) = fs::read_dir(format!("/proc/{pid}/fd")) {
        for e in d.filter_map(Result::ok) {
            if let Ok(t) = fs::read_link(e.path()) {
                *fds.entry(fd_kind(&t.to_string_lossy()).to_string())
                    .or_insert(0) += 1;
            }
        }
    }
    let children = all_processes()
        .into_iter()
        .filter(|p| p.ppid == pid && !p.is_zombie())
        .map(|p| p.cmdline)
        .collect();
    Diagnostics {
        pid,
        runtime: runtime.map(String::from),
        threads,
        thread_names,
        fds,
        children,
        hint: hint_for(runtime).to_string(),
    }
}

/// Nanoseconds the threads of `pid` have spent runnable but waiting for a CPU (the second
/// field of `/proc/<pid>/task/<tid>/schedstat`); `None` once the process is gone.
pub fn runqueue_ns(pid: i32) -> Option<u64> {
    let d = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let total = d
        .filter_map(|e| fs::read_to_string(e.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    Some(total)
}

/// Pids of `root` and all its descendants, from `/proc/*/stat` alone: unlike [`descendants`]
/// it never reads a process's command line, which takes that process's memory-map lock and
/// so can slow down a process that is exiting at that moment.
pub fn tree_pids(root: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return vec![root];
    };
    let parents: Vec<(i32, i32)> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, read_stat(pid)?.2)))
        .collect();
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// Run-queue wait of a process tree, sampled cheaply: the pid list is refreshed from `/proc`
/// at most every 500 ms, the per-thread statistics are read at every sample.
pub struct RunqueueSampler {
    root: i32,
    pids: Vec<i32>,
    listed_ns: u64,
    /// Last reading per pid, so exited members keep their share.
    seen: std::collections::HashMap<i32, u64>,
}

impl RunqueueSampler {
    pub fn new(root: i32) -> Self {
        let mut s = Self {
            root,
            pids: Vec::new(),
            listed_ns: 0,
            seen: std::collections::HashMap::new(),
        };
        s.sample();
        s
    }

    /// Total nanoseconds the tree's threads have waited for a CPU so far.
    pub fn sample(&mut self) -> u64 {
        let now = mono_ns();
        if now.saturating_sub(self.listed_ns) >= 500_000_000 {
            self.pids = tree_pids(self.root);
            self.listed_ns = now;
        }
        for &p in &self.pids {
            if let Some(ns) = runqueue_ns(p) {
                self.seen.insert(p, ns);
            }
        }
        self.seen.values().sum()
    }
}

/// CPU time in nanoseconds used so far by `pid` and all its descendants, every thread
/// included (`/proc/<pid>/task/<tid>/schedstat`, nanosecond precision).
pub fn tree_cpu_ns(pid: i32) -> u64 {
    let task_ns = |p: i32| -> u64 {
        fs::read_dir(format!("/proc/{p}/task"))
            .map(|d| {
                d.filter_map(|e| fs::read_to_string(e.ok()?.path().join("schedstat")).ok())
                    .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
                    .sum()
            })
            .unwrap_or(0)
    };
    tree_pids(pid).into_iter().map(task_ns).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes are per thread: they must never leak to the thread that forks servers.
    #[test]
    fn scheduling_classes_stay_on_their_thread() {
        // SAFETY: sched_getscheduler(0) only reads the calling thread's policy.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let before = policy();
        let (batch, rt) = std::thread::spawn(move || {
            assert!(batch_this_thread());
            let batch = policy();
            (batch, realtime_this_thread().then(policy))
        })
        .join()
        .unwrap();
        assert_eq!(batch, libc::SCHED_BATCH);
        // Only with CAP_SYS_NICE; without it the thread stays where it was.
        assert!(matches!(rt, None | Some(libc::SCHED_FIFO)));
        assert_eq!(policy(), before);
    }

    #[test]
    fn fd_kinds_and_runtimes() {
        assert_eq!(fd_kind("pipe:[123]"), "pipe");
        assert_eq!(fd_kind("anon_inode:[timerfd]"), "timerfd");
        assert_eq!(fd_kind("/tmp/x.log"), "file");
        assert_eq!(runtime_of("/usr/bin/node"), Some("node"));
        assert_eq!(runtime_of("/x/.venv/bin/python3.11"), Some("python"));
        assert_eq!(runtime_of("/usr/lib/jvm/java-17/bin/java"), Some("jvm"));
        assert_eq!(runtime_of("/x/target/release/server"), None);
    }

    #[test]
    fn diagnoses_this_process() {
        let d = diagnose(own_pid());
        assert!(d.threads >= 1);
        assert!(d.fds.values().sum::<usize>() >= 3);
    }

    #[test]
    fn descendants_include_grandchildren() {
        let mut c = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        // Until the forked child has exec'd, its command line is still the shell's.
        let has_sleep = || {
            descendants(c.id() as i32)
                .iter()
                .any(|p| p.cmdline.starts_with("sleep"))
        };
        while !has_sleep() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let d = descendants(c.id() as i32);
        assert!(d.iter().any(|p| p.cmdline.starts_with("sleep")), "{d:?}");
        assert!(tree_pids(c.id() as i32).len() >= 2);
        for p in &d {
            signal_pid(p.pid, SignalName::Kill);
        }
        let _ = c.kill();
        let _ = c.wait();
    }
}
