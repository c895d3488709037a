//! The pure parts of the client-ladder test: profiles and measurements as ladders, and drift.

use std::path::Path;

use super::*;

fn act(act: &str, to: &str, gap_ms: f64) -> Action {
    Action {
        act: act.into(),
        to: to.into(),
        gap_ms,
    }
}

const PROFILES: &str = r#"
[[profile]]
id = "python"
steps = [
  { do = "close-stdin", wait_ms = 2000 },
  { do = "sigterm", to = "group", wait_ms = 2000 },
  { do = "sigkill", to = "group", wait_ms = 2000 },
]

[[profile]]
id = "java"
unbounded = true
steps = [
  { do = "nothing", wait_ms = 100 },
  { do = "sigterm", wait_ms = 0 },
  { do = "close-stdin", wait_ms = 5000 },
]
races = [{ between = ["sigterm", "close-stdin"], gap_ms = [0, 100] }]
"#;

#[test]
fn profiles_become_gaps_between_actions() {
    let doc: toml::Value = PROFILES.parse().unwrap();
    let p = Path::new("profiles.toml");
    assert_eq!(
        profile_ladder(&doc, "python", p).unwrap(),
        Ladder {
            actions: vec![
                act("close-stdin", "process", 0.0),
                act("sigterm", "group", 2000.0),
                act("sigkill", "group", 2000.0)
            ],
            unbounded: false,
            races: vec![]
        }
    );
    // A leading `nothing` only delays the first action.
    assert_eq!(
        profile_ladder(&doc, "java", p).unwrap(),
        Ladder {
            actions: vec![
                act("sigterm", "process", 100.0),
                act("close-stdin", "process", 0.0)
            ],
            unbounded: true,
            races: vec![Race {
                first: "sigterm".into(),
                second: "close-stdin".into(),
                min_ms: 0.0
            }]
        }
    );
    let e = profile_ladder(&doc, "go", p).unwrap_err().to_string();
    assert!(
        e.contains("no profile with id `go`") && e.contains("profiles.toml"),
        "{e}"
    );
}

/// A recorder log line at `t_ms`.
fn line(t_ms: f64, role: &str, pid: i32, ev: &str, extra: &str) -> String {
    format!(
        "{{\"t_ns\":{},\"role\":\"{role}\",\"pid\":{pid},\"ev\":\"{ev}\"{extra}}}",
        (t_ms * 1e6) as u64
    )
}

#[test]
fn measurements_become_gaps_between_actions() {
    let ms = |t: f64| (t * 1e6) as u64;
    let term = ",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":5";
    let log = [
        line(
            1.0,
            "server",
            10,
            "start",
            ",\"ppid\":5,\"pgid\":10,\"sid\":3",
        ),
        line(2.0, "server", 10, "tree", ",\"child\":11,\"grandchild\":12"),
        line(1139.8, "server", 10, "stdin_eof", ""),
        line(1140.0, "server", 10, "signal", term),
        // the child took the SIGTERM too: it went to the group
        line(1141.0, "child", 11, "signal", term),
        // the client's read end of stdout: not a step
        line(1150.0, "server", 10, "stdout_unwritable", ""),
        // after the release: the client's exit, not its ladder
        line(9000.0, "server", 10, "signal", ",\"signo\":2,\"si_pid\":5"),
    ]
    .join("\n");
    let events = mcp_shutdown_conformance::internals::hosts::analyze::parse_log(&log);
    let window = run::Window {
        close_start: ms(1000.0),
        release: ms(5000.0),
        ..Default::default()
    };
    let deaths = run::Deaths {
        server: Some(ms(3140.0)),
        child: Some(ms(3141.0)),
        grandchild: None,
    };
    assert_eq!(
        measured_ladder(&run::observed(&events, &window, deaths, 5)),
        Ladder {
            actions: vec![
                act("sigterm", "group", 140.0),
                // put after the signal as one instant: never a negative gap
                act("close-stdin", "process", 0.0),
                // an unlogged death is a SIGKILL; the child died with it
                act("sigkill", "group", 2000.2),
            ],
            unbounded: false,
            races: vec![]
        }
    );
    // close() never returned, the bound ran out and the server lived on.
    let window = run::Window {
        bound_hit: true,
        ..window
    };
    let alive = run::observed(&events, &window, run::Deaths::default(), 5);
    assert!(measured_ladder(&alive).unbounded);
}

#[test]
fn waits_are_lower_bounds_that_load_can_only_stretch() {
    let doc: toml::Value = PROFILES.parse().unwrap();
    let profile = profile_ladder(&doc, "python", Path::new("p")).unwrap();
    let mut m = profile.clone();
    m.actions[0].gap_ms = 3.0;
    m.actions[1].gap_ms = 1994.0; // 1997 ms: within the slack of the client's own stamp
    m.actions[2].gap_ms = 9_000.0; // a loaded machine: later is never drift
    assert!(drift(&profile, &m).is_empty(), "{:?}", drift(&profile, &m));
    m.actions[0].gap_ms = 30.0; // stdin's EOF seen late...
    m.actions[1].gap_ms = 1975.0; // ...so the timer that began at close start looks short
    assert!(drift(&profile, &m).is_empty(), "{:?}", drift(&profile, &m));
    m.actions[2].gap_ms = 1_500.0; // the client's 2000 ms timer cannot fire this early
    let d = drift(&profile, &m);
    assert!(d.len() == 1 && d[0].contains("step 3 (sigkill)"), "{d:?}");
}

/// The Java SDK's flake: its sink closes stdin and its destroy() sends SIGTERM from two
/// threads, so either may reach the server first; both orders, and any gap, agree.
#[test]
fn a_declared_race_accepts_both_orders_and_nothing_else() {
    let doc: toml::Value = PROFILES.parse().unwrap();
    let profile = profile_ladder(&doc, "java", Path::new("p")).unwrap();
    let ladder = |acts: Vec<Action>| Ladder {
        actions: acts,
        unbounded: true,
        races: vec![],
    };
    let listed = ladder(vec![
        act("sigterm", "process", 104.0),
        act("close-stdin", "process", 0.3),
    ]);
    assert!(
        drift(&profile, &listed).is_empty(),
        "{:?}",
        drift(&profile, &listed)
    );
    // measured on CI under load: close start → 115 ms → close-stdin → 77 ms → sigterm
    let swapped = ladder(vec![
        act("close-stdin", "process", 115.0),
        act("sigterm", "process", 77.0),
    ]);
    assert!(
        drift(&profile, &swapped).is_empty(),
        "{:?}",
        drift(&profile, &swapped)
    );
    let loaded = ladder(vec![
        act("close-stdin", "process", 1255.0),
        act("sigterm", "process", 400.0),
    ]);
    assert!(
        drift(&profile, &loaded).is_empty(),
        "{:?}",
        drift(&profile, &loaded)
    );
    // before the SDK's 100 ms pending-message delay: drift, in either order
    let early = ladder(vec![
        act("close-stdin", "process", 20.0),
        act("sigterm", "process", 90.0),
    ]);
    let d = drift(&profile, &early);
    assert!(
        d.len() == 1 && d[0].contains("step 1 (close-stdin)"),
        "{d:?}"
    );
    // a race is about order only: a missing or another action is still drift
    let missing = ladder(vec![act("close-stdin", "process", 115.0)]);
    assert!(drift(&profile, &missing)[0].starts_with("actions differ"));
    let kill = ladder(vec![
        act("close-stdin", "process", 115.0),
        act("sigkill", "process", 77.0),
    ]);
    assert!(drift(&profile, &kill)[0].starts_with("actions differ"));
    // no race declared: the other order is drift
    let python = profile_ladder(&doc, "python", Path::new("p")).unwrap();
    let mut other = python.clone();
    other.actions.swap(0, 1);
    assert!(drift(&python, &other)[0].starts_with("actions differ"));
}

#[test]
fn a_race_must_name_two_adjacent_steps_in_order() {
    let text = PROFILES.replace(
        r#"between = ["sigterm", "close-stdin"]"#,
        r#"between = ["close-stdin", "sigterm"]"#,
    );
    let doc: toml::Value = text.parse().unwrap();
    let e = profile_ladder(&doc, "java", Path::new("p")).unwrap_err();
    assert!(e.to_string().contains("a race is not"), "{e}");
}

#[test]
fn other_actions_targets_or_an_end_are_drift() {
    let doc: toml::Value = PROFILES.parse().unwrap();
    let profile = profile_ladder(&doc, "python", Path::new("p")).unwrap();
    let mut to_process = profile.clone();
    to_process.actions[1].to = "process".into();
    assert!(drift(&profile, &to_process)[0].starts_with("actions differ"));
    let mut no_kill = profile.clone();
    no_kill.actions.pop();
    assert!(drift(&profile, &no_kill)[0].starts_with("actions differ"));
    let mut forever = profile.clone();
    forever.unbounded = true;
    assert!(drift(&profile, &forever)[0].starts_with("unbounded: profile false"));
}

#[test]
fn ladders_render_on_one_line() {
    let l = Ladder {
        actions: vec![
            act("close-stdin", "process", 0.4),
            act("sigterm", "group", 2001.6),
        ],
        unbounded: true,
        races: vec![],
    };
    assert_eq!(
        render(&l),
        "close start → 0 ms → close-stdin → 2002 ms → sigterm (group) → waits forever"
    );
}
