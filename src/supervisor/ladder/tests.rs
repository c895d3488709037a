//! `ladder`'s tests.
use super::*;
use crate::model::{Target, UntilIdle};

fn spec_ladder() -> Vec<Step> {
    let sig = |signal| Action::Signal {
        signal,
        to: Target::Process,
    };
    vec![
        Step::new(Action::CloseStdin, 2000),
        Step::new(sig(SignalName::Term), 2000),
        Step::new(sig(SignalName::Kill), 2000),
    ]
}

/// How a simulated server's tree behaves in time: `busy_ms` of start-up or teardown CPU
/// from the first trigger, queued `queued_share` percent of every slice.
#[derive(Clone, Copy)]
struct Sim {
    exit_at: Option<u64>,
    busy_ms: u64,
    queued_share: u64,
    /// The tree's queueing shows in its readings only every this many slices, all at once
    /// (as the kernel reports it when a thread gets the CPU); 1: every slice.
    report_every: u64,
}

/// The simulated server's tree: one thread, so held back exactly as long as it queued.
/// Queueing not reported yet is a thread still waiting for a CPU: stalled.
fn sample(now: u64, cpu: u64, queued: u64, busy: bool, unreported: u64) -> Event {
    Event::Sampled(TreeSample {
        now_ns: now,
        cpu_ns: cpu,
        queued_ns: queued,
        held_ns: queued,
        busy,
        stalled: unreported > 0,
    })
}

/// Drives a ladder against a simulated server. Returns every command seen, and how it
/// ended.
fn run(steps: Vec<Step>, sim: Sim) -> (Vec<Command>, Ended) {
    let t0 = 1_000 * MS;
    let mut now = t0;
    let (mut cpu, mut queued) = (0u64, 0u64);
    let mut l = LadderState::new(steps, 1000, None);
    let mut pending: std::collections::VecDeque<Command> = l.start().into();
    let mut seen = Vec::new();
    let mut started = None::<u64>;
    let (mut slices, mut unreported) = (0u64, 0u64);
    while let Some(cmd) = pending.pop_front() {
        seen.push(cmd.clone());
        let ev = match cmd {
            Command::Sample => Some(sample(now, cpu, queued, false, 0)),
            Command::Perform(_) => {
                started.get_or_insert(now);
                Some(Event::Performed { at_ns: now })
            }
            Command::Wait(d) => {
                let end = now + d.as_nanos() as u64;
                let exit = sim.exit_at.map(|e| started.unwrap() + e * MS);
                match exit.filter(|e| *e <= end) {
                    Some(e) => {
                        now = e;
                        Some(Event::Exited { at_ns: e })
                    }
                    None => {
                        let since = started.map_or(0, |s| (end - s) / MS);
                        let busy = since <= sim.busy_ms;
                        if busy {
                            cpu += d.as_nanos() as u64;
                        }
                        unreported += d.as_nanos() as u64 * sim.queued_share / 100;
                        slices += 1;
                        if slices % sim.report_every.max(1) == 0 {
                            queued += std::mem::take(&mut unreported);
                        }
                        now = end;
                        Some(sample(now, cpu, queued, busy, unreported))
                    }
                }
            }
            Command::Done(e) => return (seen, e),
            Command::Diagnose { .. } | Command::FreeCpu => None,
        };
        if let Some(ev) = ev {
            pending.extend(l.on(ev));
        }
    }
    panic!("the ladder ended without Done: {seen:?}");
}

fn simulate(
    steps: Vec<Step>,
    exit_at: Option<u64>,
    busy_ms: u64,
    queued_share: u64,
) -> (Vec<Command>, Ended) {
    run(
        steps,
        Sim {
            exit_at,
            busy_ms,
            queued_share,
            report_every: 1,
        },
    )
}

#[test]
fn an_exit_on_eof_ends_at_the_first_step() {
    let (seen, e) = simulate(spec_ladder(), Some(12), 0, 0);
    assert_eq!(e.stage, Stage::Eof);
    assert_eq!(e.exit_ms, Some(12.0));
    assert_eq!(e.steps.len(), 1);
    assert_eq!(seen.iter().filter(|c| **c == Command::FreeCpu).count(), 1);
    assert!(!seen.iter().any(|c| matches!(c, Command::Diagnose { .. })));
}

/// A wait after a step that did not reach the server (a host doing nothing first) is
/// no time it should have exited in: nothing is diagnosed then.
#[test]
fn a_step_that_reaches_nothing_is_not_diagnosed() {
    let steps = vec![
        Step::new(Action::Nothing, 100),
        Step::new(Action::CloseStdin, 2000),
    ];
    let (seen, e) = simulate(steps, Some(150), 0, 0);
    assert_eq!(e.stage, Stage::Eof);
    assert!(!seen.iter().any(|c| matches!(c, Command::Diagnose { .. })));
    // Nor is a survivor of a host that never ends the session.
    let (seen, e) = simulate(vec![Step::new(Action::Nothing, 100)], None, 0, 0);
    assert_eq!(e.stage, Stage::Survived);
    assert!(!seen.iter().any(|c| matches!(c, Command::Diagnose { .. })));
}

#[test]
fn a_server_that_ignores_eof_is_diagnosed_then_signalled() {
    let (seen, e) = simulate(spec_ladder(), Some(2010), 0, 0);
    assert_eq!(e.stage, Stage::Sigterm);
    assert_eq!(e.steps.len(), 2);
    assert_eq!(e.steps[1].at_ms, 2000.0);
    let diag = seen
        .iter()
        .position(|c| matches!(c, Command::Diagnose { after: None }));
    let term = seen.iter().position(|c| {
        matches!(
            c,
            Command::Perform(Action::Signal {
                signal: SignalName::Term,
                ..
            })
        )
    });
    assert!(diag.unwrap() < term.unwrap(), "{seen:?}");
}

#[test]
fn a_server_that_outlives_the_ladder_survives_with_diagnostics() {
    let (seen, e) = simulate(spec_ladder(), None, 0, 0);
    assert_eq!(e.stage, Stage::Survived);
    assert_eq!(e.exit_ms, None);
    assert_eq!(e.steps.len(), 3);
    // Diagnosed once, before the first escalation, about end-of-file.
    let diags: Vec<&Command> = seen
        .iter()
        .filter(|c| matches!(c, Command::Diagnose { .. }))
        .collect();
    assert_eq!(diags, [&Command::Diagnose { after: None }]);
}

#[test]
fn queueing_for_a_cpu_does_not_count_as_the_servers_time() {
    // Queued half of every slice: the 2 s wait of its own time takes 4 s.
    let (_, e) = simulate(spec_ladder(), Some(3900), 3900, 50);
    assert_eq!(e.stage, Stage::Eof);
    assert!(e.runqueue_ns > 1_900 * MS, "{}", e.runqueue_ns);
    // The wait records its own and run-queue time, for judging whether it was
    // machine-bound.
    let w = &e.steps[0];
    assert!(
        w.own_ms.unwrap() < 2000.0 && w.runqueue_ms.unwrap() > 1900.0,
        "{w:?}"
    );
    let (_, e) = simulate(spec_ladder(), Some(4100), 4100, 50);
    assert_eq!(e.stage, Stage::Sigterm);
    // Starved outright: the wall-clock backstop ends the wait.
    let (_, e) = simulate(spec_ladder(), Some(wall_cap_ms(2000) + 10), 0, 100);
    assert_eq!(e.stage, Stage::Sigterm);
}

#[test]
fn own_time_takes_back_queueing_reported_late() {
    // Reported on time: a slice's queueing comes off that slice.
    assert_eq!(own_after(0, 50 * MS, 20 * MS), 30 * MS);
    // Reported late, all at once: it comes off the own time counted before it...
    assert_eq!(own_after(40 * MS, 50 * MS, 80 * MS), 10 * MS);
    // ...but never below zero.
    assert_eq!(own_after(10 * MS, 50 * MS, 500 * MS), 0);
}

#[test]
fn queueing_the_kernel_reports_in_lumps_does_not_count_as_the_servers_time() {
    // Queued 90 % of the time, reported every fourth slice: exits at 15 s of wall time
    // after 1.5 s of its own, within the 2 s grace.
    let sim = Sim {
        exit_at: Some(15_000),
        busy_ms: 15_000,
        queued_share: 90,
        report_every: 4,
    };
    let (_, e) = run(spec_ladder(), sim);
    assert_eq!(e.stage, Stage::Eof, "{:?}", e.steps);
    // The same queueing, for a server that takes 3 s of its own: SIGTERM.
    let (_, e) = run(
        spec_ladder(),
        Sim {
            exit_at: Some(30_000),
            busy_ms: 30_000,
            ..sim
        },
    );
    assert_eq!(e.stage, Stage::Sigterm, "{:?}", e.steps);
}

/// The kernel reports a starved thread's wait only when it gets a CPU: a wait whose own
/// time looks up while a thread still waits looks again until the report lands, and what
/// it reports extends the wait. Queued 30 % of the time, reported in 3 s lumps: the server
/// exits at 2.6 s of wall time after 1.8 s of its own, within the 2 s grace.
#[test]
fn a_wait_ends_only_once_the_kernel_has_reported_the_queueing() {
    let sim = Sim {
        exit_at: Some(2_600),
        busy_ms: 2_600,
        queued_share: 30,
        report_every: 60,
    };
    let (seen, e) = run(spec_ladder(), sim);
    assert_eq!(e.stage, Stage::Eof, "{:?}", e.steps);
    assert!(seen.contains(&Command::Wait(Duration::from_millis(CONFIRM_MS))));
    // Nothing stalled, the wait ends on its own time as before: a 3 s server gets SIGTERM.
    let (_, e) = run(
        spec_ladder(),
        Sim {
            exit_at: Some(3_000),
            busy_ms: 3_000,
            queued_share: 0,
            report_every: 1,
        },
    );
    assert_eq!(e.stage, Stage::Sigterm, "{:?}", e.steps);
}

fn started_at_eof() -> Vec<Step> {
    let mut steps = spec_ladder();
    steps[0] = Step {
        until_idle: Some(UntilIdle {
            busy_cap_ms: 11_000,
        }),
        ..Step::new(Action::CloseStdin, 1000)
    };
    steps
}

#[test]
fn a_slow_start_at_eof_is_waited_for_however_long_it_takes() {
    // Busy starting up for 9 s, then exits on EOF: no signal.
    let (_, e) = simulate(started_at_eof(), Some(9_000), 9_000, 0);
    assert_eq!(e.stage, Stage::Eof);
    // The same start-up on a machine so busy it takes three times as long.
    let (_, e) = simulate(started_at_eof(), Some(27_000), 27_000, 66);
    assert_eq!(e.stage, Stage::Eof);
}

#[test]
fn a_server_idle_at_eof_gets_the_prompt_budget_then_a_signal() {
    // Starts in 3 s, then sits idle: SIGTERM once it has been idle for 1 s.
    let (_, e) = simulate(started_at_eof(), None, 3_000, 0);
    assert_eq!(e.stage, Stage::Survived);
    assert!(
        (4_000.0..4_200.0).contains(&e.steps[1].at_ms),
        "{:?}",
        e.steps
    );
    // Busy for ever: given up after the busy cap of its own time.
    let (_, e) = simulate(started_at_eof(), None, u64::MAX, 0);
    assert!(
        (11_000.0..11_200.0).contains(&e.steps[1].at_ms),
        "{:?}",
        e.steps
    );
}

#[test]
fn the_token_goes_back_once_the_tree_is_idle_or_the_window_closes() {
    // Idle at once: given back after the first slice, long before the exit.
    let (seen, _) = simulate(spec_ladder(), Some(1500), 0, 0);
    let free = seen.iter().position(|c| *c == Command::FreeCpu).unwrap();
    let waits_before = seen[..free]
        .iter()
        .filter(|c| matches!(c, Command::Wait(_)))
        .count();
    assert_eq!(waits_before, 1);
    // Busy throughout: held for the prompt window (1000 ms = 20 slices) only.
    let (seen, _) = simulate(spec_ladder(), Some(1900), 5000, 0);
    let free = seen.iter().position(|c| *c == Command::FreeCpu).unwrap();
    let waits_before = seen[..free]
        .iter()
        .filter(|c| matches!(c, Command::Wait(_)))
        .count();
    assert_eq!(waits_before, 20);
}

#[test]
fn a_launch_origin_times_from_the_launch() {
    let mut l = LadderState::new(spec_ladder(), 1000, Some(0));
    assert_eq!(l.start(), [Command::Sample]);
    l.on(Event::Sampled(TreeSample::default()));
    l.on(Event::Performed { at_ns: 300 * MS });
    let out = l.on(Event::Exited { at_ns: 500 * MS });
    let Some(Command::Done(e)) = out.last() else {
        panic!("{out:?}")
    };
    assert_eq!((e.stage, e.exit_ms), (Stage::Eof, Some(500.0)));
    assert_eq!(e.steps[0].at_ms, 300.0);
}

/// The sample that ends a wait comes at most CONFIRM_MS after the one before it, so a thread
/// that ran and then waited for a CPU before the decision reads as stalled at it.
#[test]
fn the_last_slice_of_a_wait_is_short_enough_to_see_a_thread_left_waiting() {
    let (seen, e) = simulate(spec_ladder(), Some(2010), 0, 0);
    assert_eq!(e.stage, Stage::Sigterm);
    let term = seen
        .iter()
        .position(|c| matches!(c, Command::Perform(Action::Signal { .. })))
        .unwrap();
    let last_wait = seen[..term]
        .iter()
        .rev()
        .find_map(|c| match c {
            Command::Wait(d) => Some(*d),
            _ => None,
        })
        .unwrap();
    assert!(
        last_wait <= Duration::from_millis(CONFIRM_MS),
        "{last_wait:?}"
    );
}
