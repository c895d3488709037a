//! Where things are: the `mcp-shutdown` binary that hosts supervisors, and the bundled suite.

use std::path::{Path, PathBuf};

/// The helper binary for the harness's own `__case` and `__client` processes:
/// `MCP_SHUTDOWN_BIN`, this binary, the binary next to a test binary, or one on `PATH`.
pub fn helper() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MCP_SHUTDOWN_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_stem().is_some_and(|s| s == "mcp-shutdown") {
        return Some(exe);
    }
    // From a test binary in target/<profile>/deps/, the binary is one level up.
    for dir in exe.ancestors().skip(1).take(2) {
        let cand = dir.join("mcp-shutdown");
        if cand.is_file() {
            return Some(cand);
        }
    }
    // Installed (`cargo install`), for crates that use this one as a dev-dependency.
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("mcp-shutdown"))
            .find(|p| p.is_file())
    })
}

/// The user's cache for everything the tool installs (census packages, SDK kit instances,
/// host releases, the bundled fixtures when run outside a checkout): `$MCP_SHUTDOWN_CACHE`,
/// else `$XDG_CACHE_HOME/mcp-shutdown`, else `~/.cache/mcp-shutdown`. One root, so a user
/// can move or remove it all at once.
pub fn user_cache() -> PathBuf {
    if let Some(p) = std::env::var_os("MCP_SHUTDOWN_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("mcp-shutdown")
}

/// The directory of bundled server manifests.
pub fn bundled_suite() -> PathBuf {
    let local = Path::new("conformance/servers");
    if local.is_dir() {
        return local.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/servers")
}

/// The bundled suite's baseline of expected failures, if it is there.
pub fn bundled_baseline() -> Option<PathBuf> {
    Some(bundled_suite().with_file_name("expected-failures.toml")).filter(|p| p.is_file())
}

/// The directory of SDK kits (`kits/<line>/kit.toml`).
pub fn kits_dir() -> PathBuf {
    let local = Path::new("kits");
    if local.join("README.md").is_file() {
        return local.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kits")
}

/// Where `--sdk` installs kit instances: `MCP_SHUTDOWN_KIT_CACHE`, else `target/kit-cache`
/// of this repository. In the repository tree as the fixtures' `[setup]` installs are, so
/// that `cargo test` and `mcp-shutdown run --sdk` share one cache (and a CI cache of
/// `target/` keeps it), and `cargo clean` removes it.
pub fn kit_cache() -> PathBuf {
    if let Some(p) = std::env::var_os("MCP_SHUTDOWN_KIT_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    kits_dir()
        .parent()
        .map(|repo| repo.join("target"))
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("kit-cache")
}
