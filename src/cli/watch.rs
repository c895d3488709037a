//! `check --watch`: run, then run again whenever a watched file changes, printing the whole
//! report once and afterwards only what changed since the run before. Ctrl-C (SIGINT,
//! SIGTERM, SIGHUP) stops at once: a run in progress has every case's tree killed first.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use super::plan::RunPlan;
use super::run::{harness_of, write_files};
use crate::error::Error;
use crate::exit_codes;
use crate::model::Report;
use crate::render::{self, changes};

/// Directories no server's behaviour lives in (dependencies, caches, version control), and
/// editors' scratch files: never watched, so installing a package or saving in vim does not
/// start a run per file.
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".uv-cache",
    ".npm",
    ".cache",
];

/// After a change, wait until the files have been quiet this long (an editor's save, a
/// compiler's output) before running again.
const QUIET: Duration = Duration::from_millis(300);

/// Whether a changed path can change the server: not under a skipped directory below the
/// watched root it is in (the root itself may be anywhere, `target/tmp` included), not an
/// editor's scratch file, not one of the run's own outputs.
pub fn counts(path: &Path, roots: &[PathBuf], outputs: &[PathBuf]) -> bool {
    let below = roots
        .iter()
        .find_map(|r| path.strip_prefix(r).ok())
        .unwrap_or(path);
    relative_counts(below) && !outputs.iter().any(|o| path.starts_with(o))
}

fn relative_counts(path: &Path) -> bool {
    let scratch = |name: &str| {
        name.ends_with('~')
            || name.ends_with(".swp")
            || name.ends_with(".swx")
            || name.starts_with(".#")
            || name == "4913"
    };
    let skipped = path.components().any(|c| {
        let name = c.as_os_str().to_string_lossy();
        SKIPPED_DIRS.contains(&name.as_ref())
    });
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    !skipped && !name.is_some_and(|n| scratch(&n))
}

enum Wake {
    Changed(PathBuf),
    Stop,
}

/// Runs `cases` until interrupted; the exit code is then 130.
pub fn watch(plan: RunPlan, paths: Vec<PathBuf>) -> Result<ExitCode, Error> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let paths = if paths.is_empty() {
        vec![cwd.clone()]
    } else {
        paths
    };
    let paths: Vec<PathBuf> = paths.iter().map(|p| cwd.join(p)).collect();
    // The run's own outputs: `--output` files, and where its stdout and stderr are redirected.
    let mut outputs: Vec<PathBuf> = plan.outputs.iter().map(|(p, _)| cwd.join(p)).collect();
    outputs.extend(crate::os::watch::own_output_files());
    let harness = harness_of(&plan, None)?;
    let (tx, rx) = mpsc::channel();
    let _hook = on_interrupt(&harness, tx.clone());
    let keep = {
        let roots = paths.clone();
        move |p: &Path| counts(p, &roots, &outputs)
    };
    let mut watcher = crate::os::watch::watch(&paths, keep, move |p| {
        let _ = tx.send(Wake::Changed(p));
    })
    .map_err(Error::Usage)?;
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let mut last: Option<Report> = None;
    let mut changed: Option<PathBuf> = None;
    let code = loop {
        if let Some(p) = &changed {
            eprintln!("mcp-shutdown: {} changed: running again", p.display());
        }
        let mut report = harness.run(&plan.cases);
        if plan.name_by_handshake {
            super::run::name_by_handshake(&mut report);
        }
        if drained(&rx, &mut watcher).is_err() {
            break exit_codes::INTERRUPTED;
        }
        write_files(&plan, &report, None)?;
        match &last {
            None => print!("{}", render::render(&report, plan.format)),
            Some(old) => print!("{}", changes::compare(old, &report).text("the last run")),
        }
        last = Some(report);
        eprintln!(
            "mcp-shutdown: watching {} for changes (Ctrl-C stops)",
            shown.join(", ")
        );
        match next_change(&rx, &mut watcher) {
            Some(p) => changed = Some(p),
            None => break exit_codes::INTERRUPTED,
        }
    };
    crate::harness::release_cgroups();
    eprintln!("mcp-shutdown: stopped watching; every server and descendant was stopped");
    Ok(ExitCode::from(code))
}

/// Changes that came during a run are that run's (it read the files after them, or they
/// are in the next run's: either way one more run covers them); `Err` on a stop.
fn drained(rx: &mpsc::Receiver<Wake>, watcher: &mut crate::os::watch::Watcher) -> Result<(), ()> {
    while let Ok(w) = rx.try_recv() {
        match w {
            Wake::Stop => return Err(()),
            Wake::Changed(p) => follow(watcher, &p),
        }
    }
    Ok(())
}

/// Waits for a change and then for quiet; `None` on a stop.
fn next_change(
    rx: &mpsc::Receiver<Wake>,
    watcher: &mut crate::os::watch::Watcher,
) -> Option<PathBuf> {
    let first = match rx.recv() {
        Ok(Wake::Changed(p)) => p,
        Ok(Wake::Stop) | Err(_) => return None,
    };
    follow(watcher, &first);
    // The path to name: the last one that still exists (an editor's or `sed -i`'s temporary
    // file is renamed over the real one), else the first.
    let mut named = first;
    loop {
        match rx.recv_timeout(QUIET) {
            Ok(Wake::Changed(p)) => {
                follow(watcher, &p);
                if p.exists() || !named.exists() {
                    named = p;
                }
            }
            Ok(Wake::Stop) => return None,
            Err(mpsc::RecvTimeoutError::Timeout) => return Some(named),
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// A directory that appeared is watched too.
fn follow(watcher: &mut crate::os::watch::Watcher, path: &Path) {
    if path.is_dir() {
        let _ = watcher.add(path);
    }
}

/// On the interrupt (SIGINT, SIGTERM, SIGHUP): every running case's tree is stopped, and the
/// loop wakes.
fn on_interrupt(
    harness: &crate::harness::Harness,
    tx: mpsc::Sender<Wake>,
) -> crate::os::interrupt::Hook {
    let h = harness.clone();
    crate::os::interrupt::on_interrupt(move || {
        h.interrupt();
        let _ = tx.send(Wake::Stop);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_scratch_files_and_outputs_do_not_count() {
        let out = vec![PathBuf::from("/w/report.json")];
        let roots = vec![PathBuf::from("/w")];
        let counts = |p: &str| counts(Path::new(p), &roots, &out);
        assert!(counts("/w/src/index.ts"));
        assert!(counts("/w/build/index.js"));
        assert!(!counts("/w/node_modules/x/index.js"));
        assert!(!counts("/w/.venv/lib/site.py"));
        assert!(!counts("/w/src/__pycache__/a.pyc"));
        assert!(!counts("/w/src/.server.py.swp"));
        assert!(!counts("/w/src/server.py~"));
        assert!(!counts("/w/report.json"));
        // Only what is below the watched root is judged by its directories' names.
        let roots = vec![PathBuf::from("/repo/target/tmp/w")];
        assert!(super::counts(
            Path::new("/repo/target/tmp/w/server.js"),
            &roots,
            &out
        ));
    }
}
