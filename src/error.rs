//! The top-level error of the command line: every way a command can fail before or beside a
//! conformance verdict, each mapped to a documented exit code (`exit_codes`).

use std::path::PathBuf;

use crate::census::ListingError;
use crate::config::baseline::BaselineError;
use crate::config::manifest::ManifestError;
use crate::exit_codes;
use crate::model::UnknownId;
use crate::render::merge::MergeError;
use crate::rules::CatalogueError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    #[error(transparent)]
    Catalogue(#[from] CatalogueError),
    #[error(transparent)]
    Unknown(#[from] UnknownId),
    #[error(transparent)]
    Merge(#[from] MergeError),
    #[error(transparent)]
    Listing(#[from] ListingError),
    /// The MCP registry could not be read (a page's status, body or cursor).
    #[error(transparent)]
    Registry(#[from] crate::census::registry::McpRegistryError),
    /// A bad `--sdk` argument, kit file or registry listing.
    #[error(transparent)]
    Kit(#[from] crate::kits::KitError),
    /// The embedded suite could not be extracted into the user's cache.
    #[error(transparent)]
    Suite(#[from] crate::harness::locate::ExtractError),
    /// A host that cannot be installed, found or measured.
    #[error(transparent)]
    Host(#[from] crate::hosts::HostError),
    /// A command line that asks for something impossible.
    #[error("{0}")]
    Usage(String),
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a mcp-shutdown JSON report", path.display())]
    NotAReport {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot find the mcp-shutdown binary (set MCP_SHUTDOWN_BIN)")]
    NoBinary,
}

impl Error {
    /// The exit code of a command that ends with this error.
    pub fn exit_code(&self) -> u8 {
        exit_codes::USAGE_OR_HARNESS
    }

    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}

/// An error and its causes on one line: `outer: cause: root cause`. A cause whose words an
/// outer message already says (`cannot read X: <os error>` with that OS error as its source)
/// is not said twice.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !out.contains(&said) {
            out.push_str(": ");
            out.push_str(&said);
        }
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_said_once() {
        let os = || std::io::Error::from_raw_os_error(2);
        let e = crate::kits::KitError::Read {
            path: "/home/u/kits".into(),
            source: os(),
        };
        assert_eq!(chain(&e), format!("cannot read /home/u/kits: {}", os()));
        let e = Error::Io {
            path: "/home/u/x".into(),
            source: os(),
        };
        assert_eq!(chain(&e), format!("/home/u/x: {}", os()));
    }
}
