//! The differential views: what changed between two reports (for an SDK release PR), and
//! the pruned matrix that keeps only the endings where servers of the same shape disagree.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::{Report, RuleId, ScenarioId, Status};

/// How one check moved between two reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Was missed (FAILURE/WARNING), now holds.
    Fixed,
    /// Held (or was not scored), now missed.
    Broken,
    Unchanged,
    /// Only in the new report.
    New,
    /// Only in the old report.
    Removed,
}

/// One row of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub server: String,
    pub scenario: ScenarioId,
    pub rule: RuleId,
    pub old: Option<Status>,
    pub new: Option<Status>,
    pub change: Change,
}

type Key = (String, ScenarioId, RuleId);

fn statuses(r: &Report) -> BTreeMap<Key, Status> {
    r.results
        .iter()
        .flat_map(|x| {
            x.checks
                .iter()
                .map(move |c| ((x.server.clone(), x.scenario.clone(), c.id), c.status))
        })
        .collect()
}

/// Compares every check of `old` and `new`, keyed by server, scenario and rule.
pub fn diff(old: &Report, new: &Report) -> Vec<Row> {
    let (a, b) = (statuses(old), statuses(new));
    let mut keys: Vec<&Key> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let (o, n) = (a.get(k).copied(), b.get(k).copied());
            let change = match (o, n) {
                (None, _) => Change::New,
                (_, None) => Change::Removed,
                (Some(o), Some(n)) if o.is_miss() && !n.is_miss() => Change::Fixed,
                (Some(o), Some(n)) if !o.is_miss() && n.is_miss() => Change::Broken,
                _ => Change::Unchanged,
            };
            Row {
                server: k.0.clone(),
                scenario: k.1.clone(),
                rule: k.2,
                old: o,
                new: n,
                change,
            }
        })
        .collect()
}

/// A Markdown summary of a diff, fit for a release PR.
pub fn render_diff(rows: &[Row]) -> String {
    let count = |c: Change| rows.iter().filter(|r| r.change == c).count();
    let mut out = format!(
        "**{} fixed · {} broken · {} new · {} removed · {} unchanged**\n",
        count(Change::Fixed),
        count(Change::Broken),
        count(Change::New),
        count(Change::Removed),
        count(Change::Unchanged)
    );
    let show = |s: Option<Status>| s.map_or_else(|| "–".to_string(), |s| s.to_string());
    for (title, c) in [
        ("Fixed", Change::Fixed),
        ("Broken", Change::Broken),
        ("New", Change::New),
        ("Removed", Change::Removed),
    ] {
        let list: Vec<&Row> = rows.iter().filter(|r| r.change == c).collect();
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {title}\n\n| server | scenario | rule | before | after |\n| --- | --- | --- | --- | --- |");
        for r in list {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                r.server,
                r.scenario,
                r.rule,
                show(r.old),
                show(r.new)
            );
        }
    }
    out
}

/// The pruned view: for each server shape (from the manifests' `about.shape`), the endings
/// whose stage is not the same for every server of that shape. Agreement is folded away.
pub fn render_pruned(report: &Report) -> String {
    let mut by_shape: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (name, info) in &report.servers {
        by_shape
            .entry(info.shape.clone().unwrap_or_else(|| "?".into()))
            .or_default()
            .push(name);
    }
    let stage = |server: &str, scenario: &ScenarioId| {
        report
            .results
            .iter()
            .find(|r| r.server == server && &r.scenario == scenario)
            .map(|r| match (&r.error, r.stage) {
                (Some(e), _) => e.kind.to_string(),
                (None, Some(s)) => s.to_string(),
                (None, None) => "?".into(),
            })
    };
    let (_, scenarios) = super::present::axes(report);
    let mut out = String::new();
    let mut agreeing = 0;
    for (shape, servers) in &by_shape {
        if servers.len() < 2 {
            continue;
        }
        let rows: Vec<(&ScenarioId, Vec<String>)> = scenarios
            .iter()
            .map(|sc| {
                (
                    *sc,
                    servers
                        .iter()
                        .map(|sv| stage(sv, sc).unwrap_or_else(|| "-".into()))
                        .collect::<Vec<_>>(),
                )
            })
            .filter(|(_, cells)| cells.iter().any(|c| c != &cells[0]))
            .collect();
        agreeing += scenarios.len() - rows.len();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "shape `{shape}`: {} servers disagree on {} ending(s)",
            servers.len(),
            rows.len()
        );
        for (sc, cells) in rows {
            let _ = writeln!(out, "  {sc}:");
            for (sv, c) in servers.iter().zip(cells) {
                let _ = writeln!(out, "    {sv:<40} {c}");
            }
        }
    }
    let _ = writeln!(
        out,
        "({agreeing} shape × ending rows where every server agrees are folded away)"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, JudgedCase, Level, Observation, Outcome, ServerInfo, Stage};
    use crate::test_support::report_of;

    fn report(rows: &[(&str, &str, Stage, Status)]) -> Report {
        let results = rows
            .iter()
            .map(|(server, scenario, stage, status)| {
                let mut o = Observation::empty(server, &scenario.parse().unwrap());
                o.stage = Some(*stage);
                JudgedCase {
                    observation: o,
                    budgets: None,
                    ladder: None,
                    repeat: None,
                    not_testable: None,
                    checks: vec![Check {
                        id: RuleId::StdioExitOnEof,
                        status: *status,
                        level: Level::Should,
                        outcome: Outcome::Pass,
                        message: String::new(),
                        spec_references: Vec::new(),
                    }],
                }
            })
            .collect();
        let mut rep = report_of(results);
        for (server, ..) in rows {
            rep.servers.insert(
                server.to_string(),
                ServerInfo {
                    shape: Some("timer".into()),
                    package: None,
                    ..Default::default()
                },
            );
        }
        rep
    }

    #[test]
    fn fixed_broken_new_removed() {
        let old = report(&[
            ("a", "close", Stage::Sigterm, Status::Warning),
            ("b", "close", Stage::Eof, Status::Success),
            ("c", "close", Stage::Eof, Status::Success),
        ]);
        let new = report(&[
            ("a", "close", Stage::Eof, Status::Success),
            ("b", "close", Stage::Sigterm, Status::Warning),
            ("d", "close", Stage::Eof, Status::Success),
        ]);
        let rows = diff(&old, &new);
        let change = |s: &str| rows.iter().find(|r| r.server == s).unwrap().change;
        assert_eq!(
            (change("a"), change("b"), change("c"), change("d")),
            (Change::Fixed, Change::Broken, Change::Removed, Change::New)
        );
        let md = render_diff(&rows);
        assert!(
            md.contains("1 fixed · 1 broken · 1 new · 1 removed"),
            "{md}"
        );
    }

    #[test]
    fn pruned_view_keeps_only_disagreement() {
        let r = report(&[
            ("node", "close", Stage::Sigterm, Status::Warning),
            ("go", "close", Stage::Sigterm, Status::Warning),
            ("node", "exit", Stage::Survived, Status::Warning),
            ("go", "exit", Stage::Eof, Status::Success),
        ]);
        let text = render_pruned(&r);
        assert!(text.contains("exit:") && !text.contains("close:"), "{text}");
        assert!(
            text.contains("1 shape × ending rows where every server agrees"),
            "{text}"
        );
    }
}
