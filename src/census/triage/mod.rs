//! `census --triage`: every server runs the triage set first (`[[census.triage]]` of
//! conformance/endings.toml); only a server whose triage found something runs the rest of the
//! census's scenarios. Pure: which scenarios, which servers, and what each server's report
//! says of its pass.

use std::collections::BTreeSet;

use crate::config::endings;
use crate::model::{Judged, JudgedCase, Pass, Report, ScenarioId};

/// The triage set, in the catalogue's order.
pub fn scenarios() -> Vec<ScenarioId> {
    endings::triage()
        .iter()
        .map(|t| t.scenario.clone())
        .collect()
}

/// A case that found nothing: it ran, every scored check held, the machine did not decide
/// it and its runs agreed. Anything else (a miss, an error, a server that could not be
/// judged, a flaky or machine-bound case) is worth the full set.
pub fn clean(r: &JudgedCase) -> bool {
    r.error.is_none()
        && r.not_testable.is_none()
        && r.machine_bound.is_none()
        && !r.repeat.as_ref().is_some_and(|x| x.flaky)
        && !r.checks.iter().any(|c| c.status.is_miss())
}

/// The servers of a triage report that need the full set, in name order.
pub fn needs_full(report: &Report) -> BTreeSet<String> {
    report
        .results
        .iter()
        .filter(|r| !clean(r))
        .map(|r| r.server.clone())
        .collect()
}

/// Records on every server of `report` which pass judged it on `date`: `full` for those
/// in `full`, `triage` for the rest.
pub fn mark(report: &mut Report, full: &BTreeSet<String>, date: &str) {
    for (name, info) in report.servers.iter_mut() {
        let pass = if full.contains(name) {
            Pass::Full
        } else {
            Pass::Triage
        };
        info.judged = Some(Judged {
            pass,
            date: date.to_string(),
            carried: false,
        });
    }
}

#[cfg(test)]
mod tests;
