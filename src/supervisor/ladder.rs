//! The stop ladder as a synchronous state machine: events in, commands out. It decides when
//! to act, how long to wait, when to give the CPU token back and which stage the server
//! reached; the drivers (`direct`, `via_client`) do the I/O. Unit-tested without processes.
//!
//! Every wait counts only the server's own time: time its tree spent runnable but waiting
//! for a CPU extends the wait (up to doubling it), so a busy machine cannot push a server to
//! the next step. The CPU token is held from launch through the trigger and for at most the
//! prompt window after it, and given back early once the tree sits idle: a process that
//! neither exits nor computes is not racing anyone for a CPU.

use std::time::Duration;

use crate::model::{stage_after, Action, SignalName, Stage, Step, StepRecord};
use crate::os::ms_between;

/// Length of one wait slice: how often the tree is sampled while waiting.
pub const SLICE_MS: u64 = 50;
/// Below this much CPU per slice (5 %) the tree counts as idle.
const IDLE_NS: u64 = 2_500_000;

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
    /// Wait for the server's exit for at most this long, then report `Exited` or `Tick`.
    Wait(Duration),
    /// The ladder is over.
    Done(Ended),
}

/// What the driver reports back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// The tree's cumulative CPU and run-queue time (nanoseconds), sampled at `now_ns`.
    Sampled {
        now_ns: u64,
        cpu_ns: u64,
        queued_ns: u64,
    },
    /// The action was carried out at this time (just before the syscall that does it).
    Performed { at_ns: u64 },
    /// The kernel reported the server's exit at this time.
    Exited { at_ns: u64 },
}

/// How the ladder ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    pub stage: Stage,
    /// Run-queue time of the tree during the last wait (nanoseconds).
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
    /// The current wait: when it started, and the samples at its start and last slice.
    wait_start_ns: u64,
    queued_start_ns: u64,
    queued_ns: u64,
    cpu_ns: u64,
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
            wait_start_ns: 0,
            queued_start_ns: 0,
            queued_ns: 0,
            cpu_ns: 0,
        }
    }

    /// The first commands.
    pub fn start(&mut self) -> Vec<Command> {
        self.before_step()
    }

    fn before_step(&mut self) -> Vec<Command> {
        let Some(_) = self.steps.get(self.i) else {
            return self.finish(None);
        };
        let mut out = Vec::new();
        if self.i > 0 && !self.diagnosed {
            // It should have exited by now: record what holds it before escalating.
            self.diagnosed = true;
            out.push(Command::Diagnose {
                after: signal_of(self.steps[self.i - 1].action),
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

    fn finish(&mut self, exit_ns: Option<u64>) -> Vec<Command> {
        self.phase = Phase::Finished;
        let mut out = Vec::new();
        self.free(&mut out);
        let ended = match exit_ns {
            Some(at) => {
                let origin = self.origin.unwrap_or(at);
                Ended {
                    stage: stage_after(&self.steps[self.i].action),
                    runqueue_ns: self.queued_ns.saturating_sub(self.queued_start_ns),
                    trigger_ns: Some(origin),
                    exit_ns: Some(at),
                    exit_ms: Some(ms_between(origin, at)),
                    steps: std::mem::take(&mut self.records),
                }
            }
            None => {
                if !self.diagnosed {
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

    /// How long the current wait may last so far: its own length, plus the time the tree
    /// spent queued for a CPU during it (at most doubling it).
    fn limit_ms(&self) -> u64 {
        let wait = self.steps[self.i].wait_ms;
        let queued_ms = self.queued_ns.saturating_sub(self.queued_start_ns) / 1_000_000;
        wait + queued_ms.min(wait)
    }

    fn next_slice(&mut self, now_ns: u64) -> Vec<Command> {
        let elapsed = now_ns.saturating_sub(self.wait_start_ns) / 1_000_000;
        let limit = self.limit_ms();
        if elapsed >= limit {
            self.i += 1;
            let mut out = Vec::new();
            // The token is given back at the end of the first wait at the latest.
            self.free(&mut out);
            out.extend(self.before_step());
            return out;
        }
        vec![Command::Wait(Duration::from_millis(
            SLICE_MS.min(limit - elapsed),
        ))]
    }

    /// Feeds one event; returns the next commands.
    pub fn on(&mut self, ev: Event) -> Vec<Command> {
        match (self.phase, ev) {
            (Phase::Finished, _) => Vec::new(),
            (_, Event::Exited { at_ns }) => self.finish(Some(at_ns)),
            (
                Phase::Before,
                Event::Sampled {
                    cpu_ns, queued_ns, ..
                },
            ) => {
                self.cpu_ns = cpu_ns;
                self.queued_start_ns = queued_ns;
                self.queued_ns = queued_ns;
                self.phase = Phase::Acting;
                vec![Command::Perform(self.steps[self.i].action)]
            }
            (Phase::Acting, Event::Performed { at_ns }) => {
                let origin = *self.origin.get_or_insert(at_ns);
                self.records.push(StepRecord {
                    action: self.steps[self.i].action,
                    at_ms: ms_between(origin, at_ns),
                });
                self.wait_start_ns = at_ns;
                self.phase = Phase::Waiting;
                self.next_slice(at_ns)
            }
            (
                Phase::Waiting,
                Event::Sampled {
                    now_ns,
                    cpu_ns,
                    queued_ns,
                },
            ) => {
                let idle = cpu_ns.saturating_sub(self.cpu_ns) < IDLE_NS;
                self.cpu_ns = cpu_ns;
                self.queued_ns = queued_ns;
                let elapsed = now_ns.saturating_sub(self.wait_start_ns) / 1_000_000;
                let window = self.steps[self.i].wait_ms.min(self.prompt_ms);
                let mut out = Vec::new();
                if idle || elapsed >= window {
                    self.free(&mut out);
                }
                out.extend(self.next_slice(now_ns));
                out
            }
            // Anything else is a driver bug; ignore it rather than panic in a supervisor.
            _ => Vec::new(),
        }
    }
}

fn signal_of(a: Action) -> Option<SignalName> {
    match a {
        Action::Signal { signal, .. } => Some(signal),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Target;

    const MS: u64 = 1_000_000;

    fn spec_ladder() -> Vec<Step> {
        let sig = |signal| Action::Signal {
            signal,
            to: Target::Process,
        };
        vec![
            Step {
                action: Action::CloseStdin,
                wait_ms: 2000,
            },
            Step {
                action: sig(SignalName::Term),
                wait_ms: 2000,
            },
            Step {
                action: sig(SignalName::Kill),
                wait_ms: 2000,
            },
        ]
    }

    /// Drives a ladder against a simulated server that exits at `exit_at` (ms after the first
    /// trigger) or never, burning `busy_ms` of CPU from the trigger on and queued for
    /// `queued_per_slice_ms` in every slice. Returns every command seen, and how it ended.
    fn simulate(
        steps: Vec<Step>,
        exit_at: Option<u64>,
        busy_ms: u64,
        queued_per_slice_ms: u64,
    ) -> (Vec<Command>, Ended) {
        let t0 = 1_000 * MS;
        let mut now = t0;
        let (mut cpu, mut queued) = (0u64, 0u64);
        let mut l = Ladder::new(steps, 1000, None);
        let mut pending = l.start();
        let mut seen = Vec::new();
        let mut started = None::<u64>;
        while !pending.is_empty() {
            let cmd = pending.remove(0);
            seen.push(cmd.clone());
            let ev = match cmd {
                Command::Sample => Some(Event::Sampled {
                    now_ns: now,
                    cpu_ns: cpu,
                    queued_ns: queued,
                }),
                Command::Perform(_) => {
                    started.get_or_insert(now);
                    Some(Event::Performed { at_ns: now })
                }
                Command::Wait(d) => {
                    let end = now + d.as_nanos() as u64;
                    let exit = exit_at.map(|e| started.unwrap() + e * MS);
                    match exit.filter(|e| *e <= end) {
                        Some(e) => {
                            now = e;
                            Some(Event::Exited { at_ns: e })
                        }
                        None => {
                            let since = started.map_or(0, |s| (end - s) / MS);
                            if since <= busy_ms {
                                cpu += d.as_nanos() as u64;
                            }
                            queued += queued_per_slice_ms * MS;
                            now = end;
                            Some(Event::Sampled {
                                now_ns: now,
                                cpu_ns: cpu,
                                queued_ns: queued,
                            })
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

    #[test]
    fn an_exit_on_eof_ends_at_the_first_step() {
        let (seen, e) = simulate(spec_ladder(), Some(12), 0, 0);
        assert_eq!(e.stage, Stage::Eof);
        assert_eq!(e.exit_ms, Some(12.0));
        assert_eq!(e.steps.len(), 1);
        assert_eq!(seen.iter().filter(|c| **c == Command::FreeCpu).count(), 1);
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
    fn queueing_for_a_cpu_extends_a_wait_up_to_double() {
        // 25 ms queued in every 50 ms slice: the 2 s wait stretches by half, to 3 s.
        let (_, e) = simulate(spec_ladder(), Some(2900), 0, 25);
        assert_eq!(e.stage, Stage::Eof);
        // Queued the whole time: capped at twice the wait.
        let (_, e) = simulate(spec_ladder(), Some(4500), 0, 100);
        assert_eq!(e.stage, Stage::Sigterm);
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
        l.on(Event::Sampled {
            now_ns: 0,
            cpu_ns: 0,
            queued_ns: 0,
        });
        l.on(Event::Performed { at_ns: 300 * MS });
        let out = l.on(Event::Exited { at_ns: 500 * MS });
        let Some(Command::Done(e)) = out.last() else {
            panic!("{out:?}")
        };
        assert_eq!((e.stage, e.exit_ms), (Stage::Eof, Some(500.0)));
        assert_eq!(e.steps[0].at_ms, 300.0);
    }
}
