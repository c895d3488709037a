//! Host profiles and launch plumbing, run for real: the reference servers under every host's
//! ladder, the reference fixed server over every plumbing, and the one fixture whose verdict
//! depends on whether its stdin is a pipe or a socket.

use std::path::{Path, PathBuf};

use mcp_shutdown_conformance::internals::Profiles;
use mcp_shutdown_conformance::model::{ErrorKind, PlumbingOverride, Stage};
use rstest::rstest;

use crate::support::{classes, run, run_with, snapshot_name};

/// Every host profile, as literals (rstest needs them); tied to the catalogue below.
const HOSTS: [&str; 13] = [
    "vscode",
    "codex",
    "codex-exec",
    "zed",
    "zed-legacy",
    "goose",
    "ts-legacy",
    "continue",
    "claude-code",
    "claude-code-terminal-closed",
    "claude-code-sigkill",
    "claude-code-legacy",
    "claude-desktop",
];

#[rstest]
fn reference_server_under_host_profile(
    #[files("conformance/servers/node-1.30.0-*.toml")] manifest: PathBuf,
    #[values(
        "close:vscode",
        "close:codex",
        "close:codex-exec",
        "close:zed",
        "close:zed-legacy",
        "close:goose",
        "close:ts-legacy",
        "close:continue",
        "close:claude-code",
        "close:claude-code-terminal-closed",
        "close:claude-code-sigkill",
        "close:claude-code-legacy",
        "close:claude-desktop"
    )]
    scenario: &str,
) {
    let r = run(&manifest, scenario);
    insta::assert_yaml_snapshot!(snapshot_name(&r), classes(&r));
}

#[test]
fn every_host_profile_is_run_above() {
    let bundled: Vec<String> = Profiles::bundled()
        .hosts()
        .map(|p| p.id.to_string())
        .collect();
    assert_eq!(bundled, HOSTS);
}

fn plumbing(stdio: &str, group: &str, via: &str) -> PlumbingOverride {
    let kebab = |s: &str| serde_json::Value::String(s.into());
    PlumbingOverride {
        stdio: Some(serde_json::from_value(kebab(stdio)).unwrap()),
        group: Some(serde_json::from_value(kebab(group)).unwrap()),
        via: Some(serde_json::from_value(kebab(via)).unwrap()),
    }
}

#[rstest]
fn the_reference_fixed_server_exits_on_eof_over_any_plumbing(
    #[values("pipes", "socketpair")] stdio: &str,
    #[values("host", "own", "session")] group: &str,
    #[values("direct", "shell")] via: &str,
) {
    let m = Path::new("conformance/servers/node-1.32.2-fixed.toml");
    let r = run_with(m, "close", plumbing(stdio, group, via));
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.stage, Some(Stage::Eof), "{stdio}/{group}/{via}");
    assert_eq!(r.leftover_count(), 0, "{:?}", r.leftovers);
    let planned = r.ladder.as_ref().unwrap().plumbing;
    assert_eq!(planned, plumbing(stdio, group, via).apply(planned));
}

#[test]
fn a_server_that_opens_dev_stdin_works_on_pipes_and_fails_on_a_socketpair() {
    let m = Path::new("conformance/hostile/hostile-devstdin.toml");
    let pipes = run_with(m, "close", plumbing("pipes", "own", "direct"));
    assert!(pipes.error.is_none(), "{:?}", pipes.error);
    assert_eq!(pipes.stage, Some(Stage::Eof));
    let socket = run_with(m, "close", plumbing("socketpair", "own", "direct"));
    let e = socket
        .error
        .as_ref()
        .expect("no handshake over a socketpair");
    assert_eq!(e.kind, ErrorKind::ExitedBeforeHandshake);
    assert!(
        e.message.contains("No such device or address"),
        "{}",
        e.message
    );
    // The host whose plumbing is a socketpair sees the same.
    let vscode = run(m, "close:vscode");
    assert_eq!(
        vscode.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::ExitedBeforeHandshake)
    );
}
