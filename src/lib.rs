//! mcp-shutdown-conformance: how MCP stdio servers behave when their session ends.
//!
//! The data flow, one module per step:
//! [`manifest`] → [`setup`] → launch ([`process`], [`case`]) → handshake ([`mcp`]) →
//! [`scenario`] → [`observation`] → [`rules`] → [`report`]; [`runner`] schedules the cases.
//!
//! ```no_run
//! use mcp_shutdown_conformance::{manifest, runner::{Case, Harness}};
//! let server = manifest::adhoc("node", &["server.js".into()], std::path::Path::new("."));
//! let harness = Harness::locate().expect("the mcp-shutdown binary");
//! let cases: Vec<Case> = ["close", "exit", "crash"].iter()
//!     .map(|s| Case { manifest: server.clone(), scenario: s.to_string() }).collect();
//! let report = harness.run(&cases);
//! assert!(!report.fails(mcp_shutdown_conformance::rules::Status::Warning));
//! ```

#[cfg(not(target_os = "linux"))]
compile_error!("mcp-shutdown-conformance needs Linux (pidfd, PR_SET_CHILD_SUBREAPER, /proc)");

pub mod baseline;
pub mod budgets;
pub mod case;
pub mod cli;
pub mod diff;
pub mod kits;
pub mod manifest;
pub mod mcp;
pub mod observation;
pub mod process;
pub mod render;
pub mod report;
pub mod rules;
pub mod runner;
pub mod scenario;
pub mod setup;
