//! SDK kits: the canonical server shapes (plain, background work, fixed, stubborn, child,
//! slow-tool) written once per SDK line as templates, instantiated at any published version
//! or from a local checkout or packed artifact.
//!
//! A kit is data: `kits/<line>/kit.toml` plus template files (format: `kits/README.md`).
//! This module reads kits ([`load_kits`]), lists an SDK's releases with their dates
//! ([`versions`]), and instantiates a kit at one release or local source ([`instantiate`]):
//! it writes the templates of the variant that fits the version into
//! `<cache>/kits/<line>/<version>/`, resolves dependencies as of the release's own date into
//! a lockfile, installs from that lockfile into caches shared between versions, and returns
//! ready-to-launch [`Instance`]s. Installing is idempotent (a stamp, under a file lock), and
//! launching an instance needs no network.
//!
//! ```no_run
//! use mcp_shutdown_conformance::kits;
//! let all = kits::load_kits("kits".as_ref())?;
//! let req = kits::parse_sdk_arg("typescript@1.24.0")?;
//! let kit = kits::find_kit(&all, &req.line)?;
//! if let kits::KitTarget::Registry(sel) = &req.target {
//!     for release in kits::versions(kit, sel)? {
//!         match kits::instantiate(kit, &kits::Source::Release(release), "/tmp/cache".as_ref()) {
//!             Ok(instances) => println!("{}", instances.len()),
//!             Err(why) => println!("not testable: {why}"),
//!         }
//!     }
//! }
//! # Ok::<(), kits::KitError>(())
//! ```

use std::path::PathBuf;

mod arg;
mod date;
mod detect;
pub mod git;
mod install;
mod registry;
mod spec;
mod template;
pub mod version;

pub use arg::{parse_named, parse_sdk_arg, ArgError, KitTarget, SdkRequest, VersionSel};
pub use detect::{detect, Detected};
pub use install::{
    build, instantiate, prepare, Built, Incomplete, Instance, LocalError, Prepared, Source,
    SourceNotTestable, StepFailure,
};
pub use registry::{fetch_all, npm_view, versions, NpmView, RegistryError, Release};
pub use spec::{
    load_file, load_kits, Bootstrap, Ecosystem, Expect, FieldProblem, Hint, Kit, LocalRecipe,
    Recipe, Shape, SpecProblem, Untestable, Variant,
};
pub use template::{select as select_variant, TemplateError, Unsupported};
pub use version::{compare as compare_versions, Version, VersionError, VersionReq};

/// Errors before anything is installed: a bad `--sdk` argument, a bad kit file, a registry
/// that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum KitError {
    #[error("--sdk {arg:?}: {reason}")]
    Arg {
        arg: String,
        #[source]
        reason: ArgError,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}{}: {problem}", path.display(), match (line, column) { (Some(l), Some(c)) => format!(":{l}:{c}"), _ => String::new() })]
    Parse {
        path: PathBuf,
        line: Option<usize>,
        column: Option<usize>,
        problem: Box<SpecProblem>,
    },
    #[error("no kit for SDK line `{line}` (known: {known})")]
    UnknownLine { line: String, known: String },
    #[error("{line}: listing versions with {via} failed: {reason}")]
    Registry {
        line: String,
        via: String,
        #[source]
        reason: RegistryError,
    },
    #[error("{line}: version {version} is not published (newest: {newest})")]
    NoVersion {
        line: String,
        version: String,
        newest: String,
    },
}

/// The hints of the kit whose line id or package is `sdk` for release `version` under
/// `ending`: for fix-it wording that knows the SDK and release of a server (a kit server's
/// `sdk`/`sdk_version`, or a package and version detected in a published server's install).
pub fn hints<'k>(kits: &'k [Kit], sdk: &str, version: &str, ending: &str) -> Vec<&'k Hint> {
    kits.iter()
        .filter(|k| k.id == sdk || k.package == sdk)
        .flat_map(|k| k.hints_for(version, ending))
        .collect()
}

/// The kit for an SDK line id.
pub fn find_kit<'k>(kits: &'k [Kit], line: &str) -> Result<&'k Kit, KitError> {
    kits.iter()
        .find(|k| k.id == line)
        .ok_or_else(|| KitError::UnknownLine {
            line: line.to_string(),
            known: kits
                .iter()
                .map(|k| k.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_lines_list_the_known_ones() {
        let e = find_kit(&[], "typescirpt").unwrap_err().to_string();
        assert!(e.contains("typescirpt"), "{e}");
    }

    #[test]
    fn parse_errors_print_file_line_column() {
        let e = KitError::Parse {
            path: "kits/go/kit.toml".into(),
            line: Some(3),
            column: Some(7),
            problem: Box::new(SpecProblem::Field {
                field: "x".into(),
                problem: FieldProblem::Empty,
            }),
        };
        assert_eq!(
            e.to_string(),
            "kits/go/kit.toml:3:7: field `x`: must not be empty"
        );
    }

    /// Hints are picked by line or package, release and ending.
    #[test]
    fn hints_know_the_release() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kits");
        let kits = load_kits(&dir).unwrap();
        let says = |sdk: &str, v: &str, ending: &str| -> String {
            hints(&kits, sdk, v, ending)
                .iter()
                .map(|h| h.text.as_str())
                .collect()
        };
        assert!(says("python", "1.7.1", "close").contains("never returns"));
        assert!(!says("python", "1.8.0", "close").contains("never returns"));
        assert!(says("mcp", "1.8.0", "exit").contains("non-daemon"));
        assert!(says("@modelcontextprotocol/server", "2.0.0", "close").contains("2.1.0"));
        assert!(says("typescript-v2", "2.4.0", "exit").contains("process.exit(0)"));
        assert!(
            says("@modelcontextprotocol/sdk", "1.32.2+local.1a2b3c4d", "exit").contains("#2002")
        );
        assert!(says("rust", "3.11.0", "sigterm").contains("stdio_pipes"));
        assert!(says("rust", "3.11.0", "close").is_empty());
    }

    /// The kits shipped in this repository all load and their ranges are consistent.
    #[test]
    fn bundled_kits_load() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kits");
        let kits = load_kits(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(!kits.is_empty());
        for k in &kits {
            assert!(!k.shapes.is_empty(), "{}", k.id);
            for s in ["plain", "fixed", "stubborn", "child", "slow-tool"] {
                assert!(
                    k.shapes.iter().any(|x| x.name == s),
                    "kit {} has no `{s}` shape",
                    k.id
                );
            }
            // The broken-pipe question is asked of every line but fastmcp-py, whose stdio
            // runner has no way in outside a request (kits/README.md, notifier).
            assert!(
                k.id == "fastmcp-py" || k.shapes.iter().any(|x| x.name == "notifier"),
                "kit {} has no `notifier` shape",
                k.id
            );
            for h in &k.hints {
                assert!(!h.text.contains('\n'), "{}: one line per hint", k.id);
            }
            let slow = k.shapes.iter().find(|x| x.name == "slow-tool").unwrap();
            assert!(
                slow.inflight.is_some(),
                "{}: slow-tool names no inflight request",
                k.id
            );
        }
    }
}
