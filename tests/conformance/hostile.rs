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
        "inflight",
        "sighup",
        "ctrl-c"
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
    assert!(r
        .error
        .clone()
        .unwrap()
        .message
        .contains("cannot launch `mcp-shutdown-no-such-command-xyz`: no such file"));
    // A typo is the user's: reported, never scored.
    assert!(r
        .checks
        .iter()
        .all(|c| c.message.starts_with("Not testable:")
            && c.status == mcp_shutdown_conformance::model::Status::Skipped));
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

fn hostile(name: &str) -> PathBuf {
    PathBuf::from(format!("conformance/hostile/hostile-{name}.toml"))
}

#[test]
fn a_three_megabyte_initialize_answer_is_a_normal_handshake() {
    let r = run(&hostile("huge-answer"), "close");
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(r.handshake.is_some());
    assert_eq!(r.stage, Some(mcp_shutdown_conformance::model::Stage::Eof));
    assert_eq!(r.stdout.violations, 0);
}

#[test]
fn a_self_stopped_server_is_reported_as_stopped() {
    let r = run(&hostile("stops-itself"), "close");
    let d = r.diagnostics.clone().expect("diagnostics");
    assert_eq!(
        d.state,
        Some(mcp_shutdown_conformance::model::ProcState::Stopped)
    );
    assert!(d.hint.starts_with("It is stopped"), "{}", d.hint);
}

#[test]
fn a_fork_storm_is_found_killed_and_reported_briefly() {
    let cases: Vec<_> = ["close", "crash"]
        .iter()
        .map(|s| run(&hostile("fork-storm"), s))
        .collect();
    for r in &cases {
        assert_eq!(r.leftover_count(), 300, "{}", r.scenario);
    }
    let mut report = mcp_shutdown_conformance::internals::report_of(cases);
    report.resummarize();
    let text = mcp_shutdown_conformance::render_text(&report);
    assert!(text.len() < 10_000, "{} bytes:\n{text}", text.len());
    assert!(text.contains("300 × "), "{text}");
}

#[test]
fn a_server_that_stops_reading_fails_the_handshake_with_a_reason() {
    let r = run(&hostile("stops-reading"), "close");
    let e = r.error.clone().expect("an error");
    assert!(
        e.message.contains("stopped reading its stdin"),
        "{}",
        e.message
    );
}

#[test]
fn a_stderr_flood_costs_only_a_bounded_tail() {
    let r = run(&hostile("stderr-flood"), "close");
    assert!(r.stderr_bytes >= 200_000_000, "{}", r.stderr_bytes);
    assert!(r.stderr_tail.len() <= 4096);
    assert_eq!(r.stage, Some(mcp_shutdown_conformance::model::Stage::Eof));
}

#[test]
fn servers_that_attack_their_supervisor_are_swept_and_judged_for_it() {
    for (name, scenario, says) in [
        ("kills-supervisor", "exit", "swept"),
        ("kills-parent", "close", "swept"),
        ("kills-parent", "crash", "killed by SIGKILL"),
        ("escape-and-kill", "close", "swept"),
        ("stops-supervisor", "close", "stopped responding"),
    ] {
        let r = run(&hostile(name), scenario);
        let e = r.error.clone().expect("an error");
        // The server's doing, judged by the rule it breaks, and by that rule alone.
        assert_eq!(
            e.kind,
            mcp_shutdown_conformance::model::ErrorKind::AncestorSignalled,
            "{name}"
        );
        assert!(e.message.contains(says), "{name} {scenario}: {}", e.message);
        let missed: Vec<String> = r
            .checks
            .iter()
            .filter(|c| c.status.is_miss())
            .map(|c| c.id.to_string())
            .collect();
        assert_eq!(
            missed,
            ["process-no-signals-to-ancestors"],
            "{name} {scenario}"
        );
    }
}
