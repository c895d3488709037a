//! Scenarios: each ending or profile as a ladder of actions with waits from the budgets.
//! Pure: nothing here touches a process.

pub use crate::model::PlumbingOverride;
use crate::model::{
    Action, Budgets, Driver, Ending, GroupKind, Plumbing, Scenario, ScenarioId, SignalName, Step,
    Target, UnknownId, UntilIdle,
};

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
    let spec = || {
        profiles
            .spec()
            .expect("profiles always have a spec profile (checked when parsed)")
            .ladder(b)
    };
    let signal = |signal, to, wait_ms| Step::new(Action::Signal { signal, to }, wait_ms);
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
    let client = |action| {
        Scenario::new(
            id.clone(),
            Driver::Client,
            vec![Step::new(action, b.observe_ms)],
        )
    };
    Ok(match ending {
        // The spec's ladder: close stdin, wait, SIGTERM, wait, SIGKILL.
        Ending::Close => Scenario::new(id.clone(), Driver::Direct, spec()),
        Ending::Exit => client(Action::ClientExit),
        Ending::Crash => client(Action::ClientKill),
        // Started with stdin at EOF: how long it takes to start is not what is judged, so the
        // first wait counts only the time it sits idle with stdin at EOF (the grace the spec's
        // ladder gives before SIGTERM), and gives up only after the handshake budget of its
        // own busy time.
        Ending::StdinNull => {
            let mut steps = spec();
            steps[0] = Step {
                action: Action::CloseStdin,
                wait_ms: b.grace_ms,
                until_idle: Some(UntilIdle {
                    busy_cap_ms: b.handshake_ms + b.prompt_ms,
                }),
            };
            Scenario {
                stdin_null: true,
                ..Scenario::new(id.clone(), Driver::Direct, steps)
            }
        }
        // A process manager stops it; stdin stays open.
        Ending::Sigterm => Scenario::new(
            id.clone(),
            Driver::Direct,
            vec![
                signal(SignalName::Term, Target::Process, b.grace_ms),
                signal(SignalName::Kill, Target::Process, b.grace_ms),
            ],
        ),
        // Ctrl-C in a terminal: SIGINT to the whole foreground process group.
        Ending::Sigint => Scenario::new(
            id.clone(),
            Driver::Direct,
            vec![
                signal(SignalName::Int, Target::Group, b.grace_ms),
                signal(SignalName::Kill, Target::Group, b.grace_ms),
            ],
        ),
        Ending::Inflight => Scenario {
            inflight: true,
            ..Scenario::new(id.clone(), Driver::Direct, spec())
        },
        Ending::Sighup | Ending::CtrlC => terminal(id, ending, b),
    })
}

/// A terminal host's ending: the server is in the foreground job's group (unless moved
/// out), so what the terminal sends reaches both.
fn terminal(id: &ScenarioId, ending: Ending, b: &Budgets) -> Scenario {
    let steps = if ending == Ending::Sighup {
        let hangup = Action::Hangup {
            reaches_server: true,
        };
        vec![Step::new(hangup, b.observe_ms)]
    } else {
        // The host survives Ctrl-C long enough for its server to act on it, then exits: a
        // server that ignored SIGINT then has stdin at EOF and no parent.
        let interrupt = Action::Interrupt {
            reaches_server: true,
        };
        vec![
            Step::new(interrupt, b.prompt_ms),
            Step::new(Action::ClientExit, b.observe_ms),
        ]
    };
    Scenario {
        plumbing: Plumbing {
            group: GroupKind::Host,
            ..Plumbing::default()
        },
        ..Scenario::new(id.clone(), Driver::Terminal, steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{stage_after, Stage};

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
