//! `emit`'s tests.
use super::*;
use crate::hosts::analyze::{HostAction, HostPlumbing, HostStdio, RunReading};
use crate::hosts::measure::{Measurement, PathRuns, Run};
use crate::model::GroupKind;

fn run(actions: &[(&str, f64)], ctty: bool, walked: bool) -> Run {
    Run {
        reading: Some(RunReading {
            started: true,
            plumbing: HostPlumbing {
                stdio: HostStdio::Socketpair,
                group: GroupKind::Host,
                via: HostVia::Direct,
                ctty,
            },
            deliveries: actions
                .iter()
                .map(|(a, t)| HostAction {
                    action: a.parse().unwrap(),
                    to: Target::Process,
                    from: SentBy::Host,
                    at_ms: *t,
                    unseen_at_server: false,
                    walk_ms: None,
                })
                .collect(),
            host_exit_ms: Some(1.0),
            walked_away: walked.then_some(WalkedAway::Alive { alive_s: 3.0 }),
        }),
        failure: None,
        daemons: Vec::new(),
    }
}

#[test]
fn the_shape_most_runs_show_names_the_path_and_a_signal_to_the_children_alone_is_replayed_so() {
    let mut ladder = run(
        &[("sigterm", 1.0), ("close-stdin", 2.0), ("sigterm", 2002.0)],
        true,
        false,
    );
    if let Some(r) = ladder.reading.as_mut() {
        r.deliveries[0].to = Target::Children;
    }
    let odd = run(
        &[("close-stdin", 2.0), ("stdout-closed", 900.0)],
        true,
        true,
    );
    let m = Measurement {
        host: "opencode".into(),
        package: "opencode-ai".into(),
        version: "1.0.0".into(),
        date: "2026-12-02".into(),
        repeats: 3,
        paths: vec![PathRuns {
            daemon_up: false,
            trigger: "quit-command".into(),
            runs: vec![odd, ladder.clone(), ladder],
        }],
        wall_ms: 0,
        installed: false,
    };
    let parsed: toml::Value = toml::from_str(&profiles_toml(&m, "opencode")).unwrap();
    let p = &parsed["profile"][0];
    let steps: Vec<&str> = p["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["do"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["sigterm", "close-stdin", "sigterm"]);
    assert_eq!(p["steps"][0]["to"].as_str(), Some("children"));
    assert_eq!(p["steps"][0]["wait_ms"].as_integer(), Some(1));
    assert_eq!(p["steps"][1]["wait_ms"].as_integer(), Some(2000));
    assert_eq!(p["measured"]["reproduces"].as_bool(), Some(false));
    let note = p["cap_note"].as_str().unwrap();
    assert!(note.contains("1 of 3 runs showed another ladder"), "{note}");
    assert!(note.contains("replayed so"), "{note}");
}

#[test]
fn paths_with_equal_ladders_share_a_profile_and_the_quit_command_names_it() {
    let ladder = [("sigint", 10.0), ("sigterm", 110.0), ("sigkill", 510.0)];
    let m = Measurement {
        host: "claude-code".into(),
        package: "@anthropic-ai/claude-code".into(),
        version: "2.1.332".into(),
        date: "2026-12-02".into(),
        repeats: 2,
        paths: vec![
            PathRuns {
                daemon_up: false,
                trigger: "mcp-list".into(),
                runs: vec![run(&ladder, false, false), run(&ladder, false, false)],
            },
            PathRuns {
                daemon_up: false,
                trigger: "quit-command".into(),
                runs: vec![run(&ladder, true, false), run(&ladder, true, false)],
            },
            PathRuns {
                daemon_up: false,
                trigger: "sigkill".into(),
                runs: vec![run(
                    &[("close-stdin", 5.0), ("stdout-closed", 6.0)],
                    true,
                    true,
                )],
            },
        ],
        wall_ms: 0,
        installed: false,
    };
    let toml = profiles_toml(&m, "Claude Code");
    let parsed: toml::Value = toml::from_str(&toml).unwrap();
    let profiles = parsed["profile"].as_array().unwrap();
    let ids: Vec<&str> = profiles.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["claude-code", "claude-code-sigkill"]);
    assert_eq!(profiles[0]["steps"][0]["wait_ms"].as_integer(), Some(100));
    assert_eq!(profiles[1]["steps"][0]["do"].as_str(), Some("close-pipes"));
    assert_eq!(profiles[1]["abandons"].as_bool(), Some(true));
}

#[test]
fn pipes_the_host_s_death_closed_are_one_close_pipes_however_late_the_recorder_woke() {
    // Claude Code SIGKILLed on a busy machine: its exit closed both ends at once; the
    // recorder's stdout watcher woke 80 ms after its reader.
    let late = run(
        &[("close-stdin", 11.0), ("stdout-closed", 91.0)],
        false,
        true,
    );
    let merged = merge_pipes(late.reading.as_ref().unwrap());
    let actions: Vec<_> = merged.deliveries.iter().map(|d| d.action).collect();
    assert_eq!(actions, [ActionKind::ClosePipes]);
    assert_eq!(merged.deliveries[0].at_ms, 11.0);
    // A host alive when it closed stdin closed it on purpose, whatever came after.
    let mut alive = run(
        &[("close-stdin", 11.0), ("stdout-closed", 2011.0)],
        false,
        true,
    );
    alive.reading.as_mut().unwrap().host_exit_ms = Some(2000.0);
    let kept = merge_pipes(alive.reading.as_ref().unwrap());
    let actions: Vec<_> = kept.deliveries.iter().map(|d| d.action).collect();
    assert_eq!(actions, [ActionKind::CloseStdin, ActionKind::StdoutClosed]);
}

#[test]
fn a_daemon_that_adopts_the_server_gets_a_daemon_up_profile_and_one_that_does_not_a_note() {
    let ladder = [
        ("close-stdin", 90.0),
        ("sigterm", 350.0),
        ("sigkill", 2350.0),
    ];
    let mut adopted = run(&[], true, true);
    if let Some(r) = adopted.reading.as_mut() {
        r.plumbing.via = HostVia::Daemon("cline".into());
    }
    let path = |trigger: &str, daemon_up: bool, runs: Vec<Run>| PathRuns {
        trigger: trigger.into(),
        runs,
        daemon_up,
    };
    let m = Measurement {
        host: "cline-cli".into(),
        package: "cline".into(),
        version: "3.0.65".into(),
        date: "2026-12-06".into(),
        repeats: 1,
        paths: vec![
            path("quit-command", false, vec![run(&ladder, true, false)]),
            path("quit-command", true, vec![adopted]),
            path(
                "sigkill",
                false,
                vec![run(&[("close-pipes", 5.0)], true, true)],
            ),
            path(
                "sigkill",
                true,
                vec![run(&[("close-pipes", 6.0)], true, true)],
            ),
        ],
        wall_ms: 0,
        installed: false,
    };
    let parsed: toml::Value = toml::from_str(&profiles_toml(&m, "Cline CLI")).unwrap();
    let ids: Vec<&str> = parsed["profile"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["cline-cli", "cline-cli-sigkill", "cline-cli-daemon-up"]
    );
    let up = &parsed["profile"][2];
    assert_eq!(up["measured"]["daemon_up"].as_bool(), Some(true));
    assert_eq!(up["measured"]["daemon"].as_str(), Some("cline"));
    assert_eq!(up["steps"][0]["do"].as_str(), Some("nothing"));
    let note = parsed["profile"][1]["cap_note"].as_str().unwrap();
    assert!(
        note.contains("The same with the daemon a first run left up (sigkill)"),
        "{note}"
    );
}

#[test]
fn on_a_tie_the_run_that_saw_more_names_the_path() {
    // The first run's recorder died to the SIGKILL 2 ms after the SIGTERM, before logging it.
    let lost = run(&[("sigkill", 102.0)], false, false);
    let seen = run(&[("sigterm", 100.0), ("sigkill", 102.0)], false, false);
    let m = Measurement {
        host: "copilot-cli".into(),
        package: "@github/copilot".into(),
        version: "1.0.0".into(),
        date: "2026-12-06".into(),
        repeats: 2,
        paths: vec![PathRuns {
            daemon_up: false,
            trigger: "quit-command".into(),
            runs: vec![lost, seen],
        }],
        wall_ms: 0,
        installed: false,
    };
    let parsed: toml::Value = toml::from_str(&profiles_toml(&m, "copilot-cli")).unwrap();
    let steps: Vec<&str> = parsed["profile"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["do"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["sigterm", "sigkill"]);
}

/// A run whose last step, a SIGKILL, is inferred from the server's death.
fn killed(actions: &[(&str, f64)]) -> Run {
    let mut r = run(actions, true, false);
    if let Some(d) = r.reading.as_mut().and_then(|x| x.deliveries.last_mut()) {
        d.from = SentBy::InferredFromDeath;
    }
    r
}

#[test]
fn runs_that_differ_only_in_the_closes_logged_before_the_kill_are_one_ladder_shown_fullest() {
    let both = killed(&[
        ("sigterm", 100.0),
        ("close-stdin", 100.5),
        ("stdout-closed", 100.6),
        ("sigkill", 102.0),
    ]);
    let stdin_only = killed(&[("sigterm", 90.0), ("close-stdin", 90.5), ("sigkill", 91.0)]);
    let neither = killed(&[("sigterm", 80.0), ("sigkill", 82.0)]);
    let path = |trigger: &str, runs: Vec<Run>| PathRuns {
        daemon_up: false,
        trigger: trigger.into(),
        runs,
    };
    let m = Measurement {
        host: "copilot-cli".into(),
        package: "@github/copilot".into(),
        version: "1.0.0".into(),
        date: "2026-12-06".into(),
        repeats: 3,
        paths: vec![
            path(
                "quit-command",
                vec![neither.clone(), both, stdin_only.clone()],
            ),
            path("ctrl-d", vec![stdin_only.clone(), neither, stdin_only]),
        ],
        wall_ms: 0,
        installed: false,
    };
    let parsed: toml::Value = toml::from_str(&profiles_toml(&m, "Copilot")).unwrap();
    let profiles = parsed["profile"].as_array().unwrap();
    assert_eq!(profiles.len(), 1, "{parsed:#?}");
    let p = &profiles[0];
    let steps: Vec<&str> = p["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["do"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["sigterm", "close-pipes", "sigkill"]);
    let triggers = p["measured"]["triggers"].as_array().unwrap();
    assert_eq!(triggers.len(), 2);
    let note = p["cap_note"].as_str().unwrap();
    assert!(note.contains("In 5 of 6 runs"), "{note}");
    assert!(!note.contains("another ladder"), "{note}");
}

/// Every entry written from a stored measurement reads back as a profile (no unknown key,
/// every value of its type), laid out as `profiles.toml` is: `measured` and `plumbing`
/// inline, one step a line.
#[test]
fn entries_written_from_the_stored_measurements_read_back_as_profiles() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/measurements");
    let mut read = 0;
    for file in std::fs::read_dir(&dir).unwrap().flatten() {
        let m: Measurement =
            serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
        let text = profiles_toml(&m, &m.host);
        let parsed: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
        for p in parsed["profile"].as_array().unwrap() {
            let p: crate::config::profiles::Profile = p.clone().try_into().unwrap();
            assert!(p.is_host(), "{text}");
            assert_eq!(p.basis, crate::model::ProfileBasis::Measured);
            assert!(p.measured.is_some() && !p.steps.is_empty(), "{text}");
            read += 1;
        }
        assert!(text.contains("\nmeasured = { package = "), "{text}");
        assert!(text.contains("\nplumbing = { stdio = "), "{text}");
        assert!(text.contains("\nsteps = [\n  { do = "), "{text}");
        assert!(text.contains(" },\n]\n"), "{text}");
    }
    assert!(read > 0, "no stored measurement in {}", dir.display());
}
