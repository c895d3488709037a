//! Reports people read and publish: pure renderers from a [`Report`] (the JSON report is the
//! source every format derives from). Nothing here runs a process or reads a clock, so the same
//! report always renders to the same bytes.
//!
//! - [`junit`]: JUnit XML for CI test tabs, one testcase per server × scenario × rule.
//! - [`markdown`]: a summary for a PR comment or a GitHub job summary.
//! - [`html`]: one self-contained page with a timeline of each case's stop ladder.
//! - [`badge`]: per-server badges (shields.io endpoint JSON and a static SVG).
//! - [`merge`]: joins the reports of sharded runs into one.

use std::collections::BTreeMap;

use crate::budgets::Budgets;
use crate::observation::CaseResult;
use crate::report::Report;
use crate::rules::{Catalogue, Rule};
use crate::scenario::SCENARIOS;

pub mod badge;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod merge;

/// The formats a whole report renders to (badges are per server: see [`badge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The terminal matrix.
    Text,
    /// The JSON report (schema_version 1).
    Json,
    /// JUnit XML.
    Junit,
    /// A Markdown summary.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

impl Format {
    /// The usual file extension of the format.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Json => "json",
            Format::Junit => "xml",
            Format::Markdown => "md",
            Format::Html => "html",
        }
    }
}

/// Renders a whole report in one format.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => crate::report::render_text(report),
        Format::Json => report.to_json(),
        Format::Junit => junit::render(report),
        Format::Markdown => markdown::render(report),
        Format::Html => html::render(report),
    }
}

/// Escapes text for XML and HTML content and attribute values (both quote styles). Characters
/// XML 1.0 cannot carry at all (most C0 controls, e.g. the ESC of terminal colours) are
/// written as visible `\xNN` escapes instead.
pub fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes an attribute value: [`escape_xml`], and line breaks and tabs as character
/// references so that parsers do not fold them into spaces.
pub fn escape_attr(s: &str) -> String {
    escape_xml(s)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// Servers in report order, and scenarios in the suite's order (`close`, `exit`, `crash`; a
/// variant like `close:java` after its base; unknown ones last, in report order).
pub(crate) fn axes(report: &Report) -> (Vec<&str>, Vec<&str>) {
    let mut servers: Vec<&str> = Vec::new();
    let mut scenarios: Vec<&str> = Vec::new();
    for r in &report.results {
        if !servers.contains(&r.server.as_str()) {
            servers.push(&r.server);
        }
        if !scenarios.contains(&r.scenario.as_str()) {
            scenarios.push(&r.scenario);
        }
    }
    let rank = |s: &str| {
        let base = s.split(':').next().unwrap_or(s);
        (
            SCENARIOS
                .iter()
                .position(|x| *x == base)
                .unwrap_or(SCENARIOS.len()),
            s != base,
        )
    };
    // A stable sort keeps report order among equals.
    scenarios.sort_by_key(|s| rank(s));
    (servers, scenarios)
}

/// The results indexed by (server, scenario); the first wins if a pair repeats.
pub(crate) fn cells(report: &Report) -> BTreeMap<(&str, &str), &CaseResult> {
    let mut m = BTreeMap::new();
    for r in &report.results {
        m.entry((r.server.as_str(), r.scenario.as_str()))
            .or_insert(r);
    }
    m
}

pub(crate) use crate::report::verdict;

/// Milliseconds as shown to people: whole numbers.
pub(crate) fn ms(v: f64) -> String {
    format!("{v:.0} ms")
}

/// The value of a budget named in the catalogue (`prompt_ms`, ...).
pub(crate) fn budget_value(b: &Budgets, name: &str) -> Option<u64> {
    match name {
        "prompt_ms" => Some(b.prompt_ms),
        "grace_ms" => Some(b.grace_ms),
        "observe_ms" => Some(b.observe_ms),
        "handshake_ms" => Some(b.handshake_ms),
        _ => None,
    }
}

/// A rule of the catalogue, and its references for a revision: (quote, URL resolved).
pub(crate) fn rule_references<'c>(
    catalogue: &'c Catalogue,
    id: &str,
    revision: &str,
) -> Option<(&'c Rule, Vec<(&'c str, String)>)> {
    let rule = catalogue.rules.iter().find(|r| r.id == id)?;
    let references = rule
        .references
        .iter()
        .filter(|x| x.revisions.iter().any(|v| v == revision))
        .map(|x| (x.quote.as_str(), x.url.replace("{revision}", revision)))
        .collect();
    Some((rule, references))
}

/// What held a server that should have exited, in one line (from its `/proc` diagnostics).
pub(crate) fn held_by(r: &CaseResult) -> Option<String> {
    let d = r.diagnostics.as_ref()?;
    let mut parts = vec![format!("pid {}", d.pid)];
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

/// How the case ended, in a few words: stage, latency and exit status, or why it did not run.
pub(crate) fn actual(r: &CaseResult) -> String {
    if let Some(e) = &r.error {
        return format!("could not run: {} ({})", e.message, e.kind);
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
    parts.join(", ")
}

#[cfg(test)]
pub(crate) mod fixture {
    //! A small report built by hand (checks included, so it does not move when the judge
    //! does): a timer-like server (close → SIGTERM after 2004 ms, crash → survived with a
    //! leftover), a fixed one (EOF), and one that never answered the handshake.

    use crate::budgets::Budgets;
    use crate::mcp::StdoutRecord;
    use crate::observation::{CaseResult, ErrorKind, Leftover, StepRecord};
    use crate::process::{ExitStatus, SignalName};
    use crate::report::{summarize, Host, Report, Tool, SCHEMA_VERSION};
    use crate::rules::{status, Catalogue, Check, Level, Outcome, SpecReference};
    use crate::scenario::{Scenario, Stage};

    pub const SPEC: &str = "2026-07-28";

    fn level(id: &str, spec: &str) -> Level {
        match id {
            "stdio-exit-on-eof" | "stdio-exit-on-client-death" if spec < "2026-07-28" => {
                Level::Info
            }
            "stdio-stdout-only-mcp" => Level::Must,
            _ => Level::Should,
        }
    }

    pub fn check(id: &str, outcome: Outcome, message: &str, spec: &str) -> Check {
        let level = level(id, spec);
        let spec_references = Catalogue::bundled()
            .rules
            .iter()
            .filter(|r| r.id == id)
            .flat_map(|r| &r.references)
            .filter(|x| x.revisions.iter().any(|v| v == spec))
            .map(|x| SpecReference {
                revision: spec.into(),
                url: x.url.replace("{revision}", spec),
            })
            .collect();
        Check {
            id: id.into(),
            status: status(outcome, level),
            level,
            outcome,
            message: message.into(),
            spec_references,
        }
    }

    fn case(
        server: &str,
        scenario: &str,
        stage: Option<Stage>,
        exit_ms: Option<f64>,
        exit_status: Option<ExitStatus>,
    ) -> CaseResult {
        let mut r = CaseResult::failed(server, scenario, ErrorKind::Harness, String::new());
        r.error = None;
        r.stage = stage;
        r.exit_ms = exit_ms;
        r.exit_status = exit_status;
        r.stdout = StdoutRecord {
            bytes: 210,
            lines: 2,
            messages: 2,
            ..StdoutRecord::default()
        };
        r
    }

    fn steps(scenario: &str, upto: usize) -> Vec<StepRecord> {
        let s = Scenario::from_id(scenario, &Budgets::default()).unwrap();
        let mut at = 0.0;
        s.steps
            .iter()
            .take(upto)
            .map(|st| {
                let rec = StepRecord {
                    action: st.action,
                    at_ms: at,
                };
                at += st.wait_ms as f64;
                rec
            })
            .collect()
    }

    pub fn results(spec: &str) -> Vec<CaseResult> {
        use Outcome::*;
        let ok_stdout = || {
            check(
                "stdio-stdout-only-mcp",
                Pass,
                "2 message(s), all valid JSON-RPC",
                spec,
            )
        };

        let mut timer_close = case(
            "timer",
            "close",
            Some(Stage::Sigterm),
            Some(2004.0),
            Some(ExitStatus::Signal(SignalName::Term)),
        );
        timer_close.steps = steps("close", 2);
        timer_close.steps[1].at_ms = 2000.4;
        timer_close.stderr_tail = "server running on stdio\n".into();
        timer_close.checks = vec![
            check(
                "stdio-exit-on-eof",
                Fail,
                "did not exit within 1000 ms of stdin closing: SIGTERM ended it, 2004 ms after the session was ended",
                spec,
            ),
            check("stdio-no-forced-kill", Pass, "ended before SIGKILL (sigterm)", spec),
            ok_stdout(),
        ];

        let mut timer_crash = case("timer", "crash", Some(Stage::Survived), None, None);
        timer_crash.steps = steps("crash", 1);
        timer_crash.leftovers = vec![Leftover {
            pid: 4242,
            cmdline: "node timer.js".into(),
            started_by: Some(4200),
            started_by_cmdline: Some("node client.js".into()),
        }];
        timer_crash.diagnostics = Some(crate::process::Diagnostics {
            pid: 4242,
            runtime: Some("node".into()),
            threads: 7,
            thread_names: vec!["node (x7)".into()],
            fds: [("pipe".to_string(), 3), ("timerfd".to_string(), 1)]
                .into_iter()
                .collect(),
            children: Vec::new(),
            hint: crate::process::hint_for(Some("node")).into(),
        });
        timer_crash.checks = vec![
            check(
                "stdio-exit-on-client-death",
                Fail,
                "orphaned: still running 2000 ms after its client died (reparented away from its client; the harness killed it)",
                spec,
            ),
            check("process-no-leaked-descendants", NotApplicable, "the server itself never exited; see the exit rules", spec),
            ok_stdout(),
        ];

        let mut fixed_close = case(
            "fixed",
            "close",
            Some(Stage::Eof),
            Some(12.0),
            Some(ExitStatus::Code(0)),
        );
        fixed_close.steps = steps("close", 1);
        fixed_close.checks = vec![
            check(
                "stdio-exit-on-eof",
                Pass,
                "exited 12 ms after stdin closed",
                spec,
            ),
            check(
                "stdio-no-forced-kill",
                Pass,
                "ended before SIGKILL (eof)",
                spec,
            ),
            ok_stdout(),
        ];

        let mut fixed_crash = case(
            "fixed",
            "crash",
            Some(Stage::Eof),
            Some(15.0),
            Some(ExitStatus::Code(0)),
        );
        fixed_crash.steps = steps("crash", 1);
        fixed_crash.checks = vec![
            check(
                "stdio-exit-on-client-death",
                Pass,
                "exited 15 ms after its client died",
                spec,
            ),
            check(
                "process-no-leaked-descendants",
                Pass,
                "nothing it started outlived it",
                spec,
            ),
            ok_stdout(),
        ];

        let why = "no answer to `initialize` within 10000 ms";
        let mut mute = CaseResult::failed("mute", "close", ErrorKind::HandshakeTimeout, why.into());
        let nt = format!("Not testable: {why} (handshake-timeout)");
        mute.checks = [
            "stdio-exit-on-eof",
            "stdio-no-forced-kill",
            "stdio-stdout-only-mcp",
        ]
        .iter()
        .map(|id| check(id, NotTestable, &nt, spec))
        .collect();

        vec![timer_close, timer_crash, fixed_close, fixed_crash, mute]
    }

    pub fn report_for(spec: &str, results: Vec<CaseResult>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "mcp-shutdown-conformance".into(),
                version: "0.1.0".into(),
            },
            spec: spec.into(),
            budgets: Budgets::default(),
            host: Host {
                os: "linux".into(),
                kernel: "6.8.0".into(),
                cpus: 4,
            },
            servers: Default::default(),
            summary: summarize(&results),
            results,
        }
    }

    pub fn report() -> Report {
        report_for(SPEC, results(SPEC))
    }

    /// A minimal XML well-formedness check: balanced tags, quoted attributes, no raw `<` or
    /// stray `&` in text or attribute values. Returns the root element's name.
    pub fn well_formed(xml: &str) -> Result<String, String> {
        let mut stack: Vec<String> = Vec::new();
        let mut root = None;
        let mut rest = xml
            .strip_prefix("<?xml")
            .map_or(xml, |r| &r[r.find("?>").expect("declaration ends") + 2..]);
        let entity_ok = |text: &str| -> Result<(), String> {
            for (i, _) in text.match_indices('&') {
                let t = &text[i..];
                let ok = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#"]
                    .iter()
                    .any(|e| t.starts_with(e));
                if !ok
                    || !t[..t.find(';').ok_or("entity without ;")?]
                        .chars()
                        .skip(1)
                        .all(|c| c.is_ascii_alphanumeric() || c == '#')
                {
                    return Err(format!("stray & in {text:?}"));
                }
            }
            Ok(())
        };
        while let Some(lt) = rest.find('<') {
            entity_ok(&rest[..lt])?;
            if stack.is_empty() && !rest[..lt].trim().is_empty() {
                return Err(format!("text outside the root: {:?}", &rest[..lt]));
            }
            rest = &rest[lt + 1..];
            let mut end = None;
            let mut quote = None;
            for (i, c) in rest.char_indices() {
                match (quote, c) {
                    (None, '"' | '\'') => quote = Some(c),
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), '<') => return Err("raw < in an attribute".into()),
                    (None, '<') => return Err("raw < in a tag".into()),
                    (None, '>') => {
                        end = Some(i);
                        break;
                    }
                    _ => {}
                }
            }
            let end = end.ok_or("unterminated tag")?;
            let tag = &rest[..end];
            entity_ok(tag)?;
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack.pop().ok_or(format!("close without open: {name}"))?;
                if open != name.trim() {
                    return Err(format!("<{open}> closed by </{name}>"));
                }
            } else {
                let name: String = tag
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '/')
                    .collect();
                if name.is_empty() || name.starts_with('!') || name.starts_with('?') {
                    return Err(format!("unexpected markup <{tag}>"));
                }
                if stack.is_empty() {
                    if root.is_some() {
                        return Err("two roots".into());
                    }
                    root = Some(name.clone());
                }
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
        }
        entity_ok(rest)?;
        if !stack.is_empty() {
            return Err(format!("unclosed: {stack:?}"));
        }
        root.ok_or_else(|| "no root".into())
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Status;

    #[test]
    fn escapes_markup_and_controls() {
        assert_eq!(
            escape_xml("a<b>&\"c\"'d'"),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;"
        );
        assert_eq!(escape_xml("x\u{1b}[0m\ty\n"), "x\\x1b[0m\ty\n");
    }

    #[test]
    fn scenarios_follow_the_suite_order() {
        let mut rep = fixture::report();
        rep.results.reverse();
        let (servers, scenarios) = axes(&rep);
        assert_eq!(servers, ["mute", "fixed", "timer"]);
        assert_eq!(scenarios, ["close", "crash"]);
    }

    #[test]
    fn every_format_renders() {
        let rep = fixture::report();
        for f in [
            Format::Text,
            Format::Json,
            Format::Junit,
            Format::Markdown,
            Format::Html,
        ] {
            let out = render(&rep, f);
            assert!(out.contains("timer"), "{f:?}");
            assert_eq!(out, render(&rep, f), "{f:?} is deterministic");
        }
        assert_eq!(render(&rep, Format::Json), rep.to_json());
    }

    #[test]
    fn verdicts_and_actuals() {
        let rep = fixture::report();
        let v: Vec<Status> = rep.results.iter().map(verdict).collect();
        assert_eq!(
            v,
            [
                Status::Warning,
                Status::Warning,
                Status::Success,
                Status::Success,
                Status::Failure
            ]
        );
        assert_eq!(
            actual(&rep.results[0]),
            "stage sigterm, exited 2004 ms after the trigger, killed by SIGTERM"
        );
        assert!(actual(&rep.results[4]).starts_with("could not run: no answer"));
    }

    /// The same cases judged by the current catalogue (whatever rules it has by now) render
    /// to well-formed output with one timeline per result.
    #[test]
    fn judged_reports_render() {
        let budgets = crate::budgets::Budgets::default();
        let catalogue = Catalogue::bundled();
        let mut rep = fixture::report();
        for r in &mut rep.results {
            let s = crate::scenario::Scenario::from_id(&r.scenario, &budgets).unwrap();
            r.checks = catalogue.judge(r, &s, &budgets, &rep.spec);
        }
        rep.summary = crate::report::summarize(&rep.results);
        fixture::well_formed(&render(&rep, Format::Junit)).unwrap();
        let html = render(&rep, Format::Html);
        assert_eq!(html.matches("<svg").count(), rep.results.len());
        let md = render(&rep, Format::Markdown);
        assert!(md.contains("| timer |"));
        for b in badge::badges(&rep) {
            fixture::well_formed(&b.svg()).unwrap();
        }
    }
}
