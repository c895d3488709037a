//! Scheduling classes of the supervisor's own threads. Neither nix nor rustix wraps
//! `sched_setscheduler`, so this is the one place that calls libc for it.

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
        let tid = nix::unistd::gettid().as_raw() as libc::id_t;
        // SAFETY: PRIO_PROCESS with a thread id sets that thread's nice value; no pointers.
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, -10) };
    }
    ok
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
            let said = realtime_this_thread();
            (batch, (said, policy()))
        })
        .join()
        .unwrap();
        assert_eq!(batch, libc::SCHED_BATCH);
        // It takes only with CAP_SYS_NICE (or RLIMIT_RTPRIO): whatever the machine allows,
        // what it returns is what the thread got, and a refusal leaves the thread as it was.
        let (said, got) = rt;
        if said {
            assert_eq!(got, libc::SCHED_FIFO);
        } else {
            assert_eq!(
                got,
                libc::SCHED_BATCH,
                "a refused real-time class changed the thread"
            );
        }
        assert_eq!(policy(), before);
    }
}
