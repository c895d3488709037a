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
//! The directory is `$MCP_SHUTDOWN_TOKEN_DIR`, else `<temp dir>/mcp-shutdown-cpu-tokens-<uid>`;
//! `MCP_SHUTDOWN_TOKEN_DIR=` (empty) keeps tokens within the process, as does a directory that
//! cannot be created.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};

/// A counting semaphore (std has none).
#[derive(Debug)]
pub struct Semaphore {
    free: Mutex<usize>,
    cv: Condvar,
}

/// A held permit of a [`Semaphore`]; given back on drop.
pub struct LocalPermit<'a>(&'a Semaphore);

impl Semaphore {
    pub fn new(n: usize) -> Self {
        Self {
            free: Mutex::new(n),
            cv: Condvar::new(),
        }
    }

    pub fn acquire(&self) -> LocalPermit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        LocalPermit(self)
    }
}

impl Drop for LocalPermit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.cv.notify_one();
    }
}

/// N tokens shared by every process that uses the same slot directory.
#[derive(Debug)]
pub struct Tokens {
    local: Semaphore,
    slots: usize,
    dir: Option<PathBuf>,
}

/// A held token: the local permit and, when tokens are machine-wide, the slot's lock. Both
/// are given back on drop (the lock by closing its file).
pub struct Permit<'a> {
    _slot: Option<Flock<File>>,
    _local: LocalPermit<'a>,
}

/// The longest pause between two looks at the slots while all are held.
const MAX_BACKOFF: Duration = Duration::from_millis(20);

impl Tokens {
    /// `n` tokens; machine-wide through the slot files in `dir` when it is given and usable.
    pub fn new(n: usize, dir: Option<PathBuf>) -> Self {
        let dir = dir.filter(|d| std::fs::create_dir_all(d).is_ok());
        Self {
            local: Semaphore::new(n),
            slots: n,
            dir,
        }
    }

    /// Whether the tokens are shared with other processes.
    #[cfg(test)]
    pub fn machine_wide(&self) -> bool {
        self.dir.is_some()
    }

    /// Blocks until a token is free. Waiting is never timed: the case's clock starts after.
    pub fn acquire(&self) -> Permit<'_> {
        let local = self.local.acquire();
        let slot = self.dir.as_deref().and_then(|d| self.slot(d));
        Permit {
            _slot: slot,
            _local: local,
        }
    }

    /// Locks a free slot file, polling all of them (a blocking lock on one would wait for
    /// that slot while another is free). `None` when the files cannot be opened.
    fn slot(&self, dir: &Path) -> Option<Flock<File>> {
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
                match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
                    Ok(held) => return Some(held),
                    Err((f, _busy)) => still.push(f),
                }
            }
            files = still;
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

/// Where the slot files are, from `MCP_SHUTDOWN_TOKEN_DIR` (empty: none).
fn token_dir() -> Option<PathBuf> {
    match std::env::var_os("MCP_SHUTDOWN_TOKEN_DIR") {
        Some(d) if d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => {
            let uid = nix::unistd::geteuid().as_raw();
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
                        let _p = t.acquire();
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

    #[test]
    fn a_dropped_permit_frees_its_slot_and_no_directory_means_local() {
        let dir = tempfile::tempdir().unwrap();
        let a = Tokens::new(1, Some(dir.path().to_path_buf()));
        let b = Tokens::new(1, Some(dir.path().to_path_buf()));
        drop(a.acquire());
        let _held = b.acquire();
        let local = Tokens::new(1, None);
        assert!(!local.machine_wide());
        drop(local.acquire());
        let missing = Tokens::new(1, Some(PathBuf::from("/proc/nope/tokens")));
        assert!(!missing.machine_wide(), "an unusable directory falls back");
    }
}
