//! The HTML page's view model: what each part of the page shows (the matrix's cells, the host
//! view, the profiles, the SDK histories, each case and its checks), as strings and classes
//! the templates place. Pure over the report.

use super::class;
use super::timeline::timeline;
use crate::model::{group_leftovers, JudgedCase, Report, Status};
use crate::render::history;
use crate::render::hosts;
use crate::render::present::{actual, held_by, index_of, judged, runs_line, visible};

pub(super) fn is_flaky(r: &JudgedCase) -> bool {
    r.repeat.as_ref().is_some_and(|x| x.flaky)
}

/// A case's colour: its verdict's, or grey when it could not be judged.
pub(super) fn case_class(r: &JudgedCase) -> &'static str {
    judged(r).map_or("skip", class)
}

/// One SDK line's history: a header and (shape, ending, stage by version, changed at) rows.
pub(super) struct HistoryView {
    pub(super) header: String,
    pub(super) rows: Vec<[String; 4]>,
}

pub(super) struct HostRow {
    pub(super) server: String,
    pub(super) needs: String,
    pub(super) cells: Vec<Option<Cell>>,
}

pub(super) struct ProfileView {
    pub(super) id: String,
    pub(super) client: String,
    pub(super) from: String,
    pub(super) links: Vec<String>,
    pub(super) cap_note: Option<String>,
}

pub(super) struct Row {
    pub(super) server: String,
    pub(super) cells: Vec<Option<Cell>>,
}

pub(super) struct Cell {
    pub(super) class: &'static str,
    /// Its runs disagreed (`--repeat`).
    pub(super) flaky: bool,
    pub(super) index: usize,
    pub(super) text: String,
}

pub(super) struct CaseView {
    pub(super) index: usize,
    pub(super) class: &'static str,
    pub(super) verdict: String,
    pub(super) server: String,
    pub(super) scenario: String,
    /// Whose ladder ran, and where it comes from.
    pub(super) profile: Option<String>,
    /// How its runs ended (`--repeat`), and whether they disagreed.
    pub(super) runs: Option<String>,
    pub(super) flaky: bool,
    pub(super) actual: String,
    pub(super) error: Option<(String, String)>,
    pub(super) timeline: String,
    pub(super) note: Option<String>,
    /// What its launcher did, never the server's.
    pub(super) launcher: Option<String>,
    pub(super) held: Option<(String, String)>,
    pub(super) checks: Vec<CheckView>,
    pub(super) leftovers: Vec<LeftoverView>,
    pub(super) omitted: u64,
    pub(super) stdout: String,
    pub(super) stderr: String,
    pub(super) stderr_len: usize,
}

pub(super) struct CheckView {
    pub(super) class: &'static str,
    pub(super) status: Status,
    pub(super) level: String,
    pub(super) id: String,
    pub(super) message: String,
    pub(super) expected: Option<String>,
    pub(super) links: Vec<SpecLink>,
}

pub(super) struct SpecLink {
    pub(super) url: Option<String>,
    pub(super) revision: String,
    pub(super) page: String,
}

pub(super) struct LeftoverView {
    pub(super) count: usize,
    pub(super) pids: String,
    pub(super) cmdline: String,
    pub(super) parent: Option<i32>,
    pub(super) parent_cmdline: Option<String>,
}

pub(super) fn history_views(report: &Report) -> Vec<HistoryView> {
    history::histories(report)
        .into_iter()
        .map(|h| HistoryView {
            header: format!(
                "{}: {} versions, {} … {}",
                h.line,
                h.versions.len(),
                h.versions.first().map_or("", String::as_str),
                h.versions.last().map_or("", String::as_str)
            ),
            rows: h
                .rows
                .iter()
                .map(|r| {
                    [
                        r.shape.clone(),
                        r.scenario.clone(),
                        history::runs_text(&r.runs),
                        history::changes_text(&r.changes),
                    ]
                })
                .collect(),
        })
        .collect()
}

/// The host view's columns (label, source) and rows.
pub(super) fn host_view(report: &Report) -> (Vec<(String, String)>, Vec<HostRow>) {
    let Some(v) = hosts::view(report) else {
        return (Vec::new(), Vec::new());
    };
    let columns = v
        .columns
        .iter()
        .map(|c| (visible(&c.label), c.source.clone().unwrap_or_default()))
        .collect();
    let rows = v
        .rows
        .iter()
        .map(|row| HostRow {
            server: visible(row.server),
            needs: row.needs.clone().unwrap_or_else(|| "–".into()),
            cells: row
                .cells
                .iter()
                .map(|c| {
                    c.as_ref().map(|c| Cell {
                        class: c.verdict().map_or("skip", class),
                        flaky: is_flaky(c.case),
                        index: index_of(report, c.case),
                        text: c.short(),
                    })
                })
                .collect(),
        })
        .collect();
    (columns, rows)
}

pub(super) fn profile_views(report: &Report) -> Vec<ProfileView> {
    report
        .profiles
        .iter()
        .map(|(id, p)| ProfileView {
            id: id.to_string(),
            client: visible(&p.client),
            // Reports it was observed in are links; a source read or a measurement, words.
            from: match (&p.source, &p.measured, p.observed.is_empty()) {
                (None, None, false) => "observed in public reports:".into(),
                _ => visible(&hosts::from(p)),
            },
            links: match (&p.source, &p.measured) {
                (None, None) => p.observed.iter().map(|u| visible(u)).collect(),
                _ => Vec::new(),
            },
            cap_note: p.cap_note.as_deref().map(visible),
        })
        .collect()
}

pub(super) fn case_view(report: &Report, index: usize, r: &JudgedCase) -> CaseView {
    CaseView {
        index,
        class: case_class(r),
        verdict: match judged(r) {
            Some(v) => v.to_string(),
            None => crate::render::present::no_verdict_word(r),
        },
        server: visible(&r.server),
        scenario: r.scenario.to_string(),
        profile: match &r.scenario {
            crate::model::ScenarioId::Profile(p) => report
                .profiles
                .get(p)
                .map(|i| visible(&format!("{} ({})", i.client, hosts::source(i)))),
            crate::model::ScenarioId::Ending(_) => None,
        },
        runs: runs_line(r).map(|l| visible(&l)),
        flaky: is_flaky(r),
        actual: visible(&actual(r)),
        error: r.error.as_ref().map(|e| {
            (
                crate::render::present::error_cell(e.kind),
                visible(&e.message),
            )
        }),
        timeline: timeline(r, report.budgets_of(r)),
        note: r.note.as_deref().map(visible),
        launcher: crate::model::launcher_line(r).as_deref().map(visible),
        held: held_by(r).zip(r.diagnostics.as_ref()).map(|(h, d)| {
            let fixed = !crate::render::present::fixes_of(report, &r.server).is_empty();
            let hint = if fixed { "See its fix above." } else { &d.hint };
            (visible(&h), visible(hint))
        }),
        checks: r.checks.iter().map(|c| check_view(report, c)).collect(),
        leftovers: group_leftovers(&r.leftovers)
            .iter()
            .map(|g| LeftoverView {
                count: g.pids.len(),
                pids: g.pid_list(),
                cmdline: visible(&g.cmdline),
                parent: g.started_by,
                parent_cmdline: g.started_by_cmdline.as_deref().map(visible),
            })
            .collect(),
        omitted: r.leftovers_omitted,
        stdout: visible(&stdout_line(r)),
        stderr: visible(&r.stderr_tail),
        stderr_len: r.stderr_tail.len(),
    }
}

pub(super) fn check_view(report: &Report, c: &crate::model::Check) -> CheckView {
    // What was expected, from the wording the report carries for the rule.
    let expected = c
        .status
        .is_miss()
        .then(|| report.rules.get(&c.id))
        .flatten()
        .map(|rule| {
            let quotes: Vec<String> = rule
                .quotes
                .iter()
                .map(|q| format!(" “{}”", q.quote))
                .collect();
            format!("Expected: {}.{}", rule.title, quotes.concat())
        });
    CheckView {
        class: class(c.status),
        status: c.status,
        level: c.level.to_string(),
        id: c.id.to_string(),
        message: visible(&c.message),
        expected: expected.map(|e| visible(&e)),
        links: c
            .spec_references
            .iter()
            .map(|x| {
                let web = x.url.starts_with("https://") || x.url.starts_with("http://");
                // Name the page: `basic/transports/stdio` rather than the whole URL.
                let marker = format!("/specification/{}/", x.revision);
                let page = x.url.split_once(&marker).map_or("spec", |(_, p)| p);
                SpecLink {
                    url: web.then(|| x.url.clone()),
                    revision: x.revision.to_string(),
                    page: if web {
                        page.to_string()
                    } else {
                        visible(&x.url)
                    },
                }
            })
            .collect(),
    }
}

pub(super) fn stdout_line(r: &JudgedCase) -> String {
    let so = &r.stdout;
    let mut line = format!(
        "stdout: {} bytes, {} lines, {} JSON-RPC messages, {} violations",
        so.bytes, so.lines, so.messages, so.violations
    );
    if let Some(f) = &so.first_violation {
        line.push_str(&format!(
            " (first: line {}, {}: {})",
            f.line,
            f.kind.as_str(),
            f.excerpt
        ));
    }
    if so.server_requests > 0 {
        line.push_str(&format!(
            "; {} requests from the server",
            so.server_requests
        ));
    }
    line
}

/// One server's fixes, with what held it.
pub(super) struct FixView {
    pub server: String,
    /// What held it the first time it outlived a step (the ending, the reading).
    pub held: Option<(String, String)>,
    pub fixes: Vec<FixItem>,
}

pub(super) struct FixItem {
    pub heading: String,
    /// The text in parts, each `(is code, words)`: its `code spans` shown as code.
    pub text: Vec<(bool, String)>,
    /// (lines, the file they are from)
    pub code: Option<(String, String)>,
}

pub(super) fn fix_views(report: &Report) -> Vec<FixView> {
    use crate::render::present::{first_held, fix_heading, servers_with_fixes};
    servers_with_fixes(report)
        .into_iter()
        .map(|(server, fixes)| FixView {
            server: visible(server),
            held: first_held(report, server)
                .map(|(r, line)| (r.scenario.to_string(), visible(&line))),
            fixes: fixes
                .iter()
                .map(|f| FixItem {
                    heading: visible(&fix_heading(f)),
                    text: code_spans(&visible(&f.text)),
                    code: f
                        .code
                        .as_ref()
                        .map(|c| (visible(&c.lines), visible(&c.source))),
                })
                .collect(),
        })
        .collect()
}

/// `a `b` c` → `[(false, "a "), (true, "b"), (false, " c")]`; an unbalanced backtick stays
/// text.
fn code_spans(s: &str) -> Vec<(bool, String)> {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return vec![(false, s.to_string())];
    }
    parts
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(i, p)| (i % 2 == 1, p.to_string()))
        .collect()
}
