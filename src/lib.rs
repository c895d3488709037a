//! mcp-shutdown-conformance: how MCP stdio servers behave when their session ends.
//!
//! The data flow, one module per step (see `docs/ARCHITECTURE.md`):
//! manifest (`config`) → launch and handshake (`supervisor`, `mcp`, `os`) → scenario (the
//! ladder) → observation (`model`) → rules (`rules`) → report (`model::report`, `render`);
//! `harness` schedules the cases, `cli` is the command line.
//!
//! The public surface is what a test of your own server needs: [`Harness`] and [`Case`],
//! [`manifest`]s, and the report [`model`] with its identifiers. [`internals`] is for the
//! suite's own binary and tests, and is not a stable API.
//!
//! ```no_run
//! use mcp_shutdown_conformance::{manifest, model::Status, Case, Harness};
//! let server = manifest::adhoc("node", &["server.js".into()], std::path::Path::new("."));
//! let harness = Harness::locate().expect("the mcp-shutdown binary");
//! let report = harness.run(&Case::all_default(&server));
//! assert!(!report.fails(Status::Warning), "{}", mcp_shutdown_conformance::render_text(&report));
//! ```

#[cfg(not(target_os = "linux"))]
compile_error!("mcp-shutdown-conformance needs Linux (pidfd, PR_SET_CHILD_SUBREAPER, /proc); see docs/ARCHITECTURE.md for what other platforms would need");

mod census;
mod cli;
// The catalogues' codegen (build.rs), included here for its tests.
#[cfg(test)]
mod codegen;
mod config;
mod error;
mod exit_codes;
mod harness;
mod hosts;
pub mod kits;
mod mcp;
pub mod model;
mod os;
mod render;
mod rules;
mod supervisor;
#[cfg(test)]
mod test_support;

pub use harness::{Case, Harness};
pub use render::{render, Format};

/// Server manifests: one TOML file per server under test.
pub mod manifest {
    pub use crate::config::budgets::BudgetOverrides;
    pub use crate::config::manifest::*;
}

/// The terminal matrix of a report (what `mcp-shutdown run` prints).
pub fn render_text(report: &model::Report) -> String {
    render::text::render(report)
}

/// Not a stable API: the pieces the suite's own binary, tests and benchmarks use.
#[doc(hidden)]
pub mod internals {
    pub use crate::cli::run as run_cli;
    pub use crate::config::baseline::Baseline;
    pub use crate::config::profiles::Profiles;
    pub use crate::config::scenarios::{all_ids, build as build_scenario, default_ids};
    pub use crate::error::{chain, Error};
    pub use crate::mcp::wire::{classify, read_stdout, read_stdout_bounded, WireEvent, MAX_LINE};
    pub use crate::os::pidfd::Pidfd;
    pub use crate::os::procfs::{all_processes, proc_info, with_env, ProcInfo};
    pub use crate::os::signals::signal_pid;
    pub use crate::os::{mono_ns, recorder::LOG_ENV as RECORDER_LOG_ENV};
    pub use crate::rules::Catalogue;

    /// Host measurements read and grouped into profiles (the replay test's side).
    pub mod hosts {
        pub use crate::hosts::analyze;
        pub use crate::hosts::emit;
        pub use crate::hosts::measure::Measurement;
        pub use crate::hosts::reading;
    }

    /// The paths (relative to the crate's root) of the suite the binary carries.
    pub fn embedded_paths() -> impl Iterator<Item = &'static str> {
        crate::harness::embedded::files().iter().map(|(p, _)| *p)
    }

    /// Cached, locked fixture setup (`[setup]` of a manifest).
    pub mod setup {
        pub use crate::harness::setup::{ensure, on_path, SetupError};
    }

    /// A report of `results` (for tests that render what they ran).
    pub fn report_of(results: Vec<crate::model::JudgedCase>) -> crate::model::Report {
        let mut r = crate::model::Report {
            schema_version: crate::model::report::SCHEMA_VERSION,
            tool: crate::model::Tool::this(),
            spec: crate::rules::Catalogue::bundled().default_revision,
            budgets: Default::default(),
            host: crate::model::Host {
                os: std::env::consts::OS.into(),
                kernel: String::new(),
                cpus: 1,
                containment: None,
                suite_source: None,
                suite_path: None,
            },
            servers: Default::default(),
            rules: Default::default(),
            profiles: crate::config::profiles::Profiles::bundled()
                .infos(results.iter().map(|r| &r.scenario)),
            summary: Default::default(),
            results,
            not_testable: Vec::new(),
            with_sdk: Vec::new(),
            census: None,
        };
        r.resummarize();
        r
    }
}
