//! Servers behind their launchers (`sh -c`, a `node_modules/.bin` shim, `npx`, `uv run`;
//! fixtures/launchers): the report names the server by its handshake, diagnoses the process
//! that speaks MCP (not the launcher), reads its SDK and release where its packages are, and
//! gives that SDK's fix. One ending each (`close`: the timer and thread shapes ignore EOF, so
//! each is diagnosed), so the whole file costs a few seconds once the fixture is installed.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mcp_shutdown_conformance::model::{Report, SignalName, Stage, Status};
use mcp_shutdown_conformance::{manifest, Case};
use mcp_shutdown_conformance::{render, Format};
use rstest::rstest;

use super::skip;
use super::support::{assert_nothing_left, fresh_mark, harness, MARK};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fixtures/launchers/manifests/{name}.toml"))
}

/// The manifest's server under `close`, checked to leave nothing behind; `None` when a tool
/// its setup needs is missing (a skip, or a failure under CI=true).
fn run_close(name: &str, test: &str) -> Option<Report> {
    run_ending(name, "close", test)
}

/// The manifest's server under `ending`, checked to leave nothing behind.
fn run_ending(name: &str, ending: &str, test: &str) -> Option<Report> {
    let m = manifest::load_file(&fixture(name)).unwrap_or_else(|e| panic!("{e}"));
    let setup = m.setup.as_ref().expect("the fixture has a setup");
    if let Some(tool) = setup.requires.iter().find(|t| which::which(t).is_err()) {
        skip::missing(test, tool, "not on PATH");
        return None;
    }
    let mark = fresh_mark();
    let report = harness().server_env(MARK, &mark).run(&[Case {
        manifest: m,
        scenario: ending.parse().expect("an ending"),
    }]);
    assert_nothing_left(&mark, name);
    Some(report)
}

/// A Node server behind each launcher: named `launched-timer` (its handshake), on
/// @modelcontextprotocol/sdk 1.30.0 read from node_modules, and told the SDK 1.x fix
/// (typescript-sdk#2002), about its own process.
#[rstest]
#[case::sh_c("sh-c", &["sh -c"])]
#[case::npm_bin("npm-bin", &[])]
#[case::npx("npx", &["npm exec", "sh -c"])]
fn a_node_server_is_found_behind_its_launcher(#[case] name: &str, #[case] launchers: &[&str]) {
    let Some(r) = run_close(
        name,
        &format!("a_node_server_is_found_behind_its_launcher({name})"),
    ) else {
        return;
    };
    let server = format!("launchers-{name}");
    let case = &r.results[0];
    assert_eq!(case.error, None, "{case:#?}");
    let info = &r.servers[&server];
    assert_eq!(info.server_name.as_deref(), Some("launched-timer"));
    assert_eq!(info.server_version.as_deref(), Some("0.1.0"));
    assert_eq!(
        (info.sdk.as_deref(), info.sdk_version.as_deref()),
        (Some("typescript"), Some("1.30.0")),
        "{info:#?}"
    );
    assert!(info
        .sdk_from
        .as_ref()
        .is_some_and(|p| p.ends_with("node_modules/@modelcontextprotocol/sdk/package.json")));
    assert_eq!(info.launchers, launchers);
    let process = case.server_process.as_ref().expect("the server behind it");
    assert!(process.cmdline.contains("timer"), "{process:#?}");
    let held = case.diagnostics.as_ref().expect("it outlived stdin EOF");
    assert_eq!(
        held.pid, process.pid,
        "the server is diagnosed, not its launcher"
    );
    assert!(held.hint.contains("typescript-sdk#2002"), "{}", held.hint);
    // What its launchers left is the server itself: no "stop what it started" for it.
    assert!(
        !info.fixes.iter().any(|f| f
            .rules
            .contains(&mcp_shutdown_conformance::model::RuleId::ProcessNoLeakedDescendants)),
        "{:#?}",
        info.fixes
    );
}

/// SIGTERM to `npx` (or `sh -c`) alone: the launcher exits and does not pass it on, leaving
/// the timer server running. That is the launcher's doing: the harness then sends the server
/// SIGTERM itself, the server (Node's default: exit) is judged ok on it, and the launcher's
/// part is a line of its own that names it.
#[rstest]
#[case::npx("npx", &["npm exec", "sh -c"])]
#[case::sh_c("sh-c", &["sh -c"])]
fn a_launcher_that_does_not_pass_sigterm_on_is_not_the_servers_doing(
    #[case] name: &str,
    #[case] launchers: &[&str],
) {
    let test = format!("a_launcher_that_does_not_pass_sigterm_on_is_not_the_servers_doing({name})");
    let Some(r) = run_ending(name, "sigterm", &test) else {
        return;
    };
    let case = &r.results[0];
    assert_eq!(case.error, None, "{case:#?}");
    let left = case
        .launcher_left
        .as_ref()
        .expect("the launcher left the server running");
    assert_eq!(left.launchers, launchers);
    assert_eq!(left.signal, SignalName::Term);
    assert_eq!(left.stage, Stage::Sigterm, "{left:#?}");
    if name == "npx" {
        assert!(
            left.agent.as_deref().is_some_and(|a| a.starts_with("npm/")),
            "{left:#?}"
        );
    }
    assert!(case.leftovers.is_empty(), "{:#?}", case.leftovers);
    for c in &case.checks {
        assert_eq!(c.status, Status::Success, "{c:#?}");
    }
    let text = render(&r, Format::Text);
    let line = text
        .lines()
        .find(|l| l.starts_with("LAUNCHER"))
        .unwrap_or_else(|| panic!("a launcher line:\n{text}"));
    assert!(
        line.contains(&format!("`{}`", launchers[0])) && line.contains("did not pass SIGTERM on"),
        "{line}"
    );
    let md = render(&r, Format::Markdown);
    assert!(md.contains("its launcher:"), "{md}");
}

/// A Python server behind `uv run`: mcp 1.30.0 read from the venv's site-packages, and the
/// mcp 1.x hint about non-daemon threads.
#[test]
fn a_python_server_is_found_behind_uv_run() {
    let Some(r) = run_close("uv-run", "a_python_server_is_found_behind_uv_run") else {
        return;
    };
    let case = &r.results[0];
    assert_eq!(case.error, None, "{case:#?}");
    let info = &r.servers["launchers-uv-run"];
    assert_eq!(
        info.server_name.as_deref(),
        Some("python-mcp-1.30.0-thread")
    );
    assert_eq!(
        (info.sdk.as_deref(), info.sdk_version.as_deref()),
        (Some("python"), Some("1.30.0")),
        "{info:#?}"
    );
    assert_eq!(info.launchers, ["uv run"]);
    let process = case.server_process.as_ref().expect("the server behind it");
    let held = case.diagnostics.as_ref().expect("it outlived stdin EOF");
    assert_eq!(held.pid, process.pid, "the server is diagnosed, not uv");
    assert!(held.hint.contains("non-daemon thread"), "{}", held.hint);
}

/// `check` names its server by the name it gave in its handshake (not `sh`), or `--name`.
#[test]
fn check_names_the_server_by_its_handshake_or_name() {
    let names = |extra: &[&str]| -> Vec<String> {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["check", "--scenario", "close", "--format", "json"])
            .args(extra)
            .args(["--", "sh", "-c", "node fixtures/tiny/server.js; exit $?"])
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Report = serde_json::from_slice(&out.stdout).expect("a report");
        r.servers.keys().cloned().collect()
    };
    if which::which("node").is_err() {
        skip::missing(
            "check_names_the_server_by_its_handshake_or_name",
            "node",
            "not on PATH",
        );
        return;
    }
    assert_eq!(names(&[]), ["tiny"]);
    assert_eq!(names(&["--name", "my-server"]), ["my-server"]);
}
