//! SDK versions side by side: when a report holds several versions of one SDK line (a
//! `--sdk LINE@all` sweep), the stage each version reached, per shape × ending, as runs of
//! equal stages (`1.0.0–1.23.0 sigterm · 1.24.0– eof`) and the versions where it changed;
//! and the versions asked for that could not be made into servers. Pure over the report:
//! servers are grouped by their `servers` info (`sdk` = the kit line, `sdk_version`, `shape`).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write;

use super::present::{axes, cells};
use crate::model::{JudgedCase, Report, Untested};

/// One SDK line across the versions in a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineHistory {
    pub line: String,
    /// Version labels, oldest first (`1.24.0`, or `local-1a2b3c4d` for a local build).
    pub versions: Vec<String>,
    pub rows: Vec<HistoryRow>,
}

/// One shape under one ending, across the line's versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryRow {
    pub shape: String,
    pub scenario: String,
    pub runs: Vec<StageRun>,
    pub changes: Vec<StageChange>,
}

/// Consecutive versions that reached the same stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageRun {
    pub from: String,
    pub to: String,
    /// `eof`, `sigterm`, ..., an error kind when the case could not run, `–` when the
    /// version has no such server.
    pub stage: String,
}

/// A version whose stage differs from the one before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageChange {
    pub at: String,
    pub from: String,
    pub to: String,
}

/// A version as semver orders it: semver itself (`v` dropped), or a shorter or Python-style
/// one made into it (`1.9` → `1.9.0`, `2.0.0b1` → `2.0.0-b1`, `1.0.post1` → `1.0.0+post1`):
/// a pre-release comes before its release, a build or post-release after it.
fn semver_of(v: &str) -> Option<semver::Version> {
    let v = v.trim_start_matches('v');
    if let Ok(s) = semver::Version::parse(v) {
        return Some(s);
    }
    let end = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (nums, tag) = v.split_at(end);
    let mut parts: Vec<&str> = nums.split('.').filter(|p| !p.is_empty()).collect();
    let tag = match tag.trim_start_matches(['.', '-']) {
        "" => String::new(),
        t => match t.strip_prefix("post") {
            Some(post) => format!("+post{post}"),
            None => format!("-{t}"),
        },
    };
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    parts.resize(3, "0");
    semver::Version::parse(&format!("{}{tag}", parts.join("."))).ok()
}

/// Orders versions as semver does (see [`semver_of`]); what is no version comes last, by
/// name. Enough for display: the kits' own ordering decides what a sweep contains.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    match (semver_of(a), semver_of(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.cmp(b))
}

/// The stage a case reached (with what became of the request in flight, where one was), or
/// why it has none.
pub fn stage_of(r: &JudgedCase) -> String {
    match (&r.stage, &r.error) {
        (Some(s), _) => match r.inflight_outcome {
            Some(o) => format!("{s}, {o}"),
            None => s.to_string(),
        },
        (None, Some(e)) => serde_json::to_value(e.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "error".into()),
        (None, None) => "–".into(),
    }
}

/// A server of a kit line: (line, version label, version, shape). The label is the name's
/// middle (`typescript-local-1a2b3c4d-timer`) when the name follows `<line>-<label>-<shape>`.
pub(super) fn member<'r>(
    name: &'r str,
    report: &'r Report,
) -> Option<(&'r str, &'r str, &'r str, &'r str)> {
    let info = report.servers.get(name)?;
    let (line, version, shape) = (
        info.sdk.as_deref()?,
        info.sdk_version.as_deref()?,
        info.shape.as_deref()?,
    );
    let label = name
        .strip_prefix(line)
        .and_then(|s| s.strip_prefix('-'))
        .and_then(|s| s.strip_suffix(shape))
        .and_then(|s| s.strip_suffix('-'))
        .filter(|l| !l.is_empty())
        .unwrap_or(version);
    Some((line, label, version, shape))
}

/// A version label as reports show it: `local-eof-fix` (a server name's middle) is the local
/// build `local:eof-fix`, as `--sdk LINE@local:NAME=PATH` names it.
pub fn shown_label(label: &str) -> String {
    match label.strip_prefix("local-") {
        Some(name) => format!("local:{name}"),
        None => label.to_string(),
    }
}

/// Collapses the stages of consecutive versions into runs, and lists where they changed.
fn runs(stages: &[(&str, String)]) -> (Vec<StageRun>, Vec<StageChange>) {
    let mut runs: Vec<StageRun> = Vec::new();
    let mut changes = Vec::new();
    for (v, s) in stages {
        match runs.last_mut() {
            Some(last) if last.stage == *s => last.to = v.to_string(),
            last => {
                if let Some(prev) = last {
                    changes.push(StageChange {
                        at: v.to_string(),
                        from: prev.stage.clone(),
                        to: s.clone(),
                    });
                }
                runs.push(StageRun {
                    from: v.to_string(),
                    to: v.to_string(),
                    stage: s.clone(),
                });
            }
        }
    }
    (runs, changes)
}

/// Every line with at least two versions in the report.
pub fn histories(report: &Report) -> Vec<LineHistory> {
    // line -> label -> (version, shape -> server name)
    type Versions<'r> = BTreeMap<&'r str, (&'r str, BTreeMap<&'r str, &'r str>)>;
    let mut lines: BTreeMap<&str, Versions> = BTreeMap::new();
    for name in report.servers.keys() {
        if let Some((line, label, version, shape)) = member(name, report) {
            let v = lines.entry(line).or_default().entry(label).or_default();
            v.0 = version;
            v.1.insert(shape, name.as_str());
        }
    }
    let (_, scenarios) = axes(report);
    let grid = cells(report);
    let mut out = Vec::new();
    for (line, versions) in lines.into_iter().filter(|(_, v)| v.len() > 1) {
        let mut order: Vec<(&str, &str)> = versions.iter().map(|(l, (v, _))| (*l, *v)).collect();
        order.sort_by(|a, b| compare_versions(a.1, b.1).then_with(|| a.0.cmp(b.0)));
        let shown: Vec<String> = order.iter().map(|(l, _)| shown_label(l)).collect();
        let mut shapes: Vec<&str> = versions
            .values()
            .flat_map(|(_, s)| s.keys())
            .copied()
            .collect();
        shapes.sort_unstable();
        shapes.dedup();
        let mut rows = Vec::new();
        for shape in &shapes {
            for sc in &scenarios {
                let stages: Vec<(&str, String)> = order
                    .iter()
                    .zip(&shown)
                    .map(|((label, _), shown)| {
                        let server = versions[label].1.get(shape);
                        let cell = server.and_then(|s| grid.get(&(*s, *sc)));
                        (
                            shown.as_str(),
                            cell.map_or_else(|| "–".to_string(), |r| stage_of(r)),
                        )
                    })
                    .collect();
                if stages.iter().all(|(_, s)| s == "–") {
                    continue;
                }
                let (runs, changes) = runs(&stages);
                rows.push(HistoryRow {
                    shape: shape.to_string(),
                    scenario: sc.to_string(),
                    runs,
                    changes,
                });
            }
        }
        out.push(LineHistory {
            line: line.to_string(),
            versions: shown,
            rows,
        });
    }
    out
}

/// `1.0.0–1.23.0 sigterm · 1.24.0– eof`: the last run is open-ended (to the newest version
/// in the report) when there is more than one.
pub fn runs_text(runs: &[StageRun]) -> String {
    let n = runs.len();
    runs.iter()
        .enumerate()
        .map(|(i, r)| match (r.from == r.to, i + 1 == n && n > 1) {
            (true, _) => format!("{} {}", r.from, r.stage),
            (false, true) => format!("{}– {}", r.from, r.stage),
            (false, false) => format!("{}–{} {}", r.from, r.to, r.stage),
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `1.24.0 (sigterm → eof), ...`, or `–` when nothing changed.
pub fn changes_text(changes: &[StageChange]) -> String {
    if changes.is_empty() {
        return "–".into();
    }
    changes
        .iter()
        .map(|c| format!("{} ({} → {})", c.at, c.from, c.to))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Versions not testable for the same reason, together: (line, versions, reason).
pub fn untested_groups(list: &[Untested]) -> Vec<(&str, Vec<&str>, &str)> {
    let mut out: Vec<(&str, Vec<&str>, &str)> = Vec::new();
    for u in list {
        match out
            .iter_mut()
            .find(|(l, _, r)| *l == u.line && *r == u.reason)
        {
            Some(g) => g.1.push(&u.version),
            None => out.push((&u.line, vec![&u.version], &u.reason)),
        }
    }
    for g in &mut out {
        g.1.sort_by(|a, b| compare_versions(a, b));
    }
    out
}

fn line_header(h: &LineHistory) -> String {
    let first = h.versions.first().map_or("", String::as_str);
    let last = h.versions.last().map_or("", String::as_str);
    format!(
        "{}: {} versions, {first} … {last}",
        h.line,
        h.versions.len()
    )
}

/// The text view: HISTORY and NOT TESTABLE sections (nothing when neither applies).
pub fn text(report: &Report, out: &mut String) {
    for h in histories(report) {
        let _ = writeln!(out, "\nHISTORY  {}", line_header(&h));
        let ws = h.rows.iter().map(|r| r.shape.len()).max().unwrap_or(0);
        let wc = h.rows.iter().map(|r| r.scenario.len()).max().unwrap_or(0);
        for r in &h.rows {
            let _ = write!(
                out,
                "  {:<ws$}  {:<wc$}  {}",
                r.shape,
                r.scenario,
                runs_text(&r.runs)
            );
            if !r.changes.is_empty() {
                let _ = write!(out, "   changed at {}", changes_text(&r.changes));
            }
            out.push('\n');
        }
    }
    let groups = untested_groups(&report.not_testable);
    if !groups.is_empty() {
        out.push_str("\nNOT TESTABLE\n");
    }
    for (line, versions, reason) in groups {
        let mut lines = reason.lines();
        let _ = writeln!(
            out,
            "  {line} {}: {}",
            versions.join(", "),
            lines.next().unwrap_or_default()
        );
        for l in lines {
            let _ = writeln!(out, "      {l}");
        }
    }
}

fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('<', "&lt;")
}

/// The Markdown view: a table per line, and the versions not testable.
pub fn markdown(report: &Report, out: &mut String) {
    for h in histories(report) {
        let _ = writeln!(out, "### History · {}\n", md(&line_header(&h)));
        out.push_str(
            "| shape | ending | stage by version | changed at |\n| --- | --- | --- | --- |\n",
        );
        for r in &h.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                md(&r.shape),
                md(&r.scenario),
                md(&runs_text(&r.runs)),
                md(&changes_text(&r.changes))
            );
        }
        out.push('\n');
    }
    let groups = untested_groups(&report.not_testable);
    if !groups.is_empty() {
        out.push_str("### Not testable\n\n");
    }
    for (line, versions, reason) in &groups {
        let first = reason.lines().next().unwrap_or_default();
        let _ = writeln!(
            out,
            "- **{}** {}: {}",
            md(line),
            md(&versions.join(", ")),
            md(first)
        );
    }
    if !groups.is_empty() {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ServerInfo, Stage};
    use crate::test_support as fixture;

    /// A report of the `timer` shape under `close` at the given (version, stage) pairs.
    fn sweep(line: &str, rows: &[(&str, Stage)]) -> Report {
        let template = fixture::report()
            .results
            .into_iter()
            .find(|r| r.stage.is_some())
            .unwrap();
        let mut results = Vec::new();
        let mut servers = BTreeMap::new();
        for (v, stage) in rows {
            let name = format!("{line}-{v}-timer");
            let mut r = template.clone();
            r.observation.server = name.clone();
            r.observation.scenario = "close".parse().unwrap();
            r.observation.stage = Some(*stage);
            results.push(r);
            servers.insert(
                name,
                ServerInfo {
                    description: String::new(),
                    sdk: Some(line.into()),
                    sdk_version: Some(v.to_string()),
                    shape: Some("timer".into()),
                    ..ServerInfo::default()
                },
            );
        }
        let mut rep = fixture::report_of(results);
        rep.servers = servers;
        rep
    }

    #[test]
    fn equal_stages_collapse_and_changes_are_listed() {
        let rep = sweep(
            "typescript",
            &[
                ("1.10.0", Stage::Eof),
                ("1.2.0", Stage::Sigterm),
                ("1.9.0", Stage::Sigterm),
                ("1.11.0", Stage::Eof),
            ],
        );
        let h = histories(&rep);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].versions, ["1.2.0", "1.9.0", "1.10.0", "1.11.0"]);
        let row = &h[0].rows[0];
        assert_eq!(
            (row.shape.as_str(), row.scenario.as_str()),
            ("timer", "close")
        );
        assert_eq!(runs_text(&row.runs), "1.2.0–1.9.0 sigterm · 1.10.0– eof");
        assert_eq!(changes_text(&row.changes), "1.10.0 (sigterm → eof)");
        let mut text = String::new();
        super::text(&rep, &mut text);
        assert!(
            text.contains("HISTORY  typescript: 4 versions, 1.2.0 … 1.11.0"),
            "{text}"
        );
        assert!(text.contains("changed at 1.10.0 (sigterm → eof)"), "{text}");
        let mut md = String::new();
        markdown(&rep, &mut md);
        assert!(
            md.contains(
                "| timer | close | 1.2.0–1.9.0 sigterm · 1.10.0– eof | 1.10.0 (sigterm → eof) |"
            ),
            "{md}"
        );
        let html = crate::render::html::render(&rep);
        assert!(html.contains("<h2>History · typescript: 4 versions, 1.2.0 … 1.11.0</h2>"));
        assert!(html.contains("<td>1.2.0–1.9.0 sigterm · 1.10.0– eof</td>"));
    }

    #[test]
    fn one_version_has_no_history_and_a_single_run_is_closed() {
        assert!(histories(&sweep("go", &[("1.0.0", Stage::Eof)])).is_empty());
        let h = histories(&sweep(
            "go",
            &[("1.0.0", Stage::Eof), ("1.1.0", Stage::Eof)],
        ));
        assert_eq!(runs_text(&h[0].rows[0].runs), "1.0.0–1.1.0 eof");
        assert_eq!(changes_text(&h[0].rows[0].changes), "–");
    }

    #[test]
    fn local_builds_are_labelled_by_their_name() {
        let mut rep = sweep(
            "typescript",
            &[("1.24.0", Stage::Sigterm), ("local-1a2b3c4d", Stage::Eof)],
        );
        // A local build of 1.24.0 reports the version its package says.
        rep.servers
            .get_mut("typescript-local-1a2b3c4d-timer")
            .unwrap()
            .sdk_version = Some("1.24.0".into());
        let h = histories(&rep);
        assert_eq!(h[0].versions, ["1.24.0", "local:1a2b3c4d"]);
        assert_eq!(
            runs_text(&h[0].rows[0].runs),
            "1.24.0 sigterm · local:1a2b3c4d eof"
        );
    }

    #[test]
    fn versions_order_numerically_with_pre_releases_first() {
        let mut v = vec![
            "1.10.0",
            "2.0.0+local.1a2b",
            "1.9",
            "2.0.0b1",
            "2.0.0",
            "v0.3.0",
            "nightly",
            "2.0.0.post1",
            "1.9.1",
            "2.0.0-rc.1",
        ];
        v.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            v,
            [
                "v0.3.0",
                "1.9",
                "1.9.1",
                "1.10.0",
                "2.0.0b1",
                "2.0.0-rc.1",
                "2.0.0",
                "2.0.0+local.1a2b",
                "2.0.0.post1",
                "nightly"
            ]
        );
    }

    #[test]
    fn untested_versions_group_by_reason() {
        let u = |v: &str, r: &str| Untested {
            line: "typescript".into(),
            version: v.into(),
            reason: r.into(),
        };
        let mut rep = sweep("typescript", &[("1.0.0", Stage::Eof)]);
        rep.not_testable = vec![
            u("0.5.0", "predates 1.0"),
            u("0.4.0", "predates 1.0"),
            u("1.1.0", "`npm ci` failed\nE404"),
        ];
        let g = untested_groups(&rep.not_testable);
        assert_eq!(g[0], ("typescript", vec!["0.4.0", "0.5.0"], "predates 1.0"));
        let mut text = String::new();
        super::text(&rep, &mut text);
        assert!(
            text.contains("NOT TESTABLE\n  typescript 0.4.0, 0.5.0: predates 1.0\n"),
            "{text}"
        );
        assert!(
            text.contains("  typescript 1.1.0: `npm ci` failed\n      E404\n"),
            "{text}"
        );
        let mut md = String::new();
        markdown(&rep, &mut md);
        assert!(
            md.contains("- **typescript** 0.4.0, 0.5.0: predates 1.0"),
            "{md}"
        );
    }
}
