//! Running steps at most once per package@version: stamps, per-key locks, logs, and the
//! runner that spawns each step with a timeout.

use super::*;
use crate::os::command as os;

/// Where a step ran to, as far as the install logic cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    Success,
    Failed { status: String },
    TimedOut,
}

/// Runs steps; the real one spawns processes, tests count calls.
pub(in crate::census) trait StepRunner {
    fn run(&self, step: &InstallStep, log: &mut File) -> std::io::Result<StepOutcome>;
}

pub(in crate::census) struct System;

impl StepRunner for System {
    fn run(&self, step: &InstallStep, log: &mut File) -> std::io::Result<StepOutcome> {
        writeln!(log, "$ {}", step.render_with_env())?;
        // Its own group, so a timeout stops the install's children (sh, node-gyp, …) too.
        let status = os::run_logged(
            &step.program,
            &step.args,
            &step.cwd,
            &step.env,
            log,
            INSTALL_TIMEOUT,
        )?;
        Ok(match status {
            Some(s) if s.success() => StepOutcome::Success,
            Some(s) => StepOutcome::Failed {
                status: s.to_string(),
            },
            None => StepOutcome::TimedOut,
        })
    }
}

/// 64-bit FNV-1a: stable across Rust releases (unlike `DefaultHasher`), enough for a stamp name.
pub(in crate::census) fn fnv1a(data: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    std::hash::Hasher::write(&mut h, data.as_bytes());
    std::hash::Hasher::finish(&h)
}

/// A file-name-safe key for one install: readable prefix, hash of everything that matters.
pub(super) fn install_key(entry: &Entry, steps: &[InstallStep]) -> String {
    let readable = crate::census::listing::entry_id(&entry.identifier, &entry.version);
    let what = format!(
        "{RECIPE}\n{}\n{}",
        entry.registry,
        steps
            .iter()
            .map(InstallStep::render)
            .collect::<Vec<_>>()
            .join("\n")
    );
    format!("{}-{readable}-{:016x}", entry.registry, fnv1a(&what))
}

/// The last `n` lines of a log, for an error message.
pub(super) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

pub(super) fn read_tail(log: &mut File) -> String {
    let mut text = String::new();
    // Only the end matters; a huge log is read from its last 64 KiB.
    let len = log.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = log.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let mut bytes = vec![];
    let _ = log.read_to_end(&mut bytes);
    text.push_str(&String::from_utf8_lossy(&bytes));
    tail(&text, TAIL_LINES)
}

/// Holds an exclusive lock on `locks/<key>.lock` until dropped. The lock belongs to the open
/// file, so it is released if the process dies, and threads of one process exclude each
/// other as separate processes do.
pub(super) type Lock = crate::os::lock::FileLock;

pub(super) fn lock(cache: &Path, key: &str) -> Result<Lock, InstallError> {
    let dir = cache.join("locks");
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let path = dir.join(format!("{key}.lock"));
    crate::os::lock::lock_path(&path).map_err(io_err(&path))
}

pub(super) fn stamp_content(steps: &[InstallStep]) -> String {
    let mut content = format!("{RECIPE}\n");
    for step in steps {
        content.push_str(&step.render_with_env());
        content.push('\n');
    }
    content
}

pub(super) fn stamp_path(cache: &Path, key: &str) -> PathBuf {
    cache.join("stamps").join(format!("{key}.stamp"))
}

pub(super) fn stamped(cache: &Path, key: &str, content: &str) -> bool {
    fs::read_to_string(stamp_path(cache, key)).is_ok_and(|s| s == content)
}

/// Written by rename, so a reader never sees half a stamp.
pub(super) fn write_stamp(cache: &Path, key: &str, content: &str) -> Result<(), InstallError> {
    let path = stamp_path(cache, key);
    let dir = cache.join("stamps");
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    fs::write(&tmp, content).map_err(io_err(&tmp))?;
    fs::rename(&tmp, &path).map_err(io_err(&path))
}

/// Runs `steps` in order under the key's lock unless the stamp says they already ran; returns
/// whether it was cached.
pub(in crate::census) fn run_once(
    runner: &dyn StepRunner,
    cache: &Path,
    id: &str,
    key: &str,
    steps: &[InstallStep],
) -> Result<bool, InstallError> {
    let content = stamp_content(steps);
    // Fast path without the lock: a finished stamp is never rewritten with other content.
    if stamped(cache, key, &content) {
        return Ok(true);
    }
    let _lock = lock(cache, key)?;
    if stamped(cache, key, &content) {
        return Ok(true);
    }
    for dir in [work_dir(cache), cache.join("logs")] {
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    }
    let log_path = cache.join("logs").join(format!("{key}.log"));
    let mut log = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&log_path)
        .map_err(io_err(&log_path))?;
    for step in steps {
        let outcome = runner
            .run(step, &mut log)
            .map_err(|e| InstallError::Spawn {
                id: id.to_string(),
                command: step.render(),
                source: Arc::new(e),
            })?;
        match outcome {
            StepOutcome::Success => {}
            StepOutcome::Failed { status } => {
                return Err(InstallError::Failed {
                    id: id.to_string(),
                    command: step.render(),
                    status,
                    tail: read_tail(&mut log),
                    log: log_path,
                })
            }
            StepOutcome::TimedOut => {
                return Err(InstallError::TimedOut {
                    id: id.to_string(),
                    command: step.render(),
                    timeout: INSTALL_TIMEOUT,
                    tail: read_tail(&mut log),
                    log: log_path,
                })
            }
        }
    }
    write_stamp(cache, key, &content)?;
    Ok(false)
}
