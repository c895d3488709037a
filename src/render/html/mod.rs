//! One self-contained HTML page (askama templates in `templates/`): inline CSS, no scripts,
//! no fonts or images to fetch. The only URLs are the links to the spec text that checks
//! cite. It shows the counts, the servers × scenarios matrix, then each case: its checks, an
//! inline SVG timeline of the stop ladder (steps, budget windows, when the server exited or
//! that it was still running), what was left behind, and the end of its stderr. Everything
//! comes from the report, so an old report renders as it was judged.

//!
//! By stage: the report (data) → [`view`], what each part of the page shows, and
//! [`timeline`], each case's SVG → the `report.html` template, bound here.

use askama::Template;

mod timeline;
mod view;

use view::{
    case_class, case_view, fix_views, history_views, host_view, is_flaky, profile_views, CaseView,
    Cell, FixView, HistoryView, HostRow, ProfileView, Row,
};

use super::history;
use super::hosts::is_host_scenario;
use super::present::{axes, cells, index_of, left_behind, ms, outcome, visible};
use crate::model::{Report, ScenarioId, Status, Summary};

#[derive(Template)]
#[template(path = "report.html", config = "src/render/askama.toml")]
struct Page<'a> {
    title: String,
    /// Trusted markup placed under the title (empty for a plain report).
    header: String,
    spec: String,
    tool: String,
    host: String,
    budgets: String,
    summary: &'a Summary,
    scenarios: Vec<String>,
    rows: Vec<Row>,
    host_columns: Vec<(String, String)>,
    host_rows: Vec<HostRow>,
    profiles: Vec<ProfileView>,
    fixes: Vec<FixView>,
    histories: Vec<HistoryView>,
    /// (line, versions, reason) of the `--sdk` versions that yield no server.
    untested: Vec<(String, String, String)>,
    cases: Vec<CaseView>,
}

/// Renders the report as one HTML page.
pub fn render(report: &Report) -> String {
    render_with(report, String::new())
}

/// Renders the report as one HTML page with `header`, markup the caller built and escaped
/// itself, under the title (the census site puts a server's badges there).
pub fn render_with(report: &Report, header: String) -> String {
    let b = &report.budgets;
    let (servers, mut scenarios) = axes(report);
    scenarios.retain(|s| !is_host_scenario(report, s));
    let (host_columns, host_rows) = host_view(report);
    let page = Page {
        title: format!("MCP shutdown conformance · spec {}", report.spec),
        header,
        spec: report.spec.to_string(),
        tool: visible(&format!("{} {}", report.tool.name, report.tool.version)),
        host: visible(&format!(
            "{} {} ({} cpus)",
            report.host.os, report.host.kernel, report.host.cpus
        )),
        budgets: format!(
            "prompt {}, grace {}, observe {}, handshake {}",
            ms(b.prompt_ms as f64),
            ms(b.grace_ms as f64),
            ms(b.observe_ms as f64),
            ms(b.handshake_ms as f64),
        ),
        summary: &report.summary,
        scenarios: scenarios.iter().map(|s| s.to_string()).collect(),
        rows: matrix_rows(report, &servers, &scenarios),
        host_columns,
        host_rows,
        profiles: profile_views(report),
        fixes: fix_views(report),
        histories: history_views(report),
        untested: history::untested_groups(&report.not_testable)
            .into_iter()
            .map(|(l, v, r)| (l.to_string(), v.join(", "), r.to_string()))
            .collect(),
        cases: report
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| case_view(report, i, r))
            .collect(),
    };
    page.render().expect("the report page renders")
}

/// The matrix: a row per server, a cell per scenario (none without a scenario to show).
fn matrix_rows(report: &Report, servers: &[&str], scenarios: &[&ScenarioId]) -> Vec<Row> {
    if scenarios.is_empty() {
        return Vec::new();
    }
    let grid = cells(report);
    servers
        .iter()
        .map(|sv| Row {
            server: visible(sv),
            cells: scenarios
                .iter()
                .map(|sc| {
                    grid.get(&(*sv, *sc)).map(|r| Cell {
                        class: case_class(r),
                        flaky: is_flaky(r),
                        index: index_of(report, r),
                        text: format!("{}{}", outcome(r), left_behind(r)),
                    })
                })
                .collect(),
        })
        .collect()
}

/// A verdict's colour (its CSS class).
pub(super) fn class(s: Status) -> &'static str {
    match s {
        Status::Success => "ok",
        Status::Warning => "warn",
        Status::Failure => "fail",
        Status::Info => "info",
        Status::Skipped => "skip",
    }
}

#[cfg(test)]
mod tests {
    use super::timeline::{tick_step, timeline};
    use super::*;
    use crate::test_support as fixture;

    /// The fixes come before the cases, with what held the server and the lines; where the
    /// ladders come from comes after them, folded.
    #[test]
    fn fixes_first_provenance_last() {
        use crate::model::Stage;
        let mut rep = fixture::report();
        rep.results.push(fixture::result(
            "timer",
            "close:vscode",
            Stage::Sigterm,
            10003.0,
        ));
        rep.profiles = crate::config::profiles::Profiles::bundled()
            .infos(rep.results.iter().map(|r| &r.scenario));
        let html = render(&rep);
        let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
        assert!(at("<h2>How to fix</h2>") < at("<h2>Cases</h2>"));
        assert!(at("<h2>Cases</h2>") < at("<details><summary><b>Where the ladders come from"));
        assert!(html.contains("read from /proc before escalating): pid 4242; runtime node"));
        assert!(
            html.contains("<code>process.exit(0)</code>"),
            "code spans in the text"
        );
        assert!(html.contains("<pre><code>let shuttingDown = false;"));
        assert!(
            !html.contains("observed in public reports</"),
            "measured and read ladders say so"
        );
    }

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
        assert!(close.contains(">close stdin at 0 ms</text>"), "{close}");
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
    fn an_old_report_without_a_ladder_draws_what_was_recorded() {
        let mut rep = fixture::report();
        rep.results[0].ladder = None;
        let close = timeline(&rep.results[0], &rep.budgets);
        assert!(close.contains(">SIGTERM at 2000 ms</text>"));
        assert!(!close.contains("not needed"));
        fixture::well_formed(&close).unwrap();
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
        assert!(html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"));
        assert!(html.contains("<h3>t&#60;i&#62;m&#38;r &#34;x&#34; &#39;y&#39; · close"));
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
