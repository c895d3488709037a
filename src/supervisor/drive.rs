//! Runs a [`LadderState`] against a real process: carries out its commands and feeds it what
//! happened. The only loop with I/O around the pure state machine.

use std::sync::mpsc::Receiver;

use super::ladder::{Command, Ended, Event, LadderState, TreeSample};
use super::link::Link;
use crate::model::{Action, Diagnostics, ServerProcess, SignalName, Stage};
use crate::os::{diagnose, identify, mono_ns, procfs::TreeSampler, Pidfd};
use crate::rules::explain;

/// What a driven ladder gives back.
pub struct Driven {
    pub ended: Ended,
    pub diagnostics: Option<Diagnostics>,
    /// The server behind its launchers, as found when it should have exited.
    pub server_process: Option<ServerProcess>,
}

/// Drives `ladder` until it is done. `perform` carries out an action and returns when it
/// happened; `watcher` stamps the server's exit (started before any trigger, so neither
/// sampling here nor starting a thread can delay the stamp).
pub fn drive(
    mut ladder: LadderState,
    server: &Pidfd,
    watcher: Option<&Receiver<u64>>,
    sampler: &mut TreeSampler,
    link: &Link,
    mut perform: impl FnMut(Action) -> u64,
) -> Driven {
    let mut diagnostics = None;
    let mut server_process = None;
    link.stamps.ladder_started();
    let mut pending: std::collections::VecDeque<Command> = ladder.start().into();
    while let Some(cmd) = pending.pop_front() {
        let ev = match cmd {
            Command::Diagnose { after } => {
                server_process = identify::server_process(server.pid());
                diagnostics = Some(diagnosed(server, server_process.as_ref(), after));
                None
            }
            Command::Sample => Some(sampled(sampler)),
            Command::Perform(action) => Some(Event::Performed {
                at_ns: perform(action),
            }),
            Command::FreeCpu => {
                link.free_cpu();
                None
            }
            Command::Wait(d) => Some(waited(server, watcher, sampler, d)),
            Command::Done(ended) => {
                link.stamps.ladder_done();
                return Driven {
                    ended,
                    diagnostics,
                    server_process,
                };
            }
        };
        if let Some(ev) = ev {
            pending.extend(ladder.on(ev));
        }
    }
    // A ladder always ends with Done; should it not, the server counts as never exited.
    Driven {
        ended: Ended {
            stage: Stage::Survived,
            runqueue_ns: 0,
            trigger_ns: None,
            exit_ns: None,
            exit_ms: None,
            steps: Vec::new(),
        },
        diagnostics,
        server_process,
    }
}

/// What holds the server, read from the server, not from its launcher.
fn diagnosed(
    server: &Pidfd,
    process: Option<&ServerProcess>,
    after: Option<SignalName>,
) -> Diagnostics {
    let pid = process.map_or(server.pid(), |p| p.pid);
    let mut d = diagnose::diagnose(pid);
    d.hint = explain::hint(&d, after);
    d
}

/// Its exit within `d`, as the watcher stamped it, else a sample of its tree.
fn waited(
    server: &Pidfd,
    watcher: Option<&Receiver<u64>>,
    sampler: &mut TreeSampler,
    d: std::time::Duration,
) -> Event {
    let exit = match watcher {
        Some(w) => w.recv_timeout(d).ok(),
        None => server.wait_exit(d).ok().flatten(),
    };
    match exit {
        Some(at_ns) => Event::Exited { at_ns },
        None => sampled(sampler),
    }
}

fn sampled(sampler: &mut TreeSampler) -> Event {
    let r = sampler.sample();
    Event::Sampled(TreeSample {
        now_ns: mono_ns(),
        cpu_ns: r.cpu_ns,
        queued_ns: r.queued_ns,
        held_ns: r.held_ns,
        busy: r.busy,
        stalled: r.stalled,
    })
}
