//! Scenarios: each ending or profile as a ladder of actions with waits from the budgets.
//! Pure: nothing here touches a process.

pub use crate::model::PlumbingOverride;
use crate::model::{
    Action, Budgets, Driver, Ending, GroupKind, Plumbing, Scenario, ScenarioId, Step, UnknownId,
    UntilIdle,
};

use super::endings;
use super::profiles::Profiles;

/// Every scenario ID of a suite: the default endings, then one `close:<profile>` per profile.
pub fn all_ids(profiles: &Profiles) -> Vec<ScenarioId> {
    Ending::DEFAULTS
        .iter()
        .map(|e| ScenarioId::Ending(*e))
        .chain(profiles.iter().map(|p| ScenarioId::Profile(p.id.clone())))
        .collect()
}

/// The default endings, as scenario IDs.
pub fn default_ids() -> Vec<ScenarioId> {
    Ending::DEFAULTS
        .iter()
        .map(|e| ScenarioId::Ending(*e))
        .collect()
}

/// Builds a scenario by its ID, with waits from `b` and the ending's or profile's plumbing.
pub fn build(id: &ScenarioId, b: &Budgets, profiles: &Profiles) -> Result<Scenario, UnknownId> {
    build_with(id, b, profiles, &PlumbingOverride::default())
}

/// [`build`], with launch plumbing overridden.
pub fn build_with(
    id: &ScenarioId,
    b: &Budgets,
    profiles: &Profiles,
    over: &PlumbingOverride,
) -> Result<Scenario, UnknownId> {
    let mut s = build_default(id, b, profiles)?;
    s.plumbing = over.apply(s.plumbing);
    // Whether a terminal's signal reaches the server depends on the group it is in.
    let reaches = s.plumbing.group == GroupKind::Host;
    for st in &mut s.steps {
        match &mut st.action {
            Action::Hangup { reaches_server } | Action::Interrupt { reaches_server } => {
                *reaches_server = reaches;
            }
            _ => {}
        }
    }
    Ok(s)
}

fn build_default(id: &ScenarioId, b: &Budgets, profiles: &Profiles) -> Result<Scenario, UnknownId> {
    let ending = match id {
        ScenarioId::Profile(p) => {
            let profile = profiles.get(p)?;
            return Ok(Scenario {
                unbounded: profile.unbounded,
                abandons: profile.abandons,
                plumbing: profile.plumbing,
                ..Scenario::new(id.clone(), Driver::Direct, profile.ladder(b))
            });
        }
        ScenarioId::Ending(e) => *e,
    };
    // Everything an ending plans is its `[[ending]]` in conformance/endings.toml.
    let def = endings::get(ending);
    let mut steps = match &def.ladder {
        Some(p) => profiles.get(p)?.ladder(b),
        None => def
            .steps
            .iter()
            .map(|s| Step::new(s.action, b.get(s.wait)))
            .collect(),
    };
    if let (false, Some(first)) = (def.until_idle.is_empty(), steps.first_mut()) {
        first.until_idle = Some(UntilIdle {
            busy_cap_ms: def.until_idle.iter().map(|n| b.get(*n)).sum(),
        });
    }
    let mut s = Scenario {
        stdin_null: def.stdin_null,
        inflight: def.inflight,
        ..Scenario::new(id.clone(), def.driver, steps)
    };
    // A terminal host's server is in the foreground job's group (unless moved out), so what
    // the terminal sends reaches both.
    if def.driver == Driver::Terminal {
        s.plumbing = Plumbing {
            group: GroupKind::Host,
            ..Plumbing::default()
        };
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{stage_after, SignalName, Stage, Target};

    fn get(id: &str, b: &Budgets) -> Scenario {
        build(&id.parse().unwrap(), b, &Profiles::bundled()).unwrap()
    }

    #[test]
    fn every_stable_id_builds() {
        let profiles = Profiles::bundled();
        for id in all_ids(&profiles) {
            let s = build(&id, &Budgets::default(), &profiles).unwrap();
            assert_eq!(s.id, id);
            assert!(!s.steps.is_empty());
        }
        let nope: ScenarioId = "close:nope".parse().unwrap();
        assert!(build(&nope, &Budgets::default(), &profiles).is_err());
    }

    #[test]
    fn close_is_the_spec_ladder_with_grace_from_budgets() {
        let b = Budgets {
            grace_ms: 500,
            ..Budgets::default()
        };
        let s = get("close", &b);
        let stages: Vec<Stage> = s.steps.iter().map(|st| stage_after(&st.action)).collect();
        assert_eq!(stages, [Stage::Eof, Stage::Sigterm, Stage::Sigkill]);
        assert_eq!(s.max_wait_ms(), 1500);
        // A real client's waits are its own, whatever the grace budget.
        assert_eq!(get("close:go", &b).steps[0].wait_ms, 5000);
    }

    #[test]
    fn profiles_follow_the_reference_table() {
        let b = Budgets::default();
        let java = get("close:java", &b);
        assert!(!java.closes_stdin() && java.abandons);
        let rust = get("close:rust", &b);
        assert_eq!(
            rust.steps
                .iter()
                .map(|s| stage_after(&s.action))
                .collect::<Vec<_>>(),
            [Stage::Eof, Stage::Sigterm, Stage::Sigkill]
        );
        let py = get("close:python", &b);
        assert!(matches!(
            py.steps[1].action,
            Action::Signal {
                to: Target::Group,
                ..
            }
        ));
        let cs = get("close:csharp", &b);
        assert!(matches!(
            cs.steps[1].action,
            Action::Signal {
                signal: SignalName::Kill,
                to: Target::Tree
            }
        ));
        assert_eq!(cs.ending(), Ending::Close);
    }

    #[test]
    fn terminal_endings_reach_the_server_only_in_the_hosts_group() {
        let b = Budgets::default();
        let p = Profiles::bundled();
        let hup = build(&"sighup".parse().unwrap(), &b, &p).unwrap();
        assert_eq!(hup.driver, Driver::Terminal);
        assert_eq!(stage_after(&hup.steps[0].action), Stage::Sighup);
        let own = PlumbingOverride {
            group: Some(GroupKind::Session),
            ..Default::default()
        };
        let alone = build_with(&"ctrl-c".parse().unwrap(), &b, &p, &own).unwrap();
        assert_eq!(stage_after(&alone.steps[0].action), Stage::Eof);
        assert_eq!(alone.plumbing.group, GroupKind::Session);
    }
}
