//! The process's one interrupt. SIGINT, SIGTERM or SIGHUP to a user-facing command stops it
//! within a second, whatever it is doing: the process groups of the installs and setups
//! running now are killed, no new one starts (every install command is spawned through
//! [`super::command`], which asks here first), the hooks the running phase registered (stop
//! the cases' supervisors, the hosts, wake `check --watch`) run, and if the command has not
//! returned by then it exits `128 + signal` anyway. A second signal exits at once.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// How long the command has, after the hooks ran, to return by itself (its own message, the
/// cgroups released) before the process exits from here.
const GRACE: Duration = Duration::from_millis(700);

/// The signal that interrupted the process; 0: none yet.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The process groups of the install and setup commands running now.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
type HookFn = Box<dyn Fn() + Send>;
static HOOKS: Mutex<Vec<(u64, HookFn)>> = Mutex::new(Vec::new());
static NEXT_HOOK: AtomicU64 = AtomicU64::new(0);

fn lock<T>(m: &'static Mutex<T>) -> MutexGuard<'static, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Handles SIGINT, SIGTERM and SIGHUP from now on (once per process; later calls do nothing).
/// For user-facing commands and any process that runs installs and setups (the suite
/// in-process under `cargo test`, see [`super::command`]): the supervisor and the stand-in
/// client handle their own.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            let Some(sig) = signals.forever().next() else {
                return;
            };
            interrupt(sig);
            // The hooks ran; whatever the command is blocked in (a lock another process
            // holds, a render), it does not outlast the grace, nor a second signal.
            let began = std::time::Instant::now();
            while began.elapsed() < GRACE && signals.pending().next().is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
            exit_now(sig);
        });
    });
}

/// What a signal does: the flag, the running groups killed, the hooks run.
fn interrupt(sig: i32) {
    if SIGNAL
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return;
    }
    for &group in lock(&GROUPS).iter() {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
    for (_, hook) in lock(&HOOKS).iter() {
        hook();
    }
}

fn exit_now(sig: i32) -> ! {
    std::process::exit(announce(sig).into())
}

/// Says on stderr that the command was interrupted; its exit code.
pub fn announce(sig: i32) -> u8 {
    eprintln!(
        "mcp-shutdown: interrupted; every setup, server and descendant it started was stopped"
    );
    exit_code(sig)
}

/// The signal that interrupted this process, if one did.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

pub fn requested() -> bool {
    signal().is_some()
}

/// The exit code of a command ended by `sig`: the shell's `128 + n` (130 for SIGINT, 143 for
/// SIGTERM, 129 for SIGHUP).
pub fn exit_code(sig: i32) -> u8 {
    u8::try_from(128 + sig).unwrap_or(crate::exit_codes::INTERRUPTED)
}

/// The error a command that was not started gets.
pub fn refused() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        "interrupted: no new command starts",
    )
}

/// Runs `hook` on the interrupt (at once if it already came) until dropped.
#[must_use = "the hook is removed when this is dropped"]
pub struct Hook(u64);

pub fn on_interrupt(hook: impl Fn() + Send + 'static) -> Hook {
    let id = NEXT_HOOK.fetch_add(1, Ordering::SeqCst);
    lock(&HOOKS).push((id, Box::new(hook)));
    // A signal that came before the push ran the hooks it found: run this one too.
    if requested() {
        let hooks = lock(&HOOKS);
        if let Some((_, h)) = hooks.iter().find(|(i, _)| *i == id) {
            h();
        }
    }
    Hook(id)
}

impl Drop for Hook {
    fn drop(&mut self) {
        lock(&HOOKS).retain(|(i, _)| *i != self.0);
    }
}

/// A running command's process group, killed on the interrupt until dropped.
#[must_use = "the group is forgotten when this is dropped"]
pub struct Tracked(i32);

/// Tracks the group `pgid` (a child spawned with `process_group(0)`: its pid). If the
/// interrupt already came, the group is killed now.
pub fn track_group(pgid: u32) -> Tracked {
    let pgid = i32::try_from(pgid).unwrap_or(i32::MAX);
    lock(&GROUPS).push(pgid);
    // Either the handler saw the push, or this sees its flag (both are ordered by the lock).
    if requested() {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    Tracked(pgid)
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let mut groups = lock(&GROUPS);
        if let Some(i) = groups.iter().position(|g| *g == self.0) {
            groups.swap_remove(i);
        }
    }
}
