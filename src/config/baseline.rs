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
//!
//! A server's `whole` list names scenarios any of whose checks may miss (strict the other
//! way too: stale once every check holds), what the official baseline's `<scenario>` entries
//! say. That baseline, the official MCP conformance suite's YAML (`server:` and `client:`
//! lists of `<scenario>` or `<scenario>:<check-id>`, the scenario being the case's official
//! name `<server>+<scenario>`, see [`crate::model::official`]), is read and written here too:
//! a file named `*.yaml` or `*.yml` is that form.
//! ```yaml
//! server:
//!   - node-1.30.0-timer+close
//!   - node-1.30.0-timer+close-java:stdio-exit-on-eof
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::profiles::Profiles;
use crate::model::official::{scenario_name, segment, split_name};
use crate::model::{Ending, Report, RuleId, ScenarioId, Status};

/// server → scenario → rule IDs expected to be missed.
pub type Entries = BTreeMap<String, BTreeMap<ScenarioId, Vec<RuleId>>>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    pub path: Option<PathBuf>,
    /// Checks expected to be missed.
    pub entries: Entries,
    /// Checks known to flip between runs: either outcome is accepted.
    pub flaky: Entries,
    /// server → scenarios any of whose checks may miss (stale once all hold).
    pub whole: BTreeMap<String, BTreeSet<ScenarioId>>,
}

/// One server's table as written: scenario keys, and an optional `flaky` table. Read by
/// hand (not `#[serde(flatten)]`, which buffers the values and loses their line numbers).
#[derive(Default)]
struct ServerTable {
    flaky: BTreeMap<ScenarioId, Vec<RuleId>>,
    expected: BTreeMap<ScenarioId, Vec<RuleId>>,
    whole: BTreeSet<ScenarioId>,
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
                    } else if key == "whole" {
                        t.whole = m.next_value()?;
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
pub struct Deviation {
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
    pub unexpected: Vec<Deviation>,
    /// Listed rules that now hold: the run fails until the entry is removed.
    pub stale: Vec<Deviation>,
    /// Whole scenarios the baseline lists whose every check now holds: the run fails.
    pub stale_scenarios: Vec<(String, ScenarioId)>,
    /// Missed rules the baseline lists.
    pub expected: usize,
    /// Checks the baseline lists as known to flip (not judged).
    pub known_flaky: usize,
}

impl Comparison {
    pub fn fails(&self) -> bool {
        !self.unexpected.is_empty() || !self.stale.is_empty() || !self.stale_scenarios.is_empty()
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
        for (server, scenario) in &self.stale_scenarios {
            let _ = writeln!(
                out,
                "STALE      {server} {scenario}: every check holds now (stale baseline: remove it)"
            );
        }
        let _ = writeln!(
            out,
            "baseline: {} expected, {} unexpected, {} stale, {} known flaky",
            self.expected,
            self.unexpected.len(),
            self.stale.len() + self.stale_scenarios.len(),
            self.known_flaky
        );
        out
    }
}

impl Baseline {
    /// Reads a baseline: the official YAML form for `*.yaml` and `*.yml`, else ours (TOML).
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if is_official(path) {
            return Self::from_official_yaml(path, &text);
        }
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
            if !t.whole.is_empty() {
                b.whole.insert(server.clone(), t.whole);
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
            whole: BTreeMap::new(),
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
        let servers: BTreeSet<&String> = self
            .entries
            .keys()
            .chain(self.flaky.keys())
            .chain(self.whole.keys())
            .collect();
        let empty = BTreeMap::new();
        for server in servers {
            let whole = self.whole.get(server).filter(|w| !w.is_empty());
            if let Some(s) = self
                .entries
                .get(server)
                .filter(|s| !s.is_empty() || whole.is_some())
                .or(whole.map(|_| &empty))
            {
                table(&mut out, quote(server), s);
                if let Some(w) = whole {
                    let list: Vec<String> = w.iter().map(|x| quote(&x.to_string())).collect();
                    let _ = writeln!(out, "whole = [{}]", list.join(", "));
                }
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
            if self
                .whole
                .get(&r.server)
                .is_some_and(|w| w.contains(&r.scenario))
            {
                let missed = r.checks.iter().filter(|c| c.status.is_miss()).count();
                cmp.expected += missed;
                if missed == 0 && r.checks.iter().any(|c| c.status == Status::Success) {
                    cmp.stale_scenarios
                        .push((r.server.clone(), r.scenario.clone()));
                }
                continue;
            }
            let listed = self.entries.get(&r.server).and_then(|s| s.get(&r.scenario));
            let flaky = self.flaky.get(&r.server).and_then(|s| s.get(&r.scenario));
            for c in &r.checks {
                if flaky.is_some_and(|l| l.contains(&c.id)) {
                    cmp.known_flaky += 1;
                    continue;
                }
                let is_listed = listed.is_some_and(|l| l.contains(&c.id));
                let finding = || Deviation {
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

/// Whether `path` names the official YAML form (`*.yaml`, `*.yml`).
pub fn is_official(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The official file, as `serde_norway` reads and writes it.
#[derive(Default, serde::Deserialize, serde::Serialize)]
struct Official {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server: Option<Vec<serde_norway::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client: Option<Vec<serde_norway::Value>>,
}

impl Baseline {
    /// The official YAML baseline: one `<server>+<scenario>` entry per case with a missed
    /// check (or a whole-scenario entry), the form every published version of the official
    /// suite evaluates; its `<scenario>:<check-id>` entries are newer and read here, not
    /// written. Known-flaky checks have no official form and are left out.
    pub fn to_official_yaml(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        for (server, scenarios) in &self.entries {
            for (scenario, rules) in scenarios {
                if !rules.is_empty() {
                    names.push(scenario_name(server, &scenario.to_string()));
                }
            }
        }
        for (server, scenarios) in &self.whole {
            names.extend(
                scenarios
                    .iter()
                    .map(|s| scenario_name(server, &s.to_string())),
            );
        }
        names.sort();
        names.dedup();
        let official = Official {
            server: Some(names.into_iter().map(serde_norway::Value::String).collect()),
            client: None,
        };
        let body = serde_norway::to_string(&official).expect("a list of strings serializes");
        format!(
            "# Expected failures in the official MCP conformance suite's form (`--expected-failures`):\n\
             # each entry is <server>+<scenario> (or <server>+<scenario>:<check-id>).\n{body}"
        )
    }

    /// Reads the official YAML form. `client:` entries judge MCP clients, which this suite
    /// does not run: they are accepted and not used.
    pub fn from_official_yaml(path: &Path, text: &str) -> Result<Self, BaselineError> {
        let parse = |line: usize, message: String| BaselineError::Parse {
            path: path.to_path_buf(),
            line,
            message,
        };
        let official: Official = if text.trim().is_empty() {
            Official::default()
        } else {
            serde_norway::from_str::<Option<Official>>(text)
                .map_err(|e| parse(e.location().map_or(0, |l| l.line()), e.to_string()))?
                .unwrap_or_default()
        };
        let line_of = |entry: &str| {
            text.lines()
                .position(|l| l.contains(entry))
                .map_or(0, |i| i + 1)
        };
        let scenarios = known_scenarios();
        let mut b = Self {
            path: Some(path.to_path_buf()),
            ..Self::default()
        };
        for value in official.server.unwrap_or_default() {
            let entry = entry_text(&value, &line_of).map_err(|(line, m)| parse(line, m))?;
            let (server, id, rule) =
                official_entry(&entry, &scenarios).map_err(|m| parse(line_of(&entry), m))?;
            b.expect(server, id, rule);
        }
        if let Some(name) = b.redundant() {
            return Err(parse(
                line_of(&name),
                format!("`{name}` expects the whole scenario to fail, so its per-check entries are redundant: remove one or the other"),
            ));
        }
        Ok(b)
    }

    /// Expects `server` to miss `rule` under `id`, or the whole scenario when no rule.
    fn expect(&mut self, server: &str, id: ScenarioId, rule: Option<RuleId>) {
        match rule {
            None => {
                self.whole.entry(server.to_string()).or_default().insert(id);
            }
            Some(rule) => {
                let rules = self
                    .entries
                    .entry(server.to_string())
                    .or_default()
                    .entry(id)
                    .or_default();
                if !rules.contains(&rule) {
                    rules.push(rule);
                }
            }
        }
    }

    /// The first `<server>+<scenario>` expected to fail whole that also has per-check entries.
    fn redundant(&self) -> Option<String> {
        self.whole.iter().find_map(|(server, scenarios)| {
            let per_check = self.entries.get(server)?;
            let s = scenarios.iter().find(|s| per_check.contains_key(*s))?;
            Some(scenario_name(server, &s.to_string()))
        })
    }

    /// The file in the form its name asks for (see [`is_official`]).
    pub fn to_file_text(&self, path: &Path) -> String {
        if is_official(path) {
            self.to_official_yaml()
        } else {
            self.to_toml()
        }
    }
}

/// An official entry, `<server>+<scenario>` or `<server>+<scenario>:<check-id>`: the
/// server, its scenario among `scenarios`, and the rule when one is named.
fn official_entry<'e>(
    entry: &'e str,
    scenarios: &[ScenarioId],
) -> Result<(&'e str, ScenarioId, Option<RuleId>), String> {
    let (name, check) = match entry.split_once(':') {
        Some((n, c)) => (n, Some(c)),
        None => (entry, None),
    };
    let Some((server, scenario)) = split_name(name) else {
        return Err(format!(
            "`{entry}` is not `<server>+<scenario>` or `<server>+<scenario>:<check-id>`"
        ));
    };
    let Some(id) = scenarios
        .iter()
        .find(|s| segment(&s.to_string()) == scenario)
    else {
        return Err(format!("`{entry}`: unknown scenario `{scenario}`"));
    };
    let rule = check
        .map(|c| c.parse::<RuleId>())
        .transpose()
        .map_err(|e| format!("`{entry}`: {e}"))?;
    Ok((server, id.clone(), rule))
}

/// One `server:` entry of the official YAML as its text; a `- a: b` (YAML read a mapping
/// where a `server+scenario:check` was meant) or any other non-string is an error with its
/// line (0: unknown).
fn entry_text(
    value: &serde_norway::Value,
    line_of: &dyn Fn(&str) -> usize,
) -> Result<String, (usize, String)> {
    match value {
        serde_norway::Value::String(s) => Ok(s.clone()),
        serde_norway::Value::Mapping(m) if m.len() == 1 => {
            let (k, v) = m.iter().next().expect("one pair");
            let show = |v: &serde_norway::Value| {
                serde_norway::to_string(v)
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            };
            let (k, v) = (show(k), show(v));
            Err((
                line_of(&k),
                format!(
                    "`- {k}: {v}` is a mapping: remove the space after the colon (`- {k}:{v}`)"
                ),
            ))
        }
        other => {
            let shown = serde_norway::to_string(other).unwrap_or_default();
            Err((0, format!("server entry {} is not a string", shown.trim())))
        }
    }
}

/// Every scenario a baseline can name: all the endings and every bundled profile.
fn known_scenarios() -> Vec<ScenarioId> {
    Ending::ALL
        .iter()
        .map(|e| ScenarioId::Ending(*e))
        .chain(
            Profiles::bundled()
                .iter()
                .map(|p| ScenarioId::Profile(p.id.clone())),
        )
        .collect()
}

#[cfg(test)]
mod tests;
