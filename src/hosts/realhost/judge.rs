//! A real host's runs judged as cases of their measured profiles' scenarios, by the same
//! rules as any case, keeping only the rules a real host can judge (`under_real_host` in
//! conformance/rules.toml), and worded.

use super::place::{ladder_offset_ms, observation, profile_for, scenario_of, untimed};
use super::RealRun;
use crate::config::manifest::Manifest;
use crate::config::profiles::Profile;
use crate::config::scenarios::{build_with, PlumbingOverride};
use crate::harness::Harness;
use crate::hosts::catalogue::HostSpec;
use crate::model::{Check, JudgedCase, Outcome, RealHostRun, RuleId, ScenarioId, Sender, Status};
use crate::rules::Catalogue;
use std::collections::BTreeMap;

/// The checks of a run under a real host: only the rules it can judge, and for a server
/// that ended where its exit cannot be placed in the ladder (`untimed`), only its leftovers.
pub(super) fn keep_judged(checks: Vec<Check>, run: &RealRun, untimed: Option<&str>) -> Vec<Check> {
    checks
        .into_iter()
        .filter(|c| Catalogue::bundled().rule(c.id).under_real_host)
        .map(|mut c| {
            let ended = run.exited && run.failure.is_none() && !run.left_running;
            if let (true, Some(why)) = (ended, untimed) {
                if c.id != RuleId::ProcessNoLeakedDescendants {
                    c.status = Status::Skipped;
                    c.outcome = Outcome::NotApplicable;
                    c.message = format!("Not judged: {why}.");
                }
            }
            c
        })
        .collect()
}

/// A judged case's note under a real host, before what the ending costs.
pub fn note(about: &RealHostRun, name: &str, rest: Option<String>) -> String {
    let got = if about.signals.is_empty() {
        "no signal".to_string()
    } else {
        about
            .signals
            .iter()
            .map(|s| {
                let from = match s.from {
                    Sender::Host => "the host".to_string(),
                    Sender::Kernel => "the kernel".to_string(),
                    Sender::Server => "itself".to_string(),
                    Sender::Other => format!("pid {}", s.from_pid),
                };
                format!("{} at +{:.0} ms from {from}", s.signal, s.at_ms)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let timing = match &about.untimed {
        Some(_) => "its end is not placed in the ladder".to_string(),
        None => format!(
            "received {got}; stage on its ladder as measured on {}",
            about.ladder_measured_on
        ),
    };
    let head = format!(
        "under the real {name} {} ({}), quit by {}; {timing}",
        about.version, about.package, about.trigger
    );
    match rest {
        Some(r) => format!("{head}; {r}"),
        None => head,
    }
}

/// What `check --real-host` reports: each quit path judged as a case of its measured
/// profile's scenario, the server named apart per path (`<server>.<trigger>`: paths that
/// share one profile are still separate runs), and one line for each path no measured
/// profile covers (it is not judged).
pub struct JudgedPaths {
    pub servers: BTreeMap<String, crate::model::ServerInfo>,
    pub scenarios: Vec<ScenarioId>,
    pub results: Vec<JudgedCase>,
    pub unjudged: Vec<String>,
}

/// What a report says of the run: the host, its release, the quit, the signals traced.
fn about(spec: &HostSpec, version: &str, run: &RealRun, profile: &Profile) -> RealHostRun {
    RealHostRun {
        host: spec.id.into(),
        package: spec.package.into(),
        version: version.into(),
        trigger: run.trigger.clone(),
        ladder_measured_on: profile
            .measured
            .as_ref()
            .map_or_else(String::new, |m| m.version.clone()),
        untimed: untimed(run, profile),
        signals: run.signals.clone(),
    }
}

pub fn judge(
    harness: &Harness,
    spec: &HostSpec,
    version: &str,
    server: &Manifest,
    runs: &[RealRun],
) -> JudgedPaths {
    let mut out = JudgedPaths {
        servers: BTreeMap::new(),
        scenarios: Vec::new(),
        results: Vec::new(),
        unjudged: Vec::new(),
    };
    let budgets = harness.budgets_for(server);
    for run in runs {
        let Some(profile) = profile_for(harness.profiles(), spec, &run.trigger) else {
            out.unjudged.push(format!(
                "{} {}: not judged: no bundled profile measured this quit path (`host measure {} --path {}` measures it)",
                spec.id, run.trigger, spec.id, run.trigger
            ));
            continue;
        };
        let id = scenario_of(profile);
        let Ok(scenario) = build_with(
            &id,
            &budgets,
            harness.profiles(),
            &PlumbingOverride::default(),
        ) else {
            continue;
        };
        let about = about(spec, version, run, profile);
        let name = format!("{}.{}", server.name, run.trigger);
        let offset = ladder_offset_ms(profile);
        let mut o = observation(&name, run, &scenario, offset, about.clone());
        o.note = Some(note(&about, spec.name, crate::rules::note(&o, &scenario)));
        let checks = harness
            .catalogue()
            .judge(&o, &scenario, &budgets, harness.revision_of());
        let mut info = crate::harness::server_info(server);
        info.description = format!(
            "{} under the real {} {}, quit by {}",
            info.description, spec.name, version, run.trigger
        );
        out.servers.insert(name, info);
        out.scenarios.push(id);
        out.results.push(JudgedCase {
            observation: o,
            budgets: Some(budgets),
            ladder: Some(scenario.ladder()),
            checks: keep_judged(checks, run, about.untimed.as_deref()),
            repeat: None,
            not_testable: None,
        });
    }
    out
}
