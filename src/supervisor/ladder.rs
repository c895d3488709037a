//! The stop ladder as a synchronous state machine: events in, commands out. It decides when
//! to act, how long to wait, when to give the CPU token back and which stage the server
//! reached; the drivers (`direct`, `via_client`) do the I/O. Unit-tested without processes.
//!
//! Every wait counts only the server's own time: the time its tree spent runnable but
//! waiting for a CPU does not count, so a busy machine cannot push a server to the next step
//! (the kernel reports that wait late, so a slice's report may give back own time counted
//! earlier in the same wait: see [`own_after`]). A wait `until_idle` (a server started with
//! stdin at EOF) counts only the slices in which the tree sat idle: how long it takes to start
//! is not what is judged, only that it does not sit idle at EOF. Every wait also has a
//! wall-clock cap, a backstop against a server starved outright. The CPU token is held from
//! launch through the trigger and for at most the prompt window after it, and given back
//! early once the tree sits idle: a process that neither exits nor computes is not racing
//! anyone for a CPU.

use std::time::Duration;

use crate::model::{stage_after, Action, SignalName, Stage, Step, StepRecord};
use crate::os::ms_between;

pub use crate::model::SLICE_MS;
/// A slice in which the tree used or queued for less than this share of it (5 %) is idle.
const IDLE_SHARE: u64 = 20;
const MS: u64 = 1_000_000;

/// The wall-clock backstop of a wait of `own_ms`: far beyond any load a verdict could meet.
pub fn wall_cap_ms(own_ms: u64) -> u64 {
    own_ms * 5 + 5_000
}

/// What the state machine asks its driver to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Read what holds the server from `/proc` (it should have exited by now); the hint is
    /// about the last signal it received, or about end-of-file.
    Diagnose { after: Option<SignalName> },
    /// Sample the tree before the trigger: reading `/proc` while the server is exiting could
    /// slow its exit down, so nothing heavy happens between the trigger and the first slice.
    Sample,
    /// Carry out the action and report when it happened.
    Perform(Action),
    /// Give the CPU token back.
    FreeCpu,
    /// Wait for the server's exit for at most this long, then report `Exited` or `Sampled`.
    Wait(Duration),
    /// The ladder is over.
    Done(Ended),
}

/// A reading of the server's process tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeSample {
    pub now_ns: u64,
    /// Cumulative CPU time of every thread the tree ever had.
    pub cpu_ns: u64,
    /// Cumulative time those threads spent runnable but waiting for a CPU.
    pub queued_ns: u64,
    /// Some thread is running, runnable or in uninterruptible (disk) sleep right now.
    pub busy: bool,
}

/// What the driver reports back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    Sampled(TreeSample),
    /// The action was carried out at this time (just before the syscall that does it).
    Performed {
        at_ns: u64,
    },
    /// The kernel reported the server's exit at this time.
    Exited {
        at_ns: u64,
    },
}

/// How the ladder ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    pub stage: Stage,
    /// Run-queue time of the tree from the first trigger to the exit (nanoseconds).
    pub runqueue_ns: u64,
    pub trigger_ns: Option<u64>,
    pub exit_ns: Option<u64>,
    pub exit_ms: Option<f64>,
    pub steps: Vec<StepRecord>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// About to sample before step `i`.
    Before,
    /// Sampled; the action of step `i` is being performed.
    Acting,
    /// Waiting after step `i`.
    Waiting,
    Finished,
}

/// The clocks of the current wait.
#[derive(Clone, Copy, Debug, Default)]
struct Clocks {
    started_ns: u64,
    /// The server's own time so far (wall minus queueing).
    own_ns: u64,
    /// Time the tree sat idle so far.
    idle_ns: u64,
    /// The tree's cumulative run-queue time when the wait started.
    queued_from_ns: u64,
}

/// The state of one ladder.
#[derive(Debug)]
pub struct Ladder {
    steps: Vec<Step>,
    prompt_ms: u64,
    i: usize,
    phase: Phase,
    /// The trigger: the first action, or the launch for a server started with stdin at EOF.
    origin: Option<u64>,
    records: Vec<StepRecord>,
    diagnosed: bool,
    token: bool,
    clocks: Clocks,
    /// The last sample, and the first (the run-queue time is counted from there).
    last: TreeSample,
    first_queued_ns: Option<u64>,
}

impl Ladder {
    /// A ladder whose driver holds the CPU token; `origin` is the trigger time when it
    /// precedes the first step (a server started with stdin at EOF).
    pub fn new(steps: Vec<Step>, prompt_ms: u64, origin: Option<u64>) -> Self {
        Self {
            steps,
            prompt_ms,
            i: 0,
            phase: Phase::Before,
            origin,
            records: Vec::new(),
            diagnosed: false,
            token: true,
            clocks: Clocks::default(),
            last: TreeSample::default(),
            first_queued_ns: None,
        }
    }

    /// The first commands.
    pub fn start(&mut self) -> Vec<Command> {
        self.before_step()
    }

    fn before_step(&mut self) -> Vec<Command> {
        if self.i >= self.steps.len() {
            return self.finish(None);
        }
        let mut out = Vec::new();
        // A step done together with the next (a zero wait) gave the server no time to go, and
        // one that did not reach it (nothing, its children signalled) gave it no reason to.
        let due = (self.i > 0 && !self.diagnosed)
            .then(|| self.steps[self.i - 1])
            .filter(|s| s.wait_ms > 0 && s.action.reaches_server());
        if let Some(last) = due {
            // It should have exited by now: record what holds it before escalating.
            self.diagnosed = true;
            out.push(Command::Diagnose {
                after: signal_of(last.action),
            });
        }
        self.phase = Phase::Before;
        out.push(Command::Sample);
        out
    }

    fn free(&mut self, out: &mut Vec<Command>) {
        if self.token {
            self.token = false;
            out.push(Command::FreeCpu);
        }
    }

    /// Records the own and run-queue time of the wait that just ended on its step.
    fn close_window(&mut self) {
        let queued = self
            .last
            .queued_ns
            .saturating_sub(self.clocks.queued_from_ns);
        if let Some(r) = self.records.last_mut() {
            r.own_ms = Some(self.clocks.own_ns as f64 / 1e6);
            r.runqueue_ms = Some(queued as f64 / 1e6);
        }
    }

    fn finish(&mut self, exit_ns: Option<u64>) -> Vec<Command> {
        if self.phase == Phase::Waiting {
            self.close_window();
        }
        self.phase = Phase::Finished;
        let mut out = Vec::new();
        self.free(&mut out);
        let runqueue_ns = self
            .last
            .queued_ns
            .saturating_sub(self.first_queued_ns.unwrap_or(self.last.queued_ns));
        let ended = match exit_ns {
            Some(at) => {
                let origin = self.origin.unwrap_or(at);
                // The strongest thing it received: a step done together with a signal (a
                // zero wait) does not hide the signal.
                let stage = self.records.iter().map(|r| stage_after(&r.action)).max();
                Ended {
                    stage: stage.unwrap_or(Stage::Eof),
                    runqueue_ns,
                    trigger_ns: Some(origin),
                    exit_ns: Some(at),
                    exit_ms: Some(ms_between(origin, at)),
                    steps: std::mem::take(&mut self.records),
                }
            }
            None => {
                // A ladder that never reached the server (a host that never ends the session)
                // gave it nothing to exit on: what holds it then explains nothing.
                let reached = self.steps.iter().any(|s| s.action.reaches_server());
                if !self.diagnosed && reached {
                    self.diagnosed = true;
                    out.push(Command::Diagnose { after: None });
                }
                Ended {
                    stage: Stage::Survived,
                    runqueue_ns: 0,
                    trigger_ns: self.origin,
                    exit_ns: None,
                    exit_ms: None,
                    steps: std::mem::take(&mut self.records),
                }
            }
        };
        out.push(Command::Done(ended));
        out
    }

    /// Is the current wait over? Returns how much of it is left (in slices to wait) if not.
    fn left(&self, now_ns: u64) -> Option<Duration> {
        let step = &self.steps[self.i];
        let c = &self.clocks;
        let wall_ms = now_ns.saturating_sub(c.started_ns) / MS;
        let (own_ms, idle_ms) = (c.own_ns / MS, c.idle_ns / MS);
        let (done, cap, left_ms) = match step.until_idle {
            Some(u) => (
                idle_ms >= step.wait_ms || own_ms >= u.busy_cap_ms,
                wall_cap_ms(u.busy_cap_ms),
                step.wait_ms.saturating_sub(idle_ms),
            ),
            None => (
                own_ms >= step.wait_ms,
                wall_cap_ms(step.wait_ms),
                step.wait_ms.saturating_sub(own_ms),
            ),
        };
        if done || wall_ms >= cap {
            return None;
        }
        Some(Duration::from_millis(SLICE_MS.min(left_ms).max(1)))
    }

    fn next_slice(&mut self, now_ns: u64) -> Vec<Command> {
        match self.left(now_ns) {
            Some(d) => vec![Command::Wait(d)],
            None => {
                self.close_window();
                self.i += 1;
                let mut out = Vec::new();
                // The token is given back at the end of the first wait at the latest.
                self.free(&mut out);
                out.extend(self.before_step());
                out
            }
        }
    }

    /// Advances the clocks of the current wait by one slice; whether the slice was idle.
    fn tick(&mut self, s: TreeSample) -> bool {
        let wall = s.now_ns.saturating_sub(self.last.now_ns);
        let cpu = s.cpu_ns.saturating_sub(self.last.cpu_ns);
        let queued = s.queued_ns.saturating_sub(self.last.queued_ns);
        let c = &mut self.clocks;
        c.own_ns = own_after(c.own_ns, wall, queued);
        let idle = idle_slice(wall, cpu, queued, s.busy);
        if idle {
            c.idle_ns += wall;
        }
        self.last = s;
        idle
    }

    /// Feeds one event; returns the next commands.
    pub fn on(&mut self, ev: Event) -> Vec<Command> {
        match (self.phase, ev) {
            (Phase::Finished, _) => Vec::new(),
            (_, Event::Exited { at_ns }) => self.finish(Some(at_ns)),
            (Phase::Before, Event::Sampled(s)) => {
                self.last = s;
                self.first_queued_ns.get_or_insert(s.queued_ns);
                self.phase = Phase::Acting;
                vec![Command::Perform(self.steps[self.i].action)]
            }
            (Phase::Acting, Event::Performed { at_ns }) => {
                let origin = *self.origin.get_or_insert(at_ns);
                self.records.push(StepRecord::new(
                    self.steps[self.i].action,
                    ms_between(origin, at_ns),
                ));
                self.clocks = Clocks {
                    started_ns: at_ns,
                    queued_from_ns: self.last.queued_ns,
                    ..Clocks::default()
                };
                self.last.now_ns = at_ns;
                self.phase = Phase::Waiting;
                self.next_slice(at_ns)
            }
            (Phase::Waiting, Event::Sampled(s)) => {
                let idle = self.tick(s);
                let window = self.steps[self.i].wait_ms.min(self.prompt_ms);
                let mut out = Vec::new();
                if idle || self.clocks.own_ns / MS >= window {
                    self.free(&mut out);
                }
                out.extend(self.next_slice(s.now_ns));
                out
            }
            // Anything else is a driver bug; ignore it rather than panic in a supervisor.
            _ => Vec::new(),
        }
    }
}

/// Whether a slice of `wall_ns` in which the tree used `cpu_ns` and queued `queued_ns` was
/// idle: under 5 % of it each, and no thread runnable at its end.
pub fn idle_slice(wall_ns: u64, cpu_ns: u64, queued_ns: u64, busy: bool) -> bool {
    !busy && cpu_ns < wall_ns / IDLE_SHARE && queued_ns < wall_ns / IDLE_SHARE
}

/// The server's own time in a wait after one more slice of `wall_ns` in which its tree
/// reported `queued_ns` of run-queue time.
///
/// The kernel adds a thread's wait for a CPU to its `schedstat` only when the thread gets
/// the CPU (`sched_info_arrive`): on a loaded machine a slice spent waiting reads as no
/// queueing at all, and a later slice reads as several slices' worth. Capping each slice's
/// queueing at its own length would count the first as the server's own time and drop the
/// second's excess, so a tree queued 98 % of the time read as 40 % own time (a launcher's
/// Python tree under 12 CPU hogs on 2 CPUs: SIGTERM after 5 s of wall time, 0.2 s of its
/// own). Queueing that lands late gives back own time counted earlier in the same wait; it
/// never drives own time below zero (nothing is banked for later slices).
pub fn own_after(own_ns: u64, wall_ns: u64, queued_ns: u64) -> u64 {
    (own_ns + wall_ns).saturating_sub(queued_ns)
}

/// The signal the server itself received (one to its children alone is not its own).
fn signal_of(a: Action) -> Option<SignalName> {
    match a {
        Action::Signal {
            to: crate::model::Target::Children,
            ..
        } => None,
        Action::Signal { signal, .. } => Some(signal),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
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

    /// Drives a ladder against a simulated server. Returns every command seen, and how it
    /// ended.
    fn run(steps: Vec<Step>, sim: Sim) -> (Vec<Command>, Ended) {
        let t0 = 1_000 * MS;
        let mut now = t0;
        let (mut cpu, mut queued) = (0u64, 0u64);
        let mut l = Ladder::new(steps, 1000, None);
        let mut pending: std::collections::VecDeque<Command> = l.start().into();
        let mut seen = Vec::new();
        let mut started = None::<u64>;
        let (mut slices, mut unreported) = (0u64, 0u64);
        let sample = |now, cpu, queued, busy| {
            Event::Sampled(TreeSample {
                now_ns: now,
                cpu_ns: cpu,
                queued_ns: queued,
                busy,
            })
        };
        while let Some(cmd) = pending.pop_front() {
            seen.push(cmd.clone());
            let ev = match cmd {
                Command::Sample => Some(sample(now, cpu, queued, false)),
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
                            Some(sample(now, cpu, queued, busy))
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
        let mut l = Ladder::new(spec_ladder(), 1000, Some(0));
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
}
