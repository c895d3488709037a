//! The JSON report: the source every other format renders from. It carries what its
//! renderers need (per-case budgets and planned ladder, the wording and quotes of the rules
//! that judged it), so an old report still renders truthfully after the catalogue changed.
//! `schema_version` changes only when a key is renamed or removed; keys are only added.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};

use super::budgets::Budgets;
use super::case_error::ErrorKind;
use super::ids::{BudgetName, ProfileId, Revision, RuleId};
use super::observation::Observation;
use super::profile::ProfileInfo;
use super::scenario::Ladder;
use super::scenario::Stage;
use super::signal::ExitStatus;
use super::verdict::{Basis, Check, Owner, Status};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    pub fn this() -> Self {
        Self {
            name: "mcp-shutdown-conformance".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub os: String,
    pub kernel: String,
    pub cpus: usize,
    /// How the run kept every process of a case together (reports before it was recorded:
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<Containment>,
    /// Where the bundled suite (manifests, fixtures, kits) came from: the binary's own copy
    /// extracted into the user's cache, or a checkout the command ran inside (runs that read
    /// no suite, and reports before it was recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_source: Option<SuiteSource>,
    /// The directory of that suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_path: Option<std::path::PathBuf>,
}

/// Where the suite a run read came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteSource {
    /// The copy embedded in the binary, extracted into the user's cache.
    Embedded,
    /// A checkout of this project (its files win, so they can be edited live).
    Checkout,
}

/// What holds a case's processes together, so that none escapes the final kill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Membership {
    /// A cgroup v2 per case: membership no process can leave; `cgroup.kill`.
    CgroupV2,
    /// A cgroup of the v1 freezer controller per case: freeze, kill, thaw.
    CgroupV1,
    /// No cgroup could be made: the harness and every supervisor are subreapers, and every
    /// process of a case carries an environment marker.
    Subreaper,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Containment {
    pub membership: Membership,
    /// The limit on tasks (processes and threads) per case, where a pids controller exists.
    pub pids_max: Option<u64>,
}

/// Counts of check statuses, and of cases that could not run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub cases: usize,
    pub errors: usize,
    pub success: usize,
    pub failure: usize,
    pub warning: usize,
    pub info: usize,
    pub skipped: usize,
    /// Cases that ran but could not be judged (a server that needs real credentials);
    /// reports before it was recorded: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_testable: usize,
    /// Cases without a verdict, by whose it is (`usage`, `harness`, `listing`,
    /// `credentials`, `server`); reports before it was recorded: none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub no_verdict: BTreeMap<Owner, usize>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub description: String,
    pub sdk: Option<String>,
    pub sdk_version: Option<String>,
    pub shape: Option<String>,
    /// Where `sdk` and `sdk_version` were read from when the manifest did not say them: the
    /// SDK's metadata where the server's packages are installed (`package.json`,
    /// `METADATA`); none when the manifest said them or nothing could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk_from: Option<std::path::PathBuf>,
    /// The name and version the server gave in the handshake (`serverInfo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The launchers its command starts it through, outermost first (`uv run`, `sh -c`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launchers: Vec<String>,
    /// The published package a census ran (reports of manifests: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<PackageInfo>,
    /// What to change for every rule it missed, for its SDK or language where known
    /// (`conformance/fixes.toml`; reports before they were recorded, and servers that
    /// missed nothing: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
    /// Which census pass judged it, when, and whether its cases were carried forward from
    /// an earlier report (other runs: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<super::census::Judged>,
}

/// One change that makes a server meet the rules it missed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// Its stable id in `conformance/fixes.toml` (`typescript-v1`, `any-children`).
    pub id: String,
    /// What it does, in a few words (`Exit when stdin ends`).
    pub title: String,
    /// The SDK it is written for (none: any server of its language, or any server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk: Option<String>,
    /// The language's id, for its page in the book (`docs/book/src/fix/<id>.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The rules this server missed that it answers.
    pub rules: Vec<RuleId>,
    pub text: String,
    /// The lines to write, as a server that passes has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<FixCode>,
}

/// A fix's lines, exactly as a bundled server that passes has them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixCode {
    /// The code block's language (`js`, `python`, ...).
    pub fence: String,
    pub lines: String,
    /// The file of the repository they are taken from.
    pub source: String,
}

/// A registry package as the census launched it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageInfo {
    /// The server's name in the listing (`io.github.owner/repo`) and its version there.
    pub name: String,
    pub version: String,
    /// `npm` or `pypi`, the package and its exact version.
    pub registry: String,
    pub identifier: String,
    pub package_version: String,
    /// What runs it: `node` or `python`, through `npx` or `uvx`.
    pub runtime: String,
    pub launcher: String,
    /// The secrets it was given placeholder values for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placeholders: Vec<String>,
}

/// Why a case that ran cannot be judged. It is reported, and never counts as a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotTestableReason {
    /// It refused to start with placeholder values for its required secrets.
    NeedsCredentials,
    /// The registry listing's launch command does not exist in the package (the launcher
    /// said so: no executable of that name, no `bin`).
    LaunchNotInPackage,
}

impl NotTestableReason {
    /// In words, for cells and badges.
    pub fn label(self) -> &'static str {
        match self {
            NotTestableReason::NeedsCredentials => "needs credentials",
            NotTestableReason::LaunchNotInPackage => "launch command not in the package",
        }
    }

    /// Whose it is.
    pub fn owner(self) -> Owner {
        match self {
            NotTestableReason::NeedsCredentials => Owner::Credentials,
            NotTestableReason::LaunchNotInPackage => Owner::Listing,
        }
    }
}

/// Why a case that ran cannot be judged. Its JSON also carries the reason's `owner`
/// (derived, written for readers of the report; ignored when read back).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct NotTestable {
    pub reason: NotTestableReason,
    pub message: String,
}

impl Serialize for NotTestable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("NotTestable", 3)?;
        st.serialize_field("reason", &self.reason)?;
        st.serialize_field("owner", &self.reason.owner())?;
        st.serialize_field("message", &self.message)?;
        st.end()
    }
}

/// An SDK version that was asked for (`--sdk`) but yields no server to run: a release no
/// template supports, an installation that failed, a missing toolchain. Carried in the report
/// so a sweep shows its gaps instead of silently dropping them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Untested {
    /// The SDK line (kit id): `typescript`, `python`, ...
    pub line: String,
    /// The version as asked for, or the local label (`local-1a2b3c4d`).
    pub version: String,
    pub reason: String,
}

/// A passage of the spec a rule quotes, for the report's revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quote {
    pub url: String,
    pub quote: String,
}

/// What a rule that judged this report says, as the catalogue said it at the time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleInfo {
    pub title: String,
    pub basis: Basis,
    /// The budget the rule's timing is judged against, if any.
    #[serde(default)]
    pub budget: Option<BudgetName>,
    #[serde(default)]
    pub quotes: Vec<Quote>,
}

/// One case as judged: what was observed, under which budgets and ladder, and its checks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgedCase {
    #[serde(flatten)]
    pub observation: Observation,
    /// The budgets in force for this case (reports before they were recorded: the run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Budgets>,
    /// The ladder that was planned (reports before it was recorded: only the steps taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<Ladder>,
    pub checks: Vec<Check>,
    /// Set when the case ran more than once (`--repeat`): every run, and what they agree on.
    /// The fields above are then those of the worst run, and each check is at its worst.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
    /// Set when the case ran but cannot be judged; its missed checks are then SKIPPED with
    /// a message starting `Not testable:` (reports before it was recorded: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_testable: Option<NotTestable>,
}

/// A case run several times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Repeat {
    /// Every run, in the order they were scheduled.
    pub runs: Vec<RunOutcome>,
    /// How many runs ended at each stage (`eof`, `sigterm`, ...), or could not run (under
    /// their error kind).
    pub stages: BTreeMap<String, u32>,
    /// Exit latency over the runs that exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Latency>,
    /// The stage or a check's status differed between runs.
    pub flaky: bool,
    /// What differed: `stage` and the rule IDs whose status did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flips: Vec<String>,
}

/// One run of a repeated case, in brief.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub stage: Option<Stage>,
    pub exit_ms: Option<f64>,
    #[serde(default)]
    pub runqueue_ms: Option<f64>,
    #[serde(default)]
    pub exit_status: Option<ExitStatus>,
    #[serde(default)]
    pub error: Option<ErrorKind>,
    pub checks: BTreeMap<RuleId, Status>,
    #[serde(default)]
    pub leftovers: usize,
    /// Wall time of the run (launch to clean-up), for benchmarks; never judged.
    #[serde(default)]
    pub wall_ms: f64,
    /// The machine, not the server, decided this run (see `MachineBound`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine_bound: bool,
}

/// Exit-latency percentiles (nearest rank), in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// How many runs exited.
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub p95: f64,
    pub max: f64,
}

impl Deref for JudgedCase {
    type Target = Observation;
    fn deref(&self) -> &Observation {
        &self.observation
    }
}

impl DerefMut for JudgedCase {
    fn deref_mut(&mut self) -> &mut Observation {
        &mut self.observation
    }
}

impl JudgedCase {
    /// Marks a case that cannot be judged: every missed check becomes SKIPPED and says why,
    /// so neither the exit code nor a badge blames the server for what it was not given.
    pub fn mark_not_testable(&mut self, why: NotTestable) {
        for c in &mut self.checks {
            if c.status.is_miss() {
                c.status = Status::Skipped;
                c.outcome = super::verdict::Outcome::NotTestable;
                c.message = format!("Not testable: {}. {}", why.reason.label(), c.message);
            }
        }
        self.not_testable = Some(why);
    }

    /// The machine, not the server, decided this case (see `MachineBound`): a case without
    /// a verdict that is the server's is never machine-bound.
    pub fn is_machine_bound(&self) -> bool {
        self.machine_bound.is_some() && self.owner().is_none_or(Owner::is_scored)
    }

    /// Whose doing the server's end is in this case when its client's ladder left it no say
    /// (from the planned ladder; reports before it was recorded: the steps taken).
    pub fn hosts_doing(&self) -> Option<super::scenario::HostsDoing> {
        match &self.ladder {
            Some(l) => super::scenario::hosts_doing(&l.steps),
            None if self.steps.is_empty() => None,
            None => {
                let taken: Vec<super::scenario::Step> = self
                    .steps
                    .iter()
                    .map(|s| super::scenario::Step::new(s.action, 0))
                    .collect();
                super::scenario::hosts_doing(&taken)
            }
        }
    }

    /// Whose it is that this case has no verdict (a not-testable mark first, then its error),
    /// or `None` when it ran and was judged.
    pub fn owner(&self) -> Option<Owner> {
        self.not_testable
            .as_ref()
            .map(|n| n.reason.owner())
            .or_else(|| self.error.as_ref().map(|e| e.kind.owner()))
    }

    /// The worst scored status: `Failure`, `Warning`, or `Success` when neither. A case that
    /// could not run and has no checks counts as a failure when that is the server's doing.
    pub fn verdict(&self) -> Status {
        let worst = self
            .checks
            .iter()
            .map(|c| c.status)
            .filter(|s| s.is_miss())
            .min();
        match worst {
            Some(s) => s,
            None if self.checks.is_empty()
                && self.not_testable.is_none()
                && self
                    .error
                    .as_ref()
                    .is_some_and(|e| e.kind.scores_untested()) =>
            {
                Status::Failure
            }
            None => Status::Success,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    /// The spec revision whose levels scored the checks.
    pub spec: Revision,
    /// Defaults with the run's overrides applied (manifests may override per server: see
    /// each result's `budgets`).
    pub budgets: Budgets,
    pub host: Host,
    /// What each server is (from its manifest), by name.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerInfo>,
    /// The rules that judged this report, as worded for its revision.
    #[serde(default)]
    pub rules: BTreeMap<RuleId, RuleInfo>,
    /// The client and host profiles whose ladders ran, with their sources (reports before
    /// they were recorded: none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub profiles: BTreeMap<ProfileId, ProfileInfo>,
    pub results: Vec<JudgedCase>,
    pub summary: Summary,
    /// SDK versions asked for that could not be made into servers, and why (reports before
    /// it was recorded, and runs without `--sdk`: none). The JSON key says "versions": a
    /// result's own `not_testable` is a server that ran and could not be judged.
    #[serde(
        rename = "not_testable_versions",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub not_testable: Vec<Untested>,
    /// `census --with-sdk`: each replacement's servers before → after (other runs: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with_sdk: Vec<super::what_if::WhatIf>,
    /// A census's date and the servers it dropped (other runs: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub census: Option<super::census::CensusRun>,
}

impl Report {
    /// Does the run fail at this threshold? (`Warning` also fails on missed SHOULDs.)
    pub fn fails(&self, threshold: Status) -> bool {
        self.results
            .iter()
            .flat_map(|r| &r.checks)
            .any(|c| match threshold {
                Status::Warning => c.status.is_miss(),
                _ => c.status == Status::Failure,
            })
    }

    /// The budgets a case ran under (older reports recorded only the run's).
    pub fn budgets_of<'a>(&'a self, r: &'a JudgedCase) -> &'a Budgets {
        r.budgets.as_ref().unwrap_or(&self.budgets)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports serialize")
    }

    /// Calls a server by another name everywhere in the report (a name found after the run:
    /// the one the server gave in its handshake). Nothing changes when `to` is taken.
    pub fn rename_server(&mut self, from: &str, to: &str) {
        if from == to || self.servers.contains_key(to) {
            return;
        }
        if let Some(info) = self.servers.remove(from) {
            self.servers.insert(to.to_string(), info);
        }
        for r in self.results.iter_mut().filter(|r| r.server == from) {
            r.observation.server = to.to_string();
        }
    }

    /// Recomputes the summary from the results.
    pub fn resummarize(&mut self) {
        self.summary = summarize(&self.results);
    }
}

pub fn summarize(results: &[JudgedCase]) -> Summary {
    let mut s = Summary {
        cases: results.len(),
        errors: results.iter().filter(|r| r.error.is_some()).count(),
        not_testable: results.iter().filter(|r| r.not_testable.is_some()).count(),
        ..Summary::default()
    };
    for owner in results.iter().filter_map(JudgedCase::owner) {
        *s.no_verdict.entry(owner).or_default() += 1;
    }
    for c in results.iter().flat_map(|r| &r.checks) {
        match c.status {
            Status::Success => s.success += 1,
            Status::Failure => s.failure += 1,
            Status::Warning => s.warning += 1,
            Status::Info => s.info += 1,
            Status::Skipped => s.skipped += 1,
        }
    }
    s
}
