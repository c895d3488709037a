//! Machine-bound cases: when the machine, not the server, decided the verdict. Pure.
//!
//! Every wait and every prompt verdict counts only the server's own time (wall time minus
//! the time its tree was runnable but waiting for a CPU). On a machine loaded far beyond its
//! CPUs that subtraction is what the verdict rests on: a wait the wall-clock backstop ended
//! before the server had its budget of own time, or an escalation that a server which had
//! not waited for a CPU would not have met. Such a case is marked; it is never published as
//! the server's verdict but as "re-run". A pass on its own time is the server's verdict
//! whatever its wall time: had it not waited for a CPU, it would have passed the same way.

use crate::model::{Decisive, MachineBound, Observation, Scenario, SLICE_MS};

/// Whether the run-queue time inside the decisive window outlasted the budget's slack.
pub fn machine_bound(o: &Observation, scenario: &Scenario) -> Option<MachineBound> {
    if o.error.is_some() {
        return None;
    }
    escalation(o, scenario)
}

/// The first escalation that was not earned: its wait ended (by the wall-clock backstop)
/// before the server had the wait's own time, or the server exited later within that wait's
/// budget of its own time, counted from the step (every later wait's queueing taken off).
fn escalation(o: &Observation, scenario: &Scenario) -> Option<MachineBound> {
    let taken = o.steps.len();
    (0..taken.saturating_sub(1)).find_map(|j| {
        let planned = scenario.steps.get(j)?;
        if planned.wait_ms == 0 || planned.until_idle.is_some() {
            return None;
        }
        let rec = &o.steps[j];
        let (own, queued) = (rec.own_ms?, rec.runqueue_ms?);
        let budget = planned.wait_ms as f64;
        let bound = |wall_ms: f64, own_ms: f64, runqueue_ms: f64| MachineBound {
            decided_by: Decisive::Escalation,
            step: j,
            action: Some(rec.action),
            wall_ms,
            own_ms,
            runqueue_ms,
            budget_ms: planned.wait_ms,
        };
        let wall = o.steps[j + 1].at_ms - rec.at_ms;
        // Within one slice of the budget is the accounting's resolution, not the machine:
        // the queueing reported after the decision is at most a slice's worth then.
        let short_of = budget - SLICE_MS as f64;
        if own < short_of {
            return Some(bound(wall, own, queued));
        }
        let exit = o.exit_ms?;
        let wall = exit - rec.at_ms;
        let queued: f64 = o.steps[j..].iter().filter_map(|s| s.runqueue_ms).sum();
        let own = (wall - queued).max(0.0);
        (own < short_of).then(|| bound(wall, own, queued))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Action, Driver, ScenarioId, SignalName, Stage, Step, StepRecord, Target};

    fn close() -> Scenario {
        let sig = |signal| Action::Signal {
            signal,
            to: Target::Process,
        };
        Scenario::new(
            "close".parse::<ScenarioId>().unwrap(),
            Driver::Direct,
            vec![
                Step::new(Action::CloseStdin, 2000),
                Step::new(sig(SignalName::Term), 2000),
                Step::new(sig(SignalName::Kill), 2000),
            ],
        )
    }

    /// A case whose waits had this (own, run-queue) time and that exited at `exit_ms`.
    fn case(waits: &[(f64, f64, f64)], exit_ms: Option<f64>) -> Observation {
        let s = close();
        let mut o = Observation::empty("srv", &s.id);
        o.steps = waits
            .iter()
            .zip(&s.steps)
            .map(|(&(at, own, q), st)| StepRecord {
                own_ms: Some(own),
                runqueue_ms: Some(q),
                ..StepRecord::new(st.action, at)
            })
            .collect();
        o.stage = Some(match (exit_ms, o.steps.len()) {
            (None, _) => Stage::Survived,
            (_, 1) => Stage::Eof,
            (_, 2) => Stage::Sigterm,
            _ => Stage::Sigkill,
        });
        o.exit_ms = exit_ms;
        o.runqueue_ms = Some(waits.iter().map(|w| w.2).sum());
        o
    }

    fn judge(o: &Observation) -> Option<MachineBound> {
        machine_bound(o, &close())
    }

    #[test]
    fn a_server_that_ignores_eof_on_an_idle_machine_is_its_own_verdict() {
        // Idle through its grace, exits 10 ms after SIGTERM.
        let o = case(&[(0.0, 2000.0, 0.0), (2000.0, 10.0, 0.0)], Some(2010.0));
        assert_eq!(judge(&o), None);
        // An exit on EOF well within the prompt budget.
        assert_eq!(judge(&case(&[(0.0, 400.0, 30.0)], Some(430.0))), None);
    }

    #[test]
    fn an_escalation_a_server_that_had_not_waited_would_not_have_met_is_the_machines() {
        // The wall-clock backstop ended the grace after 0.3 s of its own: SIGTERM at 15 s,
        // exit 1 s later, 0.47 s of its own in all (the uvx Python tree at load 56 on 2 CPUs).
        let o = case(
            &[(0.0, 300.0, 14_700.0), (15_000.0, 170.0, 830.0)],
            Some(16_000.0),
        );
        let m = judge(&o).expect("machine-bound");
        assert_eq!(
            (m.decided_by, m.step, m.budget_ms),
            (Decisive::Escalation, 0, 2000)
        );
        assert!(m.own_ms < 2000.0 && m.runqueue_ms > 14_000.0, "{m:?}");
        // The grace was all its own (queueing reported late), but from EOF to its exit it
        // took 1.5 s of its own: within the grace.
        let o = case(
            &[(0.0, 2000.0, 3000.0), (5000.0, 100.0, 1000.0)],
            Some(5500.0),
        );
        let m = judge(&o).expect("machine-bound");
        assert_eq!((m.runqueue_ms, m.own_ms), (4000.0, 1500.0));
    }

    #[test]
    fn a_grace_short_of_its_budget_by_less_than_a_slice_is_the_servers() {
        // A timer server idle through its grace: 85 ms of its wake-ups queued, reported
        // after the ladder went on, leave 1990 ms of its own, within the accounting's
        // resolution of the 2000 ms wait. It needed SIGTERM: its own verdict.
        let o = case(&[(0.0, 1990.0, 85.0), (2074.0, 5.0, 0.0)], Some(2080.0));
        assert_eq!(judge(&o), None);
    }

    #[test]
    fn a_slow_exit_under_load_after_a_real_escalation_is_still_the_servers() {
        // Sat idle 2 s of its own after EOF (no queueing), then took 3 s to die of SIGTERM,
        // most of it queued: needing SIGTERM is its own doing.
        let o = case(&[(0.0, 2000.0, 0.0), (2000.0, 100.0, 2900.0)], Some(5000.0));
        assert_eq!(judge(&o), None);
    }

    #[test]
    fn a_pass_on_its_own_time_is_the_servers_however_long_it_queued() {
        // 7.6 s of 8.05 s waiting for a CPU, 0.45 s of its own: had it not waited, it
        // would have passed the same way.
        assert_eq!(judge(&case(&[(0.0, 450.0, 7_600.0)], Some(8_050.0))), None);
        assert_eq!(judge(&case(&[(0.0, 1500.0, 600.0)], Some(2_100.0))), None);
    }

    #[test]
    fn a_case_that_could_not_run_is_never_machine_bound() {
        let mut o = case(
            &[(0.0, 300.0, 14_700.0), (15_000.0, 170.0, 830.0)],
            Some(16_000.0),
        );
        o.error = Some(crate::model::CaseError {
            kind: crate::model::ErrorKind::Harness,
            message: "x".into(),
        });
        assert_eq!(judge(&o), None);
    }

    #[test]
    fn a_report_from_before_windows_were_recorded_is_never_machine_bound_by_escalation() {
        let mut o = case(
            &[(0.0, 300.0, 14_700.0), (15_000.0, 170.0, 830.0)],
            Some(16_000.0),
        );
        for s in &mut o.steps {
            s.own_ms = None;
            s.runqueue_ms = None;
        }
        assert_eq!(judge(&o), None);
    }
}
