//! The differential views: what changed between two sources (two reports, or two SDK
//! builds in one report: the release and a patched checkout), paired by kit line × shape ×
//! ending when both sides are one build per line, else by server; and the pruned matrix
//! that keeps only the endings where servers of the same shape disagree.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::history::{member, shown_label, stage_of};
use super::present::ms;
use crate::model::{JudgedCase, Report, RuleId, ScenarioId, Status};

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

/// One row of a diff. `server` is the server's name, or `line/shape` when the sides are
/// paired by kit line and shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffRow {
    pub server: String,
    pub scenario: ScenarioId,
    pub rule: RuleId,
    pub old: Option<Status>,
    pub new: Option<Status>,
    pub change: Change,
}

/// One case on both sides: its stage (with the in-flight outcome, where one was) and exit
/// latency before and after.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRow {
    pub server: String,
    pub scenario: ScenarioId,
    pub before: Option<CaseSummary>,
    pub after: Option<CaseSummary>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CaseSummary {
    pub stage: String,
    pub exit_ms: Option<f64>,
}

/// A whole comparison: what each side is, the cases side by side and the checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// What the sides are (`typescript 1.32.2`, `typescript local:eof-fix`, or `OLD.json`).
    pub before: String,
    pub after: String,
    /// True when cases were paired by kit line × shape × ending.
    pub by_shape: bool,
    pub cases: Vec<CaseRow>,
    pub rows: Vec<DiffRow>,
}

/// A diff's side: a report, and optionally one SDK build of it (`LINE@LABEL`: a version,
/// or `local:NAME` for a local build).
#[derive(Clone, Copy, Debug)]
pub struct Side<'r> {
    pub report: &'r Report,
    pub source: Option<&'r str>,
    /// What to call it when no source is given (the report's file name).
    pub name: &'r str,
}

/// A case of a report: its server and scenario.
pub(super) type CaseKey = (String, ScenarioId);

/// A kit server's line, shown label (`1.30.0`, `local:eof-fix`) and shape.
type Build = (String, String, String);

/// A server of a side, with its build when it is a kit server.
type SideServer<'r> = (&'r str, Option<Build>);

/// The servers of a side: name → (line, shown label, shape) for kit servers.
fn selected<'r>(side: &Side<'r>) -> Result<Vec<SideServer<'r>>, String> {
    let wanted = side
        .source
        .map(|s| {
            s.split_once('@')
                .ok_or_else(|| format!("{s:?}: a source is LINE@VERSION or LINE@local:NAME"))
        })
        .transpose()?;
    // Every server with a result (a report need not describe each in `servers`).
    let mut names: Vec<&'r str> = side
        .report
        .results
        .iter()
        .map(|r| r.server.as_str())
        .chain(side.report.servers.keys().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let kit = member(name, side.report).map(|(line, label, version, shape)| {
            let shown = shown_label(label);
            (line, shown, version, shape)
        });
        if let Some((line, label)) = wanted {
            match &kit {
                Some((l, shown, version, _))
                    if *l == line && (shown == label || *version == label) => {}
                _ => continue,
            }
        }
        out.push((
            name,
            kit.map(|(l, shown, _, shape)| (l.to_string(), shown, shape.to_string())),
        ));
    }
    if out.is_empty() {
        if let Some(s) = side.source {
            return Err(format!("no server of {s} in {}", side.name));
        }
    }
    Ok(out)
}

/// Kit servers of one build per line can be paired by line and shape.
fn one_build_per_line(servers: &[SideServer]) -> bool {
    let mut builds: BTreeMap<&str, &str> = BTreeMap::new();
    servers.iter().all(|(_, k)| match k {
        Some((line, label, _)) => **builds.entry(line.as_str()).or_insert(label.as_str()) == *label,
        None => false,
    })
}

/// What a side is called in the heading: its builds, or its name.
fn describe(servers: &[SideServer], by_shape: bool, name: &str) -> String {
    if !by_shape {
        return name.to_string();
    }
    let mut builds: Vec<String> = servers
        .iter()
        .filter_map(|(_, k)| k.as_ref().map(|(l, b, _)| format!("{l} {b}")))
        .collect();
    builds.sort();
    builds.dedup();
    builds.join(", ")
}

fn cases<'r>(
    side: &Side<'r>,
    servers: &[SideServer<'r>],
    by_shape: bool,
) -> BTreeMap<CaseKey, &'r JudgedCase> {
    let key_of: BTreeMap<&str, String> = servers
        .iter()
        .map(|(name, kit)| match (kit, by_shape) {
            (Some((line, _, shape)), true) => (*name, format!("{line}/{shape}")),
            _ => (*name, name.to_string()),
        })
        .collect();
    side.report
        .results
        .iter()
        .filter_map(|r| {
            key_of
                .get(r.server.as_str())
                .map(|k| ((k.clone(), r.scenario.clone()), r))
        })
        .collect()
}

fn change(o: Option<Status>, n: Option<Status>) -> Change {
    match (o, n) {
        (None, _) => Change::New,
        (_, None) => Change::Removed,
        (Some(o), Some(n)) if o.is_miss() && !n.is_miss() => Change::Fixed,
        (Some(o), Some(n)) if !o.is_miss() && n.is_miss() => Change::Broken,
        _ => Change::Unchanged,
    }
}

fn summary(r: &JudgedCase) -> CaseSummary {
    CaseSummary {
        stage: stage_of(r),
        exit_ms: r.exit_ms,
    }
}

/// Compares two sides: cases paired by kit line × shape × ending when each side is one
/// build per line (a release against its patched checkout), else by server × ending.
pub fn compare(before: Side, after: Side) -> Result<Diff, String> {
    compare_paired(before, after, true)
}

/// [`compare`], pairing by line and shape only when `by_shape_allowed`.
fn compare_paired(before: Side, after: Side, by_shape_allowed: bool) -> Result<Diff, String> {
    let (a, b) = (selected(&before)?, selected(&after)?);
    let by_shape = by_shape_allowed && one_build_per_line(&a) && one_build_per_line(&b);
    let (ca, cb) = (cases(&before, &a, by_shape), cases(&after, &b, by_shape));
    let mut keys: Vec<&CaseKey> = ca.keys().chain(cb.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut rows = Vec::new();
    let mut case_rows = Vec::new();
    for k in keys {
        let (o, n) = (ca.get(k), cb.get(k));
        case_rows.push(CaseRow {
            server: k.0.clone(),
            scenario: k.1.clone(),
            before: o.map(|r| summary(r)),
            after: n.map(|r| summary(r)),
        });
        let status = |r: Option<&&JudgedCase>| -> BTreeMap<RuleId, Status> {
            r.map(|r| r.checks.iter().map(|c| (c.id, c.status)).collect())
                .unwrap_or_default()
        };
        let (so, sn) = (status(o), status(n));
        let mut rules: Vec<&RuleId> = so.keys().chain(sn.keys()).collect();
        rules.sort();
        rules.dedup();
        for rule in rules {
            let (old, new) = (so.get(rule).copied(), sn.get(rule).copied());
            rows.push(DiffRow {
                server: k.0.clone(),
                scenario: k.1.clone(),
                rule: *rule,
                old,
                new,
                change: change(old, new),
            });
        }
    }
    Ok(Diff {
        before: describe(&a, by_shape, before.name),
        after: describe(&b, by_shape, after.name),
        by_shape,
        cases: case_rows,
        rows,
    })
}

/// Compares every check of `old` and `new`, keyed by server, scenario and rule (never by
/// shape: the same servers, run again).
pub fn diff(old: &Report, new: &Report) -> Vec<DiffRow> {
    let side = |report| Side {
        report,
        source: None,
        name: "",
    };
    compare_paired(side(old), side(new), false).map_or_else(|_| Vec::new(), |d| d.rows)
}

fn cell(s: &Option<CaseSummary>) -> String {
    match s {
        None => "–".into(),
        Some(c) => match c.exit_ms {
            Some(t) => format!("{} · {}", c.stage, ms(t)),
            None => c.stage.clone(),
        },
    }
}

/// The cases side by side, those whose stage changed first.
fn render_cases(d: &Diff, out: &mut String) {
    let changed =
        |c: &&CaseRow| c.before.as_ref().map(|x| &x.stage) != c.after.as_ref().map(|x| &x.stage);
    let (moved, same): (Vec<&CaseRow>, Vec<&CaseRow>) = d.cases.iter().partition(changed);
    let what = if d.by_shape { "line/shape" } else { "server" };
    for (title, list) in [("Stage changed", moved), ("Stage unchanged", same)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n### {title} ({})\n\n| {what} | ending | before | after |\n| --- | --- | --- | --- |",
            list.len()
        );
        for c in list {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                c.server,
                c.scenario,
                cell(&c.before),
                cell(&c.after)
            );
        }
    }
}

/// A Markdown summary of a diff, fit for a release PR: the sides, the cases side by side
/// (stage and exit latency, before → after), then the checks that moved.
pub fn render_compare(d: &Diff) -> String {
    let mut out = format!("**before: {} → after: {}**\n\n", d.before, d.after);
    out.push_str(&render_diff(&d.rows));
    render_cases(d, &mut out);
    out
}

/// A Markdown summary of a diff's checks.
pub fn render_diff(rows: &[DiffRow]) -> String {
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
        let list: Vec<&DiffRow> = rows.iter().filter(|r| r.change == c).collect();
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
                        .map(|sv| pruned_cell(report, sv, sc).unwrap_or_else(|| "-".into()))
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

/// What ended one server's case under one scenario, or its error; `None` when it did not run.
fn pruned_cell(report: &Report, server: &str, scenario: &ScenarioId) -> Option<String> {
    report
        .results
        .iter()
        .find(|r| r.server == server && &r.scenario == scenario)
        .map(|r| match (&r.error, r.stage) {
            (Some(e), _) => e.kind.to_string(),
            (None, Some(s)) => s.to_string(),
            (None, None) => "?".into(),
        })
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
                    fixes: Vec::new(),
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

    /// A release and its patched local build in one report: paired by line × shape ×
    /// ending, before → after, with latencies.
    #[test]
    fn two_builds_pair_by_line_shape_and_ending() {
        let mut rep = report(&[
            (
                "typescript-1.32.2-timer",
                "close",
                Stage::Sigterm,
                Status::Warning,
            ),
            (
                "typescript-local-eof-fix-timer",
                "close",
                Stage::Eof,
                Status::Success,
            ),
        ]);
        for (name, version) in [
            ("typescript-1.32.2-timer", "1.32.2"),
            ("typescript-local-eof-fix-timer", "1.32.2+local.1a2b3c4d"),
        ] {
            let info = rep.servers.get_mut(name).unwrap();
            info.sdk = Some("typescript".into());
            info.sdk_version = Some(version.into());
        }
        for r in &mut rep.results {
            r.observation.exit_ms = Some(if r.stage == Some(Stage::Eof) {
                17.0
            } else {
                2012.0
            });
        }
        let side = |source| Side {
            report: &rep,
            source: Some(source),
            name: "r.json",
        };
        let d = compare(side("typescript@1.32.2"), side("typescript@local:eof-fix")).unwrap();
        assert!(d.by_shape);
        assert_eq!(d.cases.len(), 1);
        assert_eq!(d.rows[0].server, "typescript/timer");
        assert_eq!(d.rows[0].change, Change::Fixed);
        let md = render_compare(&d);
        assert!(
            md.contains("**before: typescript 1.32.2 → after: typescript local:eof-fix**"),
            "{md}"
        );
        assert!(
            md.contains("| typescript/timer | close | sigterm · 2012 ms | eof · 17 ms |"),
            "{md}"
        );
        let e = compare(side("typescript@9.9.9"), side("typescript@1.32.2")).unwrap_err();
        assert!(e.contains("no server of typescript@9.9.9 in r.json"), "{e}");
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
