//! The GitHub Action on a real Actions engine: `scripts/act-action.sh` lints the workflow and
//! action.yml with actionlint, then runs packaging/action/act/e2e.yml with nektos/act in its
//! host mode: a conforming server (the Action installing the npm tarballs of this build) and
//! one that needs SIGTERM (with the `binary` input), through `uses: ./`. act and actionlint are
//! `go install`ed at the script's pinned versions into `target/test-tools/go-bin` on first
//! use (a missing `go` fails the test; nothing is skipped). GitHub's own
//! actions/upload-artifact cannot be fetched here: act runs the local stand-in the script names.
//!
//! The reusable census workflow the same way (`scripts/act-census.sh`): 4 shards of the small
//! listing, merged, the site rendered; the merged report equals the unsharded census run's
//! verdicts. And actionlint over every workflow on its own (`scripts/lint-workflows.sh`).

use std::path::Path;

use crate::census::{cache, small, verdicts};
use crate::packaging::{bounded, dist, locked, said, target_dir};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_action_runs_under_act_with_annotations_a_summary_and_the_step_failing() {
    let dist = dist();
    let dir = dist.npm_main.parent().unwrap();
    let log = tempfile::NamedTempFile::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // One act run at a time: the tools install once, and two runs would share act's caches.
    let out = locked("act-action", || {
        bounded(900, Path::new(ROOT).join("scripts/act-action.sh"))
            .arg(log.path())
            .env("GOBIN", target_dir().join("test-tools/go-bin"))
            .env("MCP_SHUTDOWN_BIN", dir.join("mcp-shutdown"))
            .env("MCP_SHUTDOWN_DIST_DIR", dir)
            .env_remove("ACT")
            .env_remove("ACTIONLINT")
            .output()
            .unwrap()
    });
    let text = said(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let logged = std::fs::read_to_string(log.path()).unwrap();
    for (what, want) in [
        ("actionlint ran", "== actionlint v"),
        (
            "the green job",
            "[action end to end/green] 🏁  Job succeeded",
        ),
        (
            "the red job (its own checks passed)",
            "[action end to end/red  ] 🏁  Job succeeded",
        ),
        (
            "an annotation at the workflow step's command line",
            "::warning file=packaging/action/act/e2e.yml,line=",
        ),
        ("the fix in the annotation", "%0AFix: "),
        ("the job summary", "Summary - ## MCP shutdown conformance"),
        (
            "the step failing on exit 1",
            "❌  Failure - Main Fail on the tool's exit code",
        ),
        ("the reports uploaded", "upload-artifact (stand-in): "),
    ] {
        assert!(logged.contains(want), "{what}: no `{want}` in\n{logged}");
    }
}

#[test]
fn the_workflows_pass_actionlint() {
    let out = locked("act-action", || {
        bounded(600, Path::new(ROOT).join("scripts/lint-workflows.sh"))
            .env("GOBIN", target_dir().join("test-tools/go-bin"))
            .env_remove("ACTIONLINT")
            .output()
            .unwrap()
    });
    let text = said(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("== workflows clean"), "{text}");
}

#[test]
fn the_census_workflow_runs_under_act_in_4_shards_merged_as_one_run() {
    let artifacts = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let log = tempfile::NamedTempFile::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = locked("act-action", || {
        bounded(900, Path::new(ROOT).join("scripts/act-census.sh"))
            .arg(log.path())
            .env("GOBIN", target_dir().join("test-tools/go-bin"))
            .env("MCP_SHUTDOWN_BIN", env!("CARGO_BIN_EXE_mcp-shutdown"))
            .env("MCP_SHUTDOWN_ACT_ARTIFACTS", artifacts.path())
            .env("MCP_SHUTDOWN_CENSUS_CACHE", cache())
            .env_remove("ACT")
            .env_remove("ACTIONLINT")
            .output()
            .unwrap()
    });
    let logged = std::fs::read_to_string(log.path()).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}\n{logged}", said(&out));
    for job in [
        "listing", "shard-1", "shard-2", "shard-3", "shard-4", "merge",
    ] {
        let done = format!("[census/census/{job}");
        assert!(
            logged
                .lines()
                .any(|l| l.starts_with(&done) && l.ends_with("Job succeeded")),
            "{job}: {logged}"
        );
    }
    assert!(logged.contains("shard 2/4 holds no server"), "{logged}");
    let merged = std::fs::read(artifacts.path().join("census-site/report.json")).unwrap();
    let merged: serde_json::Value = serde_json::from_slice(&merged).unwrap();
    assert_eq!(
        verdicts(&merged, "close"),
        verdicts(&small().report(), "close")
    );
}
