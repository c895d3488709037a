//! The harness: fixture setup, locating the binary, and the scheduler that runs cases in
//! supervisor processes and judges them.

pub mod locate;
mod progress;
pub mod scheduler;
pub mod setup;
mod tokens;

pub use scheduler::{Case, Harness};
