//! The GitHub Action on a real Actions engine: `scripts/act-action.sh` lints the workflow and
//! action.yml with actionlint, then runs packaging/action/act/e2e.yml with nektos/act in its
//! host mode: a conforming server (the Action installing the npm tarballs of this build) and
//! one that needs SIGTERM (with the `binary` input), through `uses: ./`. act and actionlint are
//! `go install`ed at the script's pinned versions into `target/test-tools/go-bin` on first
//! use (a missing `go` fails the test; nothing is skipped). GitHub's own
//! actions/upload-artifact cannot be fetched here: act runs the local stand-in the script names.

use std::path::Path;

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
