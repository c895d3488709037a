//! What a census records beyond the cases: which pass judged each server and when (so a
//! renderer says "triage only" or "carried forward from 2026-11-29" truthfully), the run's
//! date and the servers it dropped, and the verdict history kept between runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Which ending set judged a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pass {
    /// Only the triage set (`[census] triage` of conformance/endings.toml): it found nothing,
    /// so the rest did not run.
    Triage,
    /// Every scenario of the census (after a triage that found something, or without
    /// `--triage`).
    Full,
}

impl Pass {
    pub fn as_str(self) -> &'static str {
        match self {
            Pass::Triage => "triage",
            Pass::Full => "full",
        }
    }
}

/// How and when the census judged one server (`servers.<name>.judged`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    pub pass: Pass,
    /// The date of the run whose cases these are (`2026-12-06`).
    pub date: String,
    /// The cases were copied from an earlier report: the server's registry name and version
    /// had not changed since.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub carried: bool,
}

/// The census run itself (`census` of a report; other runs: none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CensusRun {
    /// The run's date (`2026-12-06`).
    pub date: String,
    /// Servers of the previous report the listing no longer holds, by registry name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
}

/// One server's verdicts over time (`--history FILE`): each entry is a badge that held from
/// its date until the next entry's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// By registry name and package (`io.github.o/s (npm @o/s)`; a history from before
    /// packages were named has the registry name alone, taken over on the next update).
    pub servers: BTreeMap<String, ServerHistory>,
    /// The dates of the runs recorded, oldest first.
    #[serde(default)]
    pub runs: Vec<String>,
}

/// What one server's badge said since when, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerHistory {
    /// Its registry name, for pages that group by it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its SDK (as the report says it) and launcher (`npx`, `uvx`), for the week-over-week
    /// page's groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub launcher: String,
    pub verdicts: Vec<Verdict>,
}

/// A badge a server held from `since`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub since: String,
    /// The badge's colour name (`green`, `yellow`, `red`, `lightgrey`) and message.
    pub color: String,
    pub message: String,
    /// The version it was judged at.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}
