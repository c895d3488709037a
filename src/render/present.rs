//! Presentation shared by every renderer: one definition of a case's cell, of how it ended
//! in words, of what held it, and of an action's label. Pure, from the report only.

use std::collections::BTreeMap;

pub use crate::rules::repeat::distribution;

use crate::model::{
    group_leftovers, Action, Basis, Decisive, ErrorKind, Fix, JudgedCase, LeftoverGroup, Level,
    MachineBound, Owner, ProcState, Report, Revision, ScenarioId, Status, Target,
};

/// What every format shows instead of a machine-bound case's verdict (and the census site
/// and badges instead of a server's, unless it failed elsewhere).
pub const RE_RUN: &str = "re-run";

/// Milliseconds as shown to people: whole numbers.
pub fn ms(v: f64) -> String {
    format!("{v:.0} ms")
}

/// A case's verdict, or `None` when it has none that is the server's: it ran but could not
/// be judged (a listing's launch, credentials), or could not run for the user's or the
/// harness's fault.
/// A machine-bound case has none either: the machine's load decided it.
pub fn judged(r: &JudgedCase) -> Option<Status> {
    (r.owner().is_none_or(Owner::is_scored) && !r.is_machine_bound()).then(|| r.verdict())
}

/// Why the machine, not the server, decided a case, in one sentence.
pub fn machine_bound(m: &MachineBound) -> String {
    let from = m.action.as_ref().map_or("the launch".into(), action_label);
    let (wall, own, queued, budget) = (
        ms(m.wall_ms),
        ms(m.own_ms),
        ms(m.runqueue_ms),
        ms(m.budget_ms as f64),
    );
    match m.decided_by {
        Decisive::Escalation => format!(
            "after {from} it waited {queued} for a CPU in {wall}, and took {own} of its own \
             time, within the {budget} wait: the machine's load, not the server, led to the next step"
        ),
        Decisive::Handshake => format!(
            "no answer to the handshake in {wall} after {from}, {queued} of it waiting for a \
             CPU: the wall-clock backstop ended the wait after {own} of its own time, short of \
             the {budget} handshake budget"
        ),
    }
}

/// "machine-bound (re-run): …" for a machine-bound case.
pub fn machine_bound_of(r: &JudgedCase) -> Option<String> {
    let m = r.machine_bound.as_ref().filter(|_| r.is_machine_bound())?;
    Some(format!("machine-bound ({RE_RUN}): {}", machine_bound(m)))
}

/// How a rule's quote is introduced: the spec's requirement where the revision states the
/// rule, context where the suite checks it as practice.
pub fn quote_label(level: Level, basis: Basis, spec: Revision) -> String {
    match basis {
        Basis::Spec => format!("Requirement ({level}, spec {spec})"),
        Basis::Practice => {
            format!("Context ({level} as practice; not a requirement of spec {spec})")
        }
    }
}

/// `could not run: <owner>`: what a badge, a cell or a leaderboard says of a server or case
/// without a verdict.
pub fn could_not_run(owner: Owner) -> String {
    format!("could not run: {owner}")
}

/// The owner most of `cases` without a verdict share (ties: the first in [`Owner::ALL`]).
pub fn main_owner<'a>(cases: impl IntoIterator<Item = &'a JudgedCase>) -> Option<Owner> {
    let mut counts: BTreeMap<Owner, usize> = BTreeMap::new();
    for o in cases.into_iter().filter_map(JudgedCase::owner) {
        *counts.entry(o).or_default() += 1;
    }
    let most = counts.values().copied().max()?;
    counts.into_iter().find(|(_, n)| *n == most).map(|(o, _)| o)
}

/// The word for a case without a verdict, with its owner: `NOT TESTABLE (usage)`.
pub fn no_verdict_word(r: &JudgedCase) -> String {
    match r.owner() {
        Some(o) => format!("NOT TESTABLE ({o})"),
        None => "NOT TESTABLE".into(),
    }
}

/// A case's error as a cell shows it: its kind, and whose it is when not the server's
/// (`spawn-failed (usage)`).
pub fn error_cell(kind: ErrorKind) -> String {
    match kind.owner() {
        Owner::Server => kind.to_string(),
        o if o.as_str() == kind.as_str() => kind.to_string(),
        o => format!("{kind} ({o})"),
    }
}

/// "not testable: needs credentials" for a case that could not be judged.
pub fn not_testable(r: &JudgedCase) -> Option<String> {
    r.not_testable
        .as_ref()
        .map(|n| format!("not testable: {}", n.reason.label()))
}

/// What a case's cell says: the stage and latency, or why it could not run.
pub fn outcome(r: &JudgedCase) -> String {
    if let Some(s) = not_testable(r) {
        return s;
    }
    if r.is_machine_bound() {
        let mut r = r.clone();
        r.machine_bound = None;
        return format!("{RE_RUN}: {}", outcome(&r));
    }
    if let Some(rep) = &r.repeat {
        if rep.flaky {
            return format!("FLAKY {}", distribution(rep));
        }
        if let (None, Some(stage), Some(l)) = (&r.error, r.stage, rep.latency_ms) {
            return format!("{stage} {} ×{}", ms(l.median), rep.runs.len());
        }
    }
    // Where its launcher left it running, the server's own end (the harness signalled it).
    let own = r.observation.as_the_server_lived_it();
    match (&r.error, own.stage, own.exit_ms) {
        (Some(e), _, _) => error_cell(e.kind),
        // The launcher's exit is not the server's: it was left running.
        (None, Some(_), _) if r.left_by_launcher() || r.launcher_left_unjudged() => {
            "left by its launcher".into()
        }
        (None, Some(stage), Some(t)) => format!("{stage} {}", ms(t)),
        (None, Some(stage), None) => stage.to_string(),
        (None, None, _) => "?".into(),
    }
}

/// For a repeated case: how its runs ended and how fast, in one line.
pub fn runs_line(r: &JudgedCase) -> Option<String> {
    let rep = r.repeat.as_ref()?;
    let mut s = format!("{} runs: {}", rep.runs.len(), distribution(rep));
    if let Some(l) = rep.latency_ms {
        s.push_str(&format!(
            "; exit latency min {}, median {}, p95 {}, max {} (of {} that exited)",
            ms(l.min),
            ms(l.median),
            ms(l.p95),
            ms(l.max),
            l.n
        ));
    }
    if rep.flaky {
        s.push_str(&format!("; differed: {}", rep.flips.join(", ")));
    }
    Some(s)
}

/// " · N left behind" when the case left processes behind.
pub fn left_behind(r: &JudgedCase) -> String {
    match r.leftover_count() {
        0 => String::new(),
        n => format!(" · {n} left behind"),
    }
}

/// The text matrix's word for a case: its status's, or SKIP when it could not be judged.
pub fn mark_of(r: &JudgedCase) -> &'static str {
    judged(r).map_or("SKIP", mark)
}

/// The Markdown mark of a case: its status's, or "skipped" when it could not be judged.
pub fn emoji_of(r: &JudgedCase) -> &'static str {
    emoji(judged(r).unwrap_or(Status::Skipped))
}

/// A short word for a status, as the text matrix shows it.
pub fn mark(s: Status) -> &'static str {
    match s {
        Status::Failure => "FAIL",
        Status::Warning => "WARN",
        _ => "ok",
    }
}

/// The mark of a status in Markdown and on the web.
pub fn emoji(s: Status) -> &'static str {
    match s {
        Status::Success => "✅",
        Status::Failure => "❌",
        Status::Warning => "⚠️",
        Status::Info => "ℹ️",
        Status::Skipped => "⏭️",
    }
}

/// A short label for an action, for tables and timelines.
pub fn action_label(a: &Action) -> String {
    match a {
        Action::Nothing => "client starts closing".into(),
        Action::CloseStdin => "close stdin".into(),
        Action::ClosePipes => "close both pipes".into(),
        Action::Hangup { .. } => "terminal closed".into(),
        Action::Interrupt { .. } => "Ctrl-C".into(),
        Action::Signal {
            signal,
            to: Target::Process,
        } => signal.to_string(),
        Action::Signal {
            signal,
            to: Target::Group,
        } => format!("{signal} to group"),
        Action::Signal {
            signal,
            to: Target::Tree,
        } => format!("{signal} to tree"),
        Action::Signal {
            signal,
            to: Target::Children,
        } => format!("{signal} to its children"),
        Action::ClientExit => "client exit".into(),
        Action::ClientKill => "client SIGKILL".into(),
    }
}

/// How the case ended, in a few words: stage, latency and exit status, or why it did not run.
pub fn actual(r: &JudgedCase) -> String {
    if let (Some(n), Some(e)) = (&r.not_testable, &r.error) {
        return format!(
            "not testable: {}: {} ({}: {})",
            n.reason.label(),
            n.message,
            e.kind,
            e.message
        );
    }
    if let Some(n) = &r.not_testable {
        return format!("not testable: {}: {}", n.reason.label(), n.message);
    }
    if let Some(e) = &r.error {
        return format!(
            "could not run: {} ({}; {})",
            e.message,
            e.kind,
            e.kind.owner().description()
        );
    }
    let mut parts = Vec::new();
    match r.stage {
        Some(stage) => parts.push(format!("stage {stage}")),
        None => parts.push("stage unknown".to_string()),
    }
    match r.exit_ms {
        Some(t) => parts.push(format!("exited {} after the trigger", ms(t))),
        None => parts.push("did not exit while watched".to_string()),
    }
    if let Some(s) = r.exit_status {
        parts.push(s.to_string());
    }
    if let Some(o) = r.inflight_outcome {
        parts.push(format!("the request in flight {o}"));
    }
    if let Some(m) = machine_bound_of(r) {
        parts.push(m);
    }
    parts.join(", ")
}

/// The fixes a report carries for a server (none for a server that missed nothing, and in
/// reports from before they were recorded).
pub fn fixes_of<'a>(report: &'a Report, server: &str) -> &'a [Fix] {
    report
        .servers
        .get(server)
        .map_or(&[][..], |i| i.fixes.as_slice())
}

/// The servers with fixes, in the report's order of servers.
pub fn servers_with_fixes(report: &Report) -> Vec<(&str, &[Fix])> {
    axes(report)
        .0
        .into_iter()
        .map(|s| (s, fixes_of(report, s)))
        .filter(|(_, f)| !f.is_empty())
        .collect()
}

/// A fix's heading: what it does, for which SDK, and the rules it answers.
pub fn fix_heading(f: &Fix) -> String {
    let rules: Vec<&str> = f.rules.iter().map(|r| r.as_str()).collect();
    match &f.sdk {
        Some(sdk) => format!("{} · {sdk} · for {}", f.title, rules.join(", ")),
        None => format!("{} · for {}", f.title, rules.join(", ")),
    }
}

/// What held the server the first time it outlived a step: the case, the one-line reading
/// of `/proc`, and the runtime's hint.
pub fn first_held<'a>(report: &'a Report, server: &str) -> Option<(&'a JudgedCase, String)> {
    report
        .results
        .iter()
        .filter(|r| r.server == server)
        .find_map(|r| Some((r, held_by(r)?)))
}

/// The cases of `r`'s server not launched because `r` could not start it (`exit, crash`),
/// or None when there are none.
pub fn same_as(report: &Report, r: &JudgedCase) -> Option<String> {
    let same: Vec<String> = report
        .results
        .iter()
        .filter(|o| o.server == r.server && o.same_as.as_ref() == Some(&r.scenario))
        .map(|o| o.scenario.to_string())
        .collect();
    (!same.is_empty()).then(|| same.join(", "))
}

/// What held a server that should have exited, in one line (from its `/proc` diagnostics).
/// None where its client left it no say (it never ended the session, or killed it first),
/// or where the case missed no scored rule (e.g. a host's SIGKILL 2 ms after its SIGTERM):
/// what held it then is no fault of the server, and no fix is offered for it.
pub fn held_by(r: &JudgedCase) -> Option<String> {
    if r.hosts_doing().is_some() || !judged(r).is_some_and(Status::is_miss) {
        return None;
    }
    let d = r.diagnostics.as_ref()?;
    let mut parts = vec![format!("pid {}", d.pid)];
    // The server, read behind its launchers (the pid is theirs otherwise).
    if let Some(p) = r.server_process.as_ref().filter(|p| p.pid == d.pid) {
        parts[0] = format!("pid {} `{}`", p.pid, p.cmdline);
        if !p.launchers.is_empty() {
            parts.push(format!("started through {}", p.launchers.join(", then ")));
        }
    }
    if let Some(state) = d
        .state
        .filter(|s| !matches!(s, ProcState::Running | ProcState::Sleeping))
    {
        let name = serde_json::to_value(state)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        parts.push(format!("state {name}"));
    }
    if let Some(rt) = &d.runtime {
        parts.push(format!("runtime {rt}"));
    }
    if d.threads > 0 {
        parts.push(format!(
            "{} threads ({})",
            d.threads,
            d.thread_names.join(", ")
        ));
    }
    if !d.fds.is_empty() {
        let fds: Vec<String> = d.fds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        parts.push(format!("open fds: {}", fds.join(", ")));
    }
    if !d.children.is_empty() {
        parts.push(format!("children: {}", d.children.join("; ")));
    }
    Some(parts.join("; "))
}

/// What a case left behind, a line per group of processes with the same command line and
/// parent (bounded however many there were).
pub fn leftovers(r: &JudgedCase) -> Vec<String> {
    let server = r.server_process.as_ref().map(|p| p.pid);
    let pids: Vec<i32> = r.leftovers.iter().map(|l| l.pid).collect();
    // Recorded with the launcher as the server (before `npm exec @scope/pkg` was known as
    // npx's title): the server is what the launcher's chain left at the top.
    let top = |g: &LeftoverGroup| g.started_by.is_none_or(|p| !pids.contains(&p));
    let behind = r.launcher_left_unjudged() && !r.left_by_launcher();
    let mut lines: Vec<String> = group_leftovers(&r.leftovers)
        .iter()
        .map(|g| {
            let is_server = g.pids.iter().any(|p| Some(*p) == server) || (behind && top(g));
            if (r.left_by_launcher() || behind) && is_server {
                format!("{g}: the server itself, its launcher left it; the harness killed it")
            } else if g.pids.len() == 1 {
                format!("{g} was still running; the harness killed it")
            } else {
                format!("{g} were still running; the harness killed them")
            }
        })
        .collect();
    if r.leftovers_omitted > 0 {
        lines.push(format!(
            "{} more were still running (not listed); the harness killed them",
            r.leftovers_omitted
        ));
    }
    lines
}

/// Servers in report order, and scenarios in the suite's order (endings in their order, then
/// profiles in report order).
pub fn axes(report: &Report) -> (Vec<&str>, Vec<&ScenarioId>) {
    let mut servers: Vec<&str> = Vec::new();
    let mut scenarios: Vec<&ScenarioId> = Vec::new();
    for r in &report.results {
        if !servers.contains(&r.server.as_str()) {
            servers.push(&r.server);
        }
        if !scenarios.contains(&&r.scenario) {
            scenarios.push(&r.scenario);
        }
    }
    // A stable sort keeps report order among profiles.
    scenarios.sort_by_key(|s| match s {
        ScenarioId::Ending(e) => (0, *e as usize),
        ScenarioId::Profile(_) => (1, 0),
    });
    (servers, scenarios)
}

/// The results indexed by (server, scenario); the first wins if a pair repeats.
pub fn cells(report: &Report) -> BTreeMap<(&str, &ScenarioId), &JudgedCase> {
    let mut m = BTreeMap::new();
    for r in &report.results {
        m.entry((r.server.as_str(), &r.scenario)).or_insert(r);
    }
    m
}

/// The position of a result in the report (for anchors).
pub fn index_of(report: &Report, r: &JudgedCase) -> usize {
    report
        .results
        .iter()
        .position(|x| std::ptr::eq(x, r))
        .unwrap_or(0)
}

/// Characters XML 1.0 cannot carry at all (most C0 controls, e.g. the ESC of terminal
/// colours), written as visible `\xNN` escapes; everything else unchanged.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}
