//! Test helpers: a small report built by hand (checks included, so it does not move when
//! the judge does) — a timer-like server (close → SIGTERM after 2004 ms, crash → survived
//! with a leftover), a fixed one (EOF), and one that never answered the handshake — and an
//! XML well-formedness check by a real parser.

use crate::config::profiles::Profiles;
use crate::config::scenarios;
use crate::model::*;
use crate::rules::Catalogue;

pub const SPEC: &str = "2026-07-28";

fn rev(spec: &str) -> Revision {
    spec.parse().expect("a revision")
}

pub fn check(id: RuleId, outcome: Outcome, message: &str, spec: &str) -> Check {
    let rule = Catalogue::bundled().rule(id).clone();
    let level = rule.level(rev(spec));
    Check {
        id,
        status: Status::of(outcome, level),
        level,
        outcome,
        message: message.into(),
        spec_references: rule
            .references_for(rev(spec))
            .map(|x| SpecReference {
                revision: rev(spec),
                url: x.url_for(rev(spec)),
            })
            .collect(),
    }
}

fn case(
    server: &str,
    scenario: &str,
    stage: Option<Stage>,
    exit_ms: Option<f64>,
    exit_status: Option<ExitStatus>,
) -> JudgedCase {
    let id: ScenarioId = scenario.parse().expect("a scenario");
    let plan = scenarios::build(&id, &Budgets::default(), &Profiles::bundled()).expect("built");
    let mut o = Observation::empty(server, &id);
    o.stage = stage;
    o.exit_ms = exit_ms;
    o.exit_status = exit_status;
    o.stdout = StdoutRecord {
        bytes: 210,
        lines: 2,
        messages: 2,
        ..StdoutRecord::default()
    };
    JudgedCase {
        observation: o,
        budgets: None,
        ladder: Some(plan.ladder()),
        checks: Vec::new(),
        repeat: None,
        not_testable: None,
    }
}

/// One case as the harness would judge it, from its stage and latency alone.
pub fn result(server: &str, scenario: &str, stage: Stage, exit_ms: f64) -> JudgedCase {
    let mut r = case(server, scenario, Some(stage), Some(exit_ms), None);
    let id = &r.observation.scenario;
    let plan = scenarios::build(id, &Budgets::default(), &Profiles::bundled()).expect("built");
    r.checks = Catalogue::bundled().judge(&r.observation, &plan, &Budgets::default(), rev(SPEC));
    r
}

/// SIGTERM at 15 s after a grace the wall-clock backstop ended at 0.3 s of the server's own
/// time (14.7 s waiting for a CPU), exit 1 s later: an escalation the machine's load decided.
pub fn machine_bound(server: &str) -> JudgedCase {
    let mut r = result(server, "close", Stage::Sigterm, 16_000.0);
    r.observation.runqueue_ms = Some(15_530.0);
    r.observation.steps = steps(&r, 2);
    for (rec, (at, own, queued)) in r
        .observation
        .steps
        .iter_mut()
        .zip([(0.0, 300.0, 14_700.0), (15_000.0, 170.0, 830.0)])
    {
        rec.at_ms = at;
        rec.own_ms = Some(own);
        rec.runqueue_ms = Some(queued);
    }
    let id = &r.observation.scenario;
    let plan = scenarios::build(id, &Budgets::default(), &Profiles::bundled()).expect("built");
    r.observation.machine_bound = crate::rules::machine_bound(&r.observation, &plan);
    assert!(r.observation.machine_bound.is_some(), "machine-bound");
    r.checks = Catalogue::bundled().judge(&r.observation, &plan, &Budgets::default(), rev(SPEC));
    r
}

/// The first `upto` planned steps of a case, as if recorded at their planned times.
fn steps(r: &JudgedCase, upto: usize) -> Vec<StepRecord> {
    let mut at = 0.0;
    r.ladder
        .iter()
        .flat_map(|l| &l.steps)
        .take(upto)
        .map(|st| {
            let rec = StepRecord::new(st.action, at);
            at += st.wait_ms as f64;
            rec
        })
        .collect()
}

/// The stdout check every well-behaved case has.
fn ok_stdout(spec: &str) -> Check {
    check(
        RuleId::StdioStdoutOnlyMcp,
        Outcome::Pass,
        "2 message(s), all valid JSON-RPC",
        spec,
    )
}

pub fn results(spec: &str) -> Vec<JudgedCase> {
    vec![
        timer_close(spec),
        timer_crash(spec),
        fixed_close(spec),
        fixed_crash(spec),
        mute(spec),
    ]
}

fn timer_close(spec: &str) -> JudgedCase {
    use Outcome::*;
    let mut timer_close = case(
        "timer",
        "close",
        Some(Stage::Sigterm),
        Some(2004.0),
        Some(ExitStatus::Signal(SignalName::Term)),
    );
    timer_close.steps = steps(&timer_close, 2);
    timer_close.steps[1].at_ms = 2000.4;
    timer_close.stderr_tail = "server running on stdio\n".into();
    timer_close.checks = vec![
        check(
            RuleId::StdioExitOnEof,
            Fail,
            "did not exit within 1000 ms of stdin closing: SIGTERM ended it, 2004 ms after the session was ended",
            spec,
        ),
        check(RuleId::StdioNoForcedKill, Pass, "ended before SIGKILL (sigterm)", spec),
        ok_stdout(spec),
    ];
    timer_close
}

fn timer_crash(spec: &str) -> JudgedCase {
    use Outcome::*;
    let mut timer_crash = case("timer", "crash", Some(Stage::Survived), None, None);
    timer_crash.steps = steps(&timer_crash, 1);
    timer_crash.leftovers = vec![Leftover {
        pid: 4242,
        cmdline: "node timer.js".into(),
        started_by: Some(4200),
        started_by_cmdline: Some("node client.js".into()),
    }];
    timer_crash.diagnostics = Some(Diagnostics {
        pid: 4242,
        state: None,
        runtime: Some(Runtime::Node),
        threads: 7,
        thread_names: vec!["node (x7)".into()],
        fds: [("pipe".to_string(), 3), ("timerfd".to_string(), 1)]
            .into_iter()
            .collect(),
        children: Vec::new(),
        hint: crate::rules::explain::eof_hint(Some(Runtime::Node)).into(),
    });
    timer_crash.checks = vec![
        check(
            RuleId::StdioExitOnClientDeath,
            Fail,
            "orphaned: still running 2000 ms after its client died (reparented away from its client; the harness killed it)",
            spec,
        ),
        check(
            RuleId::ProcessNoLeakedDescendants,
            NotApplicable,
            "the server itself never exited; see the exit rules",
            spec,
        ),
        ok_stdout(spec),
    ];
    timer_crash
}

fn fixed_close(spec: &str) -> JudgedCase {
    use Outcome::*;
    let mut fixed_close = case(
        "fixed",
        "close",
        Some(Stage::Eof),
        Some(12.0),
        Some(ExitStatus::Code(0)),
    );
    fixed_close.steps = steps(&fixed_close, 1);
    fixed_close.checks = vec![
        check(
            RuleId::StdioExitOnEof,
            Pass,
            "exited 12 ms after stdin closed",
            spec,
        ),
        check(
            RuleId::StdioNoForcedKill,
            Pass,
            "ended before SIGKILL (eof)",
            spec,
        ),
        ok_stdout(spec),
    ];
    fixed_close
}

fn fixed_crash(spec: &str) -> JudgedCase {
    use Outcome::*;
    let mut fixed_crash = case(
        "fixed",
        "crash",
        Some(Stage::Eof),
        Some(15.0),
        Some(ExitStatus::Code(0)),
    );
    fixed_crash.steps = steps(&fixed_crash, 1);
    fixed_crash.checks = vec![
        check(
            RuleId::StdioExitOnClientDeath,
            Pass,
            "exited 15 ms after its client died",
            spec,
        ),
        check(
            RuleId::ProcessNoLeakedDescendants,
            Pass,
            "nothing it started outlived it",
            spec,
        ),
        ok_stdout(spec),
    ];
    fixed_crash
}

fn mute(spec: &str) -> JudgedCase {
    use Outcome::*;
    let why = "no answer to `initialize` within 10000 ms";
    let mut mute = case("mute", "close", None, None, None);
    mute.error = Some(CaseError {
        kind: ErrorKind::HandshakeTimeout,
        message: why.into(),
    });
    mute.stdout = StdoutRecord::default();
    let nt = format!("Not testable: {why} (handshake-timeout)");
    mute.checks = [
        RuleId::StdioExitOnEof,
        RuleId::StdioNoForcedKill,
        RuleId::StdioStdoutOnlyMcp,
    ]
    .iter()
    .map(|id| check(*id, NotTestable, &nt, spec))
    .collect();
    mute
}

/// A report of `results`, scored against `spec`, carrying the catalogue's wording.
pub fn report_for(spec: &str, results: Vec<JudgedCase>) -> Report {
    let mut r = report_of(results);
    r.spec = rev(spec);
    r.rules = Catalogue::bundled().infos(RuleId::ALL.iter().copied(), r.spec);
    crate::rules::fixes::Fixes::bundled().attach(&mut r);
    r
}

/// A bare report of `results` (no rule wording), as a unit test needs one: the library's
/// own, with a fixed tool version and host so snapshots do not follow the machine.
pub fn report_of(results: Vec<JudgedCase>) -> Report {
    let mut r = crate::internals::report_of(results);
    r.tool = Tool {
        name: "mcp-shutdown-conformance".into(),
        version: "0.1.0".into(),
    };
    r.spec = rev(SPEC);
    r.host = Host {
        os: "linux".into(),
        kernel: "6.8.0".into(),
        cpus: 4,
        containment: None,
        suite_source: None,
        suite_path: None,
    };
    r
}

pub fn report() -> Report {
    report_for(SPEC, results(SPEC))
}

/// Parses `xml` with a real XML parser; returns the root element's name.
pub fn well_formed(xml: &str) -> Result<String, String> {
    roxmltree::Document::parse(xml)
        .map(|d| d.root_element().tag_name().name().to_string())
        .map_err(|e| e.to_string())
}

/// The same report with markup-hostile names and messages.
pub fn hostile() -> Report {
    let mut rep = report();
    for r in &mut rep.results {
        if r.server == "timer" {
            r.server = "t<i>m&r \"x\" 'y'".into();
        }
        for c in &mut r.checks {
            c.message = format!("{} <b>&amp;</b> \u{1b}[31m]]>", c.message);
        }
        r.stderr_tail = "<script>alert(1)</script> & \u{0}".into();
    }
    rep
}

/// The part of a doc between `<!-- {name}:begin -->` and `<!-- {name}:end -->` is `want`, or,
/// with `MCP_SHUTDOWN_UPDATE_BOOK` set, is written so; otherwise the test fails saying how to
/// write it. For tables the catalogues generate (as insta does for snapshots).
pub fn generated_block(doc: &str, name: &str, want: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let Some(std::ops::Range { start: a, end: b }) = crate::render::book::block(&text, name) else {
        panic!("{doc}: no `<!-- {name}:begin -->` … `<!-- {name}:end -->` lines");
    };
    if text[a..b] == *want {
        return;
    }
    if std::env::var_os("MCP_SHUTDOWN_UPDATE_BOOK").is_some() {
        let new = crate::render::book::splice(&text, name, want).expect("its markers");
        std::fs::write(&path, new).unwrap_or_else(|e| panic!("{doc}: {e}"));
        return;
    }
    let first = text[a..b].lines().zip(want.lines()).find(|(h, w)| h != w);
    panic!(
        "{doc}: the `{name}` table is not the catalogue's (first difference: {first:?}): \
         write it again with `MCP_SHUTDOWN_UPDATE_BOOK=1 cargo test --lib`"
    );
}

/// A `sigterm` case where SIGTERM reached `npm exec` alone, which exited 8 ms later and
/// left the server behind it running, judged as it was before the harness signalled the
/// server itself; `title` is how that report recorded the launcher.
pub fn left_by_npx(title: bool) -> JudgedCase {
    let id: ScenarioId = "sigterm".parse().unwrap();
    let plan = scenarios::build(&id, &Budgets::default(), &Profiles::bundled()).unwrap();
    let mut o = Observation::empty("s", &id);
    o.stage = Some(Stage::Sigterm);
    o.exit_ms = Some(8.0);
    o.steps = vec![StepRecord::new(plan.steps[0].action, 0.0)];
    let node = "node /cache/_npx/1/node_modules/.bin/s";
    o.server_process = Some(if title {
        // Recorded before a scoped package's title was known as npx's.
        ServerProcess {
            pid: 10,
            cmdline: "npm exec @scope/s@1.0.0".into(),
            ..ServerProcess::default()
        }
    } else {
        ServerProcess {
            pid: 12,
            cmdline: node.into(),
            launchers: vec!["npm exec".into(), "sh -c".into()],
            ..ServerProcess::default()
        }
    });
    o.leftovers = vec![Leftover {
        pid: 12,
        cmdline: node.into(),
        started_by: Some(11),
        started_by_cmdline: Some("sh -c s".into()),
    }];
    let checks = Catalogue::bundled().judge(&o, &plan, &Budgets::default(), rev(SPEC));
    JudgedCase {
        observation: o,
        budgets: None,
        ladder: Some(plan.ladder()),
        checks,
        repeat: None,
        not_testable: None,
    }
}
