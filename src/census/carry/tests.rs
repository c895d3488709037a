//! Tests of carrying verdicts forward: unchanged, updated, new, removed and undated servers.

use std::collections::BTreeSet;
use std::path::Path;

use super::*;
use crate::census::{package_info, parse_listing};
use crate::model::{Pass, Stage};
use crate::test_support::{report_of, result};

fn entries() -> Vec<Entry> {
    let text = std::fs::read_to_string("conformance/census/small.json").unwrap();
    parse_listing(Path::new("small.json"), &text)
        .unwrap()
        .entries
}

/// A previous report that judged `entries` on 2026-11-29, and a server since removed.
fn previous(entries: &[Entry]) -> Report {
    let mut results: Vec<_> = entries
        .iter()
        .map(|e| result(&e.id, "close", Stage::Eof, 3.0))
        .collect();
    results.push(result("gone-1.0.0", "close", Stage::Eof, 3.0));
    let mut r = report_of(results);
    let gone = Entry {
        id: "gone-1.0.0".into(),
        server_name: "io.github.x/gone".into(),
        ..entries[0].clone()
    };
    for e in entries.iter().chain([&gone]) {
        let info = r.servers.entry(e.id.clone()).or_default();
        info.package = Some(package_info(e));
        info.judged = Some(Judged {
            pass: Pass::Full,
            date: "2026-11-29".into(),
            carried: false,
        });
    }
    r
}

fn listed(entries: &[Entry]) -> BTreeSet<String> {
    entries.iter().map(|e| e.server_name.clone()).collect()
}

#[test]
fn unchanged_servers_are_carried_updated_and_new_ones_run_removed_ones_are_named() {
    let all = entries();
    let prev = previous(&all[..2]);
    // The second server has a new version since; the third is new.
    let mut now = all.clone();
    now[1].server_version = "9.9.9".into();
    let p = plan(&prev, now.clone(), &listed(&now), |_| true);
    assert_eq!(p.carried, [all[0].id.clone()]);
    let run: Vec<&str> = p.run.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(run, [all[1].id.as_str(), all[2].id.as_str()]);
    assert_eq!(p.dropped, ["io.github.x/gone"]);
    assert!(p.undated.is_empty());
    // A shard names only the removed servers that hash to it.
    let p = plan(&prev, now.clone(), &listed(&now), |_| false);
    assert!(p.dropped.is_empty());
}

#[test]
fn a_carried_server_keeps_its_cases_and_the_date_it_was_judged() {
    let all = entries();
    let prev = previous(&all);
    let keep = vec![all[0].id.clone()];
    let c = carried(&prev, &keep);
    assert_eq!(c.servers.len(), 1);
    assert!(c.results.iter().all(|r| r.server == all[0].id));
    assert_eq!(c.results.len(), 1);
    let j = c.servers[&all[0].id].judged.clone().unwrap();
    assert_eq!(
        (j.date.as_str(), j.carried, j.pass),
        ("2026-11-29", true, Pass::Full)
    );
    assert_eq!(c.summary.cases, 1);
}

#[test]
fn a_previous_report_that_does_not_say_when_it_judged_carries_nothing() {
    let all = entries();
    let mut prev = previous(&all);
    for i in prev.servers.values_mut() {
        i.judged = None;
    }
    let p = plan(&prev, all.clone(), &listed(&all), |_| true);
    assert!(p.carried.is_empty());
    assert_eq!(p.run.len(), all.len());
    assert_eq!(p.undated.len(), all.len());
}
