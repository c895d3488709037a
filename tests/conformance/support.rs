use std::path::Path;

use mcp_shutdown_conformance::model::JudgedCase;
use mcp_shutdown_conformance::{manifest, Case, Harness};
use serde_json::{json, Value};

pub fn harness() -> Harness {
    Harness::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
}

/// Runs one manifest × scenario for real.
pub fn run(path: &Path, scenario: &str) -> JudgedCase {
    let m = manifest::load_file(path).unwrap_or_else(|e| panic!("{e}"));
    harness().run_one(&Case {
        manifest: m,
        scenario: scenario.parse().unwrap_or_else(|e| panic!("{e}")),
    })
}

/// The classes a snapshot pins: stage, exit status, error kind, verdicts, leftovers and
/// stdout purity. No milliseconds, pids or paths, so snapshots hold on a loaded machine.
pub fn classes(r: &JudgedCase) -> Value {
    let checks: serde_json::Map<String, Value> = r
        .checks
        .iter()
        .map(|c| (c.id.to_string(), json!(c.status)))
        .collect();
    json!({
        "server": r.server,
        "scenario": r.scenario,
        "stage": r.stage,
        "exit_status": r.exit_status,
        "error": r.error.as_ref().map(|e| e.kind),
        "checks": checks,
        "leftovers": r.leftovers.len(),
        "stdout_violation": r.stdout.first_violation.as_ref().map(|v| v.kind),
    })
}

/// Snapshot name for a case: stable and file-name safe.
pub fn snapshot_name(r: &JudgedCase) -> String {
    format!("{}__{}", r.server, r.scenario.file_stem())
}

/// The rstest `#[values]` lists of endings must be literals, so they repeat
/// the default endings; this ties them together: every manifest in `dir` has a snapshot
/// under every default ending (a new ending missing from a test's list has none).
pub fn assert_snapshot_per_default_ending(dir: &str, module: &str) {
    let servers = mcp_shutdown_conformance::manifest::load(std::path::Path::new(dir)).unwrap();
    let snapshots = std::path::Path::new("tests/conformance/snapshots");
    let missing: Vec<String> = servers
        .iter()
        .flat_map(|m| {
            mcp_shutdown_conformance::model::Ending::DEFAULTS
                .iter()
                .map(move |s| format!("conformance__{module}__{}__{s}.snap", m.name))
        })
        .filter(|f| !snapshots.join(f).is_file())
        .collect();
    assert!(missing.is_empty(), "snapshots missing: {missing:?}");
}
