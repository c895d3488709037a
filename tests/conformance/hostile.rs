//! The harness against misbehaving servers: every one gets its expected verdicts, with a
//! message, and leaves nothing behind.

use std::path::{Path, PathBuf};

use rstest::rstest;

use crate::support::{classes, run, snapshot_name};

#[rstest]
fn hostile_server(
    #[files("conformance/hostile/*.toml")] manifest: PathBuf,
    #[values(
        "close",
        "exit",
        "crash",
        "stdin-null",
        "sigterm",
        "sigint",
        "inflight"
    )]
    scenario: &str,
) {
    let r = run(&manifest, scenario);
    if let Some(e) = &r.error {
        assert!(!e.message.is_empty(), "an error always says why");
    }
    for l in &r.leftovers {
        assert!(
            !Path::new(&format!("/proc/{}", l.pid)).exists()
                || is_zombie_or_reused(l.pid, &l.cmdline),
            "leftover {} ({}) must be gone after the case",
            l.pid,
            l.cmdline
        );
    }
    insta::assert_yaml_snapshot!(snapshot_name(&r), classes(&r));
}

fn is_zombie_or_reused(pid: i32, cmdline: &str) -> bool {
    mcp_shutdown_conformance::internals::proc_info(pid)
        .is_none_or(|p| p.is_zombie() || p.cmdline != cmdline)
}

#[test]
fn daemon_that_escaped_the_process_group_is_reported_and_killed() {
    let r = run(
        Path::new("conformance/hostile/hostile-daemon.toml"),
        "close",
    );
    assert_eq!(r.leftovers.len(), 1, "{:#?}", r.leftovers);
    let d = &r.leftovers[0];
    assert!(d.cmdline.contains("daemon"), "{}", d.cmdline);
    assert!(
        is_zombie_or_reused(d.pid, &d.cmdline) || !Path::new(&format!("/proc/{}", d.pid)).exists()
    );
}

#[test]
fn messages_say_what_happened() {
    let r = run(
        Path::new("conformance/hostile/hostile-silent.toml"),
        "close",
    );
    let e = r.error.clone().unwrap();
    assert!(
        e.message.contains("no answer to `initialize`"),
        "{}",
        e.message
    );
    let r = run(
        Path::new("conformance/hostile/hostile-crash-at-start.toml"),
        "exit",
    );
    let e = r.error.clone().unwrap();
    assert!(
        e.message.contains("exit code 1") && e.message.contains("stderr"),
        "{}",
        e.message
    );
    let r = run(
        Path::new("conformance/hostile/hostile-missing-command.toml"),
        "crash",
    );
    assert!(r.error.clone().unwrap().message.contains("not found"));
    assert!(r
        .checks
        .iter()
        .all(|c| c.message.starts_with("Not testable:")));
}

#[test]
fn stateless_server_is_confirmed_without_initialize() {
    let r = run(
        Path::new("conformance/hostile/hostile-stateless.toml"),
        "close",
    );
    let h = r.handshake.clone().expect("a handshake");
    assert_eq!(
        h.mode,
        mcp_shutdown_conformance::model::HandshakeMode::Stateless
    );
    assert_eq!(r.stage, Some(mcp_shutdown_conformance::model::Stage::Eof));
}

#[test]
fn every_hostile_server_has_a_snapshot_under_every_default_ending() {
    crate::support::assert_snapshot_per_default_ending("conformance/hostile", "hostile");
}
