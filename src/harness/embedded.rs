//! The suite the binary carries: the kits, the catalogues, the bundled and hostile manifests,
//! the baseline and the fixtures' sources and lockfiles, embedded at build time
//! (`embed_codegen.rs`, from build.rs). Outside a checkout they are extracted once into the
//! user's cache, under a directory named by their content hash, so every version of the
//! binary has its own and a fixture's setup installs next to its sources there.

use std::path::{Path, PathBuf};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/embedded_suite.rs"));
}

/// Every embedded file: its path relative to the suite's root, and its bytes.
pub fn files() -> &'static [(&'static str, &'static [u8])] {
    generated::FILES
}

/// The content hash of the embedded files (hex; names the extracted directory).
pub fn hash() -> &'static str {
    generated::HASH
}

#[cfg(test)]
/// The embedded file at `rel` (e.g. `conformance/servers/node-1.30.0-timer.toml`).
pub fn file(rel: &str) -> Option<&'static [u8]> {
    files().iter().find(|(p, _)| *p == rel).map(|(_, b)| *b)
}

/// Why the embedded suite could not be put into the user's cache.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the bundled suite into {} (set MCP_SHUTDOWN_CACHE to a writable directory)", path.display())]
pub struct ExtractError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

fn at(path: &Path) -> impl FnOnce(std::io::Error) -> ExtractError + '_ {
    move |source| ExtractError {
        path: path.to_path_buf(),
        source,
    }
}

/// The extracted suite under `cache` (`cache/suite-<hash>`), extracting it first when it is
/// not there. Atomic: the files are written into a temporary directory beside it, which is
/// then renamed into place; a concurrent extraction that wins the race is used as it is.
pub fn extract(cache: &Path) -> Result<PathBuf, ExtractError> {
    let target = cache.join(format!("suite-{}", hash()));
    if target.is_dir() {
        return Ok(target);
    }
    std::fs::create_dir_all(cache).map_err(at(cache))?;
    let tmp = tempfile::Builder::new()
        .prefix(".suite-")
        .tempdir_in(cache)
        .map_err(at(cache))?;
    for (rel, bytes) in files() {
        let path = tmp.path().join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(at(dir))?;
        }
        std::fs::write(&path, bytes).map_err(at(&path))?;
    }
    match std::fs::rename(tmp.path(), &target) {
        Ok(()) => {
            // Renamed away: nothing is left at the temporary path to remove.
            let _ = tmp.keep();
            Ok(target)
        }
        // Another process extracted the same suite first (`tmp` is removed on drop).
        Err(_) if target.is_dir() => Ok(target),
        Err(e) => Err(at(&target)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeds_what_the_binary_reads_and_no_build_output() {
        for rel in [
            "conformance/rules.toml",
            "conformance/profiles.toml",
            "conformance/expected-failures.toml",
            "conformance/servers/node-1.30.0-timer.toml",
            "conformance/hostile/hostile-baseline.toml",
            "kits/typescript/kit.toml",
            "fixtures/node-sdk-1.30.0/package-lock.json",
            "fixtures/node-sdk-1.30.0/timer.mjs",
            "fixtures/rust-rmcp-3.11.0/src/bin/plain.rs",
        ] {
            assert!(file(rel).is_some(), "{rel} is not embedded");
        }
        for (rel, _) in files() {
            for part in ["node_modules/", "/target/", "/.venv/", "__pycache__"] {
                assert!(!rel.contains(part), "{rel} is build output");
            }
        }
        assert_eq!(hash().len(), 16);
    }

    #[test]
    fn extracts_once_atomically() {
        let cache = tempfile::tempdir().unwrap();
        let dir = extract(cache.path()).unwrap();
        assert_eq!(dir.file_name().unwrap(), &*format!("suite-{}", hash()));
        let manifest = dir.join("conformance/servers/node-1.30.0-timer.toml");
        assert_eq!(
            std::fs::read(&manifest).unwrap(),
            file("conformance/servers/node-1.30.0-timer.toml").unwrap()
        );
        // A second call uses what is there; no temporary directory is left behind.
        std::fs::write(dir.join("marker"), "x").unwrap();
        assert_eq!(extract(cache.path()).unwrap(), dir);
        assert!(dir.join("marker").is_file());
        let names: Vec<_> = std::fs::read_dir(cache.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
