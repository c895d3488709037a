//! Reports: the JSON report (the source every other format derives from) and the terminal
//! matrix. `schema_version` changes only when a key is renamed or removed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::budgets::{BudgetOverrides, Budgets};
use crate::observation::CaseResult;
use crate::rules::Status;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub os: String,
    pub kernel: String,
    pub cpus: usize,
}

impl Host {
    pub fn current() -> Self {
        Self {
            os: std::env::consts::OS.into(),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Counts of check statuses, and of cases that could not run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub cases: usize,
    pub errors: usize,
    pub success: usize,
    pub failure: usize,
    pub warning: usize,
    pub info: usize,
    pub skipped: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub description: String,
    pub sdk: Option<String>,
    pub sdk_version: Option<String>,
    pub shape: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    /// The spec revision whose levels scored the checks.
    pub spec: String,
    /// Defaults with the run's overrides applied (manifests may override per server).
    pub budgets: Budgets,
    pub host: Host,
    /// What each server is (from its manifest), by name.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerInfo>,
    pub results: Vec<CaseResult>,
    pub summary: Summary,
}

impl Report {
    pub fn new(spec: &str, overrides: BudgetOverrides, results: Vec<CaseResult>) -> Self {
        let summary = summarize(&results);
        Self {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "mcp-shutdown-conformance".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            spec: spec.into(),
            budgets: Budgets::default().with(&overrides),
            host: Host::current(),
            servers: BTreeMap::new(),
            results,
            summary,
        }
    }

    /// Does the run fail at this threshold? (`Warning` also fails on missed SHOULDs.)
    pub fn fails(&self, threshold: Status) -> bool {
        self.results
            .iter()
            .flat_map(|r| &r.checks)
            .any(|c| match threshold {
                Status::Warning => matches!(c.status, Status::Failure | Status::Warning),
                _ => c.status == Status::Failure,
            })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports serialize")
    }
}

pub fn summarize(results: &[CaseResult]) -> Summary {
    let mut s = Summary {
        cases: results.len(),
        errors: results.iter().filter(|r| r.error.is_some()).count(),
        ..Summary::default()
    };
    for c in results.iter().flat_map(|r| &r.checks) {
        match c.status {
            Status::Success => s.success += 1,
            Status::Failure => s.failure += 1,
            Status::Warning => s.warning += 1,
            Status::Info => s.info += 1,
            Status::Skipped => s.skipped += 1,
        }
    }
    s
}

/// The worst scored status of a case: `Failure`, `Warning`, or `Success` when neither.
/// A case that could not run and has no checks counts as a failure.
pub fn verdict(r: &CaseResult) -> Status {
    let worst = r
        .checks
        .iter()
        .map(|c| c.status)
        .filter(|s| matches!(s, Status::Failure | Status::Warning))
        .min();
    match worst {
        Some(s) => s,
        None if r.error.is_some() && r.checks.is_empty() => Status::Failure,
        None => Status::Success,
    }
}

/// A case's mark in the matrix.
fn mark(r: &CaseResult) -> &'static str {
    match verdict(r) {
        Status::Failure => "FAIL",
        Status::Warning => "WARN",
        _ => "ok",
    }
}

/// A case's cell: stage and latency, or the error kind.
pub fn cell(r: &CaseResult) -> String {
    let what = match (&r.error, r.stage, r.exit_ms) {
        (Some(e), _, _) => e.kind.to_string(),
        (None, Some(stage), Some(ms)) => format!("{stage} {ms:.0}ms"),
        (None, Some(stage), None) => stage.to_string(),
        (None, None, _) => "?".into(),
    };
    format!("{what} {}", mark(r))
}

/// The terminal matrix: servers × scenarios, then every check that is not a success.
pub fn render_text(report: &Report) -> String {
    let mut servers: Vec<&str> = Vec::new();
    let mut scenarios: Vec<&str> = Vec::new();
    let mut cells: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for r in &report.results {
        if !servers.contains(&r.server.as_str()) {
            servers.push(&r.server);
        }
        if !scenarios.contains(&r.scenario.as_str()) {
            scenarios.push(&r.scenario);
        }
        cells.insert((&r.server, &r.scenario), cell(r));
    }
    let w0 = servers.iter().map(|s| s.len()).max().unwrap_or(6).max(6);
    let widths: Vec<usize> = scenarios
        .iter()
        .map(|sc| {
            servers
                .iter()
                .filter_map(|sv| cells.get(&(*sv, *sc)).map(String::len))
                .max()
                .unwrap_or(0)
                .max(sc.len())
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{:<w0$}", "server");
    for (sc, w) in scenarios.iter().zip(&widths) {
        let _ = write!(out, "  {sc:<w$}");
    }
    out.push('\n');
    for sv in &servers {
        let _ = write!(out, "{sv:<w0$}");
        for (sc, w) in scenarios.iter().zip(&widths) {
            let c = cells.get(&(*sv, *sc)).map_or("-", String::as_str);
            let _ = write!(out, "  {c:<w$}");
        }
        out.push('\n');
    }
    out.push('\n');
    for r in &report.results {
        if let Some(e) = &r.error {
            let _ = writeln!(
                out,
                "ERROR    {} {}: {}: {}",
                r.server, r.scenario, e.kind, e.message
            );
        }
        for c in &r.checks {
            if matches!(c.status, Status::Failure | Status::Warning)
                && c.outcome != crate::rules::Outcome::NotTestable
            {
                let _ = writeln!(
                    out,
                    "{:<8} {} {} {}: {}",
                    c.status, r.server, r.scenario, c.id, c.message
                );
            }
        }
        if let Some(n) = &r.note {
            let _ = writeln!(out, "NOTE     {} {}: {n}", r.server, r.scenario);
        }
        for l in &r.leftovers {
            let _ = writeln!(
                out,
                "LEFTOVER {} {}: pid {} `{}` (started by {}) was still running; the harness killed it",
                r.server,
                r.scenario,
                l.pid,
                l.cmdline,
                l.started_by_cmdline.as_deref().unwrap_or("?")
            );
        }
    }
    // What held each server the first time it outlived a step, and the likely fix.
    let mut explained: Vec<&str> = Vec::new();
    for r in &report.results {
        let Some(d) = &r.diagnostics else { continue };
        if explained.contains(&r.server.as_str()) {
            continue;
        }
        explained.push(&r.server);
        let fds: Vec<String> = d.fds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(
            out,
            "HELD BY  {} ({}): {} threads [{}]; fds: {}{}\n         hint: {}",
            r.server,
            d.runtime.as_deref().unwrap_or("unknown runtime"),
            d.threads,
            d.thread_names.join(", "),
            fds.join(", "),
            if d.children.is_empty() {
                String::new()
            } else {
                format!("; children: {}", d.children.join(" | "))
            },
            d.hint
        );
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "\nspec {}: {} cases, {} success, {} failure, {} warning, {} info, {} skipped, {} could not run",
        report.spec, s.cases, s.success, s.failure, s.warning, s.info, s.skipped, s.errors
    );
    out
}
