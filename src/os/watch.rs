//! File changes under a set of paths, for `check --watch`: inotify through the `notify` crate.
//! Each directory `keep` accepts gets its own watch, so that `node_modules` or `.venv` (tens
//! of thousands of directories) are never watched at all; the caller adds directories that
//! appear later ([`Watcher::add`]). Only writes, creations, renames and removals count: a
//! server reading its own files on start-up must not set off the next run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use notify::{EventKind, RecursiveMode, Watcher as _};

type Keep = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// Watches until dropped.
pub struct Watcher {
    inner: notify::RecommendedWatcher,
    keep: Keep,
}

/// Starts watching `paths`: each file, and each directory with every directory under it that
/// `keep` accepts. `on_change` gets every changed path `keep` accepts.
pub fn watch(
    paths: &[PathBuf],
    keep: impl Fn(&Path) -> bool + Send + Sync + 'static,
    on_change: impl Fn(PathBuf) + Send + 'static,
) -> Result<Watcher, String> {
    let keep: Keep = Arc::new(keep);
    let filter = keep.clone();
    let inner = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if matches!(event.kind, EventKind::Access(_) | EventKind::Other) {
            return;
        }
        if let Some(p) = event.paths.into_iter().find(|p| filter(p)) {
            on_change(p);
        }
    })
    .map_err(|e| format!("cannot watch files: {e}"))?;
    let mut w = Watcher { inner, keep };
    for p in paths {
        w.add(p)?;
    }
    Ok(w)
}

impl Watcher {
    /// Watches `path`: a file, or a directory and the directories under it that are kept.
    pub fn add(&mut self, path: &Path) -> Result<(), String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_dir() {
            return self.one(path);
        }
        let mut dirs = vec![path.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            self.one(&dir)?;
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let sub = e.path();
                // file_type does not follow symlinks: a link to `/` is not walked.
                if e.file_type().is_ok_and(|t| t.is_dir()) && (self.keep)(&sub) {
                    dirs.push(sub);
                }
            }
        }
        Ok(())
    }

    fn one(&mut self, path: &Path) -> Result<(), String> {
        self.inner
            .watch(path, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", path.display()))
    }
}

/// The regular files this process's stdout and stderr are redirected to (`check --watch >
/// log.txt` must not set off a run per line it writes).
pub fn own_output_files() -> Vec<PathBuf> {
    [1, 2]
        .iter()
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .filter(|p| p.is_file())
        .collect()
}
