//! Hosts measured, not read: the real host binaries installed from their registry, driven
//! through every quit path with the recorder as their server, and their ladders written as
//! `basis = "measured"` profiles. [`catalogue`] names the hosts and paths, [`install`] puts
//! a release in the cache, [`measure`] drives it, [`analyze`] reads what the recorder saw
//! (pure) into the typed vocabulary of [`reading`], [`emit`] writes profiles and the history view (pure), [`standin`] is the
//! loopback model API.

pub mod analyze;
pub mod catalogue;
pub mod emit;
pub mod install;
pub mod measure;
pub mod reading;
pub mod realhost;
pub mod standin;
mod start;

use std::path::{Path, PathBuf};

/// Why a host could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("unknown host `{0}` (known: {1})")]
    Unknown(String, String),
    #[error("{package} has no version {asked} (the registry's newest is {newest})")]
    NoSuchVersion {
        package: String,
        asked: String,
        newest: String,
    },
    #[error("registry: {0}")]
    Registry(String),
    #[error("cannot install {0}: {1}")]
    Install(String, String),
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl HostError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
