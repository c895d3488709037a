//! The census's history across runs (`--history FILE`, a `model::History`): each server's
//! badge and the date it last changed ("ignores SIGINT since 2026-12-11"), and the
//! week-over-week page: which servers got better or worse between the last two runs, by SDK
//! and by launcher. Pure: a history and a report in, a history and pages out.

use std::collections::BTreeMap;

use askama::Template;

use super::badge::{self, Scope};
use crate::model::{History, Report, ServerHistory, Verdict};

/// The history's key for a server of `report`: its registry name and package
/// (`io.github.o/s (npm @o/s)`), stable across versions and apart for each package a
/// registry server lists; else its name in the report.
pub fn key(report: &Report, server: &str) -> String {
    match report.servers.get(server).and_then(|i| i.package.as_ref()) {
        Some(p) if !p.identifier.is_empty() => {
            format!("{} ({} {})", p.name, p.registry, p.identifier)
        }
        Some(p) => p.name.clone(),
        None => server.to_string(),
    }
}

/// A history written before keys named the package kept a server under its registry name
/// alone: its first package to come back takes that record over.
fn entry<'h>(history: &'h mut History, report: &Report, server: &str) -> &'h mut ServerHistory {
    let k = key(report, server);
    if !history.servers.contains_key(&k) {
        let legacy = report.servers.get(server).and_then(|i| i.package.as_ref());
        if let Some(old) = legacy.and_then(|p| history.servers.remove(&p.name)) {
            history.servers.insert(k.clone(), old);
        }
    }
    history.servers.entry(k).or_default()
}

/// Adds a census report to the history: its date becomes a run, and a server whose badge
/// differs from its last one gets a new verdict, dated when its cases were judged (a
/// carried-forward server keeps its own date). A report without a census date changes
/// nothing.
pub fn update(history: &mut History, report: &Report) {
    let Some(date) = report.census.as_ref().map(|c| c.date.clone()) else {
        return;
    };
    if !history.runs.contains(&date) {
        history.runs.push(date.clone());
        history.runs.sort();
    }
    for b in badge::badges_in(report, Scope::All) {
        let info = report.servers.get(&b.server).cloned().unwrap_or_default();
        let h = entry(history, report, &b.server);
        h.name = info
            .package
            .as_ref()
            .map_or_else(|| b.server.clone(), |p| p.name.clone());
        h.sdk = info.sdk.clone();
        if let Some(p) = &info.package {
            h.launcher = p.launcher.clone();
        }
        let since = info
            .judged
            .as_ref()
            .map_or(date.clone(), |j| j.date.clone());
        let changed = h.verdicts.last().is_none_or(|v| {
            (v.color.as_str(), v.message.as_str()) != (b.color.name(), &*b.message)
        });
        if changed {
            h.verdicts.push(Verdict {
                since,
                color: b.color.name().to_string(),
                message: b.message.clone(),
                version: info.package.map(|p| p.version).unwrap_or_default(),
            });
        }
    }
}

/// The verdict a server held on `date`: its last one dated on or before it.
fn at<'a>(verdicts: &'a [Verdict], date: &str) -> Option<&'a Verdict> {
    verdicts.iter().rev().find(|v| v.since.as_str() <= date)
}

/// A server's line on its page: what its badge says and since when, then what it said before.
pub fn server_lines(history: &History, name: &str) -> Vec<String> {
    let Some(h) = history.servers.get(name) else {
        return Vec::new();
    };
    let mut lines: Vec<String> = h
        .verdicts
        .iter()
        .rev()
        .map(|v| format!("{} since {} (version {})", v.message, v.since, v.version))
        .collect();
    if let Some(first) = lines.first_mut() {
        *first = format!("Now: {first}");
    }
    lines
}

/// Better or worse: green < yellow < red; grey (not judged) compares with nothing.
fn rank(color: &str) -> Option<u8> {
    match color {
        "green" => Some(0),
        "yellow" => Some(1),
        "red" => Some(2),
        _ => None,
    }
}

/// One server that changed between the last two runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    pub name: String,
    pub sdk: String,
    pub launcher: String,
    pub before: String,
    pub after: String,
    pub better: bool,
}

/// What got better and worse between the last two runs of the history, and the counts by
/// SDK and by launcher: `(group, better, worse)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Week {
    pub from: String,
    pub to: String,
    pub moves: Vec<Move>,
    pub by_sdk: Vec<(String, usize, usize)>,
    pub by_launcher: Vec<(String, usize, usize)>,
}

/// The week over week: the last two runs compared (fewer than two runs: nothing moved).
pub fn week(history: &History) -> Week {
    let [.., from, to] = history.runs.as_slice() else {
        return Week::default();
    };
    let mut moves = Vec::new();
    for (name, h) in &history.servers {
        let (Some(b), Some(a)) = (at(&h.verdicts, from), at(&h.verdicts, to)) else {
            continue;
        };
        let (Some(rb), Some(ra)) = (rank(&b.color), rank(&a.color)) else {
            continue;
        };
        if ra != rb {
            moves.push(Move {
                name: name.clone(),
                sdk: h.sdk.clone().unwrap_or_else(|| "unknown".into()),
                launcher: h.launcher.clone(),
                before: b.message.clone(),
                after: a.message.clone(),
                better: ra < rb,
            });
        }
    }
    let group = |f: fn(&Move) -> &str| {
        let mut g: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for m in &moves {
            let e = g.entry(f(m).to_string()).or_default();
            if m.better {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
        g.into_iter().map(|(k, (b, w))| (k, b, w)).collect()
    };
    Week {
        from: from.clone(),
        to: to.clone(),
        by_sdk: group(|m| &m.sdk),
        by_launcher: group(|m| &m.launcher),
        moves,
    }
}

#[derive(Template)]
#[template(path = "site-week.html", config = "src/render/askama.toml")]
struct WeekPage<'a> {
    week: &'a Week,
}

/// The week-over-week page (`week.html`) and its Markdown (`week.md`).
pub fn week_files(history: &History) -> Vec<(String, String)> {
    let w = week(history);
    let mut md = format!(
        "# What changed from {} to {}\n\n",
        or_none(&w.from),
        or_none(&w.to)
    );
    for (title, rows) in [("SDK", &w.by_sdk), ("launcher", &w.by_launcher)] {
        md.push_str(&format!("| {title} | better | worse |\n|---|---|---|\n"));
        for (g, b, x) in rows {
            md.push_str(&format!("| {} | {b} | {x} |\n", super::md::escape(g)));
        }
        md.push('\n');
    }
    for m in &w.moves {
        md.push_str(&format!(
            "- {} `{}`: {} → {}\n",
            if m.better { "better" } else { "worse" },
            super::md::escape(&m.name),
            super::md::escape(&m.before),
            super::md::escape(&m.after)
        ));
    }
    let page = WeekPage { week: &w }
        .render()
        .expect("the week page renders");
    vec![("week.html".into(), page), ("week.md".into(), md)]
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "(no earlier run)"
    } else {
        s
    }
}

#[cfg(test)]
mod tests;
