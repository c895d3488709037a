//! Tests of the census site: the leaderboard's ranking, pages, badges and counts.
use super::*;
use crate::model::{NotTestable, NotTestableReason, PackageInfo, Stage};
use crate::test_support::{report_of, result};

fn census() -> Report {
    let mut rep = report_of(vec![
        result("slow", "close", Stage::Sigterm, 2004.0),
        result("slow", "close:vscode", Stage::Sigterm, 10003.0),
        result("fast", "close", Stage::Eof, 3.0),
        result("fast", "close:vscode", Stage::Eof, 4.0),
        result("keyed", "close", Stage::Eof, 3.0),
        result("keyed", "close:vscode", Stage::Eof, 3.0),
    ]);
    for r in rep.results.iter_mut().filter(|r| r.server == "keyed") {
        r.mark_not_testable(NotTestable {
            reason: NotTestableReason::NeedsCredentials,
            message: "placeholder".into(),
        });
    }
    rep.servers.entry("fast".into()).or_default().package = Some(PackageInfo {
        name: "io.github.a/fast".into(),
        version: "1.0.0".into(),
        registry: "npm".into(),
        identifier: "fast".into(),
        package_version: "1.0.0".into(),
        runtime: "node".into(),
        launcher: "npx".into(),
        placeholders: vec![],
    });
    rep.resummarize();
    rep
}

#[test]
fn the_leaderboard_ranks_by_worst_verdict_then_host_wait() {
    let (columns, rows) = leaderboard(&census());
    assert_eq!(columns[0].0, "vscode");
    let order: Vec<&str> = rows.iter().map(|r| r.server.as_str()).collect();
    assert_eq!(order, ["fast", "slow", "keyed"]);
    assert_eq!(rows[0].name, "io.github.a/fast");
    assert_eq!(rows[0].launcher, "npx");
    assert_eq!(rows[1].worst, Worst::Warning);
    assert_eq!(rows[1].hosts[0].as_ref().unwrap().0, "10.0 s, SIGTERM");
    assert_eq!(rows[2].worst, Worst::NotTestable(Owner::Credentials));
    assert_eq!(rows[2].hosts[0].as_ref().unwrap().0, "needs credentials");
}

#[test]
fn a_machine_bound_case_is_never_a_servers_verdict() {
    let bound = crate::test_support::machine_bound("m");
    assert_eq!(worst(&[&bound]), Worst::ReRun);
    assert_eq!(Worst::ReRun.label(), "re-run (machine-bound)");
    assert_eq!(judged(&bound), None);
    let cell = super::super::present::outcome(&bound);
    assert!(cell.starts_with("re-run: sigterm"), "{cell}");
    let line = super::super::present::machine_bound_of(&bound).unwrap();
    assert!(line.contains("waited 14700 ms for a CPU"), "{line}");
    // A handshake timeout the wall-clock backstop decided: re-run, not "could not run".
    use crate::model::{CaseError, Decisive, ErrorKind, MachineBound};
    let mut timed_out = result("m", "close", Stage::Eof, 3.0);
    timed_out.observation.error = Some(CaseError {
        kind: ErrorKind::HandshakeTimeout,
        message: "no answer".into(),
    });
    timed_out.observation.machine_bound = Some(MachineBound {
        decided_by: Decisive::Handshake,
        step: 0,
        action: None,
        wall_ms: 155_000.0,
        own_ms: 9_000.0,
        runqueue_ms: 146_000.0,
        budget_ms: 30_000,
    });
    assert_eq!(worst(&[&timed_out]), Worst::ReRun);
    let line = super::super::present::machine_bound_of(&timed_out).unwrap();
    assert!(line.contains("after the launch"), "{line}");
}

#[test]
fn a_server_that_never_reached_a_session_could_not_run() {
    use crate::model::{CaseError, ErrorKind};
    let mut crashed = result("c", "close", Stage::Eof, 3.0);
    crashed.observation.error = Some(CaseError {
        kind: ErrorKind::ExitedBeforeHandshake,
        message: "exit 1".into(),
    });
    let at_start = result("c", "stdin-null", Stage::Eof, 3.0);
    assert_eq!(
        worst(&[&crashed, &at_start]),
        Worst::CouldNotRun(Owner::Server)
    );
    let fine = result("c", "exit", Stage::Eof, 3.0);
    assert_eq!(worst(&[&crashed, &fine]), Worst::Success);
    // A typo in the command is the user's, and says so.
    let mut typo = crashed.clone();
    typo.observation.error.as_mut().unwrap().kind = ErrorKind::SpawnFailed;
    assert_eq!(worst(&[&typo]).label(), "could not run: usage");
}

#[test]
fn listings_that_cannot_launch_are_counted_apart_from_credentials() {
    let mut rep = census();
    for r in rep.results.iter_mut().filter(|r| r.server == "slow") {
        r.mark_not_testable(NotTestable {
            reason: NotTestableReason::LaunchNotInPackage,
            message: "the listing's launch command does not exist in the package".into(),
        });
    }
    let (_, rows) = leaderboard(&rep);
    assert_eq!(
        counted_apart(&rows),
        [
            (
                "not testable: launch command not in the package".to_string(),
                1
            ),
            ("not testable: needs credentials".to_string(), 1)
        ]
    );
    let index = &render(&rep, None)[0].1;
    assert!(
        index.contains(
            "1 not testable: launch command not in the package, 1 not testable: needs credentials"
        ),
        "{index}"
    );
}

#[test]
fn every_server_gets_a_page_badges_and_a_snippet() {
    let rep = census();
    let files = render(&rep, Some("https://example.org/census/"));
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for s in ["fast", "slow", "keyed"] {
        for f in [
            format!("servers/{s}.html"),
            format!("servers/{s}.md"),
            format!("badges/{s}.svg"),
            format!("badges/{s}.json"),
            format!("badges/{s}-hosts.svg"),
        ] {
            assert!(names.contains(&f.as_str()), "{f}: {names:?}");
        }
    }
    let get = |n: &str| &files.iter().find(|(f, _)| f == n).unwrap().1;
    let index = get("index.html");
    assert_eq!(index.matches("<tr class=\"server\"").count(), 3);
    assert!(index.contains("href=\"servers/fast.html\""));
    let keyed = get("badges/keyed.json");
    assert!(keyed.contains("could not run: credentials"), "{keyed}");
    let page = get("servers/fast.html");
    assert!(page.contains("https://example.org/census/badges/fast.svg"));
    assert!(!page.contains(">slow<"), "only its own cases");
    assert_eq!(files, render(&rep, Some("https://example.org/census/")));
    let md = get("leaderboard.md");
    assert_eq!(md.lines().count(), 2 + 3, "{md}");
    assert!(
        md.contains("| 1 | `io.github.a/fast` | 1.0.0 | node (npx) | SUCCESS |"),
        "{md}"
    );
}

/// A census judged before the harness signalled the server behind npx: read again, npx's
/// leftover server counts against neither the server's verdict nor its leaks, and its page
/// gives the launcher a line of its own.
#[test]
fn a_launchers_leftover_server_is_never_the_servers() {
    let mut rep = crate::test_support::report_for(
        crate::test_support::SPEC,
        vec![crate::test_support::left_by_npx(true)],
    );
    let (_, rows) = leaderboard(&rep);
    // Its checks as judged then; the leak column never counted the launcher's leftover.
    assert_eq!((rows[0].worst, rows[0].leaked), (Worst::Warning, 0));
    rep.attribute_to_launchers();
    let (_, rows) = leaderboard(&rep);
    assert_eq!((rows[0].worst, rows[0].leaked), (Worst::Success, 0));
    let pages = render(&rep, None);
    let (_, page) = pages
        .iter()
        .find(|(path, _)| path.starts_with("servers/") && path.ends_with(".html"))
        .expect("a server page");
    assert!(page.contains("Its launcher"), "{page}");
    let md = crate::render::render(&rep, crate::render::Format::Markdown);
    assert!(
        md.contains("its launcher: `npm exec` exited on SIGTERM"),
        "{md}"
    );
}
