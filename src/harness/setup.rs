//! Fixture setup (`npm ci`, building a binary, ...): run once before the first launch,
//! cached on a stamp keyed by the command and the contents of its inputs, and serialized by
//! an advisory lock so that two tests (or two harness processes) starting together do not
//! install into the same directory at once.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::Hasher;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use crate::config::manifest::Setup;

const STAMP: &str = ".mcp-shutdown-setup.stamp";
const LOCK: &str = ".mcp-shutdown-setup.lock";

/// Why a setup did not leave the fixture ready.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("setup needs `{program}`, which is not on PATH (install it to run this fixture)")]
    MissingProgram { program: String },
    #[error("setup input {path} cannot be read: {source}")]
    Input {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("setup `{command}` in {dir} could not start: {source}")]
    Spawn {
        command: String,
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("setup `{command}` in {dir} failed ({status}); last output:\n{tail}")]
    Failed {
        command: String,
        dir: String,
        status: String,
        tail: String,
    },
    #[error("setup `{command}` in {dir} finished but did not create {missing}")]
    NoOutput {
        command: String,
        dir: String,
        missing: String,
    },
    #[error("setup lock {path}: {source}")]
    Lock {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The cache key: the command line and every input's name and contents, hashed with 64-bit
/// FNV-1a (stable across Rust releases, unlike `DefaultHasher`; enough for a stamp).
pub fn key(setup: &Setup) -> Result<String, SetupError> {
    let mut h = fnv::FnvHasher::default();
    for a in &setup.command {
        h.write(a.as_bytes());
        h.write(&[0]);
    }
    for i in &setup.inputs {
        let p = setup.cwd.join(i);
        let data = std::fs::read(&p).map_err(|e| SetupError::Input {
            path: p.display().to_string(),
            source: e,
        })?;
        h.write(i.as_bytes());
        h.write(&data);
    }
    Ok(format!("{:016x}", h.finish()))
}

/// Is `program` runnable: an executable path, or a name found on `PATH`?
pub fn on_path(program: &str) -> bool {
    which::which(program).is_ok()
}

/// Makes sure the fixture is set up; runs the command at most once per key, even when
/// called concurrently from several threads or processes.
pub fn ensure(setup: &Setup) -> Result<(), SetupError> {
    for p in &setup.requires {
        if !on_path(p) {
            return Err(SetupError::MissingProgram { program: p.clone() });
        }
    }
    let key = key(setup)?;
    let lock_path = setup.cwd.join(LOCK);
    // Released when `_locked` is dropped; threads of one process exclude each other too.
    let _locked = crate::os::lock::lock_path(&lock_path).map_err(|e| SetupError::Lock {
        path: lock_path.display().to_string(),
        source: e,
    })?;
    let stamp_path = setup.cwd.join(STAMP);
    let outputs_ok = || setup.outputs.iter().all(|o| setup.cwd.join(o).exists());
    if std::fs::read_to_string(&stamp_path).is_ok_and(|s| s.trim() == key) && outputs_ok() {
        return Ok(());
    }
    let command = setup.command.join(" ");
    let dir = setup.cwd.display().to_string();
    if !on_path(&setup.command[0]) && !setup.cwd.join(&setup.command[0]).exists() {
        return Err(SetupError::MissingProgram {
            program: setup.command[0].clone(),
        });
    }
    let began = std::time::Instant::now();
    run_setup_command(setup, &command, &dir)?;
    if let Some(missing) = setup.outputs.iter().find(|o| !setup.cwd.join(o).exists()) {
        return Err(SetupError::NoOutput {
            command,
            dir,
            missing: missing.clone(),
        });
    }
    let mut f = File::create(&stamp_path).map_err(|e| SetupError::Lock {
        path: stamp_path.display().to_string(),
        source: e,
    })?;
    let _ = writeln!(f, "{key}");
    log_setup(began.elapsed(), &dir, &command);
    Ok(())
}

/// Runs the setup's command in its own process group, killed on an interrupt (no stamp: the
/// next run redoes it); a failure carries the last 30 lines it printed.
fn run_setup_command(setup: &Setup, command: &str, dir: &str) -> Result<(), SetupError> {
    let out = crate::os::command::run_captured(
        std::ffi::OsStr::new(&setup.command[0]),
        &setup.command[1..],
        &setup.cwd,
        std::iter::empty::<(&str, &str)>(),
        crate::os::command::Stderr::Merged,
    )
    .map_err(|e| SetupError::Spawn {
        command: command.to_string(),
        dir: dir.to_string(),
        source: e,
    })?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    Err(SetupError::Failed {
        command: command.to_string(),
        dir: dir.to_string(),
        status: crate::model::ExitStatus::from(out.status).to_string(),
        tail: lines[lines.len().saturating_sub(30)..].join("\n"),
    })
}

/// Where `.ci/run` (or anyone timing a run) collects how long each setup that ran took:
/// one `<seconds>\t<dir>\t<command>` line per setup, appended (one short write each, so
/// parallel test processes do not interleave lines).
const SETUP_LOG: &str = "MCP_SHUTDOWN_SETUP_LOG";

fn log_setup(took: std::time::Duration, dir: &str, command: &str) {
    let Some(path) = std::env::var_os(SETUP_LOG).filter(|p| !p.is_empty()) else {
        return;
    };
    if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
        let _ = f.write_all(format!("{:.1}\t{dir}\t{command}\n", took.as_secs_f64()).as_bytes());
    }
}

/// Runs a setup at most once per process and key; a failure is remembered, so that the
/// cases of a broken fixture fail fast with the same message instead of retrying it each.
pub(super) fn ensure_once(setup: &Setup) -> Result<(), String> {
    static DONE: OnceLock<Mutex<HashMap<PathBuf, Result<(), String>>>> = OnceLock::new();
    let done = DONE.get_or_init(Mutex::default);
    if let Some(r) = done
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&setup.cwd)
    {
        return r.clone();
    }
    // Concurrent callers serialize on the setup's file lock, not on this map.
    let r = ensure(setup).map_err(|e| e.to_string());
    done.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(setup.cwd.clone(), r.clone());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn setup_in(dir: &Path, script: &str) -> Setup {
        std::fs::write(dir.join("lock.txt"), "v1").unwrap();
        Setup {
            command: vec!["sh".into(), "-c".into(), script.into()],
            cwd: dir.to_path_buf(),
            inputs: vec!["lock.txt".into()],
            outputs: vec!["out".into()],
            requires: vec!["sh".into()],
        }
    }

    #[test]
    fn runs_once_and_again_when_inputs_change() {
        let d = tempfile::tempdir().unwrap();
        let s = setup_in(d.path(), "echo x >> count; touch out");
        ensure(&s).unwrap();
        ensure(&s).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join("count"))
                .unwrap()
                .lines()
                .count(),
            1
        );
        std::fs::write(d.path().join("lock.txt"), "v2").unwrap();
        ensure(&s).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join("count"))
                .unwrap()
                .lines()
                .count(),
            2
        );
    }

    #[test]
    fn concurrent_callers_run_it_once() {
        let d = tempfile::tempdir().unwrap();
        let s = setup_in(d.path(), "echo x >> count; sleep 0.2; touch out");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || ensure(&s).unwrap())
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(d.path().join("count"))
                .unwrap()
                .lines()
                .count(),
            1
        );
    }

    #[test]
    fn failures_are_explained() {
        let d = tempfile::tempdir().unwrap();
        let s = setup_in(d.path(), "echo boom; exit 3");
        let e = ensure(&s).unwrap_err().to_string();
        assert!(e.contains("exit code 3") && e.contains("boom"), "{e}");
        let mut s2 = setup_in(d.path(), "true");
        s2.requires = vec!["no-such-tool-xyz".into()];
        let e = ensure(&s2).unwrap_err().to_string();
        assert!(e.contains("`no-such-tool-xyz`"), "{e}");
        let s3 = setup_in(d.path(), "true");
        let e = ensure(&s3).unwrap_err().to_string();
        assert!(e.contains("did not create out"), "{e}");
        let _ = PathBuf::new();
    }
}
