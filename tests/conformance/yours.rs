//! Your own servers under `cargo test`: point `MCP_SHUTDOWN_SERVERS` at a directory of
//! manifests (default: `conformance/examples`). Each server must keep every scored rule of the
//! default spec revision under every ending; a failure prints the whole report.

use std::path::PathBuf;

use mcp_shutdown_conformance::model::Status;
use mcp_shutdown_conformance::{manifest, render_text, Case};
use rstest::rstest;

use crate::support::harness;

#[rstest]
fn your_server(#[files("${MCP_SHUTDOWN_SERVERS:-conformance/examples}/*.toml")] manifest: PathBuf) {
    let m = manifest::load_file(&manifest).unwrap_or_else(|e| panic!("{e}"));
    let report = harness().run(&Case::all_default(&m));
    assert!(
        !report.fails(Status::Warning),
        "{} misses a rule:\n{}",
        m.name,
        render_text(&report)
    );
}
