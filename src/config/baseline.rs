//! Expected failures, strict both ways (as the official MCP conformance suite does): a run
//! fails on a missed rule that is not listed, and on a listed one that now holds ("stale
//! baseline: remove it"), so an SDK release that fixes a gap shows up.
//!
//! File format (TOML), one table per server, one list of rule IDs per scenario; a server's
//! `flaky` table names checks known to flip between runs (`--repeat`), which may then pass
//! or miss without failing the run:
//! ```toml
//! [node-1.30.0-timer]
//! close = ["stdio-exit-on-eof"]
//! exit = ["stdio-exit-on-client-death"]
//!
//! [gitlab-server.flaky]
//! close = ["stdio-exit-on-eof"]
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::model::{Report, RuleId, ScenarioId, Status};

/// server → scenario → rule IDs expected to be missed.
pub type Entries = BTreeMap<String, BTreeMap<ScenarioId, Vec<RuleId>>>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    pub path: Option<PathBuf>,
    /// Checks expected to be missed.
    pub entries: Entries,
    /// Checks known to flip between runs: either outcome is accepted.
    pub flaky: Entries,
}

/// One server's table as written: scenario keys, and an optional `flaky` table. Read by
/// hand (not `#[serde(flatten)]`, which buffers the values and loses their line numbers).
#[derive(Default)]
struct ServerTable {
    flaky: BTreeMap<ScenarioId, Vec<RuleId>>,
    expected: BTreeMap<ScenarioId, Vec<RuleId>>,
}

impl<'de> serde::Deserialize<'de> for ServerTable {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ServerTable;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of scenario = [rule IDs], and an optional `flaky` table")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<ServerTable, A::Error> {
                let mut t = ServerTable::default();
                while let Some(key) = m.next_key::<String>()? {
                    if key == "flaky" {
                        t.flaky = m.next_value()?;
                    } else {
                        let id: ScenarioId = key.parse().map_err(serde::de::Error::custom)?;
                        t.expected.insert(id, m.next_value()?);
                    }
                }
                Ok(t)
            }
        }
        d.deserialize_map(V)
    }
}

/// A baseline file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("{}: cannot read the baseline", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// One difference between a run and its baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub server: String,
    pub scenario: ScenarioId,
    pub rule: RuleId,
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
    /// Checks the baseline lists as known to flip (not judged).
    pub known_flaky: usize,
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
            "baseline: {} expected, {} unexpected, {} stale, {} known flaky",
            self.expected,
            self.unexpected.len(),
            self.stale.len(),
            self.known_flaky
        );
        out
    }
}

impl Baseline {
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let tables: BTreeMap<String, ServerTable> =
            toml::from_str(&text).map_err(|e| BaselineError::Parse {
                path: path.to_path_buf(),
                line: e.span().map_or(0, |s| {
                    text[..s.start.min(text.len())].matches('\n').count() + 1
                }),
                message: e.message().trim().to_string(),
            })?;
        let mut b = Self {
            path: Some(path.to_path_buf()),
            ..Self::default()
        };
        for (server, t) in tables {
            if !t.flaky.is_empty() {
                b.flaky.insert(server.clone(), t.flaky);
            }
            if !t.expected.is_empty() {
                b.entries.insert(server, t.expected);
            }
        }
        Ok(b)
    }

    /// The baseline that makes `report` pass: every missed scored check.
    pub fn from_report(report: &Report) -> Self {
        let mut entries = Entries::new();
        let mut flaky = Entries::new();
        for r in &report.results {
            let flipped = |id: RuleId| {
                r.repeat
                    .as_ref()
                    .is_some_and(|x| x.flips.iter().any(|f| f == id.as_str()))
            };
            for c in &r.checks {
                let into = match (flipped(c.id), c.status.is_miss()) {
                    (true, _) => &mut flaky,
                    (false, true) => &mut entries,
                    (false, false) => continue,
                };
                into.entry(r.server.clone())
                    .or_default()
                    .entry(r.scenario.clone())
                    .or_default()
                    .push(c.id);
            }
        }
        Self {
            path: None,
            entries,
            flaky,
        }
    }

    pub fn to_toml(&self) -> String {
        let mut out = String::from(
            "# Expected failures of the bundled suite (scored against the default spec revision).\n\
             # Regenerate: cargo run --release -- run --no-baseline --write-baseline conformance/expected-failures.toml\n",
        );
        // Keys are quoted: server names contain dots, which bare TOML keys would nest.
        let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
        let table =
            |out: &mut String, header: String, scenarios: &BTreeMap<ScenarioId, Vec<RuleId>>| {
                let _ = writeln!(out, "\n[{header}]");
                for (scenario, rules) in scenarios {
                    let list: Vec<String> = rules.iter().map(|r| quote(r.as_str())).collect();
                    let _ = writeln!(
                        out,
                        "{} = [{}]",
                        quote(&scenario.to_string()),
                        list.join(", ")
                    );
                }
            };
        let servers: std::collections::BTreeSet<&String> =
            self.entries.keys().chain(self.flaky.keys()).collect();
        for server in servers {
            if let Some(s) = self.entries.get(server).filter(|s| !s.is_empty()) {
                table(&mut out, quote(server), s);
            }
            if let Some(s) = self.flaky.get(server) {
                table(&mut out, format!("{}.flaky", quote(server)), s);
            }
        }
        out
    }

    pub fn compare(&self, report: &Report) -> Comparison {
        let mut cmp = Comparison::default();
        for r in &report.results {
            let listed = self.entries.get(&r.server).and_then(|s| s.get(&r.scenario));
            let flaky = self.flaky.get(&r.server).and_then(|s| s.get(&r.scenario));
            for c in &r.checks {
                if flaky.is_some_and(|l| l.contains(&c.id)) {
                    cmp.known_flaky += 1;
                    continue;
                }
                let is_listed = listed.is_some_and(|l| l.contains(&c.id));
                let finding = || Finding {
                    server: r.server.clone(),
                    scenario: r.scenario.clone(),
                    rule: c.id,
                    status: c.status,
                };
                match (c.status.is_miss(), is_listed) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, JudgedCase, Level, Observation, Outcome};
    use crate::test_support::report_of;

    fn report(statuses: &[(&str, &str, RuleId, Status)]) -> Report {
        let results = statuses
            .iter()
            .map(|(server, scenario, rule, status)| JudgedCase {
                observation: Observation::empty(server, &scenario.parse().unwrap()),
                budgets: None,
                ladder: None,
                repeat: None,
                not_testable: None,
                checks: vec![Check {
                    id: *rule,
                    status: *status,
                    level: Level::Should,
                    outcome: Outcome::Fail,
                    message: String::new(),
                    spec_references: Vec::new(),
                }],
            })
            .collect();
        report_of(results)
    }

    #[test]
    fn strict_both_ways() {
        let eof = RuleId::StdioExitOnEof;
        let before = report(&[
            ("timer", "close", eof, Status::Warning),
            ("fixed", "close", eof, Status::Success),
        ]);
        let base = Baseline::from_report(&before);
        assert!(!base.compare(&before).fails());
        // The SDK fixed the gap: the entry is stale.
        let fixed = report(&[("timer", "close", eof, Status::Success)]);
        let c = base.compare(&fixed);
        assert_eq!(c.stale.len(), 1);
        assert!(c.render().contains("stale baseline: remove it"));
        // A regression elsewhere: unexpected.
        let broke = report(&[("fixed", "close", eof, Status::Warning)]);
        assert_eq!(base.compare(&broke).unexpected.len(), 1);
    }

    #[test]
    fn toml_round_trip_and_errors_name_the_line() {
        let r = report(&[
            (
                "node-1.30.0-timer",
                "close:java",
                RuleId::StdioExitOnEof,
                Status::Warning,
            ),
            ("a", "exit", RuleId::StdioExitOnClientDeath, Status::Warning),
        ]);
        let b = Baseline::from_report(&r);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.toml");
        std::fs::write(&p, b.to_toml()).unwrap();
        assert_eq!(Baseline::load(&p).unwrap().entries, b.entries);
        std::fs::write(&p, "[a]\nclose = 3\n").unwrap();
        assert!(Baseline::load(&p)
            .unwrap_err()
            .to_string()
            .contains("b.toml:2"));
        std::fs::write(&p, "[a]\nclose = [\"no-such-rule\"]\n").unwrap();
        let e = Baseline::load(&p).unwrap_err().to_string();
        assert!(e.contains("b.toml:2") && e.contains("no-such-rule"), "{e}");
    }

    #[test]
    fn a_known_flaky_check_passes_either_way() {
        use crate::model::Stage;
        use crate::test_support::result;
        let flaky = crate::rules::repeat::aggregate(vec![
            result("coin.toss", "close", Stage::Eof, 12.0),
            result("coin.toss", "close", Stage::Sigterm, 2004.0),
        ]);
        let r = report_of(vec![flaky]);
        let b = Baseline::from_report(&r);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.toml");
        let text = b.to_toml();
        assert!(text.contains("[\"coin.toss\".flaky]"), "{text}");
        std::fs::write(&p, &text).unwrap();
        let loaded = Baseline::load(&p).unwrap();
        assert_eq!((&loaded.entries, &loaded.flaky), (&b.entries, &b.flaky));
        let c = loaded.compare(&r);
        assert!(!c.fails(), "{}", c.render());
        assert_eq!(c.known_flaky, 1);
        // A single run of it, passing or not, is still accepted.
        let once = report_of(vec![result("coin.toss", "close", Stage::Eof, 12.0)]);
        assert!(!loaded.compare(&once).fails());
    }
}
