//! The supervisor's link to the harness, and its ways out: the CPU-token protocol, the case
//! deadline, and `abort`, which kills the whole case from any thread.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::protocol::{send, FromSupervisor};
use crate::exit_codes;
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
/// watching) hold no token.
pub struct Link {
    pub go: Receiver<()>,
    pub deadline_ms: u64,
}

impl Link {
    fn say(msg: &FromSupervisor) {
        send(&mut std::io::stdout().lock(), msg);
    }

    /// Blocks until the harness grants a CPU token. The deadline does not run meanwhile:
    /// on a busy machine (many cases, or other harnesses sharing the tokens) the wait can
    /// outlast any deadline, and it says nothing about the case.
    pub fn need_cpu(&self) {
        DEADLINE_NS.store(u64::MAX, Ordering::SeqCst);
        Self::say(&FromSupervisor::NeedCpu);
        if self.go.recv().is_err() {
            abort("the harness went away");
        }
        set_deadline(self.deadline_ms);
    }

    pub fn free_cpu(&self) {
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
