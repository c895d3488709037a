//! The terminal matrix: servers × scenarios, then every check that is not a success, every
//! case that could not run, every process left behind, and what held each survivor.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::hosts::{self, is_host_scenario};
use super::present::{
    axes, cells, first_held, fix_heading, fixes_of, leftovers, mark_of, outcome, runs_line,
};
use crate::model::{HostsDoing, Outcome, Owner, ProfileKind, Report, ScenarioId};

/// Renders the report as the terminal matrix.
pub fn render(report: &Report) -> String {
    let (servers, mut scenarios) = axes(report);
    // Host profiles get their own view below.
    scenarios.retain(|s| !is_host_scenario(report, s));
    let grid = cells(report);
    let text: BTreeMap<(&str, &ScenarioId), String> = grid
        .iter()
        .map(|(k, r)| (*k, format!("{} {}", outcome(r), mark_of(r))))
        .collect();
    let w0 = servers.iter().map(|s| s.len()).max().unwrap_or(6).max(6);
    let widths: Vec<usize> = scenarios
        .iter()
        .map(|sc| {
            servers
                .iter()
                .filter_map(|sv| text.get(&(*sv, *sc)).map(String::len))
                .max()
                .unwrap_or(0)
                .max(sc.to_string().len())
        })
        .collect();
    let mut out = String::new();
    if !scenarios.is_empty() {
        matrix(&servers, &scenarios, &widths, w0, &text, &mut out);
    }
    host_view(report, &mut out);
    findings(report, &mut out);
    found(report, &mut out);
    held(report, &mut out);
    super::history::text(report, &mut out);
    super::what_if::text(report, &mut out);
    for (id, p) in report
        .profiles
        .iter()
        .filter(|(_, p)| p.kind != ProfileKind::Host)
    {
        let _ = writeln!(
            out,
            "LADDER   close:{id}: {} ({})",
            p.client,
            hosts::source(p)
        );
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "\nspec {}: {} cases, {} success, {} failure, {} warning, {} info, {} skipped, {} could not run{}",
        report.spec, s.cases, s.success, s.failure, s.warning, s.info, s.skipped, s.errors,
        no_verdict_counts(s)
    );
    out
}

/// `; no verdict: 1 usage, 2 server` (by owner), or for an older report its credentials count.
pub fn no_verdict_counts(s: &crate::model::Summary) -> String {
    if s.no_verdict.is_empty() {
        return match s.not_testable {
            0 => String::new(),
            n => format!(" ({n} not testable: needs credentials)"),
        };
    }
    let parts: Vec<String> = s
        .no_verdict
        .iter()
        .map(|(owner, n)| format!("{n} {owner}"))
        .collect();
    format!("; no verdict: {}", parts.join(", "))
}

fn matrix(
    servers: &[&str],
    scenarios: &[&ScenarioId],
    widths: &[usize],
    w0: usize,
    text: &BTreeMap<(&str, &ScenarioId), String>,
    out: &mut String,
) {
    let _ = write!(out, "{:<w0$}", "server");
    for (sc, w) in scenarios.iter().zip(widths) {
        let _ = write!(out, "  {:<w$}", sc.to_string());
    }
    out.push('\n');
    for sv in servers {
        let _ = write!(out, "{sv:<w0$}");
        for (sc, w) in scenarios.iter().zip(widths) {
            let c = text.get(&(*sv, *sc)).map_or("-", String::as_str);
            let _ = write!(out, "  {c:<w$}");
        }
        out.push('\n');
    }
    out.push('\n');
}

fn findings(report: &Report, out: &mut String) {
    for r in &report.results {
        if let Some(n) = &r.not_testable {
            let _ = writeln!(
                out,
                "SKIP     {} {}: not testable: {}: {} (owner: {})",
                r.server,
                r.scenario,
                n.reason.label(),
                n.message,
                n.reason.owner()
            );
        } else if let Some(e) = r.error.as_ref().filter(|_| r.same_as.is_none()) {
            let _ = writeln!(
                out,
                "{:<8} {} {}: {}: {} (owner: {})",
                match e.kind.owner() {
                    Owner::Usage => "USAGE",
                    Owner::Harness => "HARNESS",
                    _ => "ERROR",
                },
                r.server,
                r.scenario,
                e.kind,
                e.message,
                e.kind.owner()
            );
            if let Some(same) = super::present::same_as(report, r) {
                let _ = writeln!(out, "         the same in {same}: not launched again");
            }
        }
        for c in &r.checks {
            if c.status.is_miss() && c.outcome != Outcome::NotTestable {
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
        if let Some(line) = runs_line(r).filter(|_| r.repeat.as_ref().is_some_and(|x| x.flaky)) {
            let _ = writeln!(out, "FLAKY    {} {}: {line}", r.server, r.scenario);
        }
        if let Some(line) = super::present::machine_bound_of(r) {
            let _ = writeln!(out, "RE-RUN   {} {}: {line}", r.server, r.scenario);
        }
        for line in leftovers(r) {
            let _ = writeln!(out, "LEFTOVER {} {}: {line}", r.server, r.scenario);
        }
        if let Some(line) = crate::model::launcher_line(r) {
            let _ = writeln!(out, "LAUNCHER {} {}: {line}", r.server, r.scenario);
        }
    }
}

/// Per server: each host's user's wait, what ended the server, and what would have.
fn host_view(report: &Report, out: &mut String) {
    let Some(v) = hosts::view(report) else {
        return;
    };
    let head = [
        "host",
        "user waits",
        "ended by",
        "killed hard",
        "left running",
        "verdict",
        "ladder",
    ];
    for row in &v.rows {
        match row.needs.as_deref() {
            Some(needs) => writeln!(out, "HOSTS    {}: ends gently on {needs}", row.server),
            None => writeln!(
                out,
                "HOSTS    {} (run `close` too to see what ends it gently)",
                row.server
            ),
        }
        .ok();
        let lines: Vec<[String; 7]> = v
            .columns
            .iter()
            .zip(&row.cells)
            .filter_map(|(c, cell)| cell.as_ref().map(|cell| host_line(c, cell)))
            .collect();
        let widths: Vec<usize> = (0..7)
            .map(|i| {
                lines
                    .iter()
                    .map(|l| l[i].len())
                    .chain([head[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let head = head.map(String::from);
        for l in std::iter::once(&head).chain(&lines) {
            let cols: Vec<String> = l
                .iter()
                .zip(&widths)
                .map(|(s, w)| format!("{s:<w$}"))
                .collect();
            let _ = writeln!(out, "  {}", cols.join("  ").trim_end());
        }
        out.push('\n');
    }
}

/// One host's line: host, wait, what ended it, killed hard, what was left, verdict, ladder.
fn host_line(c: &hosts::Column, cell: &hosts::HostCell) -> [String; 7] {
    let (wait, by) = match &cell.case.error {
        Some(e) => ("-".to_string(), super::present::error_cell(e.kind)),
        None => (
            cell.wait_ms.map_or("-".into(), hosts::seconds),
            cell.ended_by.clone(),
        ),
    };
    let left = match (cell.left_running, cell.case.leftover_count()) {
        (false, _) => "no".to_string(),
        (true, _) if cell.hosts_doing == Some(HostsDoing::LeftRunning) => "by the host".into(),
        (true, 0) => "yes".to_string(),
        (true, n) => format!("yes ({n} left)"),
    };
    let hard = match (cell.hard, cell.hosts_doing) {
        (true, Some(HostsDoing::KilledHard)) => "by the host",
        (true, _) => "yes",
        (false, _) => "no",
    };
    [
        c.label.clone(),
        wait,
        by,
        hard.to_string(),
        left,
        host_verdict(cell).to_string(),
        c.source.clone().unwrap_or_else(|| "terminal ending".into()),
    ]
}

/// A host line's verdict: a missed rule's mark, else "host's doing" where the host's ladder
/// left the server no say (never "ok" beside a server the host killed hard or left running).
fn host_verdict(cell: &hosts::HostCell) -> &'static str {
    match (cell.verdict(), cell.hosts_doing) {
        (Some(s), _) => super::present::mark(s),
        (None, Some(_)) => "host's doing",
        (None, None) => "SKIP",
    }
}

/// What the run found of each server its manifest did not say: its SDK where its packages
/// are installed, and the launchers it was started through.
fn found(report: &Report, out: &mut String) {
    for (name, info) in &report.servers {
        let mut parts = Vec::new();
        if let (Some(sdk), Some(v), Some(from)) = (&info.sdk, &info.sdk_version, &info.sdk_from) {
            parts.push(format!("SDK {sdk} {v} (read from {})", from.display()));
        }
        if !info.launchers.is_empty() {
            parts.push(format!(
                "started through {}",
                info.launchers.join(", then ")
            ));
        }
        if !parts.is_empty() {
            let _ = writeln!(out, "SERVER   {name}: {}", parts.join("; "));
        }
    }
}

/// Per server: what held it the first time it outlived a step, then every fix for what it
/// missed (the runtime's hint where the report carries no fixes).
fn held(report: &Report, out: &mut String) {
    for server in axes(report).0 {
        let fixes = fixes_of(report, server);
        if let Some((r, line)) = first_held(report, server) {
            let _ = writeln!(out, "HELD BY  {server}: {line}");
            if let (Some(d), true) = (&r.diagnostics, fixes.is_empty()) {
                let _ = writeln!(out, "         hint: {}", d.hint);
            }
        }
        for f in fixes {
            let _ = writeln!(out, "FIX      {server}: {}", fix_heading(f));
            let _ = writeln!(out, "         {}", f.text);
            if let Some(code) = &f.code {
                let _ = writeln!(out, "         as in {}:", code.source);
                for l in code.lines.lines() {
                    let _ = writeln!(out, "         | {l}");
                }
            }
        }
    }
}
