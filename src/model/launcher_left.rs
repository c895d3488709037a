//! A launcher that ends on a signal and leaves the server behind it running (`npx` does on
//! SIGTERM): that is the launcher's doing, never the server's. The harness then sends the
//! server the signal itself, as a host that signals the process group does, so the server is
//! judged on what it does with it; the launcher's part is reported as the launcher's, named.
//! Reports from before the harness did so are read the same way: the launcher's part is taken
//! off the server's checks ([`JudgedCase::attribute_to_launcher`]). What was recorded of the
//! launcher and of the server's own end is `model::identity::LauncherLeft`.

use std::borrow::Cow;

use super::identity::named;
use super::observation::Observation;
use super::report::{JudgedCase, Report};
use super::scenario::{Action, Target};
use super::signal::SignalName;
use super::verdict::{Outcome, Status};
use super::RuleId;

/// The signal the launched process alone was sent last, when its launcher ending on it can
/// have left the server behind (SIGKILL cannot be passed on by anyone).
pub fn signal_to_launcher_alone(actions: impl Iterator<Item = Action>) -> Option<SignalName> {
    match actions
        .filter(|a| matches!(a, Action::Signal { .. }))
        .last()?
    {
        Action::Signal {
            signal,
            to: Target::Process,
        } if signal != SignalName::Kill => Some(signal),
        _ => None,
    }
}

impl Observation {
    /// The case as the server itself lived it: where its launchers left it running and the
    /// harness then signalled it, that signal's stage and timing replace the launcher's.
    pub fn as_the_server_lived_it(&self) -> Cow<'_, Observation> {
        match &self.launcher_left {
            Some(l) => Cow::Owned(Observation {
                stage: Some(l.stage),
                exit_ms: l.exit_ms,
                runqueue_ms: l.runqueue_ms,
                ..self.clone()
            }),
            None => Cow::Borrowed(self),
        }
    }

    /// When the server ended, counted from the session's end: where its launcher left it, as
    /// a host that signals the whole group would have seen it (the signal's step, then the
    /// server's own time to exit on it), never the harness's later signal alone.
    pub fn exit_from_end_ms(&self) -> Option<f64> {
        let Some(l) = &self.launcher_left else {
            return self.exit_ms;
        };
        let signalled =
            self.steps.iter().rev().find(
                |s| matches!(s.action, Action::Signal { signal, .. } if signal == l.signal),
            )?;
        Some(signalled.at_ms + l.exit_ms?)
    }

    /// Its launcher ended and left the server running, whether the harness then signalled
    /// the server itself or not: what a user of a host that does as the case did is left with.
    pub fn launcher_left_it(&self) -> bool {
        self.launcher_left.is_some() || self.left_by_launcher() || self.launcher_left_unjudged()
    }

    /// A case judged before the harness signalled the server behind its launcher, where the
    /// launcher left the server running ([`Self::left_by_launcher_unjudged`]).
    pub fn launcher_left_unjudged(&self) -> bool {
        self.left_by_launcher_unjudged().is_some()
    }

    /// A case judged before the harness signalled the server behind its launcher: the
    /// launcher ended on a signal sent to it alone and what it left running is the server
    /// behind it. Returns the launchers and that signal.
    fn left_by_launcher_unjudged(&self) -> Option<(Vec<String>, SignalName)> {
        if self.launcher_left.is_some() || self.error.is_some() || self.leftovers.is_empty() {
            return None;
        }
        let signal = signal_to_launcher_alone(self.steps.iter().map(|s| s.action))?;
        let p = self.server_process.as_ref()?;
        if self.left_by_launcher() {
            return Some((p.launchers.clone(), signal));
        }
        // Found before `npm exec @scope/pkg` was known as npx's title: the process recorded
        // as the server is that launcher, so what it left running is behind it.
        let title = p.cmdline.starts_with("npm exec ") && p.launchers.is_empty();
        title.then(|| (vec!["npm exec".to_string()], signal))
    }
}

impl JudgedCase {
    /// Takes the launcher's part off the checks of a case judged before the harness signalled
    /// the server behind its launcher: the processes left running are the server itself,
    /// which never received the signal, so neither what was left (the leak rule) nor the
    /// launcher's exit (a timed exit rule that passed on it) says anything about the server.
    /// Those checks become SKIPPED and say why. True if anything changed.
    pub fn attribute_to_launcher(&mut self, timed: impl Fn(RuleId) -> bool) -> bool {
        let Some((launchers, signal)) = self.left_by_launcher_unjudged() else {
            return false;
        };
        let who = named(&launchers, None);
        let mut changed = false;
        for c in &mut self.checks {
            let leak = c.id == RuleId::ProcessNoLeakedDescendants && c.status.is_miss();
            let on_launchers_exit = timed(c.id) && c.status == Status::Success;
            if !(leak || on_launchers_exit) {
                continue;
            }
            c.status = Status::Skipped;
            c.outcome = Outcome::NotTestable;
            c.message = format!(
                "Not testable: {signal} reached only its launcher {who}, which exited and left \
                 the server running (the launcher's doing, never scored against the server). {}",
                c.message
            );
            changed = true;
        }
        changed
    }
}

impl JudgedCase {
    /// The processes the server left running, not counting the server itself when its
    /// launcher left it there in a report judged before the harness signalled it.
    pub fn own_leftover_count(&self) -> u64 {
        match self.left_by_launcher_unjudged() {
            Some(_) => 0,
            None => self.leftover_count(),
        }
    }
}

impl Report {
    /// Reads a report judged before the harness signalled the server behind its launcher
    /// the way a new one is judged ([`JudgedCase::attribute_to_launcher`]); its summary is
    /// then counted again. A timed rule is one the report's rules carry a budget for.
    pub fn attribute_to_launchers(&mut self) {
        let timed: Vec<RuleId> = self
            .rules
            .iter()
            .filter(|(id, r)| r.budget.is_some() && **id != RuleId::ProcessNoLeakedDescendants)
            .map(|(id, _)| *id)
            .collect();
        let mut changed = false;
        for r in &mut self.results {
            changed |= r.attribute_to_launcher(|id| timed.contains(&id));
        }
        if changed {
            self.resummarize();
            self.keep_fixes_for_missed_rules();
        }
    }

    /// Drops from each server's fixes the rules it no longer misses (and fixes left with
    /// none): a fix for what its launcher did is no fix of the server's.
    fn keep_fixes_for_missed_rules(&mut self) {
        for (server, info) in &mut self.servers {
            let missed: Vec<RuleId> = self
                .results
                .iter()
                .filter(|r| &r.server == server)
                .flat_map(|r| &r.checks)
                .filter(|c| c.status.is_miss())
                .map(|c| c.id)
                .collect();
            for f in &mut info.fixes {
                f.rules.retain(|id| missed.contains(id));
            }
            info.fixes.retain(|f| !f.rules.is_empty());
        }
    }
}

/// What a launcher did, for a line of its own (`LAUNCHER ...`): it is never the server's.
pub fn launcher_line(r: &JudgedCase) -> Option<String> {
    if let Some(l) = &r.launcher_left {
        return Some(format!(
            "{} did not pass {} on to the server: the server was still running {:.0} ms \
             after its launcher exited, so the harness sent it {} itself (the launcher's doing, \
             not the server's)",
            l.named(),
            l.signal,
            l.left_ms,
            l.signal
        ));
    }
    let (launchers, signal) = r.left_by_launcher_unjudged()?;
    Some(format!(
        "{} exited on {signal} and did not pass it on: the server behind it was left \
         running (the launcher's doing, not the server's; this report did not send the server \
         {signal} itself)",
        named(&launchers, None)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profiles::Profiles;
    use crate::config::scenarios;
    use crate::model::Budgets;
    use crate::model::{LauncherLeft, Stage};
    use crate::rules::Catalogue;
    use crate::test_support::{left_by_npx, report_for, SPEC};

    fn status(r: &JudgedCase, id: RuleId) -> Status {
        r.checks.iter().find(|c| c.id == id).unwrap().status
    }

    #[test]
    fn the_server_is_judged_on_the_signal_the_harness_sent_it_itself() {
        let mut r = left_by_npx(false);
        assert_eq!(r.verdict(), Status::Warning, "as judged before: the leak");
        r.observation.leftovers.clear();
        r.observation.launcher_left = Some(LauncherLeft {
            launchers: vec!["npm exec".into(), "sh -c".into()],
            agent: Some("npm/11.6.2".into()),
            signal: SignalName::Term,
            left_ms: 1000.0,
            stage: Stage::Sigterm,
            exit_ms: Some(40.0),
            runqueue_ms: None,
        });
        let id = r.observation.scenario.clone();
        let plan = scenarios::build(&id, &Budgets::default(), &Profiles::bundled()).unwrap();
        let judge = |o: &Observation| {
            Catalogue::bundled().judge(o, &plan, &Budgets::default(), SPEC.parse().unwrap())
        };
        r.checks = judge(&r.observation);
        assert_eq!(r.verdict(), Status::Success, "{:#?}", r.checks);
        let line = launcher_line(&r).unwrap();
        assert!(
            line.starts_with("`npm exec` → `sh -c` (npm/11.6.2) did not pass SIGTERM on"),
            "{line}"
        );
        // Counted from the session's end, as a host signalling the group would see it: the
        // SIGTERM step (at 0 ms in this ending), then the server's 40 ms.
        let at = r.observation.steps[0].at_ms;
        assert_eq!(r.observation.exit_from_end_ms(), Some(at + 40.0));
        // A server that ignores the SIGTERM it was sent itself is judged for it.
        let ll = r.observation.launcher_left.as_mut().unwrap();
        (ll.stage, ll.exit_ms) = (Stage::Sigkill, Some(2004.0));
        let checks = judge(&r.observation);
        let c = checks
            .iter()
            .find(|c| c.id == RuleId::ProcessExitOnSigterm)
            .unwrap();
        assert_eq!(c.status, Status::Warning);
        assert!(
            c.message
                .contains("after the harness sent it SIGTERM itself"),
            "{}",
            c.message
        );
    }

    #[test]
    fn an_old_report_takes_the_launchers_part_off_the_server() {
        for title in [false, true] {
            let mut report = report_for(SPEC, vec![left_by_npx(title)]);
            assert_eq!(report.summary.warning, 1);
            report.attribute_to_launchers();
            assert_eq!(report.servers["s"].fixes, [], "no fix for what npx did");
            let r = &report.results[0];
            assert_eq!(r.verdict(), Status::Success, "{:#?}", r.checks);
            for id in [
                RuleId::ProcessNoLeakedDescendants,
                RuleId::ProcessExitOnSigterm,
            ] {
                assert_eq!(status(r, id), Status::Skipped, "{id}");
            }
            assert_eq!(status(r, RuleId::StdioStdoutOnlyMcp), Status::Success);
            assert_eq!((report.summary.warning, report.summary.skipped), (0, 2));
            let line = launcher_line(r).unwrap();
            assert!(
                line.contains("exited on SIGTERM and did not pass it on"),
                "{line}"
            );
        }
    }

    #[test]
    fn a_server_that_got_the_signal_itself_keeps_its_verdict() {
        // SIGINT to the group reaches the server too: what it left is its own.
        let mut r = left_by_npx(false);
        r.observation.steps[0].action = Action::Signal {
            signal: SignalName::Int,
            to: Target::Group,
        };
        assert!(!r.attribute_to_launcher(|_| true));
        assert_eq!(launcher_line(&r), None);
        assert_eq!(r.verdict(), Status::Warning);
    }
}
