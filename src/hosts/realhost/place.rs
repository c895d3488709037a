//! Where a real host's run falls on the host's measured ladder: the last step the server was
//! seen to receive (or, for a step that cannot be seen, its measured wait after the last one
//! seen), and when a run cannot be placed at all. Pure: no process is touched.

use super::RealRun;
use crate::config::profiles::{Profile, Profiles};
use crate::hosts::catalogue::HostSpec;
use crate::hosts::reading::TRIGGER_TO_FIRST;
use crate::model::{
    stage_after, Action, HostSignal, Observation, RealHostRun, Scenario, ScenarioId, Sender,
    SignalName, Stage, StepRecord, Target,
};

/// The bundled measured profile of `spec`'s quit path `trigger`, if it was measured.
pub fn profile_for<'a>(
    profiles: &'a Profiles,
    spec: &HostSpec,
    trigger: &str,
) -> Option<&'a Profile> {
    profiles.iter().find(|p| {
        p.measured
            .as_ref()
            .is_some_and(|m| m.package == spec.package && m.triggers.iter().any(|t| t == trigger))
    })
}

/// How long after the quit the host's ladder begins, as measured (`trigger → first`), or 0.
pub fn ladder_offset_ms(profile: &Profile) -> f64 {
    profile
        .measured
        .as_ref()
        .and_then(|m| m.waits.get(TRIGGER_TO_FIRST))
        .map(|w| w.median_ms)
        .unwrap_or(0.0)
}

/// What one run observed, as a case of `scenario` (the host's measured ladder, begun
/// `offset_ms` after the quit): the stage is the last step of that ladder it reached.
pub fn observation(
    server: &str,
    run: &RealRun,
    scenario: &Scenario,
    offset_ms: f64,
    about: RealHostRun,
) -> Observation {
    let mut o = Observation::empty(server, &scenario.id);
    let about_untimed = about.untimed.clone();
    o.real_host = Some(about);
    o.wall_ms = run.wall_ms;
    o.load_avg = run.load_avg;
    if let Some(f) = &run.failure {
        o.error = Some(f.error());
        return o;
    }
    o.leftovers = run.leftovers.clone();
    if run.left_running {
        let mut at = offset_ms;
        o.stage = Some(Stage::Survived);
        o.steps = scenario
            .steps
            .iter()
            .map(|s| {
                let r = StepRecord::new(s.action, at);
                at += s.wait_ms as f64;
                r
            })
            .collect();
    } else if let (Some(ms), None) = (run.exit_ms, &about_untimed) {
        o.steps = reached(scenario, &run.signals, run.killed_by, ms, offset_ms);
        o.stage = o.steps.last().map(|s| stage_after(&s.action));
        o.exit_ms = Some(ms);
    }
    o
}

/// The signal a step of a ladder delivers to the server itself, so that the trace sees it.
pub(super) fn seen_as(action: &Action) -> Option<SignalName> {
    match action {
        Action::Signal {
            signal,
            to: Target::Process | Target::Group | Target::Tree,
        } => Some(*signal),
        _ => None,
    }
}

/// The steps of `scenario`'s ladder the server reached before it exited `exit_ms` after the
/// quit: up to the last whose signal it was seen to receive (a SIGKILL is seen as what ended
/// it), then any that cannot be seen (a closed stdin, a signal to its children) whose measured
/// wait after the step before had passed. Each step at its traced time, or else that wait
/// after the one before (the first `offset_ms` after the quit).
pub(super) fn reached(
    scenario: &Scenario,
    signals: &[HostSignal],
    killed_by: Option<SignalName>,
    exit_ms: f64,
    offset_ms: f64,
) -> Vec<StepRecord> {
    let steps = &scenario.steps;
    let mut at: Vec<Option<f64>> = vec![None; steps.len()];
    let mut last: Option<usize> = None;
    let mut see = |signal: SignalName, when: f64, last: &mut Option<usize>| {
        let from = last.map_or(0, |l| l + 1);
        if let Some(j) = (from..steps.len()).find(|&j| seen_as(&steps[j].action) == Some(signal)) {
            *last = Some(j);
            at[j] = Some(when);
        }
    };
    // A signal the server sent itself (Node re-raises SIGINT after its handler) is no step.
    for s in signals
        .iter()
        .filter(|s| s.at_ms <= exit_ms && s.from != Sender::Server)
    {
        see(s.signal, s.at_ms, &mut last);
    }
    if killed_by == Some(SignalName::Kill) {
        see(SignalName::Kill, exit_ms, &mut last);
    }
    let mut upto = last.map_or(1, |l| l + 1);
    let mut out = Vec::new();
    let mut next_at = offset_ms;
    for (j, step) in steps.iter().enumerate() {
        let when = at[j].unwrap_or(next_at);
        if j >= upto {
            if seen_as(&step.action).is_some() || when > exit_ms {
                break;
            }
            upto = j + 1;
        }
        out.push(StepRecord::new(step.action, when));
        next_at = when + step.wait_ms as f64;
    }
    out
}

/// Why a run's exit cannot be placed in its profile's ladder, if it cannot.
pub(super) fn untimed(run: &RealRun, profile: &Profile) -> Option<String> {
    if let Some(why) = &run.untraced {
        return Some(format!(
            "its signals could not be traced here ({why}), and its stage is only what it was seen to receive"
        ));
    }
    if run.one_shot {
        return Some(
            "a one-shot command ends its servers on its own schedule, so its end cannot be timed \
             from outside the server (the TUI's quit paths time it)"
                .into(),
        );
    }
    let reproduces = profile
        .measured
        .as_ref()
        .is_some_and(|m| m.reproduces || only_the_reaction_spreads(m, profile));
    (!reproduces).then(|| {
        format!(
            "the host's ladder on this path did not reproduce across its measured runs \
             (`{}`), so an exit time cannot be placed in it",
            profile.id
        )
    })
}

/// Whether the one wait that spread across the measured runs is how long the host took to
/// begin (`trigger → first`), before a first step the trace sees: the ladder is then placed by
/// its traced signal, whenever it came.
fn only_the_reaction_spreads(m: &crate::model::MeasuredRef, profile: &Profile) -> bool {
    let spreads: Vec<&str> = m
        .waits
        .iter()
        .filter(|(_, w)| !w.reproduces())
        .map(|(k, _)| k.as_str())
        .collect();
    use crate::config::profiles::ProfileAction as A;
    spreads == [TRIGGER_TO_FIRST]
        && profile.steps.first().is_some_and(|s| {
            matches!(s.action, A::Sigterm | A::Sigint | A::Sigkill | A::Sighup)
                && s.to != Target::Children
        })
}

/// The scenario id of a quit path's profile.
pub fn scenario_of(profile: &Profile) -> ScenarioId {
    ScenarioId::Profile(profile.id.clone())
}
