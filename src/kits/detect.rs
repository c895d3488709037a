//! Which SDK line and release a server runs, read where its packages are installed (the
//! `node_modules` or `site-packages` its process uses): each kit's package, looked up in the
//! nearest directory that holds any; a framework over the SDK it requires (FastMCP over
//! `mcp`) is the one its author wrote against.

use std::path::{Path, PathBuf};

use super::{Ecosystem, Kit};
use crate::os::identify::{npm_package, pypi_package, Installed};

/// An SDK found installed where a server runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detected {
    /// The kit's line id (`typescript`, `python`, `fastmcp-py`, ...): what `hints` takes.
    pub line: String,
    pub package: String,
    pub version: String,
    /// The metadata file the version was read from.
    pub metadata: PathBuf,
}

fn installed(kit: &Kit, dir: &Path) -> Option<Installed> {
    match kit.ecosystem {
        Ecosystem::Npm => npm_package(dir, &kit.package),
        Ecosystem::Pypi => pypi_package(dir, &kit.package),
        // Compiled servers carry their SDK inside the binary: nothing to read.
        Ecosystem::Crates | Ecosystem::Go | Ecosystem::Maven => None,
    }
}

/// The SDK of a server whose packages are in `dirs` (nearest first), if any kit's is.
pub fn detect(kits: &[Kit], dirs: &[PathBuf]) -> Option<Detected> {
    dirs.iter().find_map(|dir| {
        let found: Vec<(&Kit, Installed)> = kits
            .iter()
            .filter_map(|k| Some((k, installed(k, dir)?)))
            .collect();
        let (kit, inst) = choose(found)?;
        Some(Detected {
            line: kit.id.clone(),
            package: kit.package.clone(),
            version: inst.version,
            metadata: inst.metadata,
        })
    })
}

/// Of the kits found in one directory, the one that requires another found one (the
/// framework over its SDK), else the first.
fn choose(found: Vec<(&Kit, Installed)>) -> Option<(&Kit, Installed)> {
    let norm = |s: &str| s.to_lowercase().replace(['-', '.'], "_");
    let packages: Vec<String> = found.iter().map(|(k, _)| norm(&k.package)).collect();
    let over = found.iter().position(|(k, inst)| {
        inst.requires.iter().any(|r| {
            let r = norm(r);
            r != norm(&k.package) && packages.contains(&r)
        })
    });
    found.into_iter().nth(over.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kits() -> Vec<Kit> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kits");
        super::super::load_kits(&dir).unwrap()
    }

    fn write(path: PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_framework_over_its_sdk_and_the_nearest_directory_win() {
        let kits = kits();
        let t = tempfile::tempdir().unwrap();
        let near = t.path().join("app/node_modules");
        let far = t.path().join("node_modules");
        write(
            near.join("@modelcontextprotocol/sdk/package.json"),
            r#"{"version":"1.30.0"}"#,
        );
        write(
            near.join("fastmcp/package.json"),
            r#"{"version":"3.2.0","dependencies":{"@modelcontextprotocol/sdk":"^1"}}"#,
        );
        write(
            far.join("@modelcontextprotocol/server/package.json"),
            r#"{"version":"2.4.0"}"#,
        );
        let d = detect(&kits, &[near.clone(), far.clone()]).unwrap();
        assert_eq!(
            (d.line.as_str(), d.version.as_str()),
            ("fastmcp-ts", "3.2.0")
        );
        let d = detect(&kits, &[far]).unwrap();
        assert_eq!(
            (d.line.as_str(), d.version.as_str()),
            ("typescript-v2", "2.4.0")
        );
        let site = t.path().join("site-packages");
        write(
            site.join("mcp-1.30.0.dist-info/METADATA"),
            "Name: mcp\nVersion: 1.30.0\n",
        );
        let d = detect(&kits, &[site]).unwrap();
        assert_eq!((d.line.as_str(), d.version.as_str()), ("python", "1.30.0"));
        assert!(detect(&kits, &[t.path().to_path_buf()]).is_none());
    }
}
