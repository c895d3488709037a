//! One self-contained HTML page (askama templates in `templates/`): inline CSS, no scripts,
//! no fonts or images to fetch. The only URLs are the links to the spec text that checks
//! cite. It shows the counts, the servers × scenarios matrix, then each case: its checks, an
//! inline SVG timeline of the stop ladder (steps, budget windows, when the server exited or
//! that it was still running), what was left behind, and the end of its stderr. Everything
//! comes from the report, so an old report renders as it was judged.

use askama::Template;

use super::history;
use super::hosts::{self, is_host_scenario};
use super::present::{
    action_label, actual, axes, cells, held_by, index_of, judged, left_behind, ms, outcome,
    runs_line, visible,
};
use crate::model::{group_leftovers, Budgets, JudgedCase, Report, Stage, Status, Summary};

fn is_flaky(r: &JudgedCase) -> bool {
    r.repeat.as_ref().is_some_and(|x| x.flaky)
}

/// A case's colour: its verdict's, or grey when it could not be judged.
fn case_class(r: &JudgedCase) -> &'static str {
    judged(r).map_or("skip", class)
}

fn class(s: Status) -> &'static str {
    match s {
        Status::Success => "ok",
        Status::Warning => "warn",
        Status::Failure => "fail",
        Status::Info => "info",
        Status::Skipped => "skip",
    }
}

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
    histories: Vec<HistoryView>,
    /// (line, versions, reason) of the `--sdk` versions that yield no server.
    untested: Vec<(String, String, String)>,
    cases: Vec<CaseView>,
}

/// One SDK line's history: a header and (shape, ending, stage by version, changed at) rows.
struct HistoryView {
    header: String,
    rows: Vec<[String; 4]>,
}

struct HostRow {
    server: String,
    needs: String,
    cells: Vec<Option<Cell>>,
}

struct ProfileView {
    id: String,
    client: String,
    from: String,
    links: Vec<String>,
    cap_note: Option<String>,
}

struct Row {
    server: String,
    cells: Vec<Option<Cell>>,
}

struct Cell {
    class: &'static str,
    /// Its runs disagreed (`--repeat`).
    flaky: bool,
    index: usize,
    text: String,
}

struct CaseView {
    index: usize,
    class: &'static str,
    verdict: String,
    server: String,
    scenario: String,
    /// Whose ladder ran, and where it comes from.
    profile: Option<String>,
    /// How its runs ended (`--repeat`), and whether they disagreed.
    runs: Option<String>,
    flaky: bool,
    actual: String,
    error: Option<(String, String)>,
    timeline: String,
    note: Option<String>,
    held: Option<(String, String)>,
    checks: Vec<CheckView>,
    leftovers: Vec<LeftoverView>,
    omitted: u64,
    stdout: String,
    stderr: String,
    stderr_len: usize,
}

struct CheckView {
    class: &'static str,
    status: Status,
    level: String,
    id: String,
    message: String,
    expected: Option<String>,
    links: Vec<Link>,
}

struct Link {
    url: Option<String>,
    revision: String,
    page: String,
}

struct LeftoverView {
    count: usize,
    pids: String,
    cmdline: String,
    parent: Option<i32>,
    parent_cmdline: Option<String>,
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
    let grid = cells(report);
    let (host_columns, host_rows) = host_view(report);
    let rows = servers
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
        .collect();
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
        rows: if scenarios.is_empty() {
            Vec::new()
        } else {
            rows
        },
        host_columns,
        host_rows,
        profiles: profile_views(report),
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

fn history_views(report: &Report) -> Vec<HistoryView> {
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
fn host_view(report: &Report) -> (Vec<(String, String)>, Vec<HostRow>) {
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
                        class: case_class(c.case),
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

fn profile_views(report: &Report) -> Vec<ProfileView> {
    report
        .profiles
        .iter()
        .map(|(id, p)| ProfileView {
            id: id.to_string(),
            client: visible(&p.client),
            from: match &p.source {
                Some(s) => visible(&format!(
                    "{}: {} at {}",
                    s.repository,
                    s.paths.join(", "),
                    s.reference
                )),
                None => "observed in public reports".into(),
            },
            links: p.observed.iter().map(|u| visible(u)).collect(),
            cap_note: p.cap_note.as_deref().map(visible),
        })
        .collect()
}

fn case_view(report: &Report, index: usize, r: &JudgedCase) -> CaseView {
    CaseView {
        index,
        class: case_class(r),
        verdict: match judged(r) {
            Some(v) => v.to_string(),
            None => super::present::no_verdict_word(r),
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
        error: r
            .error
            .as_ref()
            .map(|e| (super::present::error_cell(e.kind), visible(&e.message))),
        timeline: timeline(r, report.budgets_of(r)),
        note: r.note.as_deref().map(visible),
        held: held_by(r)
            .zip(r.diagnostics.as_ref())
            .map(|(h, d)| (visible(&h), visible(&d.hint))),
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

fn check_view(report: &Report, c: &crate::model::Check) -> CheckView {
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
                Link {
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

fn stdout_line(r: &JudgedCase) -> String {
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

// Timeline geometry, in SVG user units.
const W: f64 = 760.0;
const H: f64 = 96.0;
const LEFT: f64 = 12.0;
const RIGHT: f64 = 110.0;
const BAND_TOP: f64 = 32.0;
const AXIS: f64 = 74.0;

/// Numbers in the SVG: one decimal.
struct N(f64);

impl std::fmt::Display for N {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.1}", self.0)
    }
}

struct Rect {
    class: Option<&'static str>,
    x: N,
    y: N,
    w: N,
    h: N,
    fill: &'static str,
    opacity: Option<&'static str>,
}

struct Line {
    class: Option<&'static str>,
    x1: N,
    y1: N,
    x2: N,
    y2: N,
    stroke: &'static str,
    width: Option<&'static str>,
    dash: Option<&'static str>,
}

struct Text {
    x: N,
    y: N,
    size: u32,
    bold: bool,
    fill: &'static str,
    anchor: Option<&'static str>,
    text: String,
}

struct Circle {
    class: &'static str,
    cx: N,
    cy: N,
    r: N,
    fill: &'static str,
}

struct Polygon {
    class: &'static str,
    points: String,
    fill: &'static str,
}

#[derive(Template)]
#[template(path = "timeline.svg", config = "src/render/askama.toml")]
struct Timeline {
    w: N,
    h: N,
    summary: String,
    rects: Vec<Rect>,
    lines: Vec<Line>,
    polygons: Vec<Polygon>,
    circles: Vec<Circle>,
    texts: Vec<Text>,
}

impl Timeline {
    fn text(
        &mut self,
        x: f64,
        y: f64,
        size: u32,
        fill: &'static str,
        anchor: &'static str,
        text: String,
    ) {
        self.texts.push(Text {
            x: N(x),
            y: N(y),
            size,
            bold: false,
            fill,
            anchor: Some(anchor),
            text: visible(&text),
        });
    }

    fn line(
        &mut self,
        class: Option<&'static str>,
        (x1, y1, x2, y2): (f64, f64, f64, f64),
        stroke: &'static str,
    ) -> &mut Line {
        self.lines.push(Line {
            class,
            x1: N(x1),
            y1: N(y1),
            x2: N(x2),
            y2: N(y2),
            stroke,
            width: None,
            dash: None,
        });
        self.lines.last_mut().expect("just pushed")
    }
}

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

/// The horizontal scale: milliseconds from the trigger to x.
struct Scale {
    span: f64,
}

impl Scale {
    fn width() -> f64 {
        W - LEFT - RIGHT
    }

    fn x(&self, t: f64) -> f64 {
        LEFT + (t.max(0.0) / self.span).min(1.0) * Self::width()
    }
}

/// The SVG timeline of one case: x is milliseconds from the trigger (the first step).
pub fn timeline(r: &JudgedCase, budgets: &Budgets) -> String {
    let summary = visible(&format!("{} · {}: {}", r.server, r.scenario, actual(r)));
    let mut t = Timeline {
        w: N(W),
        h: N(H),
        summary,
        rects: Vec::new(),
        lines: Vec::new(),
        polygons: Vec::new(),
        circles: Vec::new(),
        texts: Vec::new(),
    };
    if r.steps.is_empty() {
        t.rects.push(Rect {
            class: None,
            x: N(LEFT),
            y: N(BAND_TOP),
            w: N(Scale::width()),
            h: N(AXIS - BAND_TOP),
            fill: "#f6f8fa",
            opacity: None,
        });
        let why = match &r.error {
            Some(e) => format!("the case could not run ({})", e.kind),
            None => "no step was recorded".into(),
        };
        t.text(
            LEFT + 8.0,
            BAND_TOP + 19.0,
            12,
            "#57606a",
            "start",
            format!("no stop ladder: {why}"),
        );
        return t.render().expect("timelines render");
    }
    // Planned steps (from the ladder the report carries), matched to recorded ones by position.
    let planned: Vec<(f64, u64, String)> = r
        .ladder
        .iter()
        .flat_map(|l| &l.steps)
        .scan(0.0, |at, st| {
            let p = (*at, st.wait_ms, action_label(&st.action));
            *at += st.wait_ms as f64;
            Some(p)
        })
        .collect();
    let wait_of = |i: usize| planned.get(i).map_or(budgets.grace_ms, |p| p.1) as f64;
    let last = r.steps.len() - 1;
    let ladder_end = r.steps[last].at_ms + wait_of(last);
    let runs_max = r
        .repeat
        .iter()
        .flat_map(|x| &x.runs)
        .filter_map(|o| o.exit_ms)
        .fold(0.0_f64, f64::max);
    let span = [
        ladder_end,
        r.exit_ms.unwrap_or(0.0),
        runs_max,
        budgets.prompt_ms as f64,
    ]
    .into_iter()
    .fold(1.0_f64, f64::max);
    let s = Scale { span };
    windows(&mut t, r, &s, &wait_of, budgets.prompt_ms as f64);
    axis(&mut t, &s);
    steps(&mut t, r, &s, &planned);
    life(&mut t, r, &s);
    runs(&mut t, r, &s);
    t.render().expect("timelines render")
}

/// Where each run of a repeated case ended, as dots in a row above the worst run's life
/// (coloured by stage; runs that never exited at the right edge), so exits that cluster at
/// a few moments show as clusters.
fn runs(t: &mut Timeline, r: &JudgedCase, s: &Scale) {
    let Some(rep) = &r.repeat else {
        return;
    };
    let y = BAND_TOP + 22.0;
    let mut dots: Vec<(f64, &'static str)> = rep
        .runs
        .iter()
        .map(|o| {
            let fill = match (o.error, o.stage) {
                (Some(_), _) => "#57606a",
                (None, Some(Stage::Eof)) => "#1a7f37",
                (None, Some(Stage::Sigkill | Stage::Survived)) => "#cf222e",
                _ => "#bf8700",
            };
            let cx = o.exit_ms.map_or(LEFT + Scale::width() + 6.0, |at| s.x(at));
            (cx, fill)
        })
        .collect();
    dots.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Runs that ended within a few pixels of each other are one dot, sized and counted.
    let mut groups: Vec<(f64, &'static str, usize)> = Vec::new();
    for (x, fill) in dots {
        match groups.last_mut() {
            Some((gx, gfill, n)) if x - *gx < 5.0 && *gfill == fill => *n += 1,
            _ => groups.push((x, fill, 1)),
        }
    }
    for (x, fill, n) in groups {
        t.circles.push(Circle {
            class: "run",
            cx: N(x),
            cy: N(y),
            r: N(2.5 + (n as f64).sqrt()),
            fill,
        });
        if n > 1 {
            t.text(x, y - 7.0, 9, fill, "middle", format!("×{n}"));
        }
    }
    t.text(
        LEFT + Scale::width() + 14.0,
        y + 3.0,
        10,
        "#57606a",
        "start",
        format!("{} runs", rep.runs.len()),
    );
}

/// Each recorded step's wait (alternating grey), then the prompt budget.
fn windows(
    t: &mut Timeline,
    r: &JudgedCase,
    s: &Scale,
    wait_of: &dyn Fn(usize) -> f64,
    prompt: f64,
) {
    for (i, st) in r.steps.iter().enumerate() {
        let (a, b) = (s.x(st.at_ms), s.x(st.at_ms + wait_of(i)));
        t.rects.push(Rect {
            class: None,
            x: N(a),
            y: N(BAND_TOP),
            w: N((b - a).max(0.5)),
            h: N(AXIS - BAND_TOP),
            fill: if i % 2 == 0 { "#f6f8fa" } else { "#eaeef2" },
            opacity: None,
        });
    }
    t.rects.push(Rect {
        class: Some("budget"),
        x: N(LEFT),
        y: N(BAND_TOP),
        w: N(s.x(prompt) - LEFT),
        h: N(AXIS - BAND_TOP),
        fill: "#2da44e",
        opacity: Some(".15"),
    });
    let (px, anchor) = if s.x(prompt) - LEFT > 130.0 {
        (s.x(prompt) - 4.0, "end")
    } else {
        (s.x(prompt) + 4.0, "start")
    };
    t.text(
        px,
        BAND_TOP + 12.0,
        10,
        "#1a7f37",
        anchor,
        format!("prompt budget {}", ms(prompt)),
    );
}

/// The axis, with round ticks.
fn axis(t: &mut Timeline, s: &Scale) {
    t.line(None, (LEFT, AXIS, LEFT + Scale::width(), AXIS), "#8c959f");
    let step = tick_step(s.span);
    let ticks = (s.span / step + 1e-9).floor() as usize;
    for k in 0..=ticks {
        let at = k as f64 * step;
        let (text, anchor) = match k {
            0 => ("0 = trigger".to_string(), "start"),
            k if k == ticks => (format!("{at} ms"), "middle"),
            _ => (at.to_string(), "middle"),
        };
        t.line(None, (s.x(at), AXIS, s.x(at), AXIS + 4.0), "#8c959f");
        t.text(s.x(at), AXIS + 14.0, 9, "#57606a", anchor, text);
    }
}

/// Planned steps the server never needed, faint; then the recorded ones.
fn steps(t: &mut Timeline, r: &JudgedCase, s: &Scale, planned: &[(f64, u64, String)]) {
    let width = Scale::width();
    let label = |t: &mut Timeline, at: f64, row: usize, text: String, color: &'static str| {
        let (lx, anchor) = if s.x(at) > LEFT + width - 130.0 {
            (s.x(at) - 3.0, "end")
        } else {
            (s.x(at) + 3.0, "start")
        };
        t.text(
            lx,
            if row.is_multiple_of(2) { 12.0 } else { 25.0 },
            11,
            color,
            anchor,
            text,
        );
    };
    for (i, (at, _, name)) in planned.iter().enumerate().skip(r.steps.len()) {
        if *at <= s.span {
            t.line(Some("planned"), (s.x(*at), 18.0, s.x(*at), AXIS), "#8c959f")
                .dash = Some("3 3");
            label(t, *at, i, format!("({name} not needed)"), "#8c959f");
        }
    }
    for (i, st) in r.steps.iter().enumerate() {
        let top = if i % 2 == 0 { 4.0 } else { 17.0 };
        t.line(
            Some("step"),
            (s.x(st.at_ms), top, s.x(st.at_ms), AXIS),
            "#1f2328",
        )
        .width = Some("1.5");
        label(
            t,
            st.at_ms,
            i,
            format!("{} at {}", action_label(&st.action), ms(st.at_ms)),
            "#1f2328",
        );
    }
}

/// The server's life: to its exit, or on past the window with an arrow.
fn life(t: &mut Timeline, r: &JudgedCase, s: &Scale) {
    let color = match class(r.verdict()) {
        "ok" => "#1a7f37",
        "fail" => "#cf222e",
        _ => "#bf8700",
    };
    let y = AXIS - 6.0;
    let width = Scale::width();
    let (end, what, anchor) = match r.exit_ms {
        Some(ms_) => {
            let ex = s.x(ms_);
            t.circles.push(Circle {
                class: "exit",
                cx: N(ex),
                cy: N(y),
                r: N(5.0),
                fill: color,
            });
            let what = match r.exit_status {
                Some(st) => format!("exited at {} ({st})", ms(ms_)),
                None => format!("exited at {}", ms(ms_)),
            };
            if ex > LEFT + width - 200.0 {
                (ex, (ex - 8.0, what), "end")
            } else {
                (ex, (ex + 8.0, what), "start")
            }
        }
        None => {
            let end = LEFT + width + 40.0;
            t.polygons.push(Polygon {
                class: "running",
                points: format!(
                    "{},{} {},{} {},{}",
                    N(end),
                    N(y),
                    N(end - 9.0),
                    N(y - 5.0),
                    N(end - 9.0),
                    N(y + 5.0)
                ),
                fill: color,
            });
            (end - 8.0, (end, "still running".to_string()), "end")
        }
    };
    t.line(None, (LEFT, y, end, y), color).width = Some("3");
    t.texts.push(Text {
        x: N(what.0),
        y: N(y - 8.0),
        size: 11,
        bold: true,
        fill: color,
        anchor: Some(anchor),
        text: visible(&what.1),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support as fixture;

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
