//! The ecosystem census: real published stdio servers, read from a registry listing.
//!
//! [`listing`] turns a listing in the official MCP registry's format into entries with the
//! exact launch of each npm or PyPI package (and reasons for those it cannot run);
//! [`install`] puts every package once into a shared cache and gives the offline launch
//! that runs it from there, so no measured case includes a download; [`launch_errors`] finds
//! the entries whose launch command is not in their package (the listing's mistake, from what
//! the launcher said); [`credentials`] decides which servers could not be judged for want of
//! real secrets; [`with_sdk`] runs them again with one SDK replaced inside each install.

pub mod carry;
pub mod credentials;
pub mod install;
pub mod launch_errors;
pub mod listing;
pub mod registry;
pub mod triage;
pub mod with_sdk;

use std::path::Path;

pub use install::{install, launch, InstallError, InstallProgress};
#[cfg(test)]
pub use listing::{parse_listing, PLACEHOLDER};
pub use listing::{parse_listing_with, Entry, ListingError, ParseOptions, Registry};

use crate::config::budgets::BudgetOverrides;
use crate::config::manifest::{self, Manifest};
use crate::model::PackageInfo;

/// A launcher resolving a cached install and an interpreter importing a whole SDK take
/// seconds on a loaded machine (measured up to 9.6 s, `RECIPE.md`); 30 s keeps a slow start
/// from being judged as a hang.
pub const HANDSHAKE_MS: u64 = 30_000;

/// The manifest that runs an entry offline from `cache`, as an ordinary server under test.
pub fn manifest(entry: &Entry, cache: &Path) -> Manifest {
    manifest_of(entry, launch(entry, cache))
}

/// The manifest that runs an entry by `l` (the census's launch, or one with an SDK replaced).
fn manifest_of(entry: &Entry, l: install::CachedLaunch) -> Manifest {
    let mut m = manifest::adhoc(&l.program, &l.args, &l.cwd);
    m.name = entry.id.clone();
    m.description = if entry.description.is_empty() {
        entry.server_name.clone()
    } else {
        format!("{}: {}", entry.server_name, entry.description)
    };
    m.launch.env = l.env;
    m.budgets = BudgetOverrides {
        handshake_ms: Some(HANDSHAKE_MS),
        ..BudgetOverrides::default()
    };
    m
}

/// The 1-based shard of `n` a server belongs to: FNV-1a 64 of its registry name, mod `n`.
/// A name's shard never depends on the other names, so a server stays where it is as the
/// registry grows, and every package of one server lands in one shard.
pub fn shard_of(server_name: &str, n: u64) -> u64 {
    fnv1a_64(server_name.as_bytes()) % n + 1
}

/// FNV-1a, 64 bits: stable across builds and platforms (std's hashers are not).
fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// What the report says about the package behind an entry.
pub fn package_info(entry: &Entry) -> PackageInfo {
    PackageInfo {
        name: entry.server_name.clone(),
        version: entry.server_version.clone(),
        registry: entry.registry.to_string(),
        identifier: entry.identifier.clone(),
        package_version: entry.version.clone(),
        runtime: match entry.registry {
            Registry::Npm => "node",
            Registry::Pypi => "python",
        }
        .into(),
        launcher: entry.runtime.program().into(),
        placeholders: entry.placeholders.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_sharded_by_the_fnv_1a_hash_of_its_name() {
        // FNV-1a 64 reference values.
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
        let names = ["io.github.a/x", "io.github.b/y", "io.github.c/z", "d"];
        for n in 1..5 {
            assert!(names.iter().all(|s| (1..=n).contains(&shard_of(s, n))));
        }
    }

    #[test]
    fn an_entry_runs_as_an_ordinary_manifest_from_the_cache() {
        let text = std::fs::read_to_string("conformance/census/servers.json").unwrap();
        let listing = parse_listing(Path::new("servers.json"), &text).unwrap();
        let stripe = listing
            .entries
            .iter()
            .find(|e| e.identifier == "@stripe/mcp")
            .unwrap();
        let m = manifest(stripe, Path::new("/cache"));
        assert_eq!(m.name, "stripe-mcp-0.3.3");
        assert_eq!(m.launch.command, "npx");
        assert_eq!(m.launch.args, ["-y", "@stripe/mcp@0.3.3"]);
        assert_eq!(m.launch.cwd, Path::new("/cache/work"));
        assert_eq!(m.launch.env["STRIPE_SECRET_KEY"], PLACEHOLDER);
        assert_eq!(m.launch.env["npm_config_offline"], "true");
        assert_eq!(m.budgets.handshake_ms, Some(HANDSHAKE_MS));
        let p = package_info(stripe);
        assert_eq!((p.runtime.as_str(), p.launcher.as_str()), ("node", "npx"));
        assert_eq!(p.placeholders, ["STRIPE_SECRET_KEY"]);
    }
}
