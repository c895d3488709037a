//! CPU tokens: start-ups and the timed window after a trigger are CPU-heavy (an interpreter
//! starting or tearing down), so only as many run at once as there are CPUs: one per CPU, at
//! least two.
//!
//! Machine-wide, not only process-wide: a token is a permit of this process's semaphore
//! *and* an exclusive `flock` on one of N slot files in a directory every harness of this
//! user shares. So parallel test processes (`cargo nextest` runs each test in its own
//! process), two `mcp-shutdown run`s, or a run beside `cargo test` never overlap more timed
//! windows than the machine has CPUs, and verdicts do not depend on how tests were split into
//! processes. The kernel drops a dead process's locks, so a crash never leaks a token.
//!
//! A fair share between runs: a run that wants tokens (a case waiting for one or holding one)
//! holds the `flock` on its presence file `run-<pid>.lock` in that directory; a run may hold
//! at most its share of the slots, `ceil(slots / runs wanting them)`, at least one. So a run
//! never waits for another run's whole queue: whatever the other has queued, it gets its
//! share of the CPUs as soon as it asks, and a run alone gets all of them.
//!
//! The directory is `$MCP_SHUTDOWN_TOKEN_DIR`, else `<temp dir>/mcp-shutdown-cpu-tokens-<uid>`;
//! `MCP_SHUTDOWN_TOKEN_DIR=` (empty) keeps tokens within the process, as does a directory that
//! cannot be created.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::os::lock::{euid, lock_exclusive, try_lock_exclusive, Flock};

/// A counting semaphore (std has none) that grants its permits by rank: of the callers
/// waiting, the one with the lowest rank (then the earliest) goes first, so the harness's
/// longest-first order holds for tokens too, however the threads happen to wake.
#[derive(Debug)]
pub struct Semaphore {
    size: usize,
    state: Mutex<Queue>,
    cv: Condvar,
}

/// How often a caller held back by its run's share looks at the other runs again.
const SHARE_RECHECK: Duration = Duration::from_millis(25);

#[derive(Debug)]
struct Queue {
    free: usize,
    /// (rank, arrival) of every caller waiting.
    waiting: BTreeSet<(usize, u64)>,
    arrivals: u64,
}

/// A held permit of a [`Semaphore`]; given back on drop.
pub struct LocalPermit<'a>(&'a Semaphore);

impl Semaphore {
    pub fn new(n: usize) -> Self {
        Self {
            size: n,
            state: Mutex::new(Queue {
                free: n,
                waiting: BTreeSet::new(),
                arrivals: 0,
            }),
            cv: Condvar::new(),
        }
    }

    /// Blocks until a permit is free and no caller of a lower rank (or the same rank, come
    /// earlier) is waiting for one.
    #[cfg(test)]
    pub fn acquire(&self, rank: usize) -> LocalPermit<'_> {
        self.acquire_within(rank, || usize::MAX)
    }

    /// [`Self::acquire`], holding at most `limit()` permits at once (asked again while it
    /// waits: another process's demand changes it).
    pub fn acquire_within(&self, rank: usize, limit: impl Fn() -> usize) -> LocalPermit<'_> {
        let mut q = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let ticket = (rank, q.arrivals);
        q.arrivals += 1;
        q.waiting.insert(ticket);
        while q.free == 0 || q.waiting.first() != Some(&ticket) || self.size - q.free >= limit() {
            q = self
                .cv
                .wait_timeout(q, SHARE_RECHECK)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        q.waiting.remove(&ticket);
        q.free -= 1;
        drop(q);
        // The next in line may find a permit free too.
        self.cv.notify_all();
        LocalPermit(self)
    }
}

impl Drop for LocalPermit<'_> {
    fn drop(&mut self) {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner()).free += 1;
        self.0.cv.notify_all();
    }
}

/// N tokens shared by every process that uses the same slot directory.
#[derive(Debug)]
pub struct Tokens {
    local: Semaphore,
    slots: usize,
    dir: Option<PathBuf>,
    presence: Mutex<Presence>,
}

/// This run's demand for tokens (cases waiting for or holding one) and its presence file,
/// locked while the demand is not zero.
#[derive(Debug, Default)]
struct Presence {
    demand: usize,
    file: Option<File>,
    held: Option<Flock<File>>,
}

/// A held token: the local permit and, when tokens are machine-wide, the slot's lock. All
/// are given back on drop (the lock by closing its file), the demand last.
pub struct Permit<'a> {
    _slot: Option<Flock<File>>,
    _local: LocalPermit<'a>,
    _demand: Demand<'a>,
}

/// One case's demand for a token, from asking until giving it back.
struct Demand<'a>(&'a Tokens);

impl Drop for Demand<'_> {
    fn drop(&mut self) {
        let mut p = self.0.presence();
        p.demand -= 1;
        if p.demand == 0 {
            if let Some(held) = p.held.take() {
                p.file = crate::os::lock::unlock(held);
            }
        }
    }
}

/// The longest pause between two looks at the slots while all are held.
const MAX_BACKOFF: Duration = Duration::from_millis(20);

impl Tokens {
    /// `n` tokens; machine-wide through the slot files in `dir` when it is given and usable.
    pub fn new(n: usize, dir: Option<PathBuf>) -> Self {
        let dir = dir.filter(|d| std::fs::create_dir_all(d).is_ok());
        let file = dir.as_deref().and_then(|d| {
            File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(d.join(presence_name(std::process::id() as i32)))
                .ok()
        });
        Self {
            local: Semaphore::new(n),
            slots: n,
            dir,
            presence: Mutex::new(Presence {
                file,
                ..Presence::default()
            }),
        }
    }

    fn presence(&self) -> std::sync::MutexGuard<'_, Presence> {
        self.presence.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A case of this run asks for a token: the run is present while any does.
    fn want(&self) -> Demand<'_> {
        let mut p = self.presence();
        p.demand += 1;
        if p.held.is_none() {
            if let Some(f) = p.file.take() {
                match lock_exclusive(f) {
                    Ok(held) => p.held = Some(held),
                    Err(f) => p.file = Some(f),
                }
            }
        }
        Demand(self)
    }

    /// How many slots this run may hold now: its share of them among the runs that want
    /// tokens (itself included), at least one; all of them without a shared directory.
    fn share(&self) -> usize {
        let Some(dir) = &self.dir else {
            return usize::MAX;
        };
        let runs = 1 + other_runs_wanting(dir);
        self.slots.div_ceil(runs).max(1)
    }

    /// Whether the tokens are shared with other processes.
    #[cfg(test)]
    pub fn machine_wide(&self) -> bool {
        self.dir.is_some()
    }

    /// Blocks until a token is free for a case of this `rank` (0 first). Waiting is never
    /// timed: the case's clock starts after.
    pub fn acquire(&self, rank: usize) -> Permit<'_> {
        let demand = self.want();
        let local = self.local.acquire_within(rank, || self.share());
        let slot = self.dir.as_deref().and_then(|d| self.slot(d));
        Permit {
            _slot: slot,
            _local: local,
            _demand: demand,
        }
    }

    /// Locks a free slot file, polling all of them (a blocking lock on one would wait for
    /// that slot while another is free). `None` when the files cannot be opened.
    ///
    /// One caller at a time polls: the others wait for the queue lock in the kernel. Without
    /// it, a process whose threads hand slots on to each other the moment they free them
    /// starved a process that polls (a `check` beside `cargo test` waited 89 s for 0.07 s of
    /// work).
    fn slot(&self, dir: &Path) -> Option<Flock<File>> {
        let _turn = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("queue.lock"))
            .ok()
            .and_then(|f| lock_exclusive(f).ok());
        let mut files: Vec<File> = (0..self.slots)
            .map(|i| {
                File::options()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(dir.join(format!("cpu-{i}.lock")))
            })
            .collect::<Result<_, _>>()
            .ok()?;
        let mut backoff = Duration::from_millis(1);
        loop {
            let mut still = Vec::with_capacity(files.len());
            for f in files {
                match try_lock_exclusive(f) {
                    Ok(held) => return Some(held),
                    Err(f) => still.push(f),
                }
            }
            files = still;
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

fn presence_name(pid: i32) -> String {
    format!("run-{pid}.lock")
}

/// The other runs whose presence file is locked (they want tokens now). The file of a run
/// that is gone is removed.
fn other_runs_wanting(dir: &Path) -> usize {
    let me = presence_name(std::process::id() as i32);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut wanting = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("run-")
            .and_then(|r| r.strip_suffix(".lock"))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if name == me {
            continue;
        }
        let Ok(f) = File::options().write(true).open(e.path()) else {
            continue;
        };
        match try_lock_exclusive(f) {
            Err(_) => wanting += 1,
            Ok(_idle) => {
                if !crate::os::lock::pid_alive(pid) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    wanting
}

/// Where the slot files are, from `MCP_SHUTDOWN_TOKEN_DIR` (empty: none).
fn token_dir() -> Option<PathBuf> {
    match std::env::var_os("MCP_SHUTDOWN_TOKEN_DIR") {
        Some(d) if d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => {
            let uid = euid();
            Some(std::env::temp_dir().join(format!("mcp-shutdown-cpu-tokens-{uid}")))
        }
    }
}

/// The tokens of this process (machine-wide unless configured otherwise).
pub fn cpu_tokens() -> &'static Tokens {
    static GATE: OnceLock<Tokens> = OnceLock::new();
    GATE.get_or_init(|| {
        let n = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2);
        Tokens::new(n, token_dir())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Two `Tokens` over one directory stand for two processes: flock locks belong to the
    /// open file description, so they exclude each other exactly as processes would.
    #[test]
    fn tokens_over_one_directory_are_shared() {
        let dir = tempfile::tempdir().unwrap();
        let a = Arc::new(Tokens::new(2, Some(dir.path().to_path_buf())));
        let b = Arc::new(Tokens::new(2, Some(dir.path().to_path_buf())));
        assert!(a.machine_wide() && b.machine_wide());
        let held = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for i in 0..8 {
                let t = if i % 2 == 0 { a.clone() } else { b.clone() };
                let (held, most) = (&held, &most);
                s.spawn(move || {
                    for _ in 0..5 {
                        let _p = t.acquire(i);
                        let now = held.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(3));
                        held.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(
            most.load(Ordering::SeqCst),
            2,
            "never more than the 2 slots at once"
        );
    }

    /// A run that wants tokens caps the other at its share: with 4 slots and two runs
    /// wanting, each holds at most 2, though a slot is free; when one run stops wanting, the
    /// other takes them all. (Presence files are per process; the second run here is the
    /// file of a child process that holds its lock.)
    #[test]
    fn a_run_holds_at_most_its_share_while_another_wants_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let a = Tokens::new(4, Some(dir.path().to_path_buf()));
        let _one = a.acquire(0);
        let _two = a.acquire(0);
        // Another run wanting a token: a process holding the lock on its presence file.
        // -o: the lock is flock's own, not inherited by its command.
        let mut other = std::process::Command::new("flock")
            .arg("-o")
            .arg(dir.path().join(presence_name(999_999)))
            .args(["sleep", "30"])
            .spawn()
            .unwrap();
        let other_wants = || other_runs_wanting(dir.path()) == 1;
        while !other_wants() {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(a.share(), 2);
        let third = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _three = a.acquire(0);
                third.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(Duration::from_millis(300));
            assert!(!third.load(Ordering::SeqCst), "more than its share");
            let _ = other.kill();
            let _ = other.wait();
        });
        assert!(third.load(Ordering::SeqCst));
        assert_eq!(a.share(), 4, "alone, a run may hold every slot");
    }

    #[test]
    fn a_dropped_permit_frees_its_slot_and_no_directory_means_local() {
        let dir = tempfile::tempdir().unwrap();
        let a = Tokens::new(1, Some(dir.path().to_path_buf()));
        let b = Tokens::new(1, Some(dir.path().to_path_buf()));
        drop(a.acquire(0));
        let _held = b.acquire(0);
        let local = Tokens::new(1, None);
        assert!(!local.machine_wide());
        drop(local.acquire(0));
        let missing = Tokens::new(1, Some(PathBuf::from("/proc/nope/tokens")));
        assert!(!missing.machine_wide(), "an unusable directory falls back");
    }

    /// While a token is held, callers queue; when it is given back they get it lowest rank
    /// first, whatever order they came in.
    #[test]
    fn waiting_callers_are_served_by_rank() {
        let sem = Arc::new(Semaphore::new(1));
        let held = sem.acquire(0);
        let order = Arc::new(Mutex::new(Vec::new()));
        let threads: Vec<_> = [5, 1, 3, 0, 4]
            .into_iter()
            .enumerate()
            .map(|(k, rank)| {
                let (mine, order) = (sem.clone(), order.clone());
                let t = std::thread::spawn(move || {
                    let _p = mine.acquire(rank);
                    order.lock().unwrap().push(rank);
                });
                // Each is waiting before the next comes (the order of arrival is not rank's).
                while sem.state.lock().unwrap().waiting.len() < k + 1 {
                    std::thread::yield_now();
                }
                t
            })
            .collect();
        drop(held);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 3, 4, 5]);
    }
}
