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

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Two deliveries this close together are one signal sent to several processes.
pub const SAME_MS: f64 = 30.0;

/// A signal sent one process at a time (GitHub Copilot CLI runs a `kill` per descendant,
/// deepest first, the server last) reaches the descendants up to this long before the
/// server, with nothing else reaching the server in between: one walk of the tree, not a
/// signal to the children of its own. Idle, a walk takes 2-40 ms; a `kill` process per
/// descendant can take hundreds under load, and a host that signals the children alone
/// waits for them before its next step, which bounds the walk first.
pub const WALK_MS: f64 = 1000.0;

/// One recorder log line, the fields the analysis reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecorderLine {
    pub t_ns: u64,
    pub role: String,
    pub pid: i32,
    pub ev: String,
    pub raw: Value,
}

impl RecorderLine {
    /// How long the logging thread waited for a CPU while it waited for this signal (the
    /// recorder's `queued_ns`): a signal logged late on a busy machine was sent up to this
    /// long before its line.
    fn queued_ms(&self) -> f64 {
        self.raw["queued_ns"].as_u64().unwrap_or(0) as f64 / 1e6
    }
}

pub fn parse_log(text: &str) -> Vec<RecorderLine> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|raw| RecorderLine {
            t_ns: raw["t_ns"].as_u64().unwrap_or(0),
            role: raw["role"].as_str().unwrap_or("").to_string(),
            pid: raw["pid"].as_i64().unwrap_or(0) as i32,
            ev: raw["ev"].as_str().unwrap_or("").to_string(),
            raw,
        })
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

/// One thing the host did to the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostAction {
    /// close-stdin, stdout-closed, sigint, sigterm, sighup, sigquit, sigkill.
    pub action: String,
    /// process, group, tree, children.
    pub to: String,
    /// host, kernel (a hang-up), daemon:<comm> (the server's parent, not the host), pid:<n>.
    pub from: String,
    pub at_ms: f64,
    /// The server was SIGKILLed before it could take this signal, which its descendants
    /// took: it is counted as reaching the server too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unseen_at_server: bool,
    /// The signal walked the tree one process at a time, the server last: how long before
    /// the server's the first descendant's came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_ms: Option<f64>,
}

/// Where the server ran, relative to the host.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPlumbing {
    /// pipes | socketpair | pty | other.
    pub stdio: String,
    /// host | own | session.
    pub group: String,
    /// direct | shell | daemon:<comm> (the server's parent is not the process quit).
    pub via: String,
    pub ctty: bool,
}

/// One run, read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReading {
    pub started: bool,
    pub plumbing: HostPlumbing,
    pub deliveries: Vec<HostAction>,
    pub host_exit_ms: Option<f64>,
    /// The host walked away: why (alive N s after the host exited, reparented, kept by a
    /// daemon).
    pub walked_away: Option<String>,
}

fn ms(from: u64, to: u64) -> f64 {
    (to as f64 - from as f64) / 1e6
}

fn first<'a>(events: &'a [RecorderLine], role: &str, ev: &str) -> Option<&'a RecorderLine> {
    events.iter().find(|e| e.role == role && e.ev == ev)
}

/// Something reaching the server: a signal, or one of its pipes closing.
fn at_server(e: &RecorderLine) -> bool {
    e.role == "server" && matches!(e.ev.as_str(), "signal" | "stdin_eof" | "stdout_unwritable")
}

/// When `role` logged `signo` in the [`WALK_MS`] before `t` and after the last thing that
/// reached the server before `t` (earliest first).
fn walked_before(events: &[RecorderLine], role: &str, signo: u64, t: u64) -> Option<u64> {
    let since = events
        .iter()
        .filter(|e| at_server(e) && e.t_ns < t)
        .map(|e| e.t_ns)
        .max();
    events
        .iter()
        .filter(|e| e.role == role && e.ev == "signal" && e.raw["signo"].as_u64() == Some(signo))
        .map(|e| e.t_ns)
        .filter(|&x| x < t && ms(x, t) <= WALK_MS && since.is_none_or(|s| x > s))
        .min()
}

/// Whether the server logged `signo` in the [`WALK_MS`] after `t`, with nothing else
/// reaching it in between.
fn server_after(events: &[RecorderLine], signo: u64, t: u64) -> bool {
    let next = events
        .iter()
        .filter(|e| at_server(e) && e.t_ns >= t)
        .min_by_key(|e| e.t_ns);
    next.is_some_and(|e| {
        e.ev == "signal" && e.raw["signo"].as_u64() == Some(signo) && ms(t, e.t_ns) <= WALK_MS
    })
}

/// Whether `role` logged `signo` within [`SAME_MS`] of `at`, give or take the time either
/// line waited for a CPU.
fn near(events: &[RecorderLine], role: &str, signo: u64, at: &RecorderLine) -> bool {
    let t = at.t_ns;
    events.iter().any(|e| {
        e.role == role
            && e.ev == "signal"
            && e.raw["signo"].as_u64() == Some(signo)
            && ms(t.min(e.t_ns), t.max(e.t_ns)) <= SAME_MS + e.queued_ms() + at.queued_ms()
    })
}

/// The server's parent when it is not the host: the daemon that adopted it.
fn adopter(events: &[RecorderLine], host: &[i32]) -> Option<(i32, String)> {
    let s = first(events, "server", "start")?;
    let ppid = s.raw["ppid"].as_i64()? as i32;
    let comm = s.raw["parent_comm"].as_str().unwrap_or("?").to_string();
    (!host.contains(&ppid)).then_some((ppid, comm))
}

fn sender(e: &RecorderLine, host: &[i32], adopter: Option<&(i32, String)>) -> String {
    let pid = e.raw["si_pid"].as_i64().unwrap_or(-1) as i32;
    if host.contains(&pid) {
        return "host".into();
    }
    if pid == 0 {
        return "kernel".into();
    }
    if let Some((_, comm)) = adopter.filter(|(p, _)| *p == pid) {
        return format!("daemon:{comm}");
    }
    match e.raw["sender_comm"].as_str() {
        Some(c) => format!("pid:{pid} ({c})"),
        None => format!("pid:{pid}"),
    }
}

fn plumbing(events: &[RecorderLine], host: &[i32], parent_outlived: bool) -> HostPlumbing {
    let Some(s) = first(events, "server", "start") else {
        return HostPlumbing::default();
    };
    let r = &s.raw;
    let stdio = match r["stdin"].as_str() {
        Some("fifo") => "pipes",
        Some("socket") => "socketpair",
        Some("chr") => "pty",
        _ => "other",
    };
    let pid = s.pid as i64;
    let group = if r["sid"].as_i64() == Some(pid) {
        "session"
    } else if r["pgid"].as_i64() == Some(pid) {
        "own"
    } else {
        "host"
    };
    let ppid = r["ppid"].as_i64().unwrap_or(-1) as i32;
    let via = if r["via_shell"].as_bool() == Some(true) {
        "shell".to_string()
    } else if !host.contains(&ppid) || (ppid != host[host.len() - 1] && parent_outlived) {
        format!("daemon:{}", r["parent_comm"].as_str().unwrap_or("?"))
    } else {
        "direct".to_string()
    };
    HostPlumbing {
        stdio: stdio.into(),
        group: group.into(),
        via,
        ctty: r["tty_nr"].as_i64().unwrap_or(0) != 0,
    }
}

/// Reads one run.
pub fn read_run(f: &RunFacts) -> RunReading {
    let ev = &f.events;
    let started = first(ev, "server", "start").is_some();
    let mut host = f.host_tree.clone();
    host.push(f.host_pid);
    let mut out = deliveries(f, &host);
    let lifetime = first(ev, "server", "lifetime").is_some();
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
        let pipe = |action: &str| HostAction {
            action: action.into(),
            to: "process".into(),
            from: daemon
                .as_ref()
                .map_or("host".into(), |(_, c)| format!("daemon:{c}")),
            at_ms: ms(t0, e.t_ns),
            unseen_at_server: false,
            walk_ms: None,
        };
        match (e.role.as_str(), e.ev.as_str()) {
            ("server", "stdin_eof") => out.push(pipe("close-stdin")),
            ("server", "stdout_unwritable") => out.push(pipe("stdout-closed")),
            (role @ ("server" | "child"), "signal") => {
                if let Some(d) = signal(f, host, daemon.as_ref(), role, e) {
                    out.push(d);
                }
            }
            _ => {}
        }
    }
    out
}

/// A signal the server or its child logged, with whom it reached (the server, its group,
/// its tree, walked one process at a time, or only its children); `None` for the child's
/// share of a signal the server took too.
fn signal(
    f: &RunFacts,
    host: &[i32],
    daemon: Option<&(i32, String)>,
    role: &str,
    e: &RecorderLine,
) -> Option<HostAction> {
    let ev = &f.events;
    let signo = e.raw["signo"].as_u64().unwrap_or(0);
    // Not when the server logged it itself, later in the walk.
    let unseen_at_server =
        role == "child" && killed_before_it_could_log(f, e) && !server_after(ev, signo, e.t_ns);
    let (child, grandchild) = if role == "server" {
        (
            walked_before(ev, "child", signo, e.t_ns),
            walked_before(ev, "grandchild", signo, e.t_ns),
        )
    } else {
        (None, None)
    };
    let walk_ms = walk(ev, e, [child, grandchild]);
    let to = if role == "server" || unseen_at_server {
        match (
            near(ev, "child", signo, e) || (walk_ms.is_some() && child.is_some()),
            near(ev, "grandchild", signo, e) || (walk_ms.is_some() && grandchild.is_some()),
        ) {
            (_, true) => "tree",
            (true, false) => "group",
            _ => "process",
        }
    } else if near(ev, "server", signo, e) || server_after(ev, signo, e.t_ns) {
        return None;
    } else {
        "children"
    };
    Some(HostAction {
        action: e.raw["name"].as_str().unwrap_or("?").to_ascii_lowercase(),
        to: to.into(),
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
            .find(|x| x.t_ns == t && x.ev == "signal")
            .map(|x| x.raw["si_pid"].clone())
    };
    let own = e.raw["si_pid"].clone();
    descendants
        .into_iter()
        .flatten()
        .min()
        .filter(|&first| ms(first, e.t_ns) > SAME_MS || by(first) != Some(own.clone()))
        .map(|first| ms(first, e.t_ns))
}

/// The server died unlogged (SIGKILLed) within [`SAME_MS`] of the child's line `e` (give
/// or take the time that line waited for a CPU): a signal sent to it then may still have
/// been pending, unlogged, when the SIGKILL came.
fn killed_before_it_could_log(f: &RunFacts, e: &RecorderLine) -> bool {
    let t_ns = e.t_ns;
    first(&f.events, "server", "lifetime").is_none()
        && f.server_death_ns
            .is_some_and(|d| ms(t_ns.min(d), t_ns.max(d)) <= SAME_MS + e.queued_ms())
}

/// A death the recorder did not log is a SIGKILL: to its group or tree when its child or
/// grandchild died with it.
fn inferred_kill(f: &RunFacts, death_ns: u64) -> HostAction {
    let with =
        |other: Option<u64>| other.is_some_and(|c| ms(death_ns.min(c), death_ns.max(c)) <= SAME_MS);
    HostAction {
        action: "sigkill".into(),
        to: match (with(f.child_death_ns), with(f.grandchild_death_ns)) {
            (_, true) => "tree",
            (true, false) => "group",
            _ => "process",
        }
        .into(),
        from: "inferred from death".into(),
        at_ms: ms(f.trigger_ns, death_ns),
        unseen_at_server: false,
        walk_ms: None,
    }
}

/// How the host walked away from a server that outlived it.
fn walked_away(f: &RunFacts, plumb: &HostPlumbing) -> String {
    if let Some(daemon) = plumb.via.strip_prefix("daemon:") {
        format!(
            "kept by the host's daemon ({daemon}): alive {:.0} s after the host exited",
            f.walk_window_s
        )
    } else if let Some(r) = first(&f.events, "server", "reparented") {
        format!(
            "reparented to pid {} ({}) and alive {:.0} s after the host exited",
            r.raw["to"],
            r.raw["to_comm"].as_str().unwrap_or("?"),
            f.walk_window_s
        )
    } else {
        format!("alive {:.0} s after the host exited", f.walk_window_s)
    }
}

/// Deliveries this close together happened at once: their order is not observable.
const AT_ONCE_MS: f64 = 2.0;

/// The SIGKILL comes last: it is only ever inferred from the server's death, which comes
/// after anything the server lived to log (a SIGTERM logged 1.5 ms before the death was
/// delivered first, however late its line was written).
fn rank(action: &str) -> u8 {
    match action {
        "sigterm" => 1,
        "sigint" => 2,
        "sighup" => 3,
        "sigquit" => 4,
        "close-stdin" => 5,
        "close-pipes" => 6,
        "sigkill" => 8,
        _ => 7,
    }
}

/// Puts deliveries that happened at once in one fixed order, so repeats compare.
pub fn canonical(mut d: Vec<HostAction>) -> Vec<HostAction> {
    d.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    let mut i = 0;
    while i < d.len() {
        let mut j = i + 1;
        while j < d.len() && d[j].at_ms - d[i].at_ms <= AT_ONCE_MS {
            j += 1;
        }
        d[i..j].sort_by_key(|x| rank(&x.action));
        i = j;
    }
    d
}

/// The ladder's shape: what was done to whom, in order (the waits aside).
pub fn shape(r: &RunReading) -> Vec<(String, String)> {
    let mut s: Vec<(String, String)> = r
        .deliveries
        .iter()
        .map(|d| (d.action.clone(), d.to.clone()))
        .collect();
    s.dedup();
    s
}

#[cfg(test)]
mod tests;
