//! The history view: which release changed a host's ladder or plumbing.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::summarise;
use crate::hosts::measure::{Measurement, PathRuns};
use crate::hosts::reading::word;

/// One path of one release: plumbing, steps with their median waits, walking away.
fn cell(p: &PathRuns) -> String {
    let l = match summarise(p) {
        Ok(l) => l,
        Err(u) => return format!("not measured: {}", u.why),
    };
    let steps: Vec<String> = l
        .shape
        .iter()
        .enumerate()
        .map(|(i, (a, t))| match l.waits.get(i) {
            Some((_, s)) => format!("{a}→{} {:.0}ms", word(t), s.median_ms),
            None => format!("{a}→{}", word(t)),
        })
        .collect();
    let mut c = format!(
        "[{} {} {}] {}",
        word(&l.plumbing.stdio),
        word(&l.plumbing.group),
        l.plumbing.via,
        if steps.is_empty() {
            "nothing".into()
        } else {
            steps.join(", ")
        }
    );
    if l.walked_away.is_some() {
        c.push_str(", walks away");
    }
    c
}

/// Which release changed a host's ladder or plumbing, path by path: versions oldest first.
pub fn history(ms_: &[Measurement]) -> String {
    let mut out = String::new();
    let mut by_path: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for m in ms_ {
        for p in &m.paths {
            let cell = cell(p);
            let key = if p.daemon_up {
                format!("{} (daemon up)", p.trigger)
            } else {
                p.trigger.clone()
            };
            by_path
                .entry(key)
                .or_default()
                .push((m.version.clone(), cell));
        }
    }
    let host = ms_.first().map(|m| m.host.as_str()).unwrap_or("?");
    let _ = writeln!(
        out,
        "{host}: ladder and plumbing per release (oldest first)"
    );
    for (trigger, cells) in by_path {
        let _ = writeln!(out, "\n{trigger}:");
        let mut last: Option<String> = None;
        for (v, c) in cells {
            let shape_only = |s: &str| {
                s.split(", ")
                    .map(|x| x.split(' ').next().unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let changed = last
                .as_deref()
                .is_some_and(|l| shape_only(l) != shape_only(&c));
            let mark = if changed { "  ← changed" } else { "" };
            let _ = writeln!(out, "  {v:>12}  {c}{mark}");
            last = Some(c);
        }
    }
    out
}
