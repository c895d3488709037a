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

use crate::model::{stage_after, Action, Observation, SignalName, Stage, Step, StepRecord};
use crate::os::ms_between;

pub use crate::model::SLICE_MS;
/// A slice in which the tree used or queued for less than this share of it (5 %) is idle.
const IDLE_SHARE: u64 = 20;
const MS: u64 = 1_000_000;
/// How soon a wait whose own time is up looks again while the kernel has a thread's wait
/// for a CPU still to report.
pub const CONFIRM_MS: u64 = 10;

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
    /// Cumulative time the tree was held back waiting for a CPU, counted once however many
    /// of its threads waited at a time (`procfs::TreeReading::held_ns`): what own time
    /// leaves out.
    pub held_ns: u64,
    /// Some thread is running, runnable or in uninterruptible (disk) sleep right now.
    pub busy: bool,
    /// Some thread waits for a CPU and the kernel has not reported that wait yet (see
    /// `procfs::TreeReading::stalled`): the own time read now is too high.
    pub stalled: bool,
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

impl Ended {
    /// Its stage, times and steps, into the observation (no exit: none of its times).
    pub fn record(self, o: &mut Observation) {
        o.stage = Some(self.stage);
        o.trigger_ns = self.trigger_ns;
        o.exit_ns = self.exit_ns;
        o.exit_ms = self.exit_ms;
        o.runqueue_ms = self.exit_ns.map(|_| self.runqueue_ns as f64 / 1e6);
        o.steps = self.steps;
    }
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
    held_from_ns: u64,
}

/// The state of one ladder.
#[derive(Debug)]
pub struct LadderState {
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
    first_held_ns: Option<u64>,
}

impl LadderState {
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
            first_held_ns: None,
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
        let queued = self.last.held_ns.saturating_sub(self.clocks.held_from_ns);
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
            .held_ns
            .saturating_sub(self.first_held_ns.unwrap_or(self.last.held_ns));
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
        if wall_ms >= cap {
            return None;
        }
        if done {
            // Only once the kernel has caught up: a thread still waiting for a CPU has a wait
            // that comes off the own time when it is reported. Look again shortly; what it
            // reports extends the wait (bounded by the cap).
            return self
                .last
                .stalled
                .then_some(Duration::from_millis(CONFIRM_MS));
        }
        // The last slice before the wait is over is at most CONFIRM_MS long: a thread that
        // ran in it and has waited for a CPU since reads as stalled only on the sample after,
        // so a longer last slice would hide up to a slice of its queueing from the decision.
        let slice = if left_ms > CONFIRM_MS {
            SLICE_MS.min(left_ms - CONFIRM_MS)
        } else {
            left_ms
        };
        Some(Duration::from_millis(slice.max(1)))
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
        let held = s.held_ns.saturating_sub(self.last.held_ns);
        let c = &mut self.clocks;
        c.own_ns = own_after(c.own_ns, wall, held);
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
                self.first_held_ns.get_or_insert(s.held_ns);
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
                    held_from_ns: self.last.held_ns,
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
/// was reported held back `queued_ns` waiting for a CPU.
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
mod tests;
