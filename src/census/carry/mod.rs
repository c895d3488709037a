//! `census --previous REPORT.json`: a server whose registry name and version (and package)
//! are what the previous report judged keeps that report's cases, marked carried forward
//! with the date they were judged; only new or updated servers run. Servers of the previous
//! report that the listing no longer holds are dropped and named. Pure.

use std::collections::BTreeSet;

use crate::model::{Judged, Report};

use super::Entry;

/// What a previous report decides for a listing.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// The previous report's servers that keep their verdicts (report keys), in name order.
    pub carried: Vec<String>,
    /// The entries to run: new, or updated since the previous report.
    pub run: Vec<Entry>,
    /// Registry names the previous report judged and the listing no longer holds.
    pub dropped: Vec<String>,
    /// Previous servers that were not carried although unchanged, and why (an older report
    /// that does not say when it judged them).
    pub undated: Vec<String>,
}

/// The previous server that judged exactly this entry's package, and when (older reports do
/// not say).
fn same<'a>(previous: &'a Report, e: &Entry) -> Option<(&'a String, Option<&'a Judged>)> {
    previous.servers.iter().find_map(|(key, info)| {
        let p = info.package.as_ref()?;
        let unchanged = p.name == e.server_name
            && p.version == e.server_version
            && p.identifier == e.identifier
            && p.package_version == e.version;
        unchanged.then_some((key, info.judged.as_ref()))
    })
}

/// Splits `entries` (the ones this run would judge) by the previous report. `listed` is every
/// registry name of the listing (all shards), `mine` says which previous registry names this
/// run answers for (its shard), so a shard names only its own dropped servers.
pub fn plan(
    previous: &Report,
    entries: Vec<Entry>,
    listed: &BTreeSet<String>,
    mine: impl Fn(&str) -> bool,
) -> Plan {
    let mut out = Plan::default();
    for e in entries {
        match same(previous, &e) {
            Some((key, Some(_))) if previous.results.iter().any(|r| &r.server == key) => {
                out.carried.push(key.clone())
            }
            Some((_, None)) => {
                out.undated.push(e.id.clone());
                out.run.push(e)
            }
            _ => out.run.push(e),
        }
    }
    out.carried.sort();
    out.carried.dedup();
    let gone: BTreeSet<String> = previous
        .servers
        .values()
        .filter_map(|i| i.package.as_ref().map(|p| p.name.clone()))
        .filter(|n| !listed.contains(n) && mine(n))
        .collect();
    out.dropped = gone.into_iter().collect();
    out
}

/// The previous report cut to the carried servers, each marked carried (its date kept), ready
/// to merge with this run's report.
pub fn carried(previous: &Report, keep: &[String]) -> Report {
    let mut r = previous.clone();
    r.results.retain(|c| keep.contains(&c.server));
    r.servers.retain(|k, _| keep.contains(k));
    for info in r.servers.values_mut() {
        if let Some(j) = info.judged.as_mut() {
            j.carried = true;
        }
    }
    r.with_sdk.clear();
    r.not_testable.clear();
    r.census = None;
    r.resummarize();
    r
}

#[cfg(test)]
mod tests;
