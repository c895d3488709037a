//! The terminal matrix: servers × scenarios, then every check that is not a success, every
//! case that could not run, every process left behind, and what held each survivor.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::present::{axes, cells, held_by, leftovers, mark, outcome};
use crate::model::{Outcome, Report, ScenarioId};

/// Renders the report as the terminal matrix.
pub fn render(report: &Report) -> String {
    let (servers, scenarios) = axes(report);
    let grid = cells(report);
    let text: BTreeMap<(&str, &ScenarioId), String> = grid
        .iter()
        .map(|(k, r)| (*k, format!("{} {}", outcome(r), mark(r.verdict()))))
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
    let _ = write!(out, "{:<w0$}", "server");
    for (sc, w) in scenarios.iter().zip(&widths) {
        let _ = write!(out, "  {:<w$}", sc.to_string());
    }
    out.push('\n');
    for sv in &servers {
        let _ = write!(out, "{sv:<w0$}");
        for (sc, w) in scenarios.iter().zip(&widths) {
            let c = text.get(&(*sv, *sc)).map_or("-", String::as_str);
            let _ = write!(out, "  {c:<w$}");
        }
        out.push('\n');
    }
    out.push('\n');
    findings(report, &mut out);
    held(report, &mut out);
    let s = &report.summary;
    let _ = writeln!(
        out,
        "\nspec {}: {} cases, {} success, {} failure, {} warning, {} info, {} skipped, {} could not run",
        report.spec, s.cases, s.success, s.failure, s.warning, s.info, s.skipped, s.errors
    );
    out
}

fn findings(report: &Report, out: &mut String) {
    for r in &report.results {
        if let Some(e) = &r.error {
            let _ = writeln!(
                out,
                "ERROR    {} {}: {}: {}",
                r.server, r.scenario, e.kind, e.message
            );
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
        for line in leftovers(r) {
            let _ = writeln!(out, "LEFTOVER {} {}: {line}", r.server, r.scenario);
        }
    }
}

/// What held each server the first time it outlived a step, and the likely fix.
fn held(report: &Report, out: &mut String) {
    let mut explained: Vec<&str> = Vec::new();
    for r in &report.results {
        let (Some(d), Some(line)) = (&r.diagnostics, held_by(r)) else {
            continue;
        };
        if explained.contains(&r.server.as_str()) {
            continue;
        }
        explained.push(&r.server);
        let _ = writeln!(
            out,
            "HELD BY  {}: {line}\n         hint: {}",
            r.server, d.hint
        );
    }
}
