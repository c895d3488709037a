//! The signals a process that is not ours receives, seen by ptrace (`PTRACE_SEIZE`, which
//! stops a thread only as a signal is delivered to it): which signal, from which pid, when,
//! and how the process ended. Used under a real host, whose ladder is sent to a grandchild
//! of the harness; a timed guess from the quit would turn the host's own slowness under load
//! into the server's stage.
//!
//! Every delivered signal is passed on unchanged, so the process handles it as it would
//! untraced. The tracer thread only ever waits for the traced threads by tid (never
//! `waitpid(-1)`, which would take the harness's own children's statuses). When it stops,
//! the kernel detaches whatever is still traced. Raw `libc` calls: nix's `WaitStatus` and
//! `Signal` cannot carry the real-time signals a runtime may use.

use std::collections::BTreeSet;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use super::clock::mono_ns;
use super::sched::realtime_this_thread;
use crate::model::{ExitStatus, SignalName};

/// One signal delivered to the process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delivery {
    pub signal: SignalName,
    /// The sender's pid (`si_pid`; 0 for the kernel, e.g. a terminal's SIGHUP).
    pub from_pid: i32,
    pub at_ns: u64,
}

/// What the trace saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Traced {
    pub deliveries: Vec<Delivery>,
    /// How it ended, if it ended while traced (a SIGKILL is only seen here: it is never
    /// delivered to a handler).
    pub exit: Option<ExitStatus>,
}

/// A running trace; [`SignalTrace::finish`] ends it, and so does dropping it.
pub struct SignalTrace {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Traced>>,
}

impl Drop for SignalTrace {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Starts tracing `pid`'s signals (every thread it has and starts). Fails when ptrace is
/// not allowed here (Yama's `ptrace_scope`, a seccomp profile, another tracer).
pub fn trace_signals(pid: i32) -> io::Result<SignalTrace> {
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = mpsc::channel();
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        realtime_this_thread();
        let mut tids = BTreeSet::new();
        // ptrace requests must come from the thread that attached: this one.
        let first = seize_all(pid, &mut tids);
        let ok = first.is_ok();
        let _ = ready_tx.send(first);
        if !ok {
            return Traced::default();
        }
        trace_until_stopped(pid, &mut tids, &flag)
    });
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(SignalTrace {
            stop,
            thread: Some(thread),
        }),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => Err(io::Error::other("the signal tracer thread did not start")),
    }
}

impl SignalTrace {
    /// Stops tracing (the process, if alive, is detached and runs on) and says what was seen.
    pub fn finish(mut self) -> Traced {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }

    /// Waits up to `limit` for the process to end under the trace, then finishes.
    pub fn finish_within(self, limit: Duration) -> Traced {
        let end = std::time::Instant::now() + limit;
        while self.thread.as_ref().is_some_and(|t| !t.is_finished())
            && std::time::Instant::now() < end
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.finish()
    }
}

fn options() -> libc::c_long {
    (libc::PTRACE_O_TRACECLONE | libc::PTRACE_O_TRACEEXEC) as libc::c_long
}

fn seize(tid: i32) -> io::Result<()> {
    // SAFETY: PTRACE_SEIZE takes no pointer (addr 0, data is the option bits).
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_SEIZE,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            options(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Seizes every thread of `pid` not yet in `tids`. The leader failing is the trace failing.
fn seize_all(pid: i32, tids: &mut BTreeSet<i32>) -> io::Result<()> {
    if tids.is_empty() {
        seize(pid)?;
        tids.insert(pid);
    }
    for tid in super::procfs::threads(pid) {
        if !tids.contains(&tid) && seize(tid).is_ok() {
            tids.insert(tid);
        }
    }
    Ok(())
}

/// Resumes a stopped thread, handing it `signal` (0: none).
fn resume(tid: i32, request: libc::c_uint, signal: i32) {
    // SAFETY: PTRACE_CONT / PTRACE_LISTEN take no pointer; data is a signal number.
    unsafe {
        libc::ptrace(
            request,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            signal as libc::c_long,
        );
    }
}

fn sender(tid: i32) -> i32 {
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: PTRACE_GETSIGINFO writes one siginfo_t to data, which points at ours.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETSIGINFO,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut info as *mut libc::siginfo_t,
        )
    };
    if r != 0 {
        return 0;
    }
    // SAFETY: si_pid is set for signals sent by kill(2) and the kernel's own (0 otherwise).
    unsafe { info.si_pid() }
}

fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// Follows every thread of `pid` until `stop` is set or the process is gone.
fn trace_until_stopped(pid: i32, tids: &mut BTreeSet<i32>, stop: &AtomicBool) -> Traced {
    let mut out = Traced::default();
    let mut rounds = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let busy = follow_each_thread(pid, tids, &mut out);
        if out.exit.is_some() {
            return out;
        }
        rounds += 1;
        // A thread started by one not yet seized is picked up here.
        if rounds.is_multiple_of(20) {
            let _ = seize_all(pid, tids);
        }
        if !busy {
            std::thread::sleep(Duration::from_micros(500));
        }
    }
    out
}

/// What a traced thread did since it was last looked at.
enum Waited {
    Nothing,
    /// No longer ours to wait for.
    Gone,
    Ended(ExitStatus),
    /// Stopped for a signal (`event` 0) or a ptrace event.
    Stopped {
        signal: i32,
        event: i32,
    },
    /// Any other change, nothing to act on.
    Other,
}

/// Looks at each traced thread once and acts on what it did; says whether any did anything.
/// The leader's end is the process's: it is noted in `out.exit` and ends the round.
fn follow_each_thread(pid: i32, tids: &mut BTreeSet<i32>, out: &mut Traced) -> bool {
    let mut busy = false;
    for tid in tids.clone() {
        match wait_thread(tid) {
            Waited::Nothing => continue,
            Waited::Gone => {
                tids.remove(&tid);
            }
            Waited::Ended(exit) => {
                tids.remove(&tid);
                if tid == pid {
                    out.exit = Some(exit);
                    return true;
                }
            }
            Waited::Stopped { signal, event } => {
                on_stop(tid, signal, event, tids, &mut out.deliveries)
            }
            Waited::Other => {}
        }
        busy = true;
    }
    busy
}

fn wait_thread(tid: i32) -> Waited {
    let mut status = 0;
    // SAFETY: waits for one traced thread by tid; status is ours to write.
    let r = unsafe { libc::waitpid(tid, &mut status, libc::__WALL | libc::WNOHANG) };
    if r == 0 {
        Waited::Nothing
    } else if r < 0 {
        Waited::Gone
    } else if libc::WIFEXITED(status) {
        Waited::Ended(ExitStatus::Code(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Waited::Ended(ExitStatus::Signal(SignalName::from_raw(libc::WTERMSIG(
            status,
        ))))
    } else if libc::WIFSTOPPED(status) {
        Waited::Stopped {
            signal: libc::WSTOPSIG(status),
            event: (status >> 16) & 0xff,
        }
    } else {
        Waited::Other
    }
}

/// Acts on a stopped thread and resumes it: a delivered signal is noted and handed on, a
/// new thread is followed too.
fn on_stop(tid: i32, sig: i32, event: i32, tids: &mut BTreeSet<i32>, seen: &mut Vec<Delivery>) {
    match event {
        0 => {
            seen.push(Delivery {
                signal: SignalName::from_raw(sig),
                from_pid: sender(tid),
                at_ns: mono_ns(),
            });
            resume(tid, libc::PTRACE_CONT, sig);
        }
        libc::PTRACE_EVENT_CLONE => {
            if let Some(new) = cloned_thread(tid) {
                tids.insert(new);
            }
            resume(tid, libc::PTRACE_CONT, 0);
        }
        // A group-stop (SIGSTOP and kin) is kept as a stop, as it would be untraced.
        libc::PTRACE_EVENT_STOP if is_stop_signal(sig) => resume(tid, libc::PTRACE_LISTEN, 0),
        _ => resume(tid, libc::PTRACE_CONT, 0),
    }
}

/// The tid of the thread `tid` just started (at its `PTRACE_EVENT_CLONE` stop).
fn cloned_thread(tid: i32) -> Option<i32> {
    let mut new: libc::c_ulong = 0;
    // SAFETY: PTRACE_GETEVENTMSG writes one c_ulong to data.
    unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut new as *mut libc::c_ulong,
        );
    }
    (new != 0).then_some(new as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traced_process_gets_its_signals_and_the_trace_sees_them_and_its_end() {
        use std::io::BufRead;
        // A grandchild, as under a real host: its shell parent reaps it. It says when its
        // handler is in place: before that it may still be a launcher (a pyenv shim forks
        // helpers, whose SIGCHLDs it receives) or a runtime starting up.
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "python3 -c 'import signal,time\nsignal.signal(signal.SIGINT, lambda *a: None)\nprint(\"ready\", flush=True)\ntime.sleep(30)' & wait $!; echo $?"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(sh.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
        let pid = super::super::procfs::children(sh.id() as i32)[0].pid;
        let trace = trace_signals(pid).unwrap();
        let me = std::process::id() as i32;
        super::super::signals::signal_pid(pid, SignalName::Int);
        std::thread::sleep(Duration::from_millis(100));
        super::super::signals::signal_pid(pid, SignalName::Term);
        let seen = trace.finish_within(Duration::from_secs(5));
        // Only ours: a runtime may get others (its own children's SIGCHLD) at any time.
        let got: Vec<SignalName> = seen
            .deliveries
            .iter()
            .filter(|d| d.from_pid == me)
            .map(|d| d.signal)
            .collect();
        assert_eq!(got, [SignalName::Int, SignalName::Term], "{seen:?}");
        assert_eq!(seen.exit, Some(ExitStatus::Signal(SignalName::Term)));
        // The real parent still got its status.
        line.clear();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "143");
        sh.wait().unwrap();
    }
}
