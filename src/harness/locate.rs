//! Where things are: the `mcp-shutdown` binary that hosts supervisors, the user's cache, and
//! the suite (manifests, fixtures, kits): a checkout's when the command runs inside one,
//! else the binary's own copy extracted into the user's cache. Nothing here reads the path
//! the binary was built at.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::model::SuiteSource;

pub use super::embedded::ExtractError;

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
/// host releases, the bundled suite when run outside a checkout): `$MCP_SHUTDOWN_CACHE`,
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

/// The suite a command reads: its root (holding `conformance/`, `kits/`, `fixtures/`) and
/// where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    /// Relative (empty) when it is the current directory's checkout, so that paths in
    /// reports stay as short as the user typed them.
    pub root: PathBuf,
    pub source: SuiteSource,
}

impl Suite {
    /// The root as an absolute path, for the report.
    pub fn absolute(&self) -> PathBuf {
        std::path::absolute(&self.root).unwrap_or_else(|_| self.root.clone())
    }
}

/// Whether `dir` is a checkout of this project: its Cargo.toml names this package and it
/// has the suite's `conformance/`.
fn is_checkout(dir: &Path) -> bool {
    #[derive(serde::Deserialize)]
    struct CargoToml {
        package: Option<CargoPackage>,
    }
    #[derive(serde::Deserialize)]
    struct CargoPackage {
        name: String,
    }
    if !dir.join("conformance").is_dir() {
        return false;
    }
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()
        .and_then(|t| toml::from_str::<CargoToml>(&t).ok())
        .and_then(|m| m.package)
        .is_some_and(|p| p.name == env!("CARGO_PKG_NAME"))
}

/// The checkout that `cwd` is in (itself or an ancestor), relative to `cwd`.
pub fn checkout_of(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .enumerate()
        .find(|(_, d)| is_checkout(d))
        .map(|(up, _)| std::iter::repeat_n("..", up).collect())
}

/// The suite: the checkout the current directory is in, else the embedded one, extracted
/// into `user_cache()` on first use (once per process).
pub fn suite() -> Result<&'static Suite, ExtractError> {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    if let Some(s) = SUITE.get() {
        return Ok(s);
    }
    let found = match std::env::current_dir().ok().and_then(|d| checkout_of(&d)) {
        Some(root) => Suite {
            root,
            source: SuiteSource::Checkout,
        },
        None => Suite {
            root: super::embedded::extract(&user_cache())?,
            source: SuiteSource::Embedded,
        },
    };
    Ok(SUITE.get_or_init(|| found))
}

/// The directory of bundled server manifests.
pub fn bundled_suite() -> Result<PathBuf, ExtractError> {
    Ok(suite()?.root.join("conformance/servers"))
}

/// The bundled suite's baseline of expected failures, if it is there.
pub fn bundled_baseline() -> Result<Option<PathBuf>, ExtractError> {
    Ok(Some(suite()?.root.join("conformance/expected-failures.toml")).filter(|p| p.is_file()))
}

/// The directory of SDK kits (`kits/<line>/kit.toml`).
pub fn kits_dir() -> Result<PathBuf, ExtractError> {
    Ok(suite()?.root.join("kits"))
}

/// Where `--sdk` installs kit instances: `MCP_SHUTDOWN_KIT_CACHE`; else, in a checkout, its
/// `target/kit-cache` (beside the fixtures' `[setup]` installs, so that `cargo test` and
/// `mcp-shutdown run --sdk` share one cache, a CI cache of `target/` keeps it, and `cargo
/// clean` removes it); else `user_cache()/kits`.
pub fn kit_cache() -> Result<PathBuf, ExtractError> {
    if let Some(p) = std::env::var_os("MCP_SHUTDOWN_KIT_CACHE").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let suite = suite()?;
    Ok(match suite.source {
        SuiteSource::Checkout => suite.root.join("target/kit-cache"),
        SuiteSource::Embedded => user_cache().join("kits"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_checkout_from_inside_it_and_not_outside() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(checkout_of(root), Some(PathBuf::new()));
        assert_eq!(
            checkout_of(&root.join("fixtures/node-sdk-1.30.0")),
            Some(PathBuf::from("../.."))
        );
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(checkout_of(elsewhere.path()), None);
        // Another crate with a conformance/ folder is not this project's checkout.
        std::fs::create_dir(elsewhere.path().join("conformance")).unwrap();
        std::fs::write(
            elsewhere.path().join("Cargo.toml"),
            "[package]\nname = \"other\"\n",
        )
        .unwrap();
        assert_eq!(checkout_of(elsewhere.path()), None);
    }
}
