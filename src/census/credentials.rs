//! "Not testable: needs credentials", decided from what a server did, never from its name:
//! a server that was given placeholder values for required secrets and then crashed at
//! start or failed the handshake in every case cannot be judged on how it shuts down. It is
//! reported as such, and its missed checks are not counted against it.

use std::collections::BTreeMap;

use crate::model::{ErrorKind, JudgedCase, NotTestable, NotTestableReason, Report};

/// The errors of a server that refused what it was given.
fn refused(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::ExitedBeforeHandshake | ErrorKind::HandshakeFailed
    )
}

/// Did any run of this case get as far as a session (or, for `stdin-null`, is there no
/// handshake to look at)?
fn started(r: &JudgedCase) -> bool {
    if r.scenario.ending().stdin_null() {
        return false;
    }
    let any_run_ok = r
        .repeat
        .as_ref()
        .is_some_and(|x| x.runs.iter().any(|run| run.error.is_none()));
    r.handshake.is_some() || any_run_ok || r.error.is_none()
}

/// Why one server's cases are not testable, if they are: it had required secrets given
/// [`PLACEHOLDER`](super::PLACEHOLDER)s, no case reached a session, and at least one crashed
/// at start or failed the handshake.
pub fn needs_credentials(cases: &[&JudgedCase], placeholders: &[String]) -> Option<NotTestable> {
    if placeholders.is_empty() || cases.iter().any(|r| started(r)) {
        return None;
    }
    let kind = cases
        .iter()
        .filter_map(|r| r.error.as_ref().map(|e| e.kind))
        .find(|k| refused(*k))?;
    let what = match kind {
        ErrorKind::HandshakeFailed => "failed the handshake",
        _ => "exited before it answered `initialize`",
    };
    Some(NotTestable {
        reason: NotTestableReason::NeedsCredentials,
        message: format!(
            "it {what} while its required secrets ({}) held placeholder values; run it with \
             real credentials to test how it shuts down",
            placeholders.join(", ")
        ),
    })
}

/// Marks every case of every server that [`needs_credentials`] (placeholders by server
/// name), and recomputes the summary.
pub fn mark(report: &mut Report, placeholders: &BTreeMap<String, Vec<String>>) {
    for (server, secrets) in placeholders {
        let cases: Vec<&JudgedCase> = report
            .results
            .iter()
            .filter(|r| &r.server == server)
            .collect();
        // A launch the launcher refused is the listing's, whatever secrets it lacks.
        if cases.iter().any(|r| r.not_testable.is_some()) {
            continue;
        }
        if let Some(why) = needs_credentials(&cases, secrets) {
            for r in report.results.iter_mut().filter(|r| &r.server == server) {
                r.mark_not_testable(why.clone());
            }
        }
    }
    report.resummarize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseError, HandshakeInfo, HandshakeMode, Stage, Status};
    use crate::test_support::{report_of, result};

    fn crashed(server: &str, scenario: &str, kind: ErrorKind) -> JudgedCase {
        let mut r = result(server, scenario, Stage::Eof, 5.0);
        r.observation.stage = None;
        r.observation.exit_ms = None;
        r.observation.error = Some(CaseError {
            kind,
            message: "stdout closed before the initialize response".into(),
        });
        for c in &mut r.checks {
            c.status = Status::Warning;
        }
        r
    }

    fn secrets() -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([("s".to_string(), vec!["STRIPE_SECRET_KEY".to_string()])])
    }

    #[test]
    fn a_crash_at_start_with_placeholder_secrets_is_not_testable_not_a_failure() {
        let mut rep = report_of(vec![
            crashed("s", "close", ErrorKind::ExitedBeforeHandshake),
            crashed("s", "exit", ErrorKind::HandshakeFailed),
            result("s", "stdin-null", Stage::Eof, 3.0),
        ]);
        assert!(rep.fails(Status::Warning));
        mark(&mut rep, &secrets());
        assert!(!rep.fails(Status::Warning), "never a failure");
        assert_eq!(rep.summary.not_testable, 3);
        let why = rep.results[0].not_testable.as_ref().unwrap();
        assert_eq!(why.reason, NotTestableReason::NeedsCredentials);
        assert!(why.message.contains("STRIPE_SECRET_KEY"), "{}", why.message);
        assert!(rep.results[0]
            .checks
            .iter()
            .all(|c| c.status != Status::Warning));
        assert!(rep.results[0].checks[0].message.starts_with("Not testable"));
    }

    #[test]
    fn without_placeholders_or_after_a_handshake_it_stays_a_failure() {
        let mut rep = report_of(vec![crashed(
            "s",
            "close",
            ErrorKind::ExitedBeforeHandshake,
        )]);
        mark(&mut rep, &BTreeMap::from([("s".to_string(), vec![])]));
        assert!(rep.results[0].not_testable.is_none());

        let mut ok = crashed("s", "exit", ErrorKind::ExitedBeforeEnd);
        ok.observation.handshake = Some(HandshakeInfo {
            mode: HandshakeMode::Initialize,
            protocol_version: None,
            server_name: None,
            server_version: None,
            ms: 900.0,
        });
        let mut rep = report_of(vec![
            crashed("s", "close", ErrorKind::ExitedBeforeHandshake),
            ok,
        ]);
        mark(&mut rep, &secrets());
        assert!(rep.results.iter().all(|r| r.not_testable.is_none()));

        // A server that hangs is not refusing credentials: that is for the rules to judge.
        let mut rep = report_of(vec![crashed("s", "close", ErrorKind::HandshakeTimeout)]);
        mark(&mut rep, &secrets());
        assert!(rep.results[0].not_testable.is_none());
    }

    #[test]
    fn old_reports_without_the_key_still_read() {
        let rep = report_of(vec![result("s", "close", Stage::Eof, 3.0)]);
        let json = rep.to_json();
        assert!(
            !json.contains("not_testable"),
            "additive: absent when unset"
        );
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back, rep);
    }
}
