//! The census site, from a report alone: `index.html`, a leaderboard of every server (its
//! package, worst verdict, what it costs a user of each host when the session ends, what it
//! leaves running), one page per server (`servers/<name>.html`: the HTML report of just that
//! server, under its badges and a README snippet), the badges (`badges/<name>.svg` and
//! `.json`, and `-hosts` for the host-scoped one), and `report.json`. Pure: the same report
//! gives the same files.

use askama::Template;

use super::badge::{self, Badge, Scope};
use super::hosts::{self, HostCell};
use super::present::{axes, could_not_run, judged, main_owner, visible, RE_RUN};
use super::{census, census_history};
use crate::model::{
    ErrorKind, History, Judged, JudgedCase, NotTestableReason, Owner, Report, ServerInfo, Status,
};

/// A server's worst verdict over all its cases, as the leaderboard ranks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Worst {
    Success,
    Warning,
    Failure,
    /// The machine's load, not the server, decided a case and nothing else failed: shown as
    /// "re-run", never as a verdict.
    ReRun,
    /// It ran but could not be judged (a listing whose launch command is not in its package,
    /// a server that needs real credentials): reported, not judged, counted apart.
    NotTestable(Owner),
    /// No case got as far as a session, and whose that is.
    CouldNotRun(Owner),
}

impl Worst {
    pub fn label(self) -> String {
        match self {
            Worst::Success => "SUCCESS".into(),
            Worst::Warning => "WARNING".into(),
            Worst::Failure => "FAILURE".into(),
            Worst::ReRun => format!("{RE_RUN} (machine-bound)"),
            Worst::NotTestable(o) => format!("not testable: {}", not_testable_label(o)),
            Worst::CouldNotRun(o) => could_not_run(o),
        }
    }

    /// Its place in the ranking, for sorting in the page.
    pub fn rank(self) -> u8 {
        let owner = |o: Owner| Owner::ALL.iter().position(|x| *x == o).unwrap_or(0) as u8;
        match self {
            Worst::Success => 0,
            Worst::Warning => 1,
            Worst::Failure => 2,
            Worst::ReRun => 5,
            Worst::NotTestable(o) => 10 + owner(o),
            Worst::CouldNotRun(o) => 20 + owner(o),
        }
    }

    fn class(self) -> &'static str {
        match self {
            Worst::Success => "ok",
            Worst::Warning => "warn",
            Worst::Failure => "fail",
            Worst::ReRun | Worst::NotTestable(_) | Worst::CouldNotRun(_) => "skip",
        }
    }
}

/// "needs credentials", "launch command not in the package": why a server was not testable.
fn not_testable_label(owner: Owner) -> &'static str {
    match owner {
        Owner::Credentials => NotTestableReason::NeedsCredentials.label(),
        Owner::Listing => NotTestableReason::LaunchNotInPackage.label(),
        other => other.as_str(),
    }
}

/// The worst verdict of a server's cases.
pub fn worst(cases: &[&JudgedCase]) -> Worst {
    if let Some(n) = cases.iter().find_map(|r| r.not_testable.as_ref()) {
        return Worst::NotTestable(n.reason.owner());
    }
    // `stdin-null` has no session to fail; a server that crashes at start "passes" it. An
    // attack on the processes above the server is a verdict, not a case that could not run.
    let sessions: Vec<&JudgedCase> = cases
        .iter()
        .copied()
        .filter(|r| !r.scenario.ending().stdin_null())
        .collect();
    let could_not_run = |r: &&JudgedCase| {
        r.error
            .as_ref()
            .is_some_and(|e| e.kind != ErrorKind::AncestorSignalled)
    };
    if !sessions.is_empty() && sessions.iter().all(could_not_run) {
        // A handshake the machine's load timed out is not the server's failing to start.
        if sessions.iter().any(|r| r.is_machine_bound()) {
            return Worst::ReRun;
        }
        return Worst::CouldNotRun(main_owner(sessions).unwrap_or(Owner::Server));
    }
    let statuses: Vec<Status> = cases.iter().filter_map(|r| judged(r)).collect();
    if statuses.contains(&Status::Failure) {
        Worst::Failure
    } else if cases.iter().any(|r| r.is_machine_bound()) {
        Worst::ReRun
    } else if statuses.contains(&Status::Warning) {
        Worst::Warning
    } else {
        Worst::Success
    }
}

/// The servers counted apart on the leaderboard: how many could not be judged, by why.
pub fn counted_apart(rows: &[LeaderboardRow]) -> Vec<(String, usize)> {
    let mut counts: std::collections::BTreeMap<Worst, usize> = Default::default();
    for r in rows
        .iter()
        .filter(|r| matches!(r.worst, Worst::NotTestable(_) | Worst::CouldNotRun(_)))
    {
        *counts.entry(r.worst).or_default() += 1;
    }
    counts.into_iter().map(|(w, n)| (w.label(), n)).collect()
}

/// One server's leaderboard row.
#[derive(Clone, Debug)]
pub struct LeaderboardRow {
    pub server: String,
    /// The registry name and version, or the server's own name when no census described it.
    pub name: String,
    pub version: String,
    pub package: String,
    pub runtime: String,
    pub launcher: String,
    pub worst: Worst,
    pub flaky: bool,
    /// How the census judged it (reports that do not say: none).
    pub judged: Option<Judged>,
    /// Under each host column of the host view: the cell's words and colour.
    pub hosts: Vec<Option<(String, &'static str)>>,
    /// The sum of what the host's users wait (ms), the rank's tie-breaker.
    pub host_wait_ms: f64,
    /// Cases that left processes running, and how many processes.
    pub leaky_cases: usize,
    pub leaked: u64,
    pub stem: String,
}

/// A file name for a server: what its badge uses.
fn stem(server: &str) -> String {
    Badge {
        server: server.to_string(),
        label: String::new(),
        message: String::new(),
        color: badge::Color::Grey,
        passed: 0,
        scored: 0,
    }
    .file_stem()
}

/// A host cell's colour: a gentle stop, a hard one, or something left running.
fn host_class(c: &HostCell) -> &'static str {
    // A cell that is the host's doing says nothing of the server: not coloured as its verdict.
    if judged(c.case).is_none() || c.case.error.is_some() || c.hosts_doing.is_some() {
        "skip"
    } else if c.left_running {
        "fail"
    } else if c.hard || c.ended_by != "stdin EOF" {
        "warn"
    } else {
        "ok"
    }
}

/// The leaderboard's columns (host labels and sources) and its rows, best first: by worst
/// verdict, then by what the hosts' users wait, then by name.
pub fn leaderboard(report: &Report) -> (Vec<(String, String)>, Vec<LeaderboardRow>) {
    let view = hosts::view(report);
    let columns = view.as_ref().map_or_else(Vec::new, |v| {
        v.columns
            .iter()
            .map(|c| (c.label.clone(), c.source.clone().unwrap_or_default()))
            .collect()
    });
    let (servers, _) = axes(report);
    let mut rows: Vec<LeaderboardRow> = servers
        .iter()
        .map(|s| {
            let host_row = view
                .as_ref()
                .and_then(|v| v.rows.iter().find(|r| r.server == *s));
            row(report, s, host_row, columns.len())
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.worst, a.flaky)
            .cmp(&(b.worst, b.flaky))
            .then(a.host_wait_ms.total_cmp(&b.host_wait_ms))
            .then(a.name.cmp(&b.name))
    });
    (columns, rows)
}

fn row(
    report: &Report,
    server: &str,
    host_row: Option<&hosts::HostMatrixRow>,
    n: usize,
) -> LeaderboardRow {
    let cases: Vec<&JudgedCase> = report
        .results
        .iter()
        .filter(|r| r.server == server)
        .collect();
    let info = report.servers.get(server).cloned().unwrap_or_default();
    let (name, version, package, runtime, launcher) = describe(server, &info);
    let cells: Vec<Option<HostCell>> = host_row.map_or_else(|| vec![None; n], |r| r.cells.clone());
    // A case that never exited counts as the harness's whole watch, so it ranks last.
    let host_wait_ms = cells
        .iter()
        .flatten()
        .map(|c| c.wait_ms.unwrap_or(f64::from(u32::MAX)))
        .sum();
    LeaderboardRow {
        server: server.to_string(),
        name,
        version,
        package,
        runtime,
        launcher,
        worst: worst(&cases),
        flaky: cases
            .iter()
            .any(|r| r.repeat.as_ref().is_some_and(|x| x.flaky)),
        judged: info.judged.clone(),
        hosts: cells
            .iter()
            .map(|c| c.as_ref().map(|c| (c.short(), host_class(c))))
            .collect(),
        host_wait_ms,
        // What a launcher left running is the launcher's (its line says so).
        leaky_cases: cases.iter().filter(|r| r.own_leftover_count() > 0).count(),
        leaked: cases.iter().map(|r| r.own_leftover_count()).sum(),
        stem: stem(server),
    }
}

impl LeaderboardRow {
    /// What follows its verdict: how the census judged it.
    pub fn note(&self) -> String {
        self.judged.as_ref().map_or_else(String::new, census::note)
    }
}

/// (name, version, package, runtime, launcher) from what the census recorded, or the
/// manifest's own words for a report that was not a census.
fn describe(server: &str, info: &ServerInfo) -> (String, String, String, String, String) {
    match &info.package {
        Some(p) => (
            p.name.clone(),
            p.version.clone(),
            format!("{} {}@{}", p.registry, p.identifier, p.package_version),
            p.runtime.clone(),
            p.launcher.clone(),
        ),
        None => (
            server.to_string(),
            info.sdk_version.clone().unwrap_or_default(),
            String::new(),
            info.sdk.clone().unwrap_or_default(),
            String::new(),
        ),
    }
}

/// The report of one server alone (its cases, its description, the summary recomputed).
pub fn server_report(report: &Report, server: &str) -> Report {
    let mut r = report.clone();
    r.results.retain(|c| c.server == server);
    r.servers.retain(|s, _| s == server);
    r.resummarize();
    r
}

/// The Markdown a server's README can carry: its badges, linking to its page.
pub fn readme_snippet(server: &str, base: &str) -> String {
    let s = stem(server);
    let base = base.trim_end_matches('/');
    format!(
        "[![{label}]({base}/badges/{s}.svg)]({base}/servers/{s}.html)\n\
         [![{label} · hosts]({base}/badges/{s}-hosts.svg)]({base}/servers/{s}.html)\n\
         <!-- or, drawn by shields.io: -->\n\
         [![{label}](https://img.shields.io/endpoint?url={base}/badges/{s}.json)]({base}/servers/{s}.html)\n",
        label = badge::LABEL
    )
}

/// The leaderboard as a Markdown table (for a README or a job summary).
pub fn leaderboard_markdown(report: &Report) -> String {
    use super::md::escape;
    let (columns, rows) = leaderboard(report);
    let mut out = String::from("| # | server | version | runtime | worst verdict |");
    for (label, _) in &columns {
        out.push_str(&format!(" {} |", escape(label)));
    }
    out.push_str(" leaks |\n|---|---|---|---|---|");
    out.push_str(&"---|".repeat(columns.len() + 1));
    out.push('\n');
    for (i, r) in rows.iter().enumerate() {
        out.push_str(&format!(
            "| {} | `{}` | {} | {} ({}) | {}{}{} |",
            i + 1,
            escape(&r.name),
            escape(&r.version),
            escape(&r.runtime),
            escape(&r.launcher),
            r.worst.label(),
            if r.flaky { " (flaky)" } else { "" },
            r.note()
        ));
        for c in &r.hosts {
            let cell = c.as_ref().map_or("–".to_string(), |(t, _)| escape(t));
            out.push_str(&format!(" {cell} |"));
        }
        out.push_str(&format!(" {} |\n", r.leaked));
    }
    out
}

#[derive(Template)]
#[template(path = "site.html", config = "src/render/askama.toml")]
struct Index<'a> {
    title: String,
    spec: String,
    tool: String,
    host: String,
    cases: usize,
    /// `2 not testable: needs credentials, 1 could not run: usage`, or empty.
    apart: String,
    columns: Vec<(String, String)>,
    rows: &'a [LeaderboardRow],
    /// A week-over-week page is written beside it.
    week: bool,
}

#[derive(Template)]
#[template(path = "site-server.html", config = "src/render/askama.toml")]
struct ServerHeader {
    name: String,
    package: String,
    stem: String,
    badges: Vec<(String, String)>,
    /// Which census pass judged it and when (empty for reports that do not say).
    judged: String,
    /// Its badge now and since when, then before (with a history).
    history: Vec<String>,
    snippet: String,
    url_given: bool,
}

/// Every file of the site, by path relative to its directory (no history).
#[cfg(test)]
pub fn render(report: &Report, url: Option<&str>) -> Vec<(String, String)> {
    render_with(report, url, None)
}

/// The site, with each server's verdict history on its page and the week-over-week page
/// when a history is given.
pub fn render_with(
    report: &Report,
    url: Option<&str>,
    history: Option<&History>,
) -> Vec<(String, String)> {
    let (columns, rows) = leaderboard(report);
    let index = Index {
        title: format!("MCP shutdown census · spec {}", report.spec),
        spec: report.spec.to_string(),
        tool: visible(&format!("{} {}", report.tool.name, report.tool.version)),
        host: visible(&format!(
            "{} {} ({} cpus)",
            report.host.os, report.host.kernel, report.host.cpus
        )),
        cases: report.results.len(),
        apart: counted_apart(&rows)
            .iter()
            .map(|(what, n)| format!("{n} {what}"))
            .collect::<Vec<_>>()
            .join(", "),
        columns,
        rows: &rows,
        week: history.is_some(),
    };
    let mut files = vec![
        (
            "index.html".to_string(),
            index.render().expect("the leaderboard renders"),
        ),
        ("report.json".to_string(), report.to_json()),
        ("leaderboard.md".to_string(), leaderboard_markdown(report)),
    ];
    for row in &rows {
        let lines = history.map_or_else(Vec::new, |h| {
            census_history::server_lines(h, &census_history::key(report, &row.server))
        });
        files.extend(server_files(report, row, url, lines));
    }
    if let Some(h) = history {
        files.extend(census_history::week_files(h));
    }
    files
}

/// A server's page, badges and README snippet.
fn server_files(
    report: &Report,
    row: &LeaderboardRow,
    url: Option<&str>,
    history: Vec<String>,
) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut badges = Vec::new();
    for (scope, suffix) in [(Scope::All, ""), (Scope::Hosts, "-hosts")] {
        if let Some(b) = badge::badge_in(report, &row.server, scope) {
            let file = format!("{}{suffix}", row.stem);
            files.push((format!("badges/{file}.svg"), b.svg()));
            files.push((format!("badges/{file}.json"), b.endpoint_json()));
            badges.push((format!("../badges/{file}.svg"), visible(&b.message)));
        }
    }
    let snippet = readme_snippet(&row.server, url.unwrap_or("SITE_URL"));
    files.push((format!("servers/{}.md", row.stem), snippet.clone()));
    let header = ServerHeader {
        name: visible(&format!("{} {}", row.name, row.version)),
        package: visible(&format!(
            "{} · {} via {}",
            row.package, row.runtime, row.launcher
        )),
        stem: row.stem.clone(),
        badges,
        judged: report
            .servers
            .get(&row.server)
            .and_then(|i| i.judged.as_ref())
            .map_or_else(String::new, census::judged_line),
        history,
        snippet: visible(&snippet),
        url_given: url.is_some(),
    }
    .render()
    .expect("the server header renders");
    let page = super::html::render_with(&server_report(report, &row.server), header);
    files.push((format!("servers/{}.html", row.stem), page));
    files
}

#[cfg(test)]
mod tests;
