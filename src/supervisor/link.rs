//! The supervisor's link to the harness, and its ways out: the CPU-token protocol, the case
//! deadline, and `abort`, which kills the whole case from any thread.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::protocol::{send, FromSupervisor};
use crate::exit_codes;
use crate::model::CaseTiming;
use crate::os::{mono_ns, tree};

/// Held while this process starts a child. `abort` takes it and never gives it back, so no
/// process can be born after the final kill loop has looked.
static SPAWN_LOCK: Mutex<()> = Mutex::new(());

pub fn spawn_guard() -> MutexGuard<'static, ()> {
    SPAWN_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// The case deadline, pushed forward whenever the harness grants a token, so that time spent
/// queueing for one never counts against the case.
static DEADLINE_NS: AtomicU64 = AtomicU64::new(u64::MAX);

/// The supervisor's side of the CPU-token protocol. Idle waits (grace periods, orphan
/// watching) hold no token. It also stamps the phases of the case for its [`CaseTiming`].
pub struct Link {
    pub go: Receiver<()>,
    pub deadline_ms: u64,
    pub stamps: Stamps,
}

/// When the case's phases began and how long it queued for tokens (`CLOCK_MONOTONIC` ns;
/// 0: not yet).
#[derive(Debug, Default)]
pub struct Stamps {
    started_ns: AtomicU64,
    token_wait_ns: AtomicU64,
    held_since_ns: AtomicU64,
    token_held_ns: AtomicU64,
    ladder_ns: AtomicU64,
    ladder_done_ns: AtomicU64,
}

impl Stamps {
    /// Stamps taken from now on: the case starts.
    pub fn starting_now() -> Self {
        let s = Self::default();
        s.started_ns.store(mono_ns(), Ordering::SeqCst);
        s
    }

    /// The ending's ladder starts (the first trigger comes next).
    pub fn ladder_started(&self) {
        self.ladder_ns.store(mono_ns(), Ordering::SeqCst);
    }

    pub fn ladder_done(&self) {
        self.ladder_done_ns.store(mono_ns(), Ordering::SeqCst);
    }

    fn granted(&self) {
        self.held_since_ns.store(mono_ns(), Ordering::SeqCst);
    }

    fn holding(&self) -> bool {
        self.held_since_ns.load(Ordering::SeqCst) != 0
    }

    fn given_back(&self, now_ns: u64) {
        let since = self.held_since_ns.swap(0, Ordering::SeqCst);
        if since != 0 {
            self.token_held_ns
                .fetch_add(now_ns.saturating_sub(since), Ordering::SeqCst);
        }
    }

    /// The case's timing, when it ends `end_ns` (the fixture's setup is the harness's).
    pub fn timing(&self, end_ns: u64) -> CaseTiming {
        self.given_back(end_ns);
        let get = |a: &AtomicU64| a.load(Ordering::SeqCst);
        let mut t = split(
            get(&self.started_ns),
            get(&self.token_wait_ns),
            get(&self.ladder_ns),
            get(&self.ladder_done_ns),
            end_ns,
        );
        t.token_held_ms = get(&self.token_held_ns) as f64 / 1e6;
        t
    }
}

/// The phases between the stamps: start-up is the time before the ladder less the token
/// queue; a case that never reached its ending spent it all starting up.
fn split(started: u64, token_wait: u64, ladder: u64, done: u64, end: u64) -> CaseTiming {
    let ms = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e6;
    let token_wait_ms = token_wait as f64 / 1e6;
    let (before, grace_ms, observe_ms) = if ladder == 0 {
        (ms(started, end), 0.0, 0.0)
    } else {
        let done = if done == 0 { end } else { done };
        (ms(started, ladder), ms(ladder, done), ms(done, end))
    };
    CaseTiming {
        setup_ms: 0.0,
        token_wait_ms,
        token_held_ms: 0.0,
        cpu_ms: 0.0,
        startup_ms: (before - token_wait_ms).max(0.0),
        grace_ms,
        observe_ms,
    }
}

impl Link {
    fn say(msg: &FromSupervisor) {
        send(&mut std::io::stdout().lock(), msg);
    }

    /// Blocks until the harness grants a CPU token; at once if this case holds one. The
    /// deadline does not run meanwhile: on a busy machine (many cases, or other harnesses
    /// sharing the tokens) the wait can outlast any deadline, and it says nothing about the
    /// case.
    pub fn need_cpu(&self) {
        if self.stamps.holding() {
            return;
        }
        DEADLINE_NS.store(u64::MAX, Ordering::SeqCst);
        let asked = mono_ns();
        Self::say(&FromSupervisor::NeedCpu);
        if self.go.recv().is_err() {
            abort("the harness went away");
        }
        self.stamps
            .token_wait_ns
            .fetch_add(mono_ns().saturating_sub(asked), Ordering::SeqCst);
        self.stamps.granted();
        set_deadline(self.deadline_ms);
    }

    /// The server completed its handshake.
    pub fn handshake_done(&self) {
        Self::say(&FromSupervisor::HandshakeDone);
    }

    /// Gives the token back, if this case holds one.
    pub fn free_cpu(&self) {
        if !self.stamps.holding() {
            return;
        }
        self.stamps.given_back(mono_ns());
        Self::say(&FromSupervisor::FreeCpu);
    }
}

/// Sets the case deadline `ms` from now.
pub fn set_deadline(ms: u64) {
    DEADLINE_NS.store(mono_ns() + ms * 1_000_000, Ordering::SeqCst);
}

/// Aborts the case when the deadline passes.
pub fn watch_deadline() {
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_millis(200));
        if mono_ns() > DEADLINE_NS.load(Ordering::SeqCst) {
            abort("case deadline exceeded");
        }
    });
}

/// Kills the whole case and exits. Called from any thread (signal, lifeline, deadline, or
/// the main thread when the harness is gone); only the first call acts, later ones wait for
/// the exit. Nothing here may panic: a panicking thread would die without ending the process
/// (the harness's stderr may already be closed, so `eprintln!` is not an option).
pub fn abort(why: &str) -> ! {
    static ABORTING: AtomicBool = AtomicBool::new(false);
    if ABORTING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    // No process may be born after the kill loop has looked.
    std::mem::forget(spawn_guard());
    tree::kill_all_descendants();
    say_err(&format!("mcp-shutdown __case: aborted: {why}"));
    std::process::exit(exit_codes::SUPERVISOR_ABORTED)
}

/// One line to stderr, ignoring errors (a closed pipe must not panic).
pub fn say_err(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn phases_follow_the_stamps_and_the_token_queue_is_not_start_up() {
        let t = split(1_000 * MS, 300 * MS, 1_800 * MS, 3_800 * MS, 4_000 * MS);
        assert_eq!(t.token_wait_ms, 300.0);
        assert_eq!(t.startup_ms, 500.0);
        assert_eq!(t.grace_ms, 2_000.0);
        assert_eq!(t.observe_ms, 200.0);
        // no ending reached: all of it was start-up
        let t = split(1_000 * MS, 0, 0, 0, 1_250 * MS);
        assert_eq!((t.startup_ms, t.grace_ms, t.observe_ms), (250.0, 0.0, 0.0));
    }
}
