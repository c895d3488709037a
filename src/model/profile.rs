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
    pub waits: BTreeMap<String, Spread>,
    /// The host's daemon that is the server's parent (not the process the user quits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<String>,
    /// Measured with the daemon a first run left already up (a user's second session).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub daemon_up: bool,
}

fn yes() -> bool {
    true
}

/// A wait measured over repeats: its least, median and greatest, in milliseconds. Written
/// `"100/101/104 ms"` (whole milliseconds) in profiles and reports.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Spread {
    pub min_ms: f64,
    pub median_ms: f64,
    pub max_ms: f64,
}

// Never NaN: made from measured times, or read from whole milliseconds.
impl Eq for Spread {}

impl Spread {
    /// The spread of some measurements, if there are any.
    pub fn of(mut xs: Vec<f64>) -> Option<Spread> {
        xs.sort_by(f64::total_cmp);
        Some(Spread {
            min_ms: *xs.first()?,
            median_ms: xs[xs.len() / 2],
            max_ms: *xs.last()?,
        })
    }

    /// Whether the repeats agree: within ±50 ms or ±10 % of the median, whichever is larger.
    pub fn reproduces(&self) -> bool {
        let tol = (self.median_ms.abs() * 0.10).max(50.0);
        self.median_ms - self.min_ms <= tol && self.max_ms - self.median_ms <= tol
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |x: f64| x.max(0.0).round();
        write!(
            f,
            "{}/{}/{} ms",
            ms(self.min_ms),
            ms(self.median_ms),
            ms(self.max_ms)
        )
    }
}

impl From<Spread> for String {
    fn from(s: Spread) -> String {
        s.to_string()
    }
}

impl TryFrom<String> for Spread {
    type Error = String;
    fn try_from(s: String) -> Result<Spread, String> {
        let bad = || format!("{s:?}: a spread is `MIN/MEDIAN/MAX ms`");
        let v: Vec<f64> = s
            .strip_suffix(" ms")
            .ok_or_else(bad)?
            .split('/')
            .map(|x| x.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        match v[..] {
            [min_ms, median_ms, max_ms] => Ok(Spread {
                min_ms,
                median_ms,
                max_ms,
            }),
            _ => Err(bad()),
        }
    }
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
