//! "Not testable: the listing's launch command does not exist in the package", decided from
//! what the launcher said, never from a package's name: a registry entry whose `uvx` or `npx`
//! launch names an executable its package does not have (a PyPI package whose console script
//! is not named after it, an npm package without a `bin`) never starts a server, and the
//! launcher says so in its own words. That is the listing's mistake, not the server's: its
//! cases are reported as not testable, owned by the listing, and counted apart.

use crate::model::{ErrorKind, JudgedCase, NotTestable, NotTestableReason, Report};

/// The launchers' own words for "that executable is not in this package", as uv (`uvx`,
/// `uv tool run`) and npm (`npx`, `npm exec`) print them, across their releases.
const SAID: &[&str] = &[
    // uv: `An executable named `x` is not provided by package `y`.`, then
    // `Use `uvx --from y <EXECUTABLE-NAME>` instead.`
    "is not provided by package",
    // uv, a package without any console script.
    "does not provide any executables",
    // uv, older releases.
    "The following executables are provided by",
    // npm 7 and later (`npm ERR!` before npm 10, `npm error` since).
    "could not determine executable to run",
];

/// The most of the launcher's words a message quotes.
const MAX_SAID: usize = 300;

/// What the launcher said, if its stderr says the executable is not in the package: the
/// lines from the first that says so to the end of what it said about it (its list of the
/// executables there are and the `Use … instead` advice), on one line and bounded.
pub fn launcher_said(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().map(str::trim).collect();
    let first = lines
        .iter()
        .position(|l| SAID.iter().any(|s| l.contains(s)))?;
    let said: Vec<&str> = lines[first..]
        .iter()
        .copied()
        // npm's pointer to its debug log says nothing about the package.
        .take_while(|l| !l.contains("A complete log of this run can be found in"))
        .filter(|l| !l.is_empty())
        .collect();
    let mut text = said.join(" ");
    if text.chars().count() > MAX_SAID {
        text = text.chars().take(MAX_SAID).collect::<String>() + "…";
    }
    Some(text)
}

/// Did this run of a case reach the server at all? (`stdin-null` has no handshake to say.)
fn reached_a_session(r: &JudgedCase) -> bool {
    !r.scenario.ending().stdin_null()
        && (r.handshake.is_some()
            || r.error.is_none()
            || r.repeat
                .as_ref()
                .is_some_and(|x| x.runs.iter().any(|run| run.error.is_none())))
}

/// Why one server's cases are not testable, if the launcher said its listing's command is not
/// in the package: no case reached a session, and one that exited before the handshake left
/// the launcher's words on stderr.
pub fn not_in_package(cases: &[&JudgedCase]) -> Option<NotTestable> {
    if cases.iter().any(|r| reached_a_session(r)) {
        return None;
    }
    let said = cases
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.kind == ErrorKind::ExitedBeforeHandshake)
        })
        .find_map(|r| launcher_said(&r.stderr_tail))?;
    Some(NotTestable {
        reason: NotTestableReason::LaunchNotInPackage,
        message: format!("the listing's launch command does not exist in the package ({said})"),
    })
}

/// Marks every case of each of `servers` whose launch the launcher refused, and recomputes
/// the summary.
pub fn mark(report: &mut Report, servers: &[String]) {
    for server in servers {
        let cases: Vec<&JudgedCase> = report
            .results
            .iter()
            .filter(|r| &r.server == server)
            .collect();
        if let Some(why) = not_in_package(&cases) {
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
    use crate::model::{CaseError, Owner, Stage, Status};
    use crate::test_support::{report_of, result};

    /// Verbatim from uv 0.13.9 (`uvx jupyter-core==5.7.2`, `uvx six==1.16.0`) and npm 11.19
    /// (`npx -y lodash@4.17.21`).
    const UVX_OTHER_NAME: &str = "An executable named `jupyter-core` is not provided by package `jupyter-core`.\nThe following executables are available:\n- jupyter\n- jupyter-migrate\n- jupyter-troubleshoot\n\nUse `uvx --from jupyter-core <EXECUTABLE-NAME>` instead.\n";
    const UVX_NONE: &str = "Package `six` does not provide any executables.\n";
    const NPX_NO_BIN: &str = "npm error could not determine executable to run\nnpm error A complete log of this run can be found in: /c/_logs/2026-12-01T22_46_34_796Z-debug-0.log\n";

    fn refused(server: &str, scenario: &str, stderr: &str) -> JudgedCase {
        let mut r = result(server, scenario, Stage::Eof, 5.0);
        r.observation.stage = None;
        r.observation.exit_ms = None;
        r.observation.stderr_tail = stderr.into();
        r.observation.error = Some(CaseError {
            kind: ErrorKind::ExitedBeforeHandshake,
            message: "the server exited (exit code 1) before completing the handshake".into(),
        });
        for c in &mut r.checks {
            c.status = Status::Warning;
        }
        r
    }

    #[test]
    fn the_launchers_own_words_are_quoted() {
        assert_eq!(
            launcher_said(UVX_OTHER_NAME).unwrap(),
            "An executable named `jupyter-core` is not provided by package `jupyter-core`. The following executables are available: - jupyter - jupyter-migrate - jupyter-troubleshoot Use `uvx --from jupyter-core <EXECUTABLE-NAME>` instead."
        );
        assert_eq!(
            launcher_said(UVX_NONE).unwrap(),
            "Package `six` does not provide any executables."
        );
        assert_eq!(
            launcher_said(NPX_NO_BIN).unwrap(),
            "npm error could not determine executable to run"
        );
        // A server's own crash is the server's.
        assert_eq!(
            launcher_said("Traceback (most recent call last):\nKeyError: 'API_KEY'\n"),
            None
        );
        assert!(
            launcher_said(&format!("{}\n", "is not provided by package x".repeat(50)))
                .unwrap()
                .ends_with('…')
        );
    }

    #[test]
    fn a_listing_whose_command_is_not_in_the_package_is_not_testable_never_a_failure() {
        let mut rep = report_of(vec![
            refused("p", "close", UVX_OTHER_NAME),
            refused("p", "close:vscode", UVX_OTHER_NAME),
            result("p", "stdin-null", Stage::Eof, 3.0),
            refused("n", "close", NPX_NO_BIN),
            result("ok", "close", Stage::Eof, 3.0),
        ]);
        assert!(rep.fails(Status::Warning));
        mark(&mut rep, &["p".into(), "n".into(), "ok".into()]);
        assert!(!rep.fails(Status::Warning), "never a failure");
        let why = rep.results[0].not_testable.as_ref().unwrap();
        assert_eq!(why.reason.owner(), Owner::Listing);
        assert!(
            why.message.starts_with("the listing's launch command does not exist in the package (An executable named `jupyter-core`"),
            "{}",
            why.message
        );
        assert!(rep.results[3]
            .not_testable
            .as_ref()
            .unwrap()
            .message
            .contains("could not determine executable to run"));
        assert!(rep.results[4].not_testable.is_none());
        assert_eq!(rep.summary.no_verdict.get(&Owner::Listing), Some(&4));
        // The JSON says whose each is, and reads back as it was.
        let json = rep.to_json();
        assert!(json.contains("\"owner\": \"listing\""), "{json}");
        assert!(
            json.contains("\"owner\": \"server\""),
            "the error's own owner too"
        );
        assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), rep);
    }

    #[test]
    fn a_server_that_started_once_or_crashed_in_its_own_words_stays_the_servers() {
        let mut started = refused("p", "close", UVX_OTHER_NAME);
        started.observation.error = None;
        let mut rep = report_of(vec![refused("p", "exit", UVX_OTHER_NAME), started]);
        mark(&mut rep, &["p".into()]);
        assert!(rep.results.iter().all(|r| r.not_testable.is_none()));
        let mut rep = report_of(vec![refused("c", "close", "Error: missing API_KEY\n")]);
        mark(&mut rep, &["c".into()]);
        assert!(rep.results[0].not_testable.is_none());
    }
}
