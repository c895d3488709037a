//! Build-time half of [`super::embedded`] (included by build.rs): lists the files the binary
//! reads at run time (the kits, the catalogues, the bundled manifests, the fixtures' sources
//! and lockfiles), hashes them, and writes `embedded_suite.rs` into `OUT_DIR` with one
//! `include_bytes!` per file. What a fixture's setup produces (node_modules, target, venvs,
//! built binaries) is left out, so a checkout that has run the suite embeds what a fresh
//! clone would.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The trees embedded, relative to the crate's root.
pub const ROOTS: &[&str] = &["conformance", "kits", "fixtures"];

/// Directory names that setups create (or tools leave) and that are never embedded.
const SKIP_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".uv-cache",
    ".uv-tools",
    ".scratch",
    "git-repo",
    ".gradle",
    ".git",
    ".pytest_cache",
    ".mypy_cache",
];

/// Whether a directory entry is something a setup made rather than a source.
fn skipped(path: &Path, is_dir: bool) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if is_dir {
        // `bin/` next to a Go module is its build output; `src/bin/` of a Rust crate is source.
        let parent = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str());
        return SKIP_DIRS.contains(&name) || (name == "bin" && parent != Some("src"));
    }
    name.starts_with(".mcp-shutdown-setup.")
        || name == "classpath.txt"
        || name == ".setup-stamp"
        || name.ends_with(".pyc")
        || name.ends_with(".snap.new")
        || name.ends_with(".pending-snap")
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let dir = root.join(rel);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(kind) = e.file_type() else { continue };
        let rel = rel.join(e.file_name());
        if kind.is_dir() {
            if !skipped(&rel, true) {
                walk(root, &rel, out);
            }
        } else if kind.is_file() && !skipped(&rel, false) {
            out.push(rel);
        }
    }
}

/// The embedded files, relative to `root`, sorted.
pub fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for r in ROOTS {
        walk(root, Path::new(r), &mut out);
    }
    out
}

/// Writes `OUT_DIR/embedded_suite.rs` and tells cargo what to watch.
pub fn write(root: &Path, out_dir: &Path) {
    let files = files(root);
    let mut hash = Sha256::new();
    let mut code = String::from("pub const FILES: &[(&str, &[u8])] = &[\n");
    for rel in &files {
        let abs = root.join(rel);
        let bytes = std::fs::read(&abs).expect("an embedded file is readable");
        let rel = rel.to_str().expect("embedded paths are UTF-8");
        hash.update(rel.as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
        println!("cargo::rerun-if-changed={}", abs.display());
        writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");
    let digest = hash.finalize();
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    writeln!(code, "pub const HASH: &str = {hex:?};").expect("writing to a String");
    // New files in the trees that hold no build output (a new kit, manifest or rule).
    println!(
        "cargo::rerun-if-changed={}",
        root.join("conformance").display()
    );
    println!("cargo::rerun-if-changed={}", root.join("kits").display());
    std::fs::write(out_dir.join("embedded_suite.rs"), code).expect("OUT_DIR is writable");
}
