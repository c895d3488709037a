//! The real-host checks' pure parts, on recorded runs.

use super::*;

use super::judge::keep_judged;
use super::place::{ladder_offset_ms, observation, untimed};
use crate::config::profiles::Profiles;
use crate::config::scenarios::{build_with, PlumbingOverride};
use crate::model::Budgets;
use crate::model::{
    HostSignal, RealHostRun, RuleId, Scenario, ScenarioId, Sender, SignalName, Stage, Status,
};
use crate::rules::Catalogue;

#[test]
fn a_child_first_seen_before_its_exec_is_still_a_leftover_after_it() {
    // Its subshell has the parent's command line until it execs `sleep 30`.
    let mut parent = std::process::Command::new("sh")
        .args(["-c", "(sleep 0.3; exec sleep 30) & wait"])
        .spawn()
        .unwrap();
    let pid = parent.id() as i32;
    let mut tree = Tree::default();
    while tree.0.is_empty() {
        tree.read(pid);
    }
    let child = *tree.0.keys().next().unwrap();
    let exec_d = || crate::os::procfs::proc_info(child).is_some_and(|p| p.cmdline == "sleep 30");
    let end = Instant::now() + Duration::from_secs(20);
    while !exec_d() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Not read again: the same process by its start time, whatever its command line.
    let left = tree.still_running(pid, "sh");
    for l in &left {
        crate::os::signals::signal_pid(l.pid, crate::model::SignalName::Kill);
    }
    let _ = parent.wait();
    assert_eq!(
        left.iter().map(|l| l.cmdline.as_str()).collect::<Vec<_>>(),
        ["sleep 30"],
        "{left:?}"
    );
}

fn scenario(id: &str) -> Scenario {
    let id: ScenarioId = format!("close:{id}").parse().unwrap();
    build_with(
        &id,
        &Budgets::default(),
        &Profiles::bundled(),
        &PlumbingOverride::default(),
    )
    .unwrap()
}

fn about(untimed: bool) -> RealHostRun {
    RealHostRun {
        host: "qwen-code".into(),
        package: "@qwen-code/qwen-code".into(),
        version: "0.24.4".into(),
        trigger: "quit-command".into(),
        ladder_measured_on: "0.24.4".into(),
        untimed: untimed.then(|| "a one-shot command".into()),
        signals: Vec::new(),
    }
}

fn run(exit_ms: Option<f64>, left_running: bool) -> RealRun {
    RealRun {
        trigger: "quit-command".into(),
        one_shot: false,
        exit_ms,
        exited: exit_ms.is_some(),
        left_running,
        leftovers: Vec::new(),
        signals: Vec::new(),
        killed_by: None,
        untraced: None,
        failure: None,
        wall_ms: 1.0,
        load_avg: None,
    }
}

fn sig(signal: SignalName, at_ms: f64) -> HostSignal {
    HostSignal {
        signal,
        at_ms,
        from_pid: 7,
        from: Sender::Host,
    }
}

#[test]
fn the_stage_is_the_last_step_whose_signal_the_server_was_seen_to_receive() {
    // Claude Code: SIGINT, ~100 ms, SIGTERM, ~400 ms, SIGKILL, all to the pid.
    let s = scenario("claude-code");
    let mut r = run(Some(900.0), false);
    // A host slow to act under load: its SIGINT 850 ms after the quit, the exit at once.
    // By time alone that would be past the SIGTERM; it is the SIGINT that ended it.
    r.signals = vec![sig(SignalName::Int, 850.0)];
    // Re-raised by the server itself: no step of the host's.
    r.signals.push(HostSignal {
        from: Sender::Server,
        ..sig(SignalName::Term, 851.0)
    });
    let o = observation("srv", &r, &s, 0.0, about(false));
    assert_eq!(o.stage, Some(Stage::Sigint));
    assert_eq!(o.steps.len(), 1);
    assert_eq!(o.steps[0].at_ms, 850.0);
    r.signals = vec![sig(SignalName::Int, 850.0), sig(SignalName::Term, 880.0)];
    let o = observation("srv", &r, &s, 0.0, about(false));
    assert_eq!(o.stage, Some(Stage::Sigterm));
    // Killed: the SIGKILL is seen as its end.
    r.killed_by = Some(SignalName::Kill);
    let o = observation("srv", &r, &s, 0.0, about(false));
    assert_eq!(o.stage, Some(Stage::Sigkill));
    assert_eq!(o.steps.len(), 3);
    // A signal after the exit, or one the ladder lacks, places nothing.
    r.killed_by = None;
    r.signals = vec![
        sig(SignalName::Other(17), 10.0),
        sig(SignalName::Term, 950.0),
    ];
    let o = observation("srv", &r, &s, 0.0, about(false));
    assert_eq!(o.stage, Some(Stage::Sigint));
    let o = observation("srv", &run(None, true), &s, 0.0, about(false));
    assert_eq!(o.stage, Some(Stage::Survived));
    assert!(o.real_host.is_some());
}

#[test]
fn a_step_that_cannot_be_seen_is_placed_by_its_measured_wait_after_the_last_seen() {
    // Qwen Code: stdin closed, ~2 s, SIGTERM, then its pipes close.
    let s = scenario("qwen-code");
    let o = observation("srv", &run(Some(40.0), false), &s, 0.0, about(false));
    assert_eq!(o.stage, Some(Stage::Eof));
    let mut r = run(Some(2860.0), false);
    r.signals = vec![sig(SignalName::Term, 2850.0)];
    let o = observation("srv", &r, &s, 111.0, about(false));
    assert_eq!(o.stage, Some(Stage::Sigterm));
    assert_eq!(o.steps.len(), 2);
    assert_eq!(o.steps[0].at_ms, 111.0);
    // No SIGTERM seen: it ended at its closed stdin however late (the host's SIGTERM
    // never reached it).
    let o = observation("srv", &run(Some(5000.0), false), &s, 111.0, about(false));
    assert_eq!(o.stage, Some(Stage::Eof));
    // Its ladder begins ~137 ms after the quit (measured 2026-12-06).
    let qwen = Profiles::bundled();
    let offset = ladder_offset_ms(
        qwen.get(&"qwen-code".to_string().try_into().unwrap())
            .unwrap(),
    );
    assert_eq!(offset, 137.0);
}

#[test]
fn signals_that_could_not_be_traced_leave_the_end_unplaced() {
    let profiles = Profiles::bundled();
    let mut r = run(Some(40.0), false);
    r.untraced = Some("ptrace: Operation not permitted".into());
    let why = untimed(
        &r,
        profiles
            .get(&"qwen-code".to_string().try_into().unwrap())
            .unwrap(),
    );
    assert!(why.is_some_and(|w| w.contains("could not be traced")));
}

#[test]
fn one_shot_commands_and_ladders_that_did_not_reproduce_are_not_timed() {
    let profiles = Profiles::bundled();
    let get = |id: &str| profiles.get(&id.to_string().try_into().unwrap()).unwrap();
    let mut r = run(Some(40.0), false);
    assert_eq!(untimed(&r, get("qwen-code")), None);
    assert!(
        untimed(&r, get("opencode")).is_some(),
        "opencode's did not reproduce"
    );
    // Copilot CLI's ladder reproduces but for how long it took to begin, and it begins
    // with a signal the trace sees: it is placed.
    assert_eq!(untimed(&r, get("copilot-cli")), None);
    r.one_shot = true;
    assert!(untimed(&r, get("qwen-code")).is_some());
}

#[test]
fn a_host_that_never_started_the_server_is_not_the_servers_failure() {
    let mut r = run(None, false);
    r.failure = Some(Failure::NoServer("screen \"Log in\"".into()));
    let o = observation("srv", &r, &scenario("qwen-code"), 0.0, about(false));
    assert!(!o.error.unwrap().kind.owner().is_scored());
    r.failure = Some(Failure::ExitedBeforeQuit);
    let o = observation("srv", &r, &scenario("qwen-code"), 0.0, about(false));
    assert!(o.error.unwrap().kind.owner().is_scored());
}

#[test]
fn an_untimed_end_is_judged_on_leftovers_only_and_unseen_rules_are_dropped() {
    let s = scenario("qwen-code");
    let mut r = run(None, false);
    r.one_shot = true;
    r.exited = true;
    let o = observation("srv", &r, &s, 0.0, about(true));
    let checks = Catalogue::bundled().judge(
        &o,
        &s,
        &Budgets::default(),
        Catalogue::bundled().default_revision,
    );
    let kept = keep_judged(checks, &r, Some("a one-shot command"));
    assert!(
        kept.iter()
            .all(|c| Catalogue::bundled().rule(c.id).under_real_host),
        "{kept:?}"
    );
    assert!(!kept.iter().any(|c| c.id == RuleId::StdioStdoutOnlyMcp));
    for c in &kept {
        let want = if c.id == RuleId::ProcessNoLeakedDescendants {
            Status::Success
        } else {
            Status::Skipped
        };
        assert_eq!(c.status, want, "{c:?}");
    }
}
