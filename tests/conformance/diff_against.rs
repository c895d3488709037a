//! `--diff-against` in CI: a run compared with a saved report exits 1 only for a regression,
//! names it, and puts the changes after a Markdown report; a saved report that cannot be read
//! is a usage error before anything runs.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn check(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["check", "--scenario", "close"])
        .args(args)
        .args(["--", "node", "server.js"])
        .current_dir(dir)
        .env_remove("MCP_SHUTDOWN_BIN")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn said(o: &Output) -> String {
    format!(
        "{}\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_regression_exits_1_a_known_miss_does_not_and_a_bad_report_is_refused_first() {
    let d = tempfile::Builder::new()
        .prefix("diff-against-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let source = std::fs::read_to_string(Path::new(ROOT).join("fixtures/tiny/server.js")).unwrap();
    let server = d.path().join("server.js");
    std::fs::write(&server, &source).unwrap();
    let saved = d.path().join("main.json");
    let o = check(
        d.path(),
        &["--format", "json", "--output", saved.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));

    // The branch adds a timer: worse than main, so exit 1, named on stderr and in Markdown.
    std::fs::write(
        &server,
        format!("{source}\nsetInterval(() => {{}}, 1000);\n"),
    )
    .unwrap();
    let o = check(
        d.path(),
        &["--diff-against", "main.json", "--format", "markdown"],
    );
    let text = said(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("changes since main.json: 1 worse"),
        "{text}"
    );
    assert!(
        stderr.contains("stdio-exit-on-eof: SUCCESS → WARNING"),
        "{text}"
    );
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("### Changes since `main.json`"), "{text}");
    assert!(md.contains("| worse |"), "{text}");

    // Saved as the new main: the same miss again is no regression.
    let again = d.path().join("branch.json");
    let o = check(
        d.path(),
        &["--format", "json", "--output", again.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let o = check(d.path(), &["--diff-against", "branch.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no change (1 cases as before)"));
    // And the saved report, rendered against the other, says the same as the run did.
    let o = Command::new(BIN)
        .args([
            "report",
            "render",
            "--format",
            "text",
            "--from",
            "branch.json",
        ])
        .args(["--diff-against", "main.json"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("changes since main.json: 1 worse"),
        "{}",
        said(&o)
    );

    // A report that is not one: refused at once, before any server runs.
    std::fs::write(d.path().join("bad.json"), "{\"not\": \"a report\"}").unwrap();
    let o = check(d.path(), &["--diff-against", "bad.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bad.json"),
        "{}",
        said(&o)
    );
    let o = check(d.path(), &["--diff-against", "missing.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
}
