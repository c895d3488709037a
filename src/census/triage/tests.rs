//! The triage set held to the 65-server census it was measured on.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::config::profiles::Profiles;
use crate::model::{RuleId, Status};

const CENSUS: &str = "docs/book/data/census-repeat3-2026-12-02.json.gz";

/// The stored census report (gzip, as the book links it), its scenarios that the census
/// still runs.
fn stored() -> Report {
    let out = std::process::Command::new("gzip")
        .args(["-dc", CENSUS])
        .output()
        .expect("gzip (to read the stored census) is installed");
    assert!(out.status.success(), "gzip -dc {CENSUS}");
    let mut r: Report = serde_json::from_slice(&out.stdout).expect("the stored census is a report");
    let profiles = Profiles::bundled();
    r.results
        .retain(|c| c.scenario.profile().is_none_or(|p| profiles.get(p).is_ok()));
    r
}

/// Each server's missed rules (rule and status) over the cases `keep` admits; a case that
/// could not be judged counts as one finding of its own.
fn findings(
    report: &Report,
    keep: impl Fn(&JudgedCase) -> bool,
) -> BTreeMap<&str, BTreeSet<(Option<RuleId>, Status)>> {
    let mut out: BTreeMap<&str, BTreeSet<_>> = BTreeMap::new();
    for r in report.results.iter().filter(|r| keep(r)) {
        let f = out.entry(r.server.as_str()).or_default();
        if r.error.is_some() || r.not_testable.is_some() {
            f.insert((None, Status::Skipped));
            continue;
        }
        for c in r.checks.iter().filter(|c| c.status.is_miss()) {
            f.insert((Some(c.id), c.status));
        }
    }
    out
}

#[test]
fn the_triage_set_finds_every_rule_the_full_census_found_for_each_server() {
    let report = stored();
    let triage: BTreeSet<ScenarioId> = scenarios().into_iter().collect();
    let all: BTreeSet<&ScenarioId> = report.results.iter().map(|r| &r.scenario).collect();
    assert!(triage.iter().all(|s| all.contains(s)), "{triage:?}");
    let full = findings(&report, |r| r.machine_bound.is_none());
    let found = findings(&report, |r| {
        r.machine_bound.is_none() && triage.contains(&r.scenario)
    });
    assert_eq!(full.len(), 65);
    for (server, rules) in &full {
        assert_eq!(found.get(server), Some(rules), "{server}");
    }
    // 64 servers found something and would run the full set; the one that did not is the
    // one the full set found nothing in either.
    let mut only_triage = report.clone();
    only_triage.results.retain(|r| triage.contains(&r.scenario));
    let flagged = needs_full(&only_triage);
    assert_eq!(flagged.len(), 64);
    let clean: Vec<&&str> = full.keys().filter(|s| !flagged.contains(**s)).collect();
    assert_eq!(clean, [&"mcp-grafana-2.1.1"]);
    assert!(full["mcp-grafana-2.1.1"].is_empty());
}

#[test]
fn no_scenario_of_the_triage_set_is_redundant_on_the_census() {
    let report = stored();
    let triage = scenarios();
    let full = findings(&report, |r| r.machine_bound.is_none());
    for drop in &triage {
        let rest: BTreeSet<&ScenarioId> = triage.iter().filter(|s| *s != drop).collect();
        let found = findings(&report, |r| {
            r.machine_bound.is_none() && rest.contains(&r.scenario)
        });
        assert!(
            full.iter().any(|(s, rules)| found.get(s) != Some(rules)),
            "{drop} finds nothing the others miss"
        );
    }
}

#[test]
fn every_triage_scenario_is_one_the_census_runs() {
    let profiles = Profiles::bundled();
    for s in scenarios() {
        if let Some(p) = s.profile() {
            assert!(profiles.get(p).is_ok(), "{s}: no such profile");
        }
    }
}

#[test]
fn a_clean_triage_keeps_a_server_to_the_triage_pass() {
    use crate::model::Stage;
    use crate::test_support::{report_of, result};
    let mut rep = report_of(vec![
        result("good", "close", Stage::Eof, 3.0),
        result("bad", "close", Stage::Sigterm, 2004.0),
    ]);
    rep.servers.entry("good".into()).or_default();
    rep.servers.entry("bad".into()).or_default();
    let full = needs_full(&rep);
    assert_eq!(full, BTreeSet::from(["bad".to_string()]));
    mark(&mut rep, &full, "2026-12-06");
    let pass = |s: &str| rep.servers[s].judged.as_ref().unwrap().pass;
    assert_eq!((pass("good"), pass("bad")), (Pass::Triage, Pass::Full));
}

#[test]
fn the_books_triage_table_is_the_catalogue() {
    let mut s = String::from("| scenario | what it found in the 65-server census |\n|---|---|\n");
    for t in endings::triage() {
        s.push_str(&format!("| `{}` | {} |\n", t.scenario, t.finds));
    }
    crate::test_support::generated_block("docs/book/src/census.md", "triage", &s);
}
