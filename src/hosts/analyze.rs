//! From what the recorder logged and the pidfds saw to a ladder: pure functions, no OS.
//!
//! A signal logged by the server and, within [`SAME_MS`], by its child (same group) went to
//! the group; by the grandchild too (its own session) to the whole tree; by the child only,
//! to the server's children. A death nobody logged is a SIGKILL (the recorder obeys nothing
//! else), and the child dying with it tells group from pid the same way.
//!
//! A server SIGKILLed within [`SAME_MS`] of a signal its descendants logged may never have
//! been scheduled to take that signal (a loaded machine, a 2 ms ladder): its not logging it
//! says nothing, so the signal counts as reaching it too, and the reading says so.

pub use super::reading::{
    ActionKind, HostAction, HostPlumbing, HostStdio, HostVia, LadderShape, RecorderLine,
    RunReading, SentBy, WalkedAway,
};
use super::reading::{Ev, FdKind, Role};
use crate::model::{GroupKind, SignalName, Target};

/// Two deliveries this close together are one signal sent to several processes.
pub const SAME_MS: f64 = 30.0;

/// A signal sent one process at a time (GitHub Copilot CLI runs a `kill` per descendant,
/// deepest first, the server last) reaches the descendants up to this long before the
/// server, with nothing else reaching the server in between: one walk of the tree, not a
/// signal to the children of its own. Idle, a walk takes 2-40 ms; a `kill` process per
/// descendant can take hundreds under load, and a host that signals the children alone
/// waits for them before its next step, which bounds the walk first.
pub const WALK_MS: f64 = 1000.0;

pub fn parse_log(text: &str) -> Vec<RecorderLine> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<RecorderLine>(l).ok())
        .collect()
}

/// What happened to one recorder tree in one run, as the measuring side saw it.
#[derive(Clone, Debug, Default)]
pub struct RunFacts {
    pub events: Vec<RecorderLine>,
    /// The host's pid (the process the user quits).
    pub host_pid: i32,
    /// The host and its descendants when the server had started (a Node wrapper's native
    /// binary is the host too).
    pub host_tree: Vec<i32>,
    /// When the quit was triggered (typed, hung up, signalled; for a one-shot command, the
    /// server's last reply).
    pub trigger_ns: u64,
    pub host_exit_ns: Option<u64>,
    pub server_death_ns: Option<u64>,
    pub child_death_ns: Option<u64>,
    pub grandchild_death_ns: Option<u64>,
    /// The server's parent (when it is not the host) was still alive after the host
    /// exited: a daemon of the host's, not a wrapper's binary that died with it.
    pub parent_outlived_host: bool,
    /// Seconds the measurement kept watching after the host exited.
    pub walk_window_s: f64,
}

fn ms(from: u64, to: u64) -> f64 {
    (to as f64 - from as f64) / 1e6
}

fn first(events: &[RecorderLine], role: Role, ev: Ev) -> Option<&RecorderLine> {
    events.iter().find(|e| e.role == role && e.ev == ev)
}

/// Something reaching the server: a signal, or one of its pipes closing.
fn at_server(e: &RecorderLine) -> bool {
    e.role == Role::Server && e.is_delivery()
}

/// `role` logged `signal`.
fn logged(e: &RecorderLine, role: Role, signal: Option<SignalName>) -> bool {
    e.role == role && e.ev == Ev::Signal && e.signal() == signal
}

/// When `role` logged `signal` in the [`WALK_MS`] before `t` and after the last thing that
/// reached the server before `t` (earliest first).
fn walked_before(
    events: &[RecorderLine],
    role: Role,
    signal: Option<SignalName>,
    t: u64,
) -> Option<u64> {
    let since = events
        .iter()
        .filter(|e| at_server(e) && e.t_ns < t)
        .map(|e| e.t_ns)
        .max();
    events
        .iter()
        .filter(|e| logged(e, role, signal))
        .map(|e| e.t_ns)
        .filter(|&x| x < t && ms(x, t) <= WALK_MS && since.is_none_or(|s| x > s))
        .min()
}

/// Whether the server logged `signal` in the [`WALK_MS`] after `t`, with nothing else
/// reaching it in between.
fn server_after(events: &[RecorderLine], signal: Option<SignalName>, t: u64) -> bool {
    let next = events
        .iter()
        .filter(|e| at_server(e) && e.t_ns >= t)
        .min_by_key(|e| e.t_ns);
    next.is_some_and(|e| logged(e, Role::Server, signal) && ms(t, e.t_ns) <= WALK_MS)
}

/// Whether `role` logged `signal` within [`SAME_MS`] of `at`, give or take the time either
/// line waited for a CPU.
fn near(
    events: &[RecorderLine],
    role: Role,
    signal: Option<SignalName>,
    at: &RecorderLine,
) -> bool {
    let t = at.t_ns;
    events.iter().any(|e| {
        logged(e, role, signal)
            && ms(t.min(e.t_ns), t.max(e.t_ns)) <= SAME_MS + e.queued_ms() + at.queued_ms()
    })
}

/// The server's parent when it is not the host: the daemon that adopted it.
fn adopter(events: &[RecorderLine], host: &[i32]) -> Option<(i32, String)> {
    let s = first(events, Role::Server, Ev::Start)?;
    let ppid = s.ppid?;
    let comm = s.parent_comm.clone().unwrap_or_else(|| "?".into());
    (!host.contains(&ppid)).then_some((ppid, comm))
}

fn sender(e: &RecorderLine, host: &[i32], adopter: Option<&(i32, String)>) -> SentBy {
    let pid = e.si_pid.unwrap_or(-1);
    if host.contains(&pid) {
        return SentBy::Host;
    }
    if pid == 0 {
        return SentBy::Kernel;
    }
    if let Some((_, comm)) = adopter.filter(|(p, _)| *p == pid) {
        return SentBy::Daemon(comm.clone());
    }
    SentBy::Pid {
        pid,
        comm: e.sender_comm.clone(),
    }
}

fn plumbing(events: &[RecorderLine], host: &[i32], parent_outlived: bool) -> HostPlumbing {
    let Some(s) = first(events, Role::Server, Ev::Start) else {
        return HostPlumbing::default();
    };
    let stdio = match s.stdin {
        Some(FdKind::Fifo) => HostStdio::Pipes,
        Some(FdKind::Socket) => HostStdio::Socketpair,
        Some(FdKind::Chr) => HostStdio::Pty,
        _ => HostStdio::Other,
    };
    let group = if s.sid == Some(s.pid) {
        GroupKind::Session
    } else if s.pgid == Some(s.pid) {
        GroupKind::Own
    } else {
        GroupKind::Host
    };
    let ppid = s.ppid.unwrap_or(-1);
    let via = if s.via_shell {
        HostVia::Shell
    } else if !host.contains(&ppid) || (ppid != host[host.len() - 1] && parent_outlived) {
        HostVia::Daemon(s.parent_comm.clone().unwrap_or_else(|| "?".into()))
    } else {
        HostVia::Direct
    };
    HostPlumbing {
        stdio,
        group,
        via,
        ctty: s.tty_nr != 0,
    }
}

/// Reads one run.
pub fn read_run(f: &RunFacts) -> RunReading {
    let ev = &f.events;
    let started = first(ev, Role::Server, Ev::Start).is_some();
    let mut host = f.host_tree.clone();
    host.push(f.host_pid);
    let mut out = deliveries(f, &host);
    let lifetime = first(ev, Role::Server, Ev::Lifetime).is_some();
    if let (Some(d), false) = (f.server_death_ns, lifetime) {
        out.push(inferred_kill(f, d));
    }
    out.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    // What reaches the recorder's descendants after the server died is not the server's.
    if let (Some(d), false) = (f.server_death_ns, lifetime) {
        let dead = ms(f.trigger_ns, d);
        out.retain(|x| x.at_ms <= dead);
    }
    let plumb = plumbing(ev, &host, f.parent_outlived_host);
    let walked_away = if !started || f.server_death_ns.is_some() {
        None
    } else {
        Some(walked_away(f, &plumb))
    };
    RunReading {
        started,
        plumbing: plumb,
        deliveries: canonical(out),
        host_exit_ms: f.host_exit_ns.map(|h| ms(f.trigger_ns, h)),
        walked_away,
    }
}

/// What the recorder logged receiving from the trigger on: its stdin and stdout closing, and
/// each signal, with whom it reached (the server, its group, its tree, or only its children)
/// and who sent it.
fn deliveries(f: &RunFacts, host: &[i32]) -> Vec<HostAction> {
    let ev = &f.events;
    let t0 = f.trigger_ns;
    let daemon = adopter(ev, host);
    let mut out: Vec<HostAction> = Vec::new();
    for e in ev.iter().filter(|e| e.t_ns >= t0) {
        // The server's pipes are its parent's: the daemon's, when one adopted it.
        let pipe = |action| HostAction {
            action,
            to: Target::Process,
            from: daemon
                .as_ref()
                .map_or(SentBy::Host, |(_, c)| SentBy::Daemon(c.clone())),
            // A pipe's end is logged by a thread that may have waited for a CPU after it
            // woke: the end came that much earlier (`queued_ns`).
            at_ms: (ms(t0, e.t_ns) - e.queued_ms()).max(0.0),
            unseen_at_server: false,
            walk_ms: None,
        };
        match (e.role, e.ev) {
            (Role::Server, Ev::StdinEof) => out.push(pipe(ActionKind::CloseStdin)),
            (Role::Server, Ev::StdoutUnwritable) => out.push(pipe(ActionKind::StdoutClosed)),
            (role @ (Role::Server | Role::Child), Ev::Signal) => {
                if let Some(d) = signal(f, host, daemon.as_ref(), role, e) {
                    out.push(d);
                }
            }
            _ => {}
        }
    }
    out
}

/// Whom a signal reached when its descendants took it too: the tree (the grandchild, in a
/// session of its own), the group (the child), or the process alone.
fn reach(child: bool, grandchild: bool) -> Target {
    match (child, grandchild) {
        (_, true) => Target::Tree,
        (true, false) => Target::Group,
        _ => Target::Process,
    }
}

/// A signal the server or its child logged, with whom it reached (the server, its group,
/// its tree, walked one process at a time, or only its children); `None` for the child's
/// share of a signal the server took too.
fn signal(
    f: &RunFacts,
    host: &[i32],
    daemon: Option<&(i32, String)>,
    role: Role,
    e: &RecorderLine,
) -> Option<HostAction> {
    let ev = &f.events;
    let sig = e.signal();
    // Not when the server logged it itself, later in the walk.
    let unseen_at_server =
        role == Role::Child && killed_before_it_could_log(f, e) && !server_after(ev, sig, e.t_ns);
    let (child, grandchild) = if role == Role::Server {
        (
            walked_before(ev, Role::Child, sig, e.t_ns),
            walked_before(ev, Role::Grandchild, sig, e.t_ns),
        )
    } else {
        (None, None)
    };
    let walk_ms = walk(ev, e, [child, grandchild]);
    let to = if role == Role::Server || unseen_at_server {
        reach(
            near(ev, Role::Child, sig, e) || (walk_ms.is_some() && child.is_some()),
            near(ev, Role::Grandchild, sig, e) || (walk_ms.is_some() && grandchild.is_some()),
        )
    } else if near(ev, Role::Server, sig, e) || server_after(ev, sig, e.t_ns) {
        return None;
    } else {
        Target::Children
    };
    Some(HostAction {
        action: ActionKind::Signal(sig.unwrap_or(SignalName::Other(0))),
        to,
        from: sender(e, host, daemon),
        // Taken for the server's, it reached the server before its death, however late the
        // child logged it.
        at_ms: ms(
            f.trigger_ns,
            match (unseen_at_server, f.server_death_ns) {
                (true, Some(d)) => e.t_ns.min(d),
                _ => e.t_ns,
            },
        ),
        unseen_at_server,
        walk_ms,
    })
}

/// A walk: the descendants took the server's signal first, from other senders (a `kill`
/// per process), or so long before that it cannot be one signal. How long before.
fn walk(ev: &[RecorderLine], e: &RecorderLine, descendants: [Option<u64>; 2]) -> Option<f64> {
    let by = |t: u64| {
        ev.iter()
            .find(|x| x.t_ns == t && x.ev == Ev::Signal)
            .map(|x| x.si_pid)
    };
    descendants
        .into_iter()
        .flatten()
        .min()
        .filter(|&first| ms(first, e.t_ns) > SAME_MS || by(first) != Some(e.si_pid))
        .map(|first| ms(first, e.t_ns))
}

/// The server died unlogged (SIGKILLed) within [`SAME_MS`] of the child's line `e` (give
/// or take the time that line waited for a CPU): a signal sent to it then may still have
/// been pending, unlogged, when the SIGKILL came.
fn killed_before_it_could_log(f: &RunFacts, e: &RecorderLine) -> bool {
    let t_ns = e.t_ns;
    first(&f.events, Role::Server, Ev::Lifetime).is_none()
        && f.server_death_ns
            .is_some_and(|d| ms(t_ns.min(d), t_ns.max(d)) <= SAME_MS + e.queued_ms())
}

/// A death the recorder did not log is a SIGKILL: to its group or tree when its child or
/// grandchild died with it.
fn inferred_kill(f: &RunFacts, death_ns: u64) -> HostAction {
    let with =
        |other: Option<u64>| other.is_some_and(|c| ms(death_ns.min(c), death_ns.max(c)) <= SAME_MS);
    HostAction {
        action: ActionKind::Signal(SignalName::Kill),
        to: reach(with(f.child_death_ns), with(f.grandchild_death_ns)),
        from: SentBy::InferredFromDeath,
        at_ms: ms(f.trigger_ns, death_ns),
        unseen_at_server: false,
        walk_ms: None,
    }
}

/// How the host walked away from a server that outlived it.
fn walked_away(f: &RunFacts, plumb: &HostPlumbing) -> WalkedAway {
    let alive_s = f.walk_window_s;
    if let Some(daemon) = plumb.via.daemon() {
        WalkedAway::KeptByDaemon {
            daemon: daemon.into(),
            alive_s,
        }
    } else if let Some(r) = first(&f.events, Role::Server, Ev::Reparented) {
        WalkedAway::Reparented {
            to_pid: r.to.unwrap_or(-1),
            to_comm: r.to_comm.clone().unwrap_or_else(|| "?".into()),
            alive_s,
        }
    } else {
        WalkedAway::Alive { alive_s }
    }
}

/// Deliveries this close together happened at once: their order is not observable.
const AT_ONCE_MS: f64 = 2.0;

/// Puts deliveries that happened at once in one fixed order, so repeats compare.
pub fn canonical(mut d: Vec<HostAction>) -> Vec<HostAction> {
    d.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    let mut i = 0;
    while i < d.len() {
        let mut j = i + 1;
        while j < d.len() && d[j].at_ms - d[i].at_ms <= AT_ONCE_MS {
            j += 1;
        }
        d[i..j].sort_by_key(|x| x.action.rank());
        i = j;
    }
    d
}

/// The ladder's shape: what was done to whom, in order (the waits aside).
pub fn shape(r: &RunReading) -> LadderShape {
    let mut s: LadderShape = r.deliveries.iter().map(|d| (d.action, d.to)).collect();
    s.dedup();
    s
}

#[cfg(test)]
mod tests;
