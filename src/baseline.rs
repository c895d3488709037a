//! Expected failures, strict both ways (as the official MCP conformance suite does): a run
//! fails on a missed rule that is not listed, and on a listed one that now holds ("stale
//! baseline: remove it"), so an SDK release that fixes a gap shows up.
//!
//! File format (TOML), one table per server, one list of rule IDs per scenario:
//! ```toml
//! [node-1.30.0-timer]
//! close = ["stdio-exit-on-eof"]
//! exit = ["stdio-exit-on-client-death"]
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::report::Report;
use crate::rules::Status;

/// server → scenario → rule IDs expected to be missed.
pub type Entries = BTreeMap<String, BTreeMap<String, Vec<String>>>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    pub path: Option<PathBuf>,
    pub entries: Entries,
}

/// One difference between a run and its baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub server: String,
    pub scenario: String,
    pub rule: String,
    /// The check's status in this run.
    pub status: Status,
}

/// How a run compares with its baseline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Missed rules the baseline does not list: the run fails.
    pub unexpected: Vec<Finding>,
    /// Listed rules that now hold: the run fails until the entry is removed.
    pub stale: Vec<Finding>,
    /// Missed rules the baseline lists.
    pub expected: usize,
}

impl Comparison {
    pub fn fails(&self) -> bool {
        !self.unexpected.is_empty() || !self.stale.is_empty()
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in &self.unexpected {
            let _ = writeln!(
                out,
                "UNEXPECTED {} {} {}: {} (not in the baseline)",
                f.server, f.scenario, f.rule, f.status
            );
        }
        for f in &self.stale {
            let _ = writeln!(
                out,
                "STALE      {} {} {}: now {} (stale baseline: remove it)",
                f.server, f.scenario, f.rule, f.status
            );
        }
        let _ = writeln!(
            out,
            "baseline: {} expected, {} unexpected, {} stale",
            self.expected,
            self.unexpected.len(),
            self.stale.len()
        );
        out
    }
}

impl Baseline {
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let entries: Entries = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            format!(
                "{}:{}: {}",
                path.display(),
                line.unwrap_or(0),
                e.message().trim()
            )
        })?;
        Ok(Self {
            path: Some(path.to_path_buf()),
            entries,
        })
    }

    /// The baseline that makes `report` pass: every missed scored check.
    pub fn from_report(report: &Report) -> Self {
        let mut entries = Entries::new();
        for r in &report.results {
            for c in r.checks.iter().filter(|c| is_missed(c.status)) {
                entries
                    .entry(r.server.clone())
                    .or_default()
                    .entry(r.scenario.clone())
                    .or_default()
                    .push(c.id.clone());
            }
        }
        Self {
            path: None,
            entries,
        }
    }

    pub fn to_toml(&self) -> String {
        let mut out = String::from(
            "# Expected failures of the bundled suite (scored against the default spec revision).\n\
             # Regenerate: cargo run --release -- run --no-baseline --write-baseline conformance/expected-failures.toml\n",
        );
        // Keys are quoted: server names contain dots, which bare TOML keys would nest.
        let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
        for (server, scenarios) in &self.entries {
            let _ = writeln!(out, "\n[{}]", quote(server));
            for (scenario, rules) in scenarios {
                let list: Vec<String> = rules.iter().map(|r| quote(r)).collect();
                let _ = writeln!(out, "{} = [{}]", quote(scenario), list.join(", "));
            }
        }
        out
    }

    pub fn compare(&self, report: &Report) -> Comparison {
        let mut cmp = Comparison::default();
        for r in &report.results {
            let listed = self.entries.get(&r.server).and_then(|s| s.get(&r.scenario));
            for c in &r.checks {
                let is_listed = listed.is_some_and(|l| l.contains(&c.id));
                let finding = || Finding {
                    server: r.server.clone(),
                    scenario: r.scenario.clone(),
                    rule: c.id.clone(),
                    status: c.status,
                };
                match (is_missed(c.status), is_listed) {
                    (true, true) => cmp.expected += 1,
                    (true, false) => cmp.unexpected.push(finding()),
                    (false, true) if c.status == Status::Success => cmp.stale.push(finding()),
                    _ => {}
                }
            }
        }
        cmp
    }
}

fn is_missed(s: Status) -> bool {
    matches!(s, Status::Failure | Status::Warning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observation::{CaseResult, ErrorKind};
    use crate::rules::{Check, Level, Outcome};

    fn report(statuses: &[(&str, &str, &str, Status)]) -> Report {
        let mut results: Vec<CaseResult> = Vec::new();
        for (server, scenario, rule, status) in statuses {
            let mut r = CaseResult::failed(server, scenario, ErrorKind::Harness, String::new());
            r.error = None;
            r.checks.push(Check {
                id: rule.to_string(),
                status: *status,
                level: Level::Should,
                outcome: Outcome::Fail,
                message: String::new(),
                spec_references: Vec::new(),
            });
            results.push(r);
        }
        Report::new("2026-07-28", Default::default(), results)
    }

    #[test]
    fn strict_both_ways() {
        let before = report(&[
            ("timer", "close", "stdio-exit-on-eof", Status::Warning),
            ("fixed", "close", "stdio-exit-on-eof", Status::Success),
        ]);
        let base = Baseline::from_report(&before);
        assert!(!base.compare(&before).fails());
        // The SDK fixed the gap: the entry is stale.
        let fixed = report(&[("timer", "close", "stdio-exit-on-eof", Status::Success)]);
        let c = base.compare(&fixed);
        assert_eq!(c.stale.len(), 1);
        assert!(c.render().contains("stale baseline: remove it"));
        // A regression elsewhere: unexpected.
        let broke = report(&[("fixed", "close", "stdio-exit-on-eof", Status::Warning)]);
        assert_eq!(base.compare(&broke).unexpected.len(), 1);
    }

    #[test]
    fn toml_round_trip() {
        let r = report(&[
            (
                "node-1.30.0-timer",
                "close:java",
                "stdio-exit-on-eof",
                Status::Warning,
            ),
            ("a", "exit", "stdio-exit-on-client-death", Status::Warning),
        ]);
        let b = Baseline::from_report(&r);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.toml");
        std::fs::write(&p, b.to_toml()).unwrap();
        assert_eq!(Baseline::load(&p).unwrap().entries, b.entries);
        std::fs::write(&p, "[a]\nclose = 3\n").unwrap();
        assert!(Baseline::load(&p).unwrap_err().contains("b.toml:2"));
    }
}
