//! What a report records about the client or host profile that ran a case: who it is, where
//! its ladder comes from, and how it launches servers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ids::ProfileId;
use super::scenario::Plumbing;

/// Whether a profile is an SDK's client or an application that hosts servers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileKind {
    #[default]
    Client,
    Host,
}

/// Where a profile's ladder comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileBasis {
    /// Read from the client's or host's own source (`basis = "read"` says the same).
    #[serde(alias = "read")]
    Source,
    /// Observed in public bug reports (closed source).
    Observed,
    /// Measured by `mcp-shutdown host measure` against the real host binary.
    Measured,
}

/// The measurement a `basis = "measured"` profile comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredRef {
    /// The registry package (`@anthropic-ai/claude-code`).
    pub package: String,
    pub version: String,
    /// The day it was measured (YYYY-MM-DD).
    pub date: String,
    /// The quit paths that showed this ladder.
    pub triggers: Vec<String>,
    pub repeats: u32,
    /// Every wait within ±50 ms or ±10 % across the repeats.
    #[serde(default = "yes")]
    pub reproduces: bool,
    /// min/median/max of every wait, by gap ("sigint → sigterm" = "100/101/104 ms").
    #[serde(default)]
    pub waits: BTreeMap<String, String>,
    /// The host's daemon that is the server's parent (not the process the user quits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<String>,
}

fn yes() -> bool {
    true
}

/// The source a profile was read from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRef {
    pub repository: String,
    pub paths: Vec<String>,
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(default)]
    pub constants: BTreeMap<String, String>,
}

/// What a report says about the profile that ran a case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileInfo {
    pub kind: ProfileKind,
    pub client: String,
    pub basis: ProfileBasis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed: Vec<String>,
    /// The measurement, for `basis = "measured"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<MeasuredRef>,
    pub plumbing: Plumbing,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_note: Option<String>,
    /// The profile whose steps this one replays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<ProfileId>,
}
