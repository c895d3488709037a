//! From measurements to `[[profile]]` entries (`basis = "measured"`) and to the history
//! view: pure.
//!
//! The paths of one release whose runs all show the same ladder and plumbing share one
//! profile that lists their triggers; the one with the host's quit command is `<host>`,
//! every other `<host>-<trigger>` (its first trigger). Waits are the median of the
//! repeats, with min/median/max kept next to them; a spread wider than ±50 ms or ±10 %
//! is said.

use super::analyze::{self, RunReading};
use super::measure::{Measurement, PathRuns};
use super::reading::{
    word, ActionKind, Gap, HostPlumbing, HostVia, LadderShape, SentBy, WalkedAway,
};
use crate::model::{Plumbing, ProfileBasis, ProfileKind, Spread, Target};
use entry::{MeasuredEntry, ProfileEntry, Waits};

/// The harness's window after a final SIGKILL nobody waits on.
pub const LAST_WINDOW_MS: u64 = 2000;
/// The capped wait of a host that walks away.
pub const WALK_CAP_MS: u64 = 5000;

/// One path's runs, summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct PathLadder {
    pub triggers: Vec<String>,
    pub shape: LadderShape,
    /// The shape but for the pipes' closes the recorder may not live to log before its
    /// SIGKILL: what makes two paths' ladders one.
    pub key: LadderShape,
    pub plumbing: HostPlumbing,
    pub walked_away: Option<WalkedAway>,
    /// Per gap between consecutive steps: (from → to, min, median, max ms).
    pub waits: Vec<(Gap, Spread)>,
    /// From the trigger to the first step.
    pub first: Option<Spread>,
    pub senders: Vec<SentBy>,
    pub daemons: Vec<String>,
    pub repeats: usize,
    /// The repeats disagreed on the ladder's shape (then the shape most runs showed is
    /// given; on a tie the longer, then the earliest run's).
    pub shapes_differ: bool,
    /// Runs read, over every trigger of the group.
    pub runs: usize,
    /// Runs in which the server was SIGKILLed before it could take a signal its
    /// descendants took (counted as reaching it).
    pub unseen_at_server: usize,
    /// Per run of the ladder, how many ends of the pipes it logged closing: fewer than the
    /// ladder shows is the recorder's race with the SIGKILL (`unlogged`).
    pub closes_logged: Vec<usize>,
    /// The runs that showed another shape, one line each.
    pub others: Vec<String>,
    /// From the trigger to the host's exit, over every run.
    pub host_exit: Option<Spread>,
    /// Measured with the daemon a first run left already up (a second session).
    pub daemon_up: bool,
    /// A signal that walked the tree one process at a time: the action, and from the first
    /// descendant's to the server's.
    pub walk: Option<(ActionKind, Spread)>,
    /// Measured again with the daemon up, the same ladder (said, not a profile of its own).
    pub same_with_daemon_up: Vec<String>,
}

/// Why a path has no ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct Unmeasured {
    pub trigger: String,
    pub why: String,
}

/// stdin's EOF and stdout's end that are one close of the pipes, as one `close-pipes`.
pub fn merge_pipes(r: &RunReading) -> RunReading {
    // stdin EOF and stdout unwritable are one close-pipes when they came within a few ms,
    // or when both came after the exit of the host that held both ends (its death closed
    // them at once; the recorder's two threads may only have woken apart, on a busy
    // machine, tens of ms later).
    let mut r = r.clone();
    let at = |a: ActionKind| r.deliveries.iter().position(|d| d.action == a);
    let (eof, out) = (at(ActionKind::CloseStdin), at(ActionKind::StdoutClosed));
    if let (Some(e), Some(o)) = (eof, out) {
        let (a, b) = (&r.deliveries[e], &r.deliveries[o]);
        let together = (a.at_ms - b.at_ms).abs() <= analyze::SAME_MS;
        let by_the_host_exit = r.plumbing.via == HostVia::Direct
            && e.abs_diff(o) == 1
            && r.host_exit_ms
                .is_some_and(|h| a.at_ms.min(b.at_ms) >= h - analyze::SAME_MS);
        if together || by_the_host_exit {
            r.deliveries[e].at_ms = a.at_ms.min(b.at_ms);
            r.deliveries[e].action = ActionKind::ClosePipes;
            r.deliveries.remove(o);
        }
    }
    r
}

pub fn summarise(p: &PathRuns) -> Result<PathLadder, Unmeasured> {
    let readings: Vec<RunReading> = p
        .runs
        .iter()
        .filter_map(|r| r.reading.as_ref())
        .map(merge_pipes)
        .collect();
    if readings.is_empty() {
        let why = p
            .runs
            .iter()
            .find_map(|r| r.failure.clone())
            .unwrap_or_else(|| "no run".into());
        return Err(Unmeasured {
            trigger: p.trigger.clone(),
            why,
        });
    }
    // The ladder most runs showed, in its fullest logged form (`unlogged`).
    let picked = unlogged::pick_ladder(&readings);
    let first = &readings[picked.index];
    let shape = picked.shape.clone();
    let others = picked.others(&readings, one_line);
    // Each wait, the first step and a walk: from every run that logged the steps to them.
    let like_runs = picked.runs(&readings);
    let waits = waits(first, &like_runs);
    let firsts = like_runs
        .iter()
        .filter_map(|r| r.deliveries.first().map(|d| d.at_ms))
        .collect();
    Ok(PathLadder {
        triggers: vec![p.trigger.clone()],
        key: picked.key,
        shape,
        plumbing: first.plumbing.clone(),
        walked_away: first.walked_away.clone(),
        waits,
        first: Spread::of(firsts),
        senders: senders(first),
        daemons: daemons_of(p),
        repeats: readings.len(),
        shapes_differ: !others.is_empty(),
        runs: readings.len(),
        unseen_at_server: readings
            .iter()
            .filter(|r| r.deliveries.iter().any(|d| d.unseen_at_server))
            .count(),
        closes_logged: picked.closes_logged,
        others,
        host_exit: Spread::of(readings.iter().filter_map(|r| r.host_exit_ms).collect()),
        daemon_up: p.daemon_up,
        same_with_daemon_up: Vec::new(),
        walk: walk(&like_runs),
    })
}

/// Who sent what reached the server, each once.
fn senders(r: &RunReading) -> Vec<SentBy> {
    let mut senders: Vec<SentBy> = r.deliveries.iter().map(|d| d.from.clone()).collect();
    senders.sort_by_key(SentBy::to_string);
    senders.dedup();
    senders
}

/// Per gap between `first`'s consecutive deliveries: `from → to` and its spread over the
/// runs of the ladder that logged the same steps up to it.
fn waits(first: &RunReading, runs: &[&RunReading]) -> Vec<(Gap, Spread)> {
    let step = |d: &super::reading::HostAction| (d.action, d.to);
    let mut waits = Vec::new();
    for i in 1..first.deliveries.len() {
        let xs: Vec<f64> = runs
            .iter()
            .filter(|r| r.deliveries.len() > i)
            .filter(|r| (0..=i).all(|j| step(&r.deliveries[j]) == step(&first.deliveries[j])))
            .map(|r| r.deliveries[i].at_ms - r.deliveries[i - 1].at_ms)
            .collect();
        if let Some(s) = Spread::of(xs) {
            let gap = Gap {
                from: first.deliveries[i - 1].action,
                to: first.deliveries[i].action,
            };
            waits.push((gap, s));
        }
    }
    waits
}

/// What the path's runs left running, each command once.
fn daemons_of(p: &PathRuns) -> Vec<String> {
    let mut daemons: Vec<String> = p
        .runs
        .iter()
        .flat_map(|r| r.daemons.iter().map(|d| command_of(d)))
        .collect();
    daemons.sort();
    daemons.dedup();
    daemons
}

/// The first signal that walked the tree, over the runs that show it.
fn walk(runs: &[&RunReading]) -> Option<(ActionKind, Spread)> {
    let action = runs
        .iter()
        .find_map(|r| r.deliveries.iter().find(|d| d.walk_ms.is_some()))?
        .action;
    let xs = runs
        .iter()
        .filter_map(|r| {
            r.deliveries
                .iter()
                .find(|d| d.action == action)
                .and_then(|d| d.walk_ms)
        })
        .collect();
    Some((action, Spread::of(xs)?))
}

/// A run's ladder in one line, for a run that disagreed with the others.
fn one_line(r: &RunReading) -> String {
    let mut parts: Vec<String> = r
        .deliveries
        .iter()
        .map(|d| format!("{} to the {} at {:.0} ms", d.action, word(&d.to), d.at_ms))
        .collect();
    if let Some(h) = r.host_exit_ms {
        parts.push(format!("the host exited at {h:.0} ms"));
    }
    if r.walked_away.is_some() {
        parts.push("walked away".into());
    }
    parts.join(", ")
}

/// What makes two paths' ladders one: the shape, the plumbing (a controlling terminal
/// aside: the TUI has one, a one-shot command not) and walking away.
fn ladder_key(x: &PathLadder) -> (LadderShape, HostPlumbing, bool) {
    let mut p = x.plumbing.clone();
    p.ctty = false;
    (x.key.clone(), p, x.walked_away.is_some())
}

/// The paths of one release grouped by equal ladders (shape, plumbing, walking away), the
/// first runs' and the daemon-up runs' apart. A path whose daemon-up runs show its first
/// runs' ladder is one profile that says so; one whose ladder changes with the daemon up
/// (the daemon adopted the server) gets a `-daemon-up` profile too.
pub fn group(m: &Measurement) -> (Vec<PathLadder>, Vec<Unmeasured>) {
    let (mut groups, missing) = group_state(m, false);
    let (up, missing_up) = group_state(m, true);
    for g in up {
        let first_key = |t: &String| {
            groups
                .iter()
                .find(|f| f.triggers.contains(t))
                .map(ladder_key)
        };
        if g.triggers
            .iter()
            .all(|t| first_key(t) == Some(ladder_key(&g)))
        {
            for f in groups.iter_mut() {
                let same: Vec<String> = g
                    .triggers
                    .iter()
                    .filter(|t| f.triggers.contains(t))
                    .cloned()
                    .collect();
                f.same_with_daemon_up.extend(same);
            }
        } else {
            groups.push(g);
        }
    }
    let mut missing = missing;
    missing.extend(missing_up.into_iter().map(|u| Unmeasured {
        trigger: format!("{} (daemon up)", u.trigger),
        why: u.why,
    }));
    (groups, missing)
}

fn group_state(m: &Measurement, daemon_up: bool) -> (Vec<PathLadder>, Vec<Unmeasured>) {
    let mut groups: Vec<PathLadder> = Vec::new();
    let mut missing = Vec::new();
    for p in m.paths.iter().filter(|p| p.daemon_up == daemon_up) {
        match summarise(p) {
            Ok(l) => {
                let key = ladder_key;
                if let Some(g) = groups.iter_mut().find(|g| key(g) == key(&l)) {
                    let t = &l.triggers[0];
                    // A path that logged more of the pipes' closing shows the group's ladder
                    // fuller (its waits go with its shape).
                    if unlogged::ends(&l.shape) > unlogged::ends(&g.shape) {
                        g.shape = l.shape.clone();
                        g.waits = l.waits.clone();
                    }
                    g.others
                        .extend(l.others.iter().map(|o| format!("{t}: {o}")));
                    g.shapes_differ |= l.shapes_differ;
                    g.runs += l.runs;
                    g.unseen_at_server += l.unseen_at_server;
                    g.closes_logged.extend(l.closes_logged);
                    g.host_exit = match (g.host_exit, l.host_exit) {
                        (Some(a), Some(b)) => Some(Spread {
                            min_ms: a.min_ms.min(b.min_ms),
                            max_ms: a.max_ms.max(b.max_ms),
                            ..a
                        }),
                        (a, b) => a.or(b),
                    };
                    g.triggers.extend(l.triggers);
                    g.daemons.extend(l.daemons);
                    g.daemons.sort();
                    g.daemons.dedup();
                } else {
                    groups.push(l);
                }
            }
            Err(u) => missing.push(u),
        }
    }
    (groups, missing)
}

/// The profile id of a group (`-daemon-up` for a ladder seen only with the daemon up).
pub fn profile_id(host: &str, g: &PathLadder, quit_trigger: &str) -> String {
    let id = if g.triggers.iter().any(|t| t == quit_trigger) {
        host.to_string()
    } else {
        format!("{host}-{}", g.triggers[0])
    };
    if g.daemon_up {
        format!("{id}-daemon-up")
    } else {
        id
    }
}

/// A leftover's command without its pid and temporary paths: the program's name and args.
fn command_of(leftover: &str) -> String {
    let cmd = leftover.split_once("): ").map_or(leftover, |(_, c)| c);
    let mut words = cmd.split_whitespace();
    let prog = words
        .next()
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
        .unwrap_or_default();
    // A run's temporary directory differs from run to run: one daemon, however many runs.
    let word = |w: &str| {
        if w.contains("/mcp-shutdown-host-") {
            "…".to_string()
        } else {
            w.to_string()
        }
    };
    std::iter::once(prog)
        .chain(words.map(word))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `[[profile]]` entries of one release, after comments on the measurement and on
/// each path that was not measured.
pub fn profiles_toml(m: &Measurement, name: &str) -> String {
    let (groups, missing) = group(m);
    let mut out = format!(
        "# Measured by `mcp-shutdown host measure {}@{}` on {} ({} repeats).\n",
        m.host, m.version, m.date, m.repeats
    );
    for u in &missing {
        out.push_str(&format!("# {}: not measured: {}\n", u.trigger, u.why));
    }
    out.push_str(&entry::write(
        groups.iter().map(|g| profile_entry(m, name, g)).collect(),
    ));
    out
}

/// Does every wait of the group reproduce, and every run show one shape?
fn group_reproduces(g: &PathLadder) -> bool {
    g.waits.iter().all(|(_, s)| s.reproduces()) && !g.shapes_differ
}

fn profile_entry(m: &Measurement, name: &str, g: &PathLadder) -> ProfileEntry {
    let state = if g.daemon_up {
        ", its daemon up from a first run"
    } else {
        ""
    };
    ProfileEntry {
        id: profile_id(&m.host, g, "quit-command"),
        kind: ProfileKind::Host,
        client: format!("{name} {} ({}{state})", m.version, g.triggers.join(", ")),
        basis: ProfileBasis::Measured,
        measured: MeasuredEntry {
            package: m.package.clone(),
            version: m.version.clone(),
            date: m.date.clone(),
            triggers: g.triggers.clone(),
            repeats: g.repeats,
            reproduces: group_reproduces(g),
            waits: Waits::of(g),
            daemon: g.plumbing.via.daemon().map(str::to_string),
            daemon_up: g.daemon_up,
        },
        plumbing: Plumbing {
            stdio: g.plumbing.stdio.replayed(),
            group: g.plumbing.group,
            via: g.plumbing.via.replayed(),
        },
        abandons: g.walked_away.is_some(),
        cap_note: notes(g).join(" "),
        steps: entry::steps(g),
    }
}

/// The cap note: who sent the signals, the daemon, walking away, what was left, and what
/// did not reproduce.
fn notes(g: &PathLadder) -> Vec<String> {
    let mut notes = Vec::new();
    if !g.senders.is_empty() {
        let senders: Vec<String> = g.senders.iter().map(SentBy::to_string).collect();
        notes.push(format!("Signals from: {}.", senders.join(", ")));
    }
    if let Some((action, _)) = g.shape.iter().find(|(_, to)| *to == Target::Children) {
        notes.push(format!(
            "The {action} goes to the server's children, not the server (replayed so: `to = \"children\"`)."
        ));
    }
    if let Some((action, s)) = &g.walk {
        notes.push(format!(
            "The {action} walks the tree one process at a time, deepest first, the server last: {s} from the first descendant's to the server's (one `kill` per process: a bigger tree takes longer). Replayed as one {action} to the tree at the server's time."
        ));
    }
    if g.unseen_at_server > 0 {
        notes.push(format!(
            "In {} of {} runs the server was SIGKILLed within {} ms of a signal its descendants took, before it could take it: counted as reaching it too.",
            g.unseen_at_server,
            g.runs,
            analyze::SAME_MS
        ));
    }
    notes.extend(unlogged::note(&g.closes_logged, &g.shape, g.runs));
    notes.extend(daemon_notes(g));
    if let Some(w) = &g.walked_away {
        notes.push(format!("Walked away: {w}."));
    }
    if !g.daemons.is_empty() {
        notes.push(format!(
            "Left running after the host exited (killed by pid): {}.",
            g.daemons.join("; ")
        ));
    }
    if !group_reproduces(g) {
        notes.push(
            "The waits spread wider than ±50 ms or ±10 % across repeats (see measured.waits)."
                .into(),
        );
    }
    if !g.others.is_empty() {
        notes.push(format!(
            "{} of {} runs showed another ladder: {}.",
            g.others.len(),
            g.runs,
            g.others.join("; ")
        ));
        if let Some(s) = g.host_exit {
            notes.push(format!(
                "The host exited {} after the trigger (min/median/max; median of the first trigger's runs).",
                s
            ));
        }
    }
    notes
}

/// What the notes say of the host's daemon: the server's parent, a second session.
fn daemon_notes(g: &PathLadder) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(d) = g.plumbing.via.daemon() {
        notes.push(format!(
            "The server's parent is the host's daemon ({d}), not the process the user quits."
        ));
    }
    if g.daemon_up {
        notes.push(
            "Measured in a second session: the daemon a first run left was up in the same HOME, as a user's next session finds it; the daemon was killed by pid afterwards."
                .into(),
        );
    }
    if !g.same_with_daemon_up.is_empty() {
        notes.push(format!(
            "The same with the daemon a first run left up ({}).",
            g.same_with_daemon_up.join(", ")
        ));
    }
    notes
}

mod entry;
mod history;
mod unlogged;
pub use history::history;

#[cfg(test)]
mod tests;
