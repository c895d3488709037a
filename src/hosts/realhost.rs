//! `check --real-host <host> -- CMD`: the user's server under the real host binary, once
//! per quit path the host can be driven through offline, judged by the same rules as any
//! case. The host launches the command as configured (the same files `host measure` writes,
//! with CMD instead of the recorder); the server is found among the run's processes, watched
//! by pidfd, its tree read from `/proc` until the quit, and then: when it exited after the
//! quit, what it left running, or whether it outlived the host.
//!
//! The signals the server receives are traced (ptrace, [`crate::os::tracer`]), so its stage
//! is the last step of the host's *measured* ladder (the bundled profile of that quit path)
//! it was seen to receive, never a time guessed from the quit: a host slow to act under load
//! must not move the server's stage. A step that cannot be seen (a closed stdin) is placed by
//! its measured wait after the last step seen. Its stdout is the host's, so the stdout and
//! in-flight rules are not judged. A one-shot command ends its servers on its own schedule,
//! so there only survival and leftovers are judged, and so where tracing is refused.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use super::catalogue::{Drive, HostSpec, QuitPath};
use super::measure::{
    launch, quit_tui, stalled, wait_quiet, Server, QUIT_LIMIT, START_LIMIT, WALK_WINDOW,
};
use super::standin::StandIn;
use super::HostError;
use crate::config::manifest::Manifest;
use crate::config::profiles::{Profile, Profiles};
use crate::config::scenarios::{build_with, PlumbingOverride};
use crate::harness::Harness;
use crate::model::{
    stage_after, Action, CaseError, Check, ErrorKind, HostSignal, JudgedCase, Leftover,
    Observation, Outcome, RealHostRun, RuleId, Scenario, ScenarioId, Sender, SignalName, Stage,
    Status, StepRecord, Target,
};
use crate::os::hostproc::{self, HostProc};
use crate::rules::Catalogue;

/// How long a TUI is left up with the server running before the quit: its start-up done.
const SETTLE: Duration = Duration::from_millis(3000);

/// What went wrong on a quit path, so that nothing was judged.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The host never started the server (or it exited too soon to be seen): why, from the
    /// host's screen and the stand-in model API.
    NoServer(String),
    /// The server exited on its own before the quit.
    ExitedBeforeQuit,
    /// The host did not exit after the quit.
    HostDidNotQuit(String),
}

impl Failure {
    /// Whose it is: the server's only when it ended itself before the session did.
    fn error(&self) -> CaseError {
        let (kind, message) = match self {
            Failure::NoServer(why) => (ErrorKind::Harness, format!("under the real host: {why}")),
            Failure::ExitedBeforeQuit => (
                ErrorKind::ExitedBeforeEnd,
                "exited under the real host before it was quit".into(),
            ),
            Failure::HostDidNotQuit(why) => (ErrorKind::Harness, why.clone()),
        };
        CaseError { kind, message }
    }
}

/// What the server did on one quit path, as seen from outside it.
#[derive(Clone, Debug, PartialEq)]
pub struct RealRun {
    pub trigger: String,
    /// A one-shot command: it ends the server on its own schedule, with no quit to time.
    pub one_shot: bool,
    /// Exited this long after the quit (ms); for a one-shot command, whether it exited.
    pub exit_ms: Option<f64>,
    pub exited: bool,
    /// Still running [`WALK_WINDOW`] after the host exited.
    pub left_running: bool,
    /// Its descendants still running after it exited.
    pub leftovers: Vec<Leftover>,
    /// The signals it received after the quit, and the signal that ended it, as traced.
    pub signals: Vec<HostSignal>,
    pub killed_by: Option<SignalName>,
    /// Why its signals could not be traced here, if they could not.
    pub untraced: Option<String>,
    pub failure: Option<Failure>,
    pub wall_ms: f64,
    pub load_avg: Option<f64>,
}

/// The server among the run's processes: the whole command line, so the host's own path
/// (`node_modules/...`) never matches.
fn find_server(marker: &str, host: &HostProc, command: &[String], limit: Duration) -> Option<i32> {
    let (host_pid, shell) = (host.pid(), host.spawned_pid());
    let name = command.join(" ");
    let end = Instant::now() + limit;
    while Instant::now() < end {
        let mut candidates: Vec<(i32, String)> = hostproc::leftovers(marker)
            .into_iter()
            .map(|l| (l.pid, l.cmdline))
            .collect();
        candidates.extend(
            crate::os::procfs::descendants(host_pid)
                .into_iter()
                .map(|p| (p.pid, p.cmdline)),
        );
        if let Some((pid, _)) = candidates
            .into_iter()
            .find(|(pid, c)| *pid != host_pid && *pid != shell && c.contains(&name))
        {
            return Some(pid);
        }
        // A one-shot command's server may live a few hundred milliseconds.
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// The server's descendants as seen while the session was live: each one's command line (the
/// latest: one first seen between its fork and its `exec` still had its parent's), parent and
/// start time.
#[derive(Default)]
struct Tree(BTreeMap<i32, (String, i32, u64)>);

impl Tree {
    fn read(&mut self, server: i32) {
        for p in crate::os::procfs::descendants(server) {
            // A reused pid (another start time) is another process.
            let seen = self
                .0
                .entry(p.pid)
                .or_insert((String::new(), p.ppid, p.start_ticks));
            if seen.2 != p.start_ticks {
                *seen = (String::new(), p.ppid, p.start_ticks);
            }
            seen.0 = p.cmdline;
        }
    }

    /// Those still running (the same processes: the same start times), with who started them.
    fn still_running(&self, server: i32, server_cmdline: &str) -> Vec<Leftover> {
        self.0
            .iter()
            .filter_map(|(pid, (cmd, ppid, start))| {
                let now = crate::os::procfs::proc_info(*pid)
                    .filter(|p| !p.is_zombie() && p.start_ticks == *start)?;
                Some(Leftover {
                    pid: *pid,
                    cmdline: if now.cmdline.is_empty() {
                        cmd.clone()
                    } else {
                        now.cmdline
                    },
                    started_by: Some(*ppid),
                    started_by_cmdline: if *ppid == server {
                        Some(server_cmdline.to_string())
                    } else {
                        self.0.get(ppid).map(|(c, _, _)| c.clone())
                    },
                })
            })
            .collect()
    }
}

/// Runs `command` under `spec` on each quit path (only those of `only`, when given). A
/// descendant still running `settle` after the server exited is a leftover (the leak rule's
/// prompt budget).
pub fn check(
    spec: &HostSpec,
    exe: &Path,
    command: &[String],
    only: &[String],
    settle: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<RealRun>, HostError> {
    let api = StandIn::start().map_err(|e| HostError::io(Path::new("127.0.0.1"), e))?;
    let mut runs = Vec::new();
    for path in spec.paths {
        if !only.is_empty() && !only.iter().any(|o| o == path.trigger) {
            continue;
        }
        let run = one_path(spec, exe, path, command, &api, settle)?;
        progress(&format!("{} {}: {}", spec.id, path.trigger, summary(&run)));
        runs.push(run);
    }
    Ok(runs)
}

fn summary(r: &RealRun) -> String {
    match (&r.failure, r.exit_ms, r.left_running) {
        (Some(f), _, _) => format!("not judged: {}", f.error().message),
        (None, _, true) => "left running".into(),
        (None, Some(ms), _) => format!("exited {ms:.0} ms after the quit"),
        (None, None, _) => "ended by the command".into(),
    }
}

fn one_path(
    spec: &HostSpec,
    exe: &Path,
    path: &QuitPath,
    command: &[String],
    api: &StandIn,
    settle: Duration,
) -> Result<RealRun, HostError> {
    let started = Instant::now();
    let mut l = launch(spec, exe, path, Server::Command(command), api)?;
    let one_shot = matches!(path.drive, Drive::OneShot(_));
    let mut run = RealRun {
        trigger: path.trigger.into(),
        one_shot,
        exit_ms: None,
        exited: false,
        left_running: false,
        leftovers: Vec::new(),
        signals: Vec::new(),
        killed_by: None,
        untraced: None,
        failure: None,
        wall_ms: 0.0,
        load_avg: None,
    };
    let Some(server) = find_server(&l.marker, &l.host, command, START_LIMIT) else {
        run.failure = Some(Failure::NoServer(stalled(&l.host.screen_text(), api)));
        let _ = hostproc::kill_all(&l.marker, &[l.host.pid()]);
        return Ok(run);
    };
    // Read again before the quit: a launcher (a pyenv shim, `uv run`) may have exec'd since.
    let cmdline_of = |pid: i32| {
        crate::os::procfs::proc_info(pid)
            .map(|p| p.cmdline)
            .unwrap_or_else(|| command.join(" "))
    };
    let mut server_cmdline = cmdline_of(server);
    let death = hostproc::watch_death(server);
    let trace = crate::os::tracer::trace_signals(server)
        .map_err(|e| run.untraced = Some(format!("ptrace: {e}")))
        .ok();
    let mut tree = Tree::default();
    let mut t0 = crate::os::mono_ns();
    if let Drive::Tui(quit) = path.drive {
        let until = Instant::now() + SETTLE;
        while Instant::now() < until {
            tree.read(server);
            std::thread::sleep(Duration::from_millis(100));
        }
        wait_quiet(l.host.pid(), Duration::ZERO, START_LIMIT);
        if death.as_ref().is_some_and(|rx| rx.try_recv().is_ok()) {
            run.failure = Some(Failure::ExitedBeforeQuit);
            let _ = hostproc::kill_all(&l.marker, &[server, l.host.pid()]);
            return Ok(run);
        }
        tree.read(server);
        server_cmdline = cmdline_of(server);
        // The server gone is the host ending it (its signals are not traced yet).
        let began = || crate::os::procfs::proc_info(server).is_none_or(|i| i.is_zombie());
        t0 = quit_tui(&mut l.host, quit, &began);
    }
    let quit_limit = if one_shot { START_LIMIT } else { QUIT_LIMIT };
    let host_exit = await_host_exit(&mut l.host, &mut tree, server, quit_limit);
    if host_exit.is_none() {
        run.failure = Some(Failure::HostDidNotQuit(format!(
            "the real host did not quit within {} s: screen {:?}",
            quit_limit.as_secs(),
            super::measure::screen_line(&l.host.screen_text())
        )));
    }
    let died = death.and_then(|rx| rx.recv_timeout(WALK_WINDOW).ok());
    run.exited = died.is_some();
    if !one_shot {
        run.exit_ms = died.map(|d| (d as f64 - t0 as f64).max(0.0) / 1e6);
    }
    run.left_running = died.is_none() && host_exit.is_some();
    if let Some(trace) = trace {
        let traced = trace.finish_within(if died.is_some() {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        });
        run.signals = signals_after(&traced, t0, l.host.pid(), server);
        run.killed_by = match traced.exit {
            Some(crate::model::ExitStatus::Signal(s)) => Some(s),
            _ => None,
        };
    }
    if died.is_some() {
        std::thread::sleep(settle);
        run.leftovers = tree.still_running(server, &server_cmdline);
    }
    run.load_avg = crate::os::procfs::load_avg();
    let _ = hostproc::kill_all(&l.marker, &[server, l.host.pid()]);
    let left: Vec<i32> = run.leftovers.iter().map(|x| x.pid).collect();
    let _ = hostproc::kill_all(&l.marker, &left);
    run.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(run)
}

/// Waits up to `limit` for the host to exit, reading the server's tree as it grows (a
/// one-shot's too) meanwhile; when it exited, if it did.
fn await_host_exit(
    host: &mut hostproc::HostProc,
    tree: &mut Tree,
    server: i32,
    limit: Duration,
) -> Option<u64> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        tree.read(server);
        if let Some(at) = host.wait_exit(Duration::from_millis(50)) {
            return Some(at);
        }
    }
    None
}

/// The signals the trace saw the server receive from the quit (`t0`) on, and who sent each.
fn signals_after(
    traced: &crate::os::tracer::Traced,
    t0: u64,
    host_pid: i32,
    server: i32,
) -> Vec<HostSignal> {
    traced
        .deliveries
        .iter()
        .filter(|d| d.at_ns >= t0)
        .map(|d| HostSignal {
            signal: d.signal,
            at_ms: crate::os::ms_between(t0, d.at_ns),
            from_pid: d.from_pid,
            from: match d.from_pid {
                0 => Sender::Kernel,
                p if p == host_pid => Sender::Host,
                p if p == server => Sender::Server,
                _ => Sender::Other,
            },
        })
        .collect()
}

/// The bundled measured profile of `spec`'s quit path `trigger`, if it was measured.
pub fn profile_for<'a>(
    profiles: &'a Profiles,
    spec: &HostSpec,
    trigger: &str,
) -> Option<&'a Profile> {
    profiles.iter().find(|p| {
        p.measured
            .as_ref()
            .is_some_and(|m| m.package == spec.package && m.triggers.iter().any(|t| t == trigger))
    })
}

/// How long after the quit the host's ladder begins, as measured (`trigger → first`), or 0.
pub fn ladder_offset_ms(profile: &Profile) -> f64 {
    profile
        .measured
        .as_ref()
        .and_then(|m| m.waits.get("trigger → first"))
        .map(|w| w.median_ms)
        .unwrap_or(0.0)
}

/// What one run observed, as a case of `scenario` (the host's measured ladder, begun
/// `offset_ms` after the quit): the stage is the last step of that ladder it reached.
pub fn observation(
    server: &str,
    run: &RealRun,
    scenario: &Scenario,
    offset_ms: f64,
    about: RealHostRun,
) -> Observation {
    let mut o = Observation::empty(server, &scenario.id);
    let about_untimed = about.untimed.clone();
    o.real_host = Some(about);
    o.wall_ms = run.wall_ms;
    o.load_avg = run.load_avg;
    if let Some(f) = &run.failure {
        o.error = Some(f.error());
        return o;
    }
    o.leftovers = run.leftovers.clone();
    if run.left_running {
        let mut at = offset_ms;
        o.stage = Some(Stage::Survived);
        o.steps = scenario
            .steps
            .iter()
            .map(|s| {
                let r = StepRecord::new(s.action, at);
                at += s.wait_ms as f64;
                r
            })
            .collect();
    } else if let (Some(ms), None) = (run.exit_ms, &about_untimed) {
        o.steps = reached(scenario, &run.signals, run.killed_by, ms, offset_ms);
        o.stage = o.steps.last().map(|s| stage_after(&s.action));
        o.exit_ms = Some(ms);
    }
    o
}

/// The signal a step of a ladder delivers to the server itself, so that the trace sees it.
fn seen_as(action: &Action) -> Option<SignalName> {
    match action {
        Action::Signal {
            signal,
            to: Target::Process | Target::Group | Target::Tree,
        } => Some(*signal),
        _ => None,
    }
}

/// The steps of `scenario`'s ladder the server reached before it exited `exit_ms` after the
/// quit: up to the last whose signal it was seen to receive (a SIGKILL is seen as what ended
/// it), then any that cannot be seen (a closed stdin, a signal to its children) whose measured
/// wait after the step before had passed. Each step at its traced time, or else that wait
/// after the one before (the first `offset_ms` after the quit).
fn reached(
    scenario: &Scenario,
    signals: &[HostSignal],
    killed_by: Option<SignalName>,
    exit_ms: f64,
    offset_ms: f64,
) -> Vec<StepRecord> {
    let steps = &scenario.steps;
    let mut at: Vec<Option<f64>> = vec![None; steps.len()];
    let mut last: Option<usize> = None;
    let mut see = |signal: SignalName, when: f64, last: &mut Option<usize>| {
        let from = last.map_or(0, |l| l + 1);
        if let Some(j) = (from..steps.len()).find(|&j| seen_as(&steps[j].action) == Some(signal)) {
            *last = Some(j);
            at[j] = Some(when);
        }
    };
    // A signal the server sent itself (Node re-raises SIGINT after its handler) is no step.
    for s in signals
        .iter()
        .filter(|s| s.at_ms <= exit_ms && s.from != Sender::Server)
    {
        see(s.signal, s.at_ms, &mut last);
    }
    if killed_by == Some(SignalName::Kill) {
        see(SignalName::Kill, exit_ms, &mut last);
    }
    let mut upto = last.map_or(1, |l| l + 1);
    let mut out = Vec::new();
    let mut next_at = offset_ms;
    for (j, step) in steps.iter().enumerate() {
        let when = at[j].unwrap_or(next_at);
        if j >= upto {
            if seen_as(&step.action).is_some() || when > exit_ms {
                break;
            }
            upto = j + 1;
        }
        out.push(StepRecord::new(step.action, when));
        next_at = when + step.wait_ms as f64;
    }
    out
}

/// The checks of a run under a real host: only the rules it can judge, and for a server
/// that ended where its exit cannot be placed in the ladder (`untimed`), only its leftovers.
pub fn keep_judged(checks: Vec<Check>, run: &RealRun, untimed: Option<&str>) -> Vec<Check> {
    checks
        .into_iter()
        .filter(|c| Catalogue::bundled().rule(c.id).under_real_host)
        .map(|mut c| {
            let ended = run.exited && run.failure.is_none() && !run.left_running;
            if let (true, Some(why)) = (ended, untimed) {
                if c.id != RuleId::ProcessNoLeakedDescendants {
                    c.status = Status::Skipped;
                    c.outcome = Outcome::NotApplicable;
                    c.message = format!("Not judged: {why}.");
                }
            }
            c
        })
        .collect()
}

/// Why a run's exit cannot be placed in its profile's ladder, if it cannot.
fn untimed(run: &RealRun, profile: &Profile) -> Option<String> {
    if let Some(why) = &run.untraced {
        return Some(format!(
            "its signals could not be traced here ({why}), and its stage is only what it was seen to receive"
        ));
    }
    if run.one_shot {
        return Some(
            "a one-shot command ends its servers on its own schedule, so its end cannot be timed \
             from outside the server (the TUI's quit paths time it)"
                .into(),
        );
    }
    let reproduces = profile
        .measured
        .as_ref()
        .is_some_and(|m| m.reproduces || only_the_reaction_spreads(m, profile));
    (!reproduces).then(|| {
        format!(
            "the host's ladder on this path did not reproduce across its measured runs \
             (`{}`), so an exit time cannot be placed in it",
            profile.id
        )
    })
}

/// Whether the one wait that spread across the measured runs is how long the host took to
/// begin (`trigger → first`), before a first step the trace sees: the ladder is then placed by
/// its traced signal, whenever it came.
fn only_the_reaction_spreads(m: &crate::model::MeasuredRef, profile: &Profile) -> bool {
    let spreads: Vec<&str> = m
        .waits
        .iter()
        .filter(|(_, w)| !w.reproduces())
        .map(|(k, _)| k.as_str())
        .collect();
    use crate::config::profiles::ProfileAction as A;
    spreads == ["trigger → first"]
        && profile.steps.first().is_some_and(|s| {
            matches!(s.action, A::Sigterm | A::Sigint | A::Sigkill | A::Sighup)
                && s.to != Target::Children
        })
}

/// The scenario id of a quit path's profile.
pub fn scenario_of(profile: &Profile) -> ScenarioId {
    ScenarioId::Profile(profile.id.clone())
}

/// A judged case's note under a real host, before what the ending costs.
pub fn note(about: &RealHostRun, name: &str, rest: Option<String>) -> String {
    let got = if about.signals.is_empty() {
        "no signal".to_string()
    } else {
        about
            .signals
            .iter()
            .map(|s| {
                let from = match s.from {
                    Sender::Host => "the host".to_string(),
                    Sender::Kernel => "the kernel".to_string(),
                    Sender::Server => "itself".to_string(),
                    Sender::Other => format!("pid {}", s.from_pid),
                };
                format!("{} at +{:.0} ms from {from}", s.signal, s.at_ms)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let timing = match &about.untimed {
        Some(_) => "its end is not placed in the ladder".to_string(),
        None => format!(
            "received {got}; stage on its ladder as measured on {}",
            about.ladder_measured_on
        ),
    };
    let head = format!(
        "under the real {name} {} ({}), quit by {}; {timing}",
        about.version, about.package, about.trigger
    );
    match rest {
        Some(r) => format!("{head}; {r}"),
        None => head,
    }
}

/// What `check --real-host` reports: each quit path judged as a case of its measured
/// profile's scenario, the server named apart per path (`<server>.<trigger>`: paths that
/// share one profile are still separate runs), and one line for each path no measured
/// profile covers (it is not judged).
pub struct Judged {
    pub servers: BTreeMap<String, crate::model::ServerInfo>,
    pub scenarios: Vec<ScenarioId>,
    pub results: Vec<JudgedCase>,
    pub unjudged: Vec<String>,
}

pub fn judge(
    harness: &Harness,
    spec: &HostSpec,
    version: &str,
    server: &Manifest,
    runs: &[RealRun],
) -> Judged {
    let mut out = Judged {
        servers: BTreeMap::new(),
        scenarios: Vec::new(),
        results: Vec::new(),
        unjudged: Vec::new(),
    };
    let budgets = harness.budgets_for(server);
    for run in runs {
        let Some(profile) = profile_for(harness.profiles(), spec, &run.trigger) else {
            out.unjudged.push(format!(
                "{} {}: not judged: no bundled profile measured this quit path (`host measure {} --path {}` measures it)",
                spec.id, run.trigger, spec.id, run.trigger
            ));
            continue;
        };
        let id = scenario_of(profile);
        let Ok(scenario) = build_with(
            &id,
            &budgets,
            harness.profiles(),
            &PlumbingOverride::default(),
        ) else {
            continue;
        };
        let about = RealHostRun {
            host: spec.id.into(),
            package: spec.package.into(),
            version: version.into(),
            trigger: run.trigger.clone(),
            ladder_measured_on: profile
                .measured
                .as_ref()
                .map_or_else(String::new, |m| m.version.clone()),
            untimed: untimed(run, profile),
            signals: run.signals.clone(),
        };
        let name = format!("{}.{}", server.name, run.trigger);
        let offset = ladder_offset_ms(profile);
        let mut o = observation(&name, run, &scenario, offset, about.clone());
        o.note = Some(note(&about, spec.name, crate::rules::note(&o, &scenario)));
        let checks = harness
            .catalogue()
            .judge(&o, &scenario, &budgets, harness.revision_of());
        let mut info = crate::harness::server_info(server);
        info.description = format!(
            "{} under the real {} {}, quit by {}",
            info.description, spec.name, version, run.trigger
        );
        out.servers.insert(name, info);
        out.scenarios.push(id);
        out.results.push(JudgedCase {
            observation: o,
            budgets: Some(budgets),
            ladder: Some(scenario.ladder()),
            checks: keep_judged(checks, run, about.untimed.as_deref()),
            repeat: None,
            not_testable: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Budgets;

    #[test]
    fn a_child_first_seen_before_its_exec_is_still_a_leftover_after_it() {
        // Its subshell has the parent's command line until it execs `sleep 30`.
        let mut parent = std::process::Command::new("sh")
            .args(["-c", "(sleep 0.3; exec sleep 30) & wait"])
            .spawn()
            .unwrap();
        let pid = parent.id() as i32;
        let mut tree = Tree::default();
        while tree.0.is_empty() {
            tree.read(pid);
        }
        let child = *tree.0.keys().next().unwrap();
        let exec_d =
            || crate::os::procfs::proc_info(child).is_some_and(|p| p.cmdline == "sleep 30");
        let end = Instant::now() + Duration::from_secs(20);
        while !exec_d() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Not read again: the same process by its start time, whatever its command line.
        let left = tree.still_running(pid, "sh");
        for l in &left {
            crate::os::signals::signal_pid(l.pid, crate::model::SignalName::Kill);
        }
        let _ = parent.wait();
        assert_eq!(
            left.iter().map(|l| l.cmdline.as_str()).collect::<Vec<_>>(),
            ["sleep 30"],
            "{left:?}"
        );
    }

    fn scenario(id: &str) -> Scenario {
        let id: ScenarioId = format!("close:{id}").parse().unwrap();
        build_with(
            &id,
            &Budgets::default(),
            &Profiles::bundled(),
            &PlumbingOverride::default(),
        )
        .unwrap()
    }

    fn about(untimed: bool) -> RealHostRun {
        RealHostRun {
            host: "qwen-code".into(),
            package: "@qwen-code/qwen-code".into(),
            version: "0.24.4".into(),
            trigger: "quit-command".into(),
            ladder_measured_on: "0.24.4".into(),
            untimed: untimed.then(|| "a one-shot command".into()),
            signals: Vec::new(),
        }
    }

    fn run(exit_ms: Option<f64>, left_running: bool) -> RealRun {
        RealRun {
            trigger: "quit-command".into(),
            one_shot: false,
            exit_ms,
            exited: exit_ms.is_some(),
            left_running,
            leftovers: Vec::new(),
            signals: Vec::new(),
            killed_by: None,
            untraced: None,
            failure: None,
            wall_ms: 1.0,
            load_avg: None,
        }
    }

    fn sig(signal: SignalName, at_ms: f64) -> HostSignal {
        HostSignal {
            signal,
            at_ms,
            from_pid: 7,
            from: Sender::Host,
        }
    }

    #[test]
    fn the_stage_is_the_last_step_whose_signal_the_server_was_seen_to_receive() {
        // Claude Code: SIGINT, ~100 ms, SIGTERM, ~400 ms, SIGKILL, all to the pid.
        let s = scenario("claude-code");
        let mut r = run(Some(900.0), false);
        // A host slow to act under load: its SIGINT 850 ms after the quit, the exit at once.
        // By time alone that would be past the SIGTERM; it is the SIGINT that ended it.
        r.signals = vec![sig(SignalName::Int, 850.0)];
        // Re-raised by the server itself: no step of the host's.
        r.signals.push(HostSignal {
            from: Sender::Server,
            ..sig(SignalName::Term, 851.0)
        });
        let o = observation("srv", &r, &s, 0.0, about(false));
        assert_eq!(o.stage, Some(Stage::Sigint));
        assert_eq!(o.steps.len(), 1);
        assert_eq!(o.steps[0].at_ms, 850.0);
        r.signals = vec![sig(SignalName::Int, 850.0), sig(SignalName::Term, 880.0)];
        let o = observation("srv", &r, &s, 0.0, about(false));
        assert_eq!(o.stage, Some(Stage::Sigterm));
        // Killed: the SIGKILL is seen as its end.
        r.killed_by = Some(SignalName::Kill);
        let o = observation("srv", &r, &s, 0.0, about(false));
        assert_eq!(o.stage, Some(Stage::Sigkill));
        assert_eq!(o.steps.len(), 3);
        // A signal after the exit, or one the ladder lacks, places nothing.
        r.killed_by = None;
        r.signals = vec![
            sig(SignalName::Other(17), 10.0),
            sig(SignalName::Term, 950.0),
        ];
        let o = observation("srv", &r, &s, 0.0, about(false));
        assert_eq!(o.stage, Some(Stage::Sigint));
        let o = observation("srv", &run(None, true), &s, 0.0, about(false));
        assert_eq!(o.stage, Some(Stage::Survived));
        assert!(o.real_host.is_some());
    }

    #[test]
    fn a_step_that_cannot_be_seen_is_placed_by_its_measured_wait_after_the_last_seen() {
        // Qwen Code: stdin closed, ~2 s, SIGTERM, then its pipes close.
        let s = scenario("qwen-code");
        let o = observation("srv", &run(Some(40.0), false), &s, 0.0, about(false));
        assert_eq!(o.stage, Some(Stage::Eof));
        let mut r = run(Some(2860.0), false);
        r.signals = vec![sig(SignalName::Term, 2850.0)];
        let o = observation("srv", &r, &s, 111.0, about(false));
        assert_eq!(o.stage, Some(Stage::Sigterm));
        assert_eq!(o.steps.len(), 2);
        assert_eq!(o.steps[0].at_ms, 111.0);
        // No SIGTERM seen: it ended at its closed stdin however late (the host's SIGTERM
        // never reached it).
        let o = observation("srv", &run(Some(5000.0), false), &s, 111.0, about(false));
        assert_eq!(o.stage, Some(Stage::Eof));
        // Its ladder begins ~111 ms after the quit (measured).
        let qwen = Profiles::bundled();
        let offset = ladder_offset_ms(
            qwen.get(&"qwen-code".to_string().try_into().unwrap())
                .unwrap(),
        );
        assert_eq!(offset, 111.0);
    }

    #[test]
    fn signals_that_could_not_be_traced_leave_the_end_unplaced() {
        let profiles = Profiles::bundled();
        let mut r = run(Some(40.0), false);
        r.untraced = Some("ptrace: Operation not permitted".into());
        let why = untimed(
            &r,
            profiles
                .get(&"qwen-code".to_string().try_into().unwrap())
                .unwrap(),
        );
        assert!(why.is_some_and(|w| w.contains("could not be traced")));
    }

    #[test]
    fn one_shot_commands_and_ladders_that_did_not_reproduce_are_not_timed() {
        let profiles = Profiles::bundled();
        let get = |id: &str| profiles.get(&id.to_string().try_into().unwrap()).unwrap();
        let mut r = run(Some(40.0), false);
        assert_eq!(untimed(&r, get("qwen-code")), None);
        assert!(
            untimed(&r, get("opencode")).is_some(),
            "opencode's did not reproduce"
        );
        // Copilot CLI's ladder reproduces but for how long it took to begin, and it begins
        // with a signal the trace sees: it is placed.
        assert_eq!(untimed(&r, get("copilot-cli")), None);
        r.one_shot = true;
        assert!(untimed(&r, get("qwen-code")).is_some());
    }

    #[test]
    fn a_host_that_never_started_the_server_is_not_the_servers_failure() {
        let mut r = run(None, false);
        r.failure = Some(Failure::NoServer("screen \"Log in\"".into()));
        let o = observation("srv", &r, &scenario("qwen-code"), 0.0, about(false));
        assert!(!o.error.unwrap().kind.owner().is_scored());
        r.failure = Some(Failure::ExitedBeforeQuit);
        let o = observation("srv", &r, &scenario("qwen-code"), 0.0, about(false));
        assert!(o.error.unwrap().kind.owner().is_scored());
    }

    #[test]
    fn an_untimed_end_is_judged_on_leftovers_only_and_unseen_rules_are_dropped() {
        let s = scenario("qwen-code");
        let mut r = run(None, false);
        r.one_shot = true;
        r.exited = true;
        let o = observation("srv", &r, &s, 0.0, about(true));
        let checks = Catalogue::bundled().judge(
            &o,
            &s,
            &Budgets::default(),
            Catalogue::bundled().default_revision,
        );
        let kept = keep_judged(checks, &r, Some("a one-shot command"));
        assert!(
            kept.iter()
                .all(|c| Catalogue::bundled().rule(c.id).under_real_host),
            "{kept:?}"
        );
        assert!(!kept.iter().any(|c| c.id == RuleId::StdioStdoutOnlyMcp));
        for c in &kept {
            let want = if c.id == RuleId::ProcessNoLeakedDescendants {
                Status::Success
            } else {
                Status::Skipped
            };
            assert_eq!(c.status, want, "{c:?}");
        }
    }
}
