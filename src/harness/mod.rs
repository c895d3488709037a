//! The harness: fixture setup, locating the binary, and the scheduler that runs cases in
//! supervisor processes and judges them.

pub(crate) mod embedded;
mod gate;
pub mod identify;
pub mod locate;
mod progress;
pub mod scheduler;
pub mod setup;
mod supervise;
mod tokens;

pub use scheduler::{release_cgroups, server_info, Case, Harness};
