//! The install phase and the offline launch (the recipe in `conformance/census/RECIPE.md`).
//!
//! Every package goes once, at its exact version and with all its dependencies, into one
//! shared cache directory:
//!
//! ```text
//! $CACHE/npm/          npm's cache (npm_config_cache); npx installs land in npm/_npx/<hash>
//! $CACHE/uv/           a venv holding the pinned uv (uv, uvx)
//! $CACHE/uv-cache/     uv's cache (UV_CACHE_DIR); uvx environments live in archive-v0
//! $CACHE/uv-tools/     an empty tool dir, so a user's `uv tool install`s are not picked up
//! $CACHE/work/         the empty working directory of installs and launches
//! $CACHE/stamps/       one stamp per installed package@version (and one for uv)
//! $CACHE/locks/        the lock files that serialize installs across processes
//! $CACHE/logs/         the full output of each install
//! ```
//!
//! An install is the launcher's own command run online with a no-op in place of the server
//! (`npx --yes --package=ID@VER -- true`, `uvx --from ID==VER python -c ""`), so npx and uvx
//! fill exactly the directories they later read; it is then repeated with the offline switches
//! to prove the launch will not need the network. The launch runs the same launcher with
//! those switches, so a missing package fails at once instead of downloading mid-measurement.

use super::listing::{Entry, Launcher, Registry};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod once;
mod recipe;
#[cfg(test)]
mod tests;

use once::*;
pub(super) use once::{fnv1a, run_once, StepRunner, System};
use recipe::*;
pub use recipe::{install_steps, launch};
pub(super) use recipe::{npm_cache, npm_env, uv_env, uvx_install_step, uvx_path, work_dir};

/// The uv release the census installs from PyPI (and so the uvx every PyPI server runs under).
pub const UV_VERSION: &str = "0.13.9";

/// Bumped when the install commands change, so old stamps no longer count.
const RECIPE: &str = "census-recipe-1";

/// An install that takes longer is stopped: a resolver stuck on the network, not a slow disk.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// Lines of install output kept in an error.
const TAIL_LINES: usize = 25;

/// How to start one entry from the cache, offline: argv (no shell), environment additions and
/// working directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CachedLaunch {
    /// `npx` (looked up on `PATH`, as users run it) or the absolute path of the cached `uvx`.
    pub program: String,
    pub args: Vec<String>,
    /// Added to the caller's environment.
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

/// What the install phase is doing, for a progress line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstallProgress {
    /// Installing a launcher into the cache (uv, once per cache).
    Runtime { tool: String, version: String },
    Started {
        index: usize,
        total: usize,
        id: String,
    },
    Finished {
        index: usize,
        total: usize,
        id: String,
        /// Already installed by an earlier run (the stamp was there).
        cached: bool,
        ok: bool,
        elapsed: Duration,
    },
}

/// Why a package is not ready to launch offline.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InstallError {
    #[error("installing {id} needs `{program}`, which is not on PATH")]
    MissingProgram { id: String, program: String },
    #[error("install cache {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("install of {id}: `{command}` could not start: {source}")]
    Spawn {
        id: String,
        command: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("install of {id}: `{command}` failed ({status}); full output in {}; last lines:\n{tail}", log.display())]
    Failed {
        id: String,
        command: String,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error("install of {id}: `{command}` still running after {}s, stopped; full output in {}; last lines:\n{tail}", timeout.as_secs(), log.display())]
    TimedOut {
        id: String,
        command: String,
        timeout: Duration,
        log: PathBuf,
        tail: String,
    },
    #[error("install of {id}: uv {UV_VERSION} is not available: {reason}")]
    NoUv {
        id: String,
        #[source]
        reason: UvError,
    },
    #[error("install of {id}: not attempted: the disk of the install cache {} is full", cache.display())]
    DiskFull { id: String, cache: PathBuf },
}

/// Less than this free under the cache when an install fails: the disk is full, whatever the
/// command printed, and every install after it would fail the same way.
const DISK_FULL_BYTES: u64 = 32 << 20;

impl InstallError {
    /// Did it fail because the disk under `cache` is full (the error says so, or the disk
    /// has next to nothing left)?
    pub fn is_disk_full(&self, cache: &Path) -> bool {
        let said = match self {
            InstallError::DiskFull { .. } => true,
            InstallError::Io { source, .. } | InstallError::Spawn { source, .. } => {
                source.kind() == std::io::ErrorKind::StorageFull
            }
            _ => false,
        };
        said || crate::os::command::free_bytes(cache).is_some_and(|free| free < DISK_FULL_BYTES)
    }
}

/// Why the pinned uv could not be put into the cache.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UvError {
    #[error("`python3` is not on PATH")]
    NoPython,
    #[error("{0}")]
    Install(Box<InstallError>),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + '_ {
    move |e| InstallError::Io {
        path: path.to_path_buf(),
        source: Arc::new(e),
    }
}

/// One command of the recipe, as data (so the pure parts can be tested without running it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallStep {
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

impl InstallStep {
    /// For messages and stamps; words with spaces quoted so the line reads unambiguously.
    pub fn render(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|w| {
                if w.is_empty() || w.contains(char::is_whitespace) {
                    format!("{w:?}")
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The environment it sets, then the command: what a stamp records and a log shows.
    pub fn render_with_env(&self) -> String {
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if env.is_empty() {
            self.render()
        } else {
            format!("env {} {}", env.join(" "), self.render())
        }
    }
}

/// Is `program` runnable: an executable path, or found on `PATH`.
fn on_path(program: &str) -> bool {
    which::which(program).is_ok()
}

/// Installs every entry (at most once per package@version and recipe, whatever the number of
/// processes doing it at once) and verifies each can start offline. One result per entry, in
/// order.
pub fn install(
    entries: &[Entry],
    cache: &Path,
    progress: &mut dyn FnMut(InstallProgress),
) -> Vec<Result<(), InstallError>> {
    install_with(&System, entries, cache, progress)
}

fn install_with(
    runner: &dyn StepRunner,
    entries: &[Entry],
    cache: &Path,
    progress: &mut dyn FnMut(InstallProgress),
) -> Vec<Result<(), InstallError>> {
    let uv = if entries.iter().any(|e| e.runtime == Launcher::Uvx) {
        Some(ensure_uv(runner, cache, progress))
    } else {
        None
    };
    let total = entries.len();
    let mut results = Vec::with_capacity(total);
    let mut disk_full = false;
    for (index, entry) in entries.iter().enumerate() {
        // Once the disk is full every install fails, each after its own download.
        if disk_full {
            results.push(Err(InstallError::DiskFull {
                id: entry.id.clone(),
                cache: cache.to_path_buf(),
            }));
            continue;
        }
        let started = Instant::now();
        progress(InstallProgress::Started {
            index,
            total,
            id: entry.id.clone(),
        });
        let result = install_entry(runner, entry, cache, uv.as_ref());
        progress(InstallProgress::Finished {
            index,
            total,
            id: entry.id.clone(),
            cached: matches!(result, Ok(true)),
            ok: result.is_ok(),
            elapsed: started.elapsed(),
        });
        disk_full = result.as_ref().is_err_and(|e| e.is_disk_full(cache));
        results.push(result.map(|_| ()));
    }
    results
}

fn ensure_uv(
    runner: &dyn StepRunner,
    cache: &Path,
    progress: &mut dyn FnMut(InstallProgress),
) -> Result<(), UvError> {
    if !on_path("python3") {
        return Err(UvError::NoPython);
    }
    let steps = uv_steps(cache);
    let key = format!("uv-{UV_VERSION}");
    let content = stamp_content(&steps);
    if !stamped(cache, &key, &content) || !uvx_path(cache).exists() {
        progress(InstallProgress::Runtime {
            tool: "uv".into(),
            version: UV_VERSION.into(),
        });
        // A stamp whose venv has gone (someone removed `$CACHE/uv`) must not count.
        let _ = fs::remove_file(stamp_path(cache, &key));
    }
    run_once(runner, cache, "uv", &key, &steps)
        .map(|_| ())
        .map_err(|e| UvError::Install(Box::new(e)))
}

fn install_entry(
    runner: &dyn StepRunner,
    entry: &Entry,
    cache: &Path,
    uv: Option<&Result<(), UvError>>,
) -> Result<bool, InstallError> {
    match (entry.registry, uv) {
        (Registry::Pypi, Some(Err(reason))) => {
            return Err(InstallError::NoUv {
                id: entry.id.clone(),
                reason: reason.clone(),
            })
        }
        (Registry::Npm, _) if !on_path("npx") => {
            return Err(InstallError::MissingProgram {
                id: entry.id.clone(),
                program: "npx".into(),
            })
        }
        _ => {}
    }
    let steps = install_steps(entry, cache);
    let key = install_key(entry, &steps);
    run_once(runner, cache, &entry.id, &key, &steps)
}
