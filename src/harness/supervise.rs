//! One case's supervisor process, from the harness's side: spawn it inside the case's
//! cgroup with the case's marker, answer its CPU-token requests, watch that it stays alive,
//! and sweep whatever of the case is left when it ends — whether it reported a result or was
//! killed, crashed or lost.

use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::Duration;

use super::progress::Progress;
use super::tokens::{cpu_tokens, Permit};
use crate::model::{ErrorKind, ExitStatus, Observation, SignalName};
use crate::os::containment::CaseGroup;
use crate::os::{mono_ns, signals, tree};
use crate::supervisor::protocol::{recv, send, CaseSpec, FromSupervisor, ToSupervisor};

/// A supervisor that sends nothing (not even its heartbeat) for this long is lost: stopped
/// or hung. Its heartbeat thread wakes every second, so only a process that cannot run
/// misses twenty in a row.
const LOST_AFTER: Duration = Duration::from_secs(20);

/// A supervisor that is silent for this long and found stopped (`T`: SIGSTOP, SIGTSTP) is
/// lost at once: a stopped process is not slow, and waiting out [`LOST_AFTER`] for it only
/// kept a test thread and a case slot for twenty seconds.
const STOPPED_AFTER: Duration = Duration::from_secs(3);

/// What the harness knows of a case while its supervisor runs.
pub struct Supervised<'a> {
    pub spec: CaseSpec,
    pub mark: String,
    pub group: CaseGroup,
    pub progress: &'a Progress,
    /// Its place in the run's queue for CPU tokens (0 first: the longest case).
    pub rank: usize,
    /// Set when this case probes whether its server comes up at all (see `gate`).
    pub probe: Option<&'a super::gate::Probe<'a>>,
}

/// How the supervisor ended, from the harness's side.
enum SupervisorEnd {
    Result(Box<Observation>),
    /// It ended (or was lost) without a result.
    NoResult {
        lost: bool,
    },
}

fn reader(child: &mut Child) -> Receiver<FromSupervisor> {
    let (tx, rx) = channel();
    let mut lines = BufReader::new(child.stdout.take().expect("piped"));
    std::thread::spawn(move || {
        while let Some(msg) = recv::<FromSupervisor>(&mut lines) {
            if tx.send(msg).is_err() {
                break;
            }
        }
    });
    rx
}

impl Supervised<'_> {
    fn fail(&self, msg: String) -> Observation {
        Observation::failed(
            &self.spec.server,
            &self.spec.scenario.id,
            ErrorKind::Harness,
            msg,
        )
    }

    /// Starts the supervisor inside the case's cgroup (before it has started anything: it
    /// waits for the spec first).
    pub fn spawn(&self, helper: &Path) -> Result<Child, Box<Observation>> {
        let mut cmd = Command::new(helper);
        cmd.arg("__case")
            .env(tree::CASE_MARK, &self.mark)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own group: a terminal's Ctrl-C reaches the harness, which then stops cases.
        crate::os::spawn::in_group(&mut cmd, crate::model::GroupKind::Own);
        let child = cmd.spawn().map_err(|e| {
            self.fail(format!(
                "cannot start the supervisor {}: {e}",
                helper.display()
            ))
        })?;
        if self.group.is_contained() {
            if let Err(e) = self.group.add(child.id()) {
                signals::signal_pid(child.id() as i32, SignalName::Kill);
                return Err(Box::new(
                    self.fail(format!("cannot move the supervisor into its cgroup: {e}")),
                ));
            }
        }
        Ok(child)
    }

    /// Takes the case's first CPU token, in the run's order, before its supervisor starts:
    /// its first request (the start-up) is answered with it, so that which supervisor
    /// process happens to start fastest does not decide which case starts first.
    pub fn first_token(&self) -> Permit<'static> {
        self.progress.waiting_for_cpu(true, false);
        let t = cpu_tokens().acquire(self.rank);
        self.progress.waiting_for_cpu(false, false);
        t
    }

    /// Talks to a running supervisor until it ends or is lost; then sweeps the case.
    /// `first`: the token its first request gets (see [`Self::first_token`]).
    pub fn run(&self, mut child: Child, first: Option<Permit<'static>>) -> Observation {
        let mut lifeline = child.stdin.take().expect("piped");
        send(&mut lifeline, &self.spec);
        let mut stderr = child.stderr.take().expect("piped");
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let rx = reader(&mut child);
        self.progress.case_started();
        let end = self.converse(&rx, &mut lifeline, first, child.id() as i32);
        self.progress.case_done();
        let mut stopped = false;
        if matches!(end, SupervisorEnd::NoResult { lost: true }) {
            stopped =
                crate::os::procfs::proc_info(child.id() as i32).is_some_and(|p| p.state == 'T');
            let _ = child.kill();
        }
        let status = child.wait();
        drop(lifeline);
        let swept = self.sweep();
        let err = err_reader.join().unwrap_or_default();
        match end {
            SupervisorEnd::Result(o) => *o,
            SupervisorEnd::NoResult { lost } => {
                // Who ended it: the harness kills only a supervisor it has lost.
                let killed_by = match status.as_ref().map(|s| ExitStatus::from(*s)) {
                    Ok(ExitStatus::Signal(s)) if !lost => Some(s),
                    _ => None,
                };
                let mut o = self.fail(without_result(lost, status, &err, swept));
                if let Some(e) = &mut o.error {
                    e.kind = ErrorKind::of_lost_supervisor(stopped, killed_by);
                }
                o
            }
        }
    }

    /// The CPU-token protocol (see `supervisor::link`) and the heartbeat.
    fn converse(
        &self,
        rx: &Receiver<FromSupervisor>,
        lifeline: &mut impl std::io::Write,
        mut first: Option<Permit<'static>>,
        pid: i32,
    ) -> SupervisorEnd {
        let mut token = None;
        let mut heard = mono_ns();
        let end = loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(msg) => {
                    heard = mono_ns();
                    match msg {
                        FromSupervisor::NeedCpu => {
                            token = Some(first.take().unwrap_or_else(|| {
                                self.progress.waiting_for_cpu(true, true);
                                let t = cpu_tokens().acquire(self.rank);
                                self.progress.waiting_for_cpu(false, true);
                                t
                            }));
                            self.progress.busy(true);
                            send(lifeline, &ToSupervisor::Go);
                        }
                        FromSupervisor::FreeCpu => {
                            if token.take().is_some() {
                                self.progress.busy(false);
                            }
                        }
                        FromSupervisor::Alive => {}
                        FromSupervisor::HandshakeDone => {
                            if let Some(p) = self.probe {
                                p.served();
                            }
                        }
                        FromSupervisor::Result { observation } => {
                            break SupervisorEnd::Result(observation)
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    break SupervisorEnd::NoResult { lost: false }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let silent = Duration::from_nanos(mono_ns().saturating_sub(heard));
                    let stopped =
                        || crate::os::procfs::proc_info(pid).is_some_and(|p| p.state == 'T');
                    if silent > LOST_AFTER || (silent > STOPPED_AFTER && stopped()) {
                        break SupervisorEnd::NoResult { lost: true };
                    }
                }
            }
        };
        if token.take().is_some() {
            self.progress.busy(false);
        }
        end
    }

    /// Kills whatever of the case is still running: its cgroup, and every process carrying
    /// its marker. Those that were this process's children (orphans adopted by this
    /// subreaper) are reaped. Returns how many it killed.
    fn sweep(&self) -> usize {
        let mut killed = self.group.kill();
        for p in tree::marked(&self.mark) {
            signals::signal_pid(p.pid, SignalName::Kill);
            killed.push(p.pid);
        }
        // Only pids it has just seen alive in the case: reaping any other pid could take the
        // exit status of a child some other code is waiting for.
        crate::os::containment::reap(&killed);
        self.group.remove();
        killed.len()
    }
}

/// The error message of a case whose supervisor ended without a result.
fn without_result(
    lost: bool,
    status: std::io::Result<std::process::ExitStatus>,
    stderr: &str,
    swept: usize,
) -> String {
    let how = status
        .map(|s| ExitStatus::from(s).to_string())
        .unwrap_or_else(|e| e.to_string());
    let what = if lost {
        "the case supervisor stopped responding (stopped or hung; killed)".to_string()
    } else {
        format!("the case supervisor ended without a result ({how})")
    };
    let stderr = stderr.trim();
    let said = if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    };
    format!("{what}{said}; swept {swept} process(es) of the case")
}
