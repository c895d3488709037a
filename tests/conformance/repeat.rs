//! `--repeat`: a server whose exit is a coin toss is reported flaky with the distribution
//! its seeded draws give; a deterministic one never is.

use std::path::Path;

use mcp_shutdown_conformance::manifest;
use mcp_shutdown_conformance::model::{RuleId, Stage, Status};
use mcp_shutdown_conformance::Case;

use crate::support::{assert_nothing_left, fresh_mark, harness, MARK};

fn repeated(
    manifest: &str,
    scenario: &str,
    times: usize,
) -> mcp_shutdown_conformance::model::JudgedCase {
    let m = manifest::load_file(Path::new(manifest)).unwrap();
    let mark = fresh_mark();
    let mut results = harness()
        .server_env(MARK, &mark)
        .repeat(times)
        .run_cases(&[Case {
            manifest: m,
            scenario: scenario.parse().unwrap(),
        }]);
    assert_nothing_left(&mark, manifest);
    assert_eq!(results.len(), 1, "one result per case, however many runs");
    results.pop().unwrap()
}

#[test]
fn a_coin_toss_exit_is_flaky_with_its_distribution() {
    let r = repeated("conformance/hostile/hostile-coin-toss.toml", "close", 20);
    let rep = r.repeat.as_ref().expect("repeated");
    assert_eq!(rep.runs.len(), 20);
    assert!(rep.flaky);
    // The draws of runs 1..=20 (seeded by MCP_SHUTDOWN_RUN): 12 early, 8 late.
    let stages: Vec<(&str, u32)> = rep.stages.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(stages, [("eof", 12), ("sigterm", 8)]);
    assert_eq!(
        r.stage,
        Some(Stage::Sigterm),
        "the worst run is the one shown"
    );
    let eof = r
        .checks
        .iter()
        .find(|c| c.id == RuleId::StdioExitOnEof)
        .unwrap();
    assert_eq!(
        eof.status,
        Status::Warning,
        "a flaky check counts at its worst"
    );
    assert!(
        eof.message
            .starts_with("flaky (WARNING 8/20, SUCCESS 12/20)"),
        "{}",
        eof.message
    );
    assert_eq!(rep.latency_ms.unwrap().n, 20);
}

#[test]
fn a_deterministic_server_is_never_flaky() {
    let r = repeated("conformance/hostile/hostile-baseline.toml", "close", 8);
    let rep = r.repeat.as_ref().expect("repeated");
    assert!(!rep.flaky, "{:?}", rep.flips);
    assert_eq!(rep.stages.get("eof"), Some(&8));
    assert!(r.checks.iter().all(|c| !c.message.starts_with("flaky")));
}
