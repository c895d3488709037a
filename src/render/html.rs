//! One self-contained HTML page: inline CSS, no scripts, no fonts or images to fetch. The
//! only URLs are the links to the spec text that checks cite. It shows the counts, the
//! servers × scenarios matrix, then each case: its checks, an inline SVG timeline of the stop
//! ladder (steps, budget windows, when the server exited or that it was still running), what
//! was left behind, and the end of its stderr.

use std::fmt::Write as _;

use super::{
    actual, axes, cells, escape_attr, escape_xml as esc, held_by, ms, rule_references, verdict,
};
use crate::budgets::Budgets;
use crate::observation::CaseResult;
use crate::report::Report;
use crate::rules::{Catalogue, Status};
use crate::scenario::Scenario;

const CSS: &str = "
:root { color-scheme: light; --ok: #1a7f37; --warn: #9a6700; --fail: #cf222e; --info: #0969da; --muted: #57606a; }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 68em; padding: 0 1em; color: #1f2328; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #d0d7de; }
h3 { margin: 0 0 .3em; font-size: 1.1em; }
.meta, .legend { color: var(--muted); }
table { border-collapse: collapse; }
th, td { border: 1px solid #d0d7de; padding: .3em .6em; text-align: left; vertical-align: top; }
.matrix td a { color: inherit; text-decoration: none; display: block; }
td.ok, .tag.ok { background: #dafbe1; color: var(--ok); }
td.warn, .tag.warn { background: #fff8c5; color: var(--warn); }
td.fail, .tag.fail { background: #ffebe9; color: var(--fail); }
td.info, .tag.info { background: #ddf4ff; color: var(--info); }
td.skip, .tag.skip { background: #f6f8fa; color: var(--muted); }
.tag { font-size: .8em; font-weight: 600; padding: .1em .4em; border-radius: 4px; }
.count { margin-right: 1em; }
section.case { border: 1px solid #d0d7de; border-left-width: 6px; border-radius: 6px; padding: .8em 1em; margin: 1em 0; }
section.case.ok { border-left-color: var(--ok); }
section.case.warn { border-left-color: var(--warn); }
section.case.fail { border-left-color: var(--fail); }
.checks { width: 100%; margin: .5em 0; }
.quote { color: var(--muted); font-style: italic; margin-top: .3em; }
.error { color: var(--fail); font-weight: 600; }
svg.timeline { display: block; max-width: 100%; height: auto; margin: .4em 0; font-family: system-ui, sans-serif; }
pre { background: #f6f8fa; padding: .6em; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
code { background: #f6f8fa; padding: 0 .2em; }
";

fn class(s: Status) -> &'static str {
    match s {
        Status::Success => "ok",
        Status::Warning => "warn",
        Status::Failure => "fail",
        Status::Info => "info",
        Status::Skipped => "skip",
    }
}

/// Renders the report as one HTML page.
pub fn render(report: &Report) -> String {
    let catalogue = Catalogue::bundled();
    let mut out = String::new();
    let title = format!("MCP shutdown conformance · spec {}", report.spec);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    let _ = writeln!(out, "<h1>MCP shutdown conformance</h1>");
    let b = &report.budgets;
    let _ = writeln!(
        out,
        "<p class=\"meta\">Scored against spec <b>{}</b> · {} {} · {} {} ({} cpus) · budgets: prompt {}, grace {}, observe {}, handshake {}</p>",
        esc(&report.spec),
        esc(&report.tool.name),
        esc(&report.tool.version),
        esc(&report.host.os),
        esc(&report.host.kernel),
        report.host.cpus,
        ms(b.prompt_ms as f64),
        ms(b.grace_ms as f64),
        ms(b.observe_ms as f64),
        ms(b.handshake_ms as f64),
    );
    let s = &report.summary;
    let _ = writeln!(
        out,
        "<p><span class=\"count\">{} cases</span><span class=\"count tag ok\">{} success</span><span class=\"count tag fail\">{} failure (MUST)</span><span class=\"count tag warn\">{} warning (SHOULD)</span><span class=\"count tag info\">{} info</span><span class=\"count tag skip\">{} skipped</span><span class=\"count\">{} could not run</span></p>",
        s.cases, s.success, s.failure, s.warning, s.info, s.skipped, s.errors
    );

    let (servers, scenarios) = axes(report);
    let index = |r: &CaseResult| {
        report
            .results
            .iter()
            .position(|x| std::ptr::eq(x, r))
            .unwrap_or(0)
    };
    if !servers.is_empty() {
        let grid = cells(report);
        out.push_str("<h2>Matrix</h2>\n<table class=\"matrix\">\n<thead><tr><th>server</th>");
        for sc in &scenarios {
            let _ = write!(out, "<th>{}</th>", esc(sc));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for sv in &servers {
            let _ = write!(out, "<tr><th>{}</th>", esc(sv));
            for sc in &scenarios {
                match grid.get(&(*sv, *sc)) {
                    Some(r) => {
                        let _ = write!(
                            out,
                            "<td class=\"{}\"><a href=\"#case-{}\">{}</a></td>",
                            class(verdict(r)),
                            index(r),
                            esc(&short(r))
                        );
                    }
                    None => out.push_str("<td>–</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out.push_str("<p class=\"legend\">A cell names the step of the stop ladder after which the server exited (eof: end of input alone; sigterm, sigkill: the signal was needed; survived: still running when the harness stopped waiting) and how long after the trigger it exited. Green: every scored check holds; yellow: a SHOULD is missed; red: a MUST is missed.</p>\n");
    }

    out.push_str("<h2>Cases</h2>\n");
    for (i, r) in report.results.iter().enumerate() {
        case(&mut out, report, &catalogue, i, r);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A matrix cell's text.
fn short(r: &CaseResult) -> String {
    let what = match (&r.error, r.stage, r.exit_ms) {
        (Some(e), _, _) => e.kind.to_string(),
        (None, Some(stage), Some(t)) => format!("{stage} {}", ms(t)),
        (None, Some(stage), None) => stage.to_string(),
        (None, None, _) => "?".into(),
    };
    if r.leftovers.is_empty() {
        what
    } else {
        format!("{what} · {} left behind", r.leftovers.len())
    }
}

fn case(out: &mut String, report: &Report, catalogue: &Catalogue, i: usize, r: &CaseResult) {
    let v = verdict(r);
    let _ = writeln!(out, "<section class=\"case {}\" id=\"case-{i}\">", class(v));
    let _ = writeln!(
        out,
        "<h3>{} · {} <span class=\"tag {}\">{}</span></h3>",
        esc(&r.server),
        esc(&r.scenario),
        class(v),
        v
    );
    let _ = writeln!(out, "<p>{}</p>", esc(&actual(r)));
    if let Some(e) = &r.error {
        let _ = writeln!(
            out,
            "<p class=\"error\">Could not run ({}): {}</p>",
            esc(&e.kind.to_string()),
            esc(&e.message)
        );
    }
    out.push_str(&timeline(r, &report.budgets));
    if let Some(note) = &r.note {
        let _ = writeln!(out, "<p><b>Note:</b> {}</p>", esc(note));
    }
    if let (Some(held), Some(d)) = (held_by(r), &r.diagnostics) {
        let _ = writeln!(
            out,
            "<p><b>What held it</b> (read from /proc before escalating): {}<br><em>{}</em></p>",
            esc(&held),
            esc(&d.hint)
        );
    }
    if !r.checks.is_empty() {
        out.push_str("<table class=\"checks\">\n<tr><th>status</th><th>level</th><th>rule</th><th>message</th><th>spec text</th></tr>\n");
        for c in &r.checks {
            let mut message = esc(&c.message);
            if matches!(c.status, Status::Failure | Status::Warning) {
                if let Some((rule, quotes)) = rule_references(catalogue, &c.id, &report.spec) {
                    let quotes: Vec<String> = quotes
                        .iter()
                        .map(|(q, _)| format!(" “{}”", esc(q)))
                        .collect();
                    let _ = write!(
                        message,
                        "<div class=\"quote\">Expected: {}.{}</div>",
                        esc(&rule.title),
                        quotes.concat()
                    );
                }
            }
            let links: Vec<String> = c
                .spec_references
                .iter()
                .map(|x| {
                    if x.url.starts_with("https://") || x.url.starts_with("http://") {
                        // Name the page: `basic/transports/stdio` rather than the whole URL.
                        let marker = format!("/specification/{}/", x.revision);
                        let page = x.url.split_once(&marker).map_or("spec", |(_, p)| p);
                        format!(
                            "<a class=\"spec\" href=\"{}\" title=\"spec {}\">{}</a>",
                            escape_attr(&x.url),
                            escape_attr(&x.revision),
                            esc(page)
                        )
                    } else {
                        esc(&x.url)
                    }
                })
                .collect();
            let _ = writeln!(
                out,
                "<tr><td class=\"{}\">{}</td><td>{}</td><td><code>{}</code></td><td>{message}</td><td>{}</td></tr>",
                class(c.status),
                c.status,
                c.level,
                esc(&c.id),
                links.join("<br>")
            );
        }
        out.push_str("</table>\n");
    }
    if !r.leftovers.is_empty() {
        out.push_str("<p><b>Left behind</b> (still running after the server's end; the harness killed them):</p>\n<ul>\n");
        for l in &r.leftovers {
            let parent = match (l.started_by, &l.started_by_cmdline) {
                (Some(p), Some(cmd)) => format!("started by pid {p} <code>{}</code>", esc(cmd)),
                (Some(p), None) => format!("started by pid {p}"),
                _ => "parent unknown".into(),
            };
            let _ = writeln!(
                out,
                "<li>pid {} <code>{}</code>, {parent}</li>",
                l.pid,
                esc(&l.cmdline)
            );
        }
        out.push_str("</ul>\n");
    }
    let so = &r.stdout;
    let mut stdout = format!(
        "stdout: {} bytes, {} lines, {} JSON-RPC messages, {} violations",
        so.bytes, so.lines, so.messages, so.violations
    );
    if let Some(f) = &so.first_violation {
        let kind = serde_json::to_value(f.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let _ = write!(stdout, " (first: line {}, {kind}: {})", f.line, f.excerpt);
    }
    if so.server_requests > 0 {
        let _ = write!(stdout, "; {} requests from the server", so.server_requests);
    }
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&stdout));
    if !r.stderr_tail.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>stderr (last {} bytes)</summary><pre>{}</pre></details>",
            r.stderr_tail.len(),
            esc(&r.stderr_tail)
        );
    }
    out.push_str("</section>\n");
}

// Timeline geometry, in SVG user units.
const W: f64 = 760.0;
const H: f64 = 96.0;
const LEFT: f64 = 12.0;
const RIGHT: f64 = 110.0;
const BAND_TOP: f64 = 32.0;
const AXIS: f64 = 74.0;

/// A round tick spacing giving at most about eight ticks over `span` ms.
fn tick_step(span: f64) -> f64 {
    let mut unit = 1.0;
    loop {
        for m in [1.0, 2.0, 2.5, 5.0] {
            if span / (unit * m) <= 8.0 {
                return unit * m;
            }
        }
        unit *= 10.0;
    }
}

/// The SVG timeline of one case: x is milliseconds from the trigger (the first step).
pub fn timeline(r: &CaseResult, budgets: &Budgets) -> String {
    let scenario = Scenario::from_id(&r.scenario, budgets)
        .or_else(|| Scenario::from_id(r.scenario.split(':').next().unwrap_or_default(), budgets));
    let verdict_class = class(verdict(r));
    let summary = format!("{} · {}: {}", r.server, r.scenario, actual(r));
    let mut svg = format!(
        "<svg class=\"timeline\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        escape_attr(&format!("timeline of {summary}")),
        esc(&summary)
    );
    if r.steps.is_empty() {
        let _ = writeln!(
            svg,
            "<rect x=\"{LEFT}\" y=\"{BAND_TOP}\" width=\"{}\" height=\"{}\" fill=\"#f6f8fa\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#57606a\">no stop ladder: {}</text></svg>",
            W - LEFT - RIGHT,
            AXIS - BAND_TOP,
            LEFT + 8.0,
            BAND_TOP + 19.0,
            esc(&match &r.error {
                Some(e) => format!("the case could not run ({})", e.kind),
                None => "no step was recorded".into(),
            })
        );
        return svg;
    }

    // Planned steps (with their waits), matched to the recorded ones by position.
    let planned: Vec<(f64, u64, String)> = match &scenario {
        Some(s) => {
            let mut at = 0.0;
            s.steps
                .iter()
                .map(|st| {
                    let p = (at, st.wait_ms, st.action.label());
                    at += st.wait_ms as f64;
                    p
                })
                .collect()
        }
        None => Vec::new(),
    };
    let wait_of = |i: usize| planned.get(i).map_or(budgets.grace_ms, |p| p.1) as f64;
    let last = r.steps.len() - 1;
    let ladder_end = r.steps[last].at_ms + wait_of(last);
    let span = [
        ladder_end,
        r.exit_ms.unwrap_or(0.0),
        budgets.prompt_ms as f64,
    ]
    .into_iter()
    .fold(1.0_f64, f64::max);
    let width = W - LEFT - RIGHT;
    let x = |t: f64| LEFT + (t.max(0.0) / span).min(1.0) * width;

    // Windows: each recorded step's wait (alternating grey), then the prompt budget.
    for (i, s) in r.steps.iter().enumerate() {
        let (a, b) = (x(s.at_ms), x(s.at_ms + wait_of(i)));
        let fill = if i % 2 == 0 { "#f6f8fa" } else { "#eaeef2" };
        let _ = write!(
            svg,
            "<rect x=\"{a:.1}\" y=\"{BAND_TOP}\" width=\"{:.1}\" height=\"{}\" fill=\"{fill}\"/>",
            (b - a).max(0.5),
            AXIS - BAND_TOP
        );
    }
    let prompt = budgets.prompt_ms as f64;
    let (px, panchor) = if x(prompt) - LEFT > 130.0 {
        (x(prompt) - 4.0, "end")
    } else {
        (x(prompt) + 4.0, "start")
    };
    let _ = write!(
        svg,
        "<rect class=\"budget\" x=\"{LEFT}\" y=\"{BAND_TOP}\" width=\"{:.1}\" height=\"{}\" fill=\"#2da44e\" fill-opacity=\".15\"/><text x=\"{px:.1}\" y=\"{}\" font-size=\"10\" fill=\"#1a7f37\" text-anchor=\"{panchor}\">prompt budget {}</text>",
        x(prompt) - LEFT,
        AXIS - BAND_TOP,
        BAND_TOP + 12.0,
        esc(&ms(prompt))
    );

    // The axis, with round ticks.
    let _ = write!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{AXIS}\" x2=\"{:.1}\" y2=\"{AXIS}\" stroke=\"#8c959f\"/>",
        LEFT + width
    );
    let step = tick_step(span);
    let ticks = (span / step + 1e-9).floor() as usize;
    for k in 0..=ticks {
        let t = k as f64 * step;
        let (text, anchor) = match k {
            0 => ("0 = trigger".to_string(), "start"),
            k if k == ticks => (format!("{t} ms"), "middle"),
            _ => (t.to_string(), "middle"),
        };
        let _ = write!(
            svg,
            "<line x1=\"{0:.1}\" y1=\"{AXIS}\" x2=\"{0:.1}\" y2=\"{1}\" stroke=\"#8c959f\"/><text x=\"{0:.1}\" y=\"{2}\" font-size=\"9\" fill=\"#57606a\" text-anchor=\"{anchor}\">{text}</text>",
            x(t),
            AXIS + 4.0,
            AXIS + 14.0,
        );
    }

    // Planned steps the server never needed, faint; then the recorded ones.
    let label = |svg: &mut String, at: f64, row: usize, text: &str, color: &str| {
        let (lx, anchor) = if x(at) > LEFT + width - 130.0 {
            (x(at) - 3.0, "end")
        } else {
            (x(at) + 3.0, "start")
        };
        let _ = write!(
            svg,
            "<text x=\"{lx:.1}\" y=\"{}\" font-size=\"11\" fill=\"{color}\" text-anchor=\"{anchor}\">{}</text>",
            if row % 2 == 0 { 12.0 } else { 25.0 },
            esc(text)
        );
    };
    for (i, (at, _, name)) in planned.iter().enumerate().skip(r.steps.len()) {
        if *at <= span {
            let _ = write!(
                svg,
                "<line class=\"planned\" x1=\"{0:.1}\" y1=\"18\" x2=\"{0:.1}\" y2=\"{AXIS}\" stroke=\"#8c959f\" stroke-dasharray=\"3 3\"/>",
                x(*at)
            );
            label(&mut svg, *at, i, &format!("({name} not needed)"), "#8c959f");
        }
    }
    for (i, s) in r.steps.iter().enumerate() {
        let _ = write!(
            svg,
            "<line class=\"step\" x1=\"{0:.1}\" y1=\"{1}\" x2=\"{0:.1}\" y2=\"{AXIS}\" stroke=\"#1f2328\" stroke-width=\"1.5\"/>",
            x(s.at_ms),
            if i % 2 == 0 { 4.0 } else { 17.0 }
        );
        label(
            &mut svg,
            s.at_ms,
            i,
            &format!("{} at {}", s.action.label(), ms(s.at_ms)),
            "#1f2328",
        );
    }

    // The server's life: to its exit, or on past the window with an arrow.
    let color = match verdict_class {
        "ok" => "#1a7f37",
        "fail" => "#cf222e",
        _ => "#bf8700",
    };
    let life = AXIS - 6.0;
    match r.exit_ms {
        Some(t) => {
            let ex = x(t);
            let what = match r.exit_status {
                Some(s) => format!("exited at {} ({s})", ms(t)),
                None => format!("exited at {}", ms(t)),
            };
            let (lx, anchor) = if ex > LEFT + width - 200.0 {
                (ex - 8.0, "end")
            } else {
                (ex + 8.0, "start")
            };
            let _ = write!(
                svg,
                "<line x1=\"{LEFT}\" y1=\"{life}\" x2=\"{ex:.1}\" y2=\"{life}\" stroke=\"{color}\" stroke-width=\"3\"/><circle class=\"exit\" cx=\"{ex:.1}\" cy=\"{life}\" r=\"5\" fill=\"{color}\"/><text x=\"{lx:.1}\" y=\"{}\" font-size=\"11\" font-weight=\"600\" fill=\"{color}\" text-anchor=\"{anchor}\">{}</text>",
                life - 8.0,
                esc(&what)
            );
        }
        None => {
            let end = LEFT + width + 40.0;
            let _ = write!(
                svg,
                "<line x1=\"{LEFT}\" y1=\"{life}\" x2=\"{:.1}\" y2=\"{life}\" stroke=\"{color}\" stroke-width=\"3\"/><polygon class=\"running\" points=\"{end:.1},{life} {:.1},{} {:.1},{}\" fill=\"{color}\"/><text x=\"{end:.1}\" y=\"{}\" font-size=\"11\" font-weight=\"600\" fill=\"{color}\" text-anchor=\"end\">still running</text>",
                end - 8.0,
                end - 9.0,
                life - 5.0,
                end - 9.0,
                life + 5.0,
                life - 8.0
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use super::*;

    #[test]
    fn one_timeline_per_result() {
        let rep = fixture::report();
        let html = render(&rep);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_eq!(html.matches("<svg").count(), rep.results.len());
        assert_eq!(html.matches("</svg>").count(), rep.results.len());
        assert_eq!(
            html.matches("<section class=\"case").count(),
            rep.results.len()
        );
        assert!(html.contains("<td class=\"warn\"><a href=\"#case-0\">sigterm 2004 ms</a></td>"));
        assert!(html.contains("<td class=\"ok\"><a href=\"#case-2\">eof 12 ms</a></td>"));
    }

    #[test]
    fn self_contained() {
        let html = render(&fixture::report());
        // Every URL is a link to the spec text a check cites.
        let mut rest = html.as_str();
        let mut links = 0;
        while let Some(i) = rest.find("http") {
            let before = &rest[..i];
            assert!(
                before.ends_with("<a class=\"spec\" href=\""),
                "unexpected URL near {:?}",
                &rest[i.saturating_sub(60)..i + 40]
            );
            links += 1;
            rest = &rest[i + 4..];
        }
        assert!(links > 0);
        for banned in [
            "<script", "<link", "@import", "<img", "<iframe", "url(", "src=",
        ] {
            assert!(!html.contains(banned), "{banned}");
        }
    }

    #[test]
    fn timeline_shows_steps_budget_and_exit() {
        let rep = fixture::report();
        let close = timeline(&rep.results[0], &rep.budgets);
        assert!(close.contains(">close stdin at 0 ms</text>"));
        assert!(close.contains(">SIGTERM at 2000 ms</text>"));
        assert!(close.contains(">prompt budget 1000 ms</text>"));
        assert!(close.contains(">exited at 2004 ms (killed by SIGTERM)</text>"));
        assert_eq!(close.matches("class=\"step\"").count(), 2);
        assert!(close.contains("class=\"exit\""));
        assert!(!close.contains("still running"));
        // Spanning the SIGTERM wait: 0 to 4000 ms, so SIGKILL's planned time is the edge.
        assert!(close.contains(">(SIGKILL not needed)</text>"));
        assert_eq!(fixture::well_formed(&close).unwrap(), "svg");

        let orphan = timeline(&rep.results[1], &rep.budgets);
        assert!(orphan.contains(">client SIGKILL at 0 ms</text>"));
        assert!(orphan.contains("class=\"running\""));
        assert!(orphan.contains(">still running</text>"));
        assert!(!orphan.contains("class=\"exit\""));

        let fixed = timeline(&rep.results[2], &rep.budgets);
        assert!(fixed.contains(">exited at 12 ms (exit code 0)</text>"));
        assert!(fixed.contains(">(SIGTERM not needed)</text>"));

        let mute = timeline(&rep.results[4], &rep.budgets);
        assert!(mute.contains("no stop ladder: the case could not run (handshake-timeout)"));
        fixture::well_formed(&mute).unwrap();
    }

    #[test]
    fn leftovers_and_errors_are_listed() {
        let html = render(&fixture::report());
        assert!(html.contains("<li>pid 4242 <code>node timer.js</code>, started by pid 4200 <code>node client.js</code></li>"));
        assert!(html.contains(
            "Could not run (handshake-timeout): no answer to `initialize` within 10000 ms"
        ));
        assert!(html.contains("Expected: Exits promptly when its stdin is closed."));
        assert!(html.contains("title=\"spec 2026-07-28\">basic/transports/stdio</a>"));
        assert!(html.contains(
            "<b>What held it</b> (read from /proc before escalating): pid 4242; runtime node;"
        ));
    }

    #[test]
    fn hostile_text_is_escaped() {
        let html = render(&fixture::hostile());
        assert!(!html.contains("<i>") && !html.contains("<b>&amp;") && !html.contains("<script>"));
        assert!(!html.contains('\u{1b}') && !html.contains('\u{0}'));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("<h3>t&lt;i&gt;m&amp;r &quot;x&quot; &apos;y&apos; · close"));
        for svg in html.split("<svg").skip(1) {
            let svg = format!("<svg{}", &svg[..svg.find("</svg>").unwrap() + 6]);
            fixture::well_formed(&svg).unwrap();
        }
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(4000.0), 500.0);
        assert_eq!(tick_step(2000.0), 250.0);
        assert_eq!(tick_step(6000.0), 1000.0);
        assert_eq!(tick_step(1.0), 1.0);
    }
}
