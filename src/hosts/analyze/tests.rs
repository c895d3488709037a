//! `analyze`'s tests.
use super::*;
use crate::model::Spread;

const INT: ActionKind = ActionKind::Signal(SignalName::Int);
const TERM: ActionKind = ActionKind::Signal(SignalName::Term);
const KILL: ActionKind = ActionKind::Signal(SignalName::Kill);
const EOF: ActionKind = ActionKind::CloseStdin;

fn line(t_ms: u64, role: &str, pid: i32, ev: &str, extra: &str) -> String {
    format!(
        "{{\"t_ns\":{},\"role\":\"{role}\",\"pid\":{pid},\"ev\":\"{ev}\"{extra}}}",
        t_ms * 1_000_000
    )
}

#[test]
fn a_signal_the_child_also_gets_went_to_the_group_and_an_unlogged_death_is_a_sigkill() {
    let log = [
        line(
            1,
            "server",
            10,
            "start",
            ",\"ppid\":5,\"pgid\":4,\"sid\":3,\"stdin\":\"socket\",\"tty_nr\":0",
        ),
        line(
            100,
            "server",
            10,
            "signal",
            ",\"signo\":2,\"name\":\"SIGINT\",\"si_pid\":5",
        ),
        line(
            101,
            "child",
            11,
            "signal",
            ",\"signo\":2,\"name\":\"SIGINT\",\"si_pid\":5",
        ),
        line(
            200,
            "server",
            10,
            "signal",
            ",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":5",
        ),
    ]
    .join("\n");
    let facts = RunFacts {
        events: parse_log(&log),
        host_pid: 5,
        trigger_ns: 50_000_000,
        server_death_ns: Some(400_000_000),
        ..Default::default()
    };
    let r = read_run(&facts);
    assert_eq!(
        shape(&r),
        [
            (INT, Target::Group),
            (TERM, Target::Process),
            (KILL, Target::Process)
        ]
    );
    assert_eq!(r.plumbing.stdio, HostStdio::Socketpair);
    assert_eq!(r.plumbing.group, GroupKind::Host);
    assert_eq!(r.plumbing.via, HostVia::Direct);
    assert!(r.walked_away.is_none());
    assert_eq!(r.deliveries[0].at_ms, 50.0);
}

#[test]
fn a_signal_the_server_was_killed_before_taking_counts_as_reaching_it() {
    // Copilot CLI on a loaded machine: SIGTERM to the tree, SIGKILL 2 ms later, and the
    // server never ran between them; its child and grandchild logged the SIGTERM.
    let term = ",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":7";
    let log = |server_lives: bool| {
        let mut l = vec![
            line(1, "server", 10, "start", ",\"ppid\":5,\"pgid\":4,\"sid\":3"),
            line(151, "child", 11, "signal", term),
            line(152, "grandchild", 12, "signal", term),
        ];
        if server_lives {
            l.push(line(400, "server", 10, "stdin_eof", ""));
        }
        l.join("\n")
    };
    let facts = |server_lives: bool, death_ms: u64| RunFacts {
        events: parse_log(&log(server_lives)),
        host_pid: 5,
        server_death_ns: Some(death_ms * 1_000_000),
        ..Default::default()
    };
    let killed = read_run(&facts(false, 153));
    assert_eq!(
        shape(&killed),
        [(TERM, Target::Tree), (KILL, Target::Process)]
    );
    assert!(killed.deliveries[0].unseen_at_server);
    // A server that lived on past the signal without logging it was not sent it.
    let spared = read_run(&facts(true, 900));
    assert_eq!(spared.deliveries[0].to, Target::Children);
    assert!(!spared.deliveries[0].unseen_at_server);
}

#[test]
fn a_signal_sent_one_process_at_a_time_the_server_last_is_one_walk_of_the_tree() {
    // GitHub Copilot CLI: `kill -s TERM` per descendant, deepest first, then the server.
    let term = |pid: i32| format!(",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":{pid}");
    let log = [
        line(1, "server", 10, "start", ",\"ppid\":5,\"pgid\":4,\"sid\":3"),
        line(100, "grandchild", 12, "signal", &term(21)),
        line(112, "child", 11, "signal", &term(22)),
        line(160, "server", 10, "signal", &term(23)),
    ]
    .join("\n");
    let facts = RunFacts {
        events: parse_log(&log),
        host_pid: 5,
        server_death_ns: Some(163_000_000),
        ..Default::default()
    };
    let r = read_run(&facts);
    assert_eq!(shape(&r), [(TERM, Target::Tree), (KILL, Target::Process)]);
    assert_eq!(r.deliveries[0].at_ms, 160.0);
    assert_eq!(r.deliveries[0].walk_ms, Some(60.0));
}

#[test]
fn a_death_comes_after_what_the_server_logged_at_once_before_it() {
    // Copilot CLI's `-p`: SIGTERM, then SIGKILL ~1.5 ms later (the death is stamped
    // when the pidfd reads, the signal when the recorder logged it).
    let log = [
        line(1, "server", 10, "start", ",\"ppid\":5,\"pgid\":4,\"sid\":3"),
        line(
            354,
            "server",
            10,
            "signal",
            ",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":5",
        ),
    ]
    .join("\n");
    let facts = RunFacts {
        events: parse_log(&log),
        host_pid: 5,
        trigger_ns: 0,
        server_death_ns: Some(355_000_000),
        ..Default::default()
    };
    let r = read_run(&facts);
    assert_eq!(
        shape(&r),
        [(TERM, Target::Process), (KILL, Target::Process)]
    );
}

#[test]
fn a_server_under_another_parent_that_lives_on_was_kept_by_a_daemon() {
    let log = line(
        1,
        "server",
        10,
        "start",
        ",\"ppid\":7,\"parent_comm\":\"codex\",\"pgid\":10,\"sid\":3,\"stdin\":\"fifo\"",
    );
    let facts = RunFacts {
        events: parse_log(&log),
        host_pid: 5,
        walk_window_s: 3.0,
        ..Default::default()
    };
    let r = read_run(&facts);
    assert_eq!(r.plumbing.via, HostVia::Daemon("codex".into()));
    assert_eq!(r.plumbing.group, GroupKind::Own);
    assert!(matches!(
        r.walked_away,
        Some(WalkedAway::KeptByDaemon { .. })
    ));
}

#[test]
fn spread_and_tolerance() {
    let s = Spread::of(vec![100.0, 130.0, 90.0]).unwrap();
    assert_eq!((s.min_ms, s.median_ms, s.max_ms), (90.0, 100.0, 130.0));
    assert!(s.reproduces());
    assert_eq!(s.to_string(), "90/100/130 ms");
    assert_eq!(Spread::try_from(s.to_string()), Ok(s));
    assert!(!Spread::of(vec![100.0, 2000.0, 2500.0])
        .unwrap()
        .reproduces());
    assert!(Spread::try_from("1/2 ms".to_string()).is_err());
}

#[test]
fn a_walk_faster_than_one_signal_is_told_by_its_senders() {
    // Copilot CLI on a quiet machine: a `kill` per process, 5 ms apart, the server last and
    // SIGKILLed 2 ms after its own SIGTERM: one walk, not a signal to the children first.
    let term = |pid: i32| format!(",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":{pid}");
    let log = [
        line(1, "server", 10, "start", ",\"ppid\":5,\"pgid\":4,\"sid\":3"),
        line(100, "grandchild", 12, "signal", &term(21)),
        line(105, "child", 11, "signal", &term(22)),
        line(110, "server", 10, "signal", &term(23)),
    ]
    .join("\n");
    let facts = RunFacts {
        events: parse_log(&log),
        host_pid: 5,
        server_death_ns: Some(112_000_000),
        ..Default::default()
    };
    let r = read_run(&facts);
    assert_eq!(shape(&r), [(TERM, Target::Tree), (KILL, Target::Process)]);
    assert_eq!(r.deliveries[0].walk_ms, Some(10.0));
    assert!(!r.deliveries[0].unseen_at_server);
}

#[test]
fn a_walk_slowed_by_load_is_still_one_walk_but_not_across_another_step() {
    // Each `kill` of Copilot's walk is a process of its own: under load the descendants'
    // SIGTERMs come hundreds of ms before the server's.
    let term = |pid: i32| format!(",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":{pid}");
    let run = |between: bool| {
        let mut log = vec![
            line(1, "server", 10, "start", ",\"ppid\":5,\"pgid\":4,\"sid\":3"),
            line(100, "grandchild", 12, "signal", &term(21)),
            line(380, "child", 11, "signal", &term(22)),
            line(620, "server", 10, "signal", &term(23)),
        ];
        if between {
            // A close in between: the children's SIGTERM was a step of its own.
            log.push(line(500, "server", 10, "stdin_eof", ""));
        }
        read_run(&RunFacts {
            events: parse_log(&log.join("\n")),
            host_pid: 5,
            server_death_ns: Some(623_000_000),
            ..Default::default()
        })
    };
    let walk = run(false);
    assert_eq!(walk.deliveries[0].to, Target::Tree);
    assert_eq!(walk.deliveries[0].walk_ms, Some(520.0));
    let steps = run(true);
    assert_eq!(
        shape(&steps),
        [
            (TERM, Target::Children),
            (EOF, Target::Process),
            (TERM, Target::Process),
            (KILL, Target::Process)
        ]
    );
}

#[test]
fn a_child_that_waited_for_a_cpu_widens_the_window_by_its_wait() {
    // The child's line came 48 ms after the SIGKILL, 45 ms of it waiting for a CPU: the
    // SIGTERM reached it before the server died, so it was the server's too.
    let term = ",\"signo\":15,\"name\":\"SIGTERM\",\"si_pid\":7,\"queued_ns\":45000000";
    let log = [
        line(1, "server", 10, "start", ",\"ppid\":5,\"pgid\":4,\"sid\":3"),
        line(301, "child", 11, "signal", term),
    ]
    .join("\n");
    let r = read_run(&RunFacts {
        events: parse_log(&log),
        host_pid: 5,
        server_death_ns: Some(253_000_000),
        ..Default::default()
    });
    assert_eq!(shape(&r), [(TERM, Target::Group), (KILL, Target::Process)]);
    assert_eq!(r.deliveries[0].at_ms, 253.0);
}
