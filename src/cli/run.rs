//! Carrying out a run plan: the harness, the interrupt hook, the outputs, the baseline and
//! the exit code.

use std::process::ExitCode;

use super::plan::RunPlan;
use crate::config::baseline::Baseline;
use crate::config::manifest::as_name;
use crate::error::Error;
use crate::exit_codes;
use crate::harness::Harness;
use crate::model::{JudgedCase, Owner, Report};
use crate::render::changes::{self, Changes};
use crate::render::{self, diff, Format};

/// A report in one format, with the changes since `--diff-against`'s report after a
/// Markdown one (a pull request's comment, a job summary).
fn rendered(report: &Report, format: Format, changes: Option<&(String, Changes)>) -> String {
    let mut out = render::render(report, format);
    if let (Format::Markdown, Some((since, changes))) = (format, changes) {
        out.push('\n');
        out.push_str(&changes.markdown(since));
    }
    out
}

fn write_outputs(
    plan: &RunPlan,
    report: &Report,
    changes: Option<&(String, Changes)>,
) -> Result<(), Error> {
    // The format a file already holds is not printed too (a page or a JSON report on the
    // terminal helps nobody); the others are, and the conformance layout's list of files.
    let to_file =
        plan.format != Format::Conformance && plan.outputs.iter().any(|(_, f)| *f == plan.format);
    if plan.pruned && plan.format == Format::Text {
        print!("{}", diff::render_pruned(report));
    } else if !to_file {
        print!("{}", rendered(report, plan.format, changes));
    }
    write_files(plan, report, changes)
}

/// Before the run: every `--output`'s folder exists (made if need be), and a file's path is
/// not a directory, so that nothing is lost after a long run for want of a folder.
pub fn prepare_outputs(plan: &RunPlan) -> Result<(), Error> {
    let files = plan
        .outputs
        .iter()
        .filter(|(_, f)| *f != Format::Conformance);
    let paths = files
        .map(|(p, _)| p)
        .chain(plan.write_baseline.iter())
        .chain(plan.write_expected_failures.iter());
    for path in paths {
        if path.is_dir() {
            return Err(Error::Usage(format!(
                "--output {}: is a directory; name a file",
                path.display()
            )));
        }
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = parent {
            std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
        }
    }
    for (dir, _) in plan
        .outputs
        .iter()
        .filter(|(_, f)| *f == Format::Conformance)
    {
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    }
    Ok(())
}

/// The `--output` files and the baselines a plan asks for.
pub fn write_files(
    plan: &RunPlan,
    report: &Report,
    changes: Option<&(String, Changes)>,
) -> Result<(), Error> {
    for (path, format) in &plan.outputs {
        if *format == Format::Conformance {
            super::write_conformance(report, path, std::time::SystemTime::now())?;
            continue;
        }
        std::fs::write(path, rendered(report, *format, changes)).map_err(Error::io(path))?;
    }
    if let Some(path) = &plan.write_baseline {
        let text = Baseline::from_report(report).to_file_text(path);
        std::fs::write(path, text).map_err(Error::io(path))?;
    }
    if let Some(path) = &plan.write_expected_failures {
        let text = Baseline::from_report(report).to_official_yaml();
        std::fs::write(path, text).map_err(Error::io(path))?;
    }
    Ok(())
}

/// The harness a plan runs its cases with.
pub fn harness_of(plan: &RunPlan, baseline: Option<&Baseline>) -> Result<Harness, Error> {
    Ok(Harness::locate()
        .ok_or(Error::NoBinary)?
        // A progress line only for a person watching: never in logs or pipes.
        .progress(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .jobs(plan.jobs)
        .revision(plan.revision)
        .budgets(plan.overrides)
        .plumbing(plan.plumbing)
        .repeat(plan.repeat)
        .expect_full_waits(baseline.iter().flat_map(|b| {
            b.entries.iter().flat_map(|(server, cases)| {
                cases
                    .keys()
                    .map(move |scenario| (server.clone(), scenario.to_string()))
            })
        })))
}

/// Runs the plan, lets `finish` complete the report (the census adds what it knows of each
/// package) before anything is written or scored, and returns the exit code of the run.
pub fn execute_with(
    plan: RunPlan,
    finish: impl FnOnce(&mut Report) -> Result<(), Error>,
) -> Result<ExitCode, Error> {
    let baseline = plan.baseline.as_deref().map(Baseline::load).transpose()?;
    // Read before the run: a report that cannot be read is a usage error now, not later.
    let against = saved_report(&plan)?;
    prepare_outputs(&plan)?;
    let harness = harness_of(&plan, baseline.as_ref())?;
    // The interrupt stops every case's tree; `cli::run` gives its exit code.
    let _hook = {
        let h = harness.clone();
        crate::os::interrupt::on_interrupt(move || h.interrupt())
    };
    let started = std::time::Instant::now();
    let mut report = match plan.triage {
        true => triaged(&harness, &plan)?,
        false => harness.run(&plan.cases),
    };
    if plan.name_by_handshake {
        name_by_handshake(&mut report);
    }
    let wall = started.elapsed();
    report.not_testable = plan.not_testable.clone();
    crate::harness::release_cgroups();
    if crate::os::interrupt::requested() {
        return Ok(ExitCode::from(exit_codes::INTERRUPTED));
    }
    finish(&mut report)?;
    conclude(&plan, baseline.as_ref(), against.as_ref(), &report, wall)
}

/// `--triage`: the plan's cases of the triage set for every server, then the rest for the
/// servers where those found something; each server's report says which pass judged it.
fn triaged(harness: &Harness, plan: &RunPlan) -> Result<Report, Error> {
    let set = crate::census::triage::scenarios();
    let (first, rest): (Vec<_>, Vec<_>) = plan
        .cases
        .iter()
        .cloned()
        .partition(|c| set.contains(&c.scenario));
    let started = std::time::Instant::now();
    let mut report = harness.run(&first);
    let full = crate::census::triage::needs_full(&report);
    let servers = report.servers.len();
    eprintln!(
        "triage: pass {:.1} s ({} cases, {servers} servers): {} found something",
        started.elapsed().as_secs_f64(),
        first.len(),
        full.len()
    );
    let rest: Vec<_> = rest
        .into_iter()
        .filter(|c| full.contains(&c.manifest.name))
        .collect();
    if !rest.is_empty() && !crate::os::interrupt::requested() {
        let started = std::time::Instant::now();
        let more = harness.run(&rest);
        eprintln!(
            "triage: full pass {:.1} s ({} more cases, {} servers)",
            started.elapsed().as_secs_f64(),
            rest.len(),
            full.len()
        );
        report = render::merge::merge(vec![report, more])
            .map_err(|e| Error::Usage(format!("--triage: {e}")))?;
    }
    let date = plan.date.clone().unwrap_or_else(today);
    crate::census::triage::mark(&mut report, &full, &date);
    Ok(report)
}

/// Today's date in UTC (`2026-12-06`): the day a census judged what it ran.
pub fn today() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
}

/// Calls each server by the name it gave in its handshake (`serverInfo.name`), where it gave
/// one that makes a server name.
pub fn name_by_handshake(report: &mut Report) {
    let names: Vec<(String, String)> = report
        .servers
        .iter()
        .filter_map(|(k, i)| Some((k.clone(), as_name(i.server_name.as_deref()?)?)))
        .collect();
    for (from, to) in names {
        report.rename_server(&from, &to);
    }
}

/// The report `--diff-against` names, read and checked.
pub fn saved_report(plan: &RunPlan) -> Result<Option<Report>, Error> {
    plan.diff_against
        .as_deref()
        .map(super::load_report)
        .transpose()
}

/// Writes a judged report where the plan says, compares it with the baseline or the saved
/// report (`against`), says on stderr what has no verdict and where the time went, and gives
/// the exit code.
pub fn conclude(
    plan: &RunPlan,
    baseline: Option<&Baseline>,
    against: Option<&Report>,
    report: &Report,
    wall: std::time::Duration,
) -> Result<ExitCode, Error> {
    let changes = against.map(|old| {
        let since = plan
            .diff_against
            .as_deref()
            .map_or_else(|| "the saved report".into(), |p| p.display().to_string());
        (since, changes::compare(old, report))
    });
    // A file that cannot be written after all is said, and the verdict still decides the
    // exit code when it failed (2 never hides a 1).
    let written = write_outputs(plan, report, changes.as_ref());
    if let Err(e) = &written {
        eprintln!("mcp-shutdown: {}", crate::error::chain(e));
    }
    let failed = match (baseline, &changes) {
        (_, Some((since, changes))) => {
            eprint!("{}", changes.text(since));
            changes.regressed(plan.fail_threshold)
        }
        (Some(b), None) => {
            let cmp = b.compare(report);
            if plan.format == Format::Text || cmp.fails() {
                eprint!("{}", cmp.render());
            }
            cmp.fails()
        }
        (None, None) => report.fails(plan.fail_threshold),
    };
    for line in no_verdict_lines(report) {
        eprintln!("mcp-shutdown: {line}");
    }
    if let Some(line) = ran_again_line(report) {
        eprintln!("mcp-shutdown: {line}");
    }
    let bound = machine_bound_lines(report);
    if !plan.accept_machine_bound {
        for line in &bound {
            eprintln!("mcp-shutdown: {line}");
        }
    }
    let bound = !bound.is_empty() && !plan.accept_machine_bound;
    eprintln!("mcp-shutdown: {}", time_summary(report, wall));
    let code = exit_code(report, failed, bound);
    match written {
        Err(_) if code == exit_codes::SUCCESS => Ok(ExitCode::from(exit_codes::USAGE_OR_HARNESS)),
        _ => Ok(ExitCode::from(code)),
    }
}

/// How many cases ran again because the machine's load decided a run, and how many of
/// those a later run decided.
fn ran_again_line(report: &Report) -> Option<String> {
    let again: Vec<&JudgedCase> = report
        .results
        .iter()
        .filter(|r| !r.machine_bound_before.is_empty())
        .collect();
    let decided = again.iter().filter(|r| !r.is_machine_bound()).count();
    (!again.is_empty()).then(|| {
        format!(
            "{} case(s) ran again because the machine's load decided a run ({} more runs); {decided} of them decided by a later run",
            again.len(),
            again.iter().map(|r| r.machine_bound_before.len()).sum::<usize>(),
        )
    })
}

/// One line per machine-bound case: the machine's load, not the server, decided it.
fn machine_bound_lines(report: &Report) -> Vec<String> {
    report
        .results
        .iter()
        .filter(|r| r.is_machine_bound())
        .filter_map(|r| {
            let m = r.machine_bound.as_ref()?;
            Some(format!(
                "machine-bound (re-run on a quieter machine, or --accept-machine-bound): {} × {}: {}",
                r.server,
                r.scenario,
                crate::render::present::machine_bound(m)
            ))
        })
        .collect()
}

/// The cases whose error is `owner`'s.
fn owned_by(report: &Report, owner: Owner) -> impl Iterator<Item = &JudgedCase> {
    report.results.iter().filter(move |r| {
        r.not_testable.is_none() && r.error.as_ref().is_some_and(|e| e.kind.owner() == owner)
    })
}

/// What the run says on stderr of the cases that have no verdict and are nobody's finding:
/// one line per server with a usage error (the same one in every case), one per case the
/// harness failed.
fn no_verdict_lines(report: &Report) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut servers: Vec<&str> = Vec::new();
    for r in owned_by(report, Owner::Usage) {
        if !servers.contains(&r.server.as_str()) {
            servers.push(&r.server);
            let e = r
                .error
                .as_ref()
                .expect("owned_by keeps cases with an error");
            lines.push(format!(
                "server `{}`: {} (a usage error)",
                r.server, e.message
            ));
        }
    }
    for r in owned_by(report, Owner::Harness) {
        let e = r
            .error
            .as_ref()
            .expect("owned_by keeps cases with an error");
        lines.push(format!(
            "harness error in {} × {} (not scored): {}",
            r.server, r.scenario, e.message
        ));
    }
    lines
}

/// Where the run's time went (the build excluded): the wall time, the fixture setups (the
/// longest any case waited for), and each phase of the cases summed over them (they overlap,
/// so the sums exceed the wall time by as much as the run ran cases side by side).
fn time_summary(report: &Report, wall: std::time::Duration) -> String {
    let mut sum = crate::model::CaseTiming::default();
    for t in report.results.iter().filter_map(|r| r.timing) {
        sum.absorb(&t);
    }
    let s = |ms: f64| format!("{:.1} s", ms / 1000.0);
    let n = report.results.len();
    format!(
        "time: {} wall for {n} case{}; setup {}; summed over the cases: waiting for a CPU token \
         {}, start-ups {}, grace waits {}, observation {} (holding a CPU token {})",
        s(wall.as_secs_f64() * 1000.0),
        if n == 1 { "" } else { "s" },
        s(sum.setup_ms),
        s(sum.token_wait_ms),
        s(sum.startup_ms),
        s(sum.grace_ms),
        s(sum.observe_ms),
        s(sum.token_held_ms),
    )
}

/// The run's exit code: a usage error first (the run did not do what was asked), then a
/// conformance failure, then a harness error (a case the suite failed to run, when nothing
/// else failed), else success. Machine-bound cases not accepted (`bound`) come before a
/// conformance failure: such a run has no verdict to give.
fn exit_code(report: &Report, failed: bool, bound: bool) -> u8 {
    if owned_by(report, Owner::Usage).next().is_some() || bound {
        exit_codes::USAGE_OR_HARNESS
    } else if failed {
        exit_codes::CONFORMANCE_FAILURE
    } else if owned_by(report, Owner::Harness).next().is_some() {
        exit_codes::USAGE_OR_HARNESS
    } else {
        exit_codes::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseError, ErrorKind};
    use crate::test_support::{report_of, result};

    fn with_error(server: &str, kind: ErrorKind, message: &str) -> JudgedCase {
        let mut r = result(server, "close", crate::model::Stage::Eof, 5.0);
        r.observation.error = Some(CaseError {
            kind,
            message: message.into(),
        });
        r
    }

    #[test]
    fn the_time_summary_sums_each_phase_over_the_cases() {
        let mut a = result("a", "close", crate::model::Stage::Eof, 10.0);
        a.timing = Some(crate::model::CaseTiming {
            setup_ms: 1000.0,
            token_wait_ms: 250.0,
            token_held_ms: 800.0,
            startup_ms: 500.0,
            grace_ms: 2000.0,
            observe_ms: 100.0,
            cpu_ms: 0.0,
        });
        let mut b = a.clone();
        b.timing.as_mut().unwrap().setup_ms = 0.0;
        let untimed = result("c", "close", crate::model::Stage::Eof, 10.0);
        let r = report_of(vec![a, b, untimed]);
        assert_eq!(
            time_summary(&r, std::time::Duration::from_millis(3_050)),
            "time: 3.0 s wall for 3 cases; setup 1.0 s; summed over the cases: waiting for a CPU \
             token 0.5 s, start-ups 1.0 s, grace waits 4.0 s, observation 0.2 s (holding a CPU token \
             1.6 s)"
        );
    }

    #[test]
    fn a_usage_error_exits_2_and_says_what_cannot_launch() {
        let rep = report_of(vec![
            with_error(
                "typo",
                ErrorKind::SpawnFailed,
                "cannot launch `nodee`: no such file (cwd /w)",
            ),
            with_error(
                "typo",
                ErrorKind::SpawnFailed,
                "cannot launch `nodee`: no such file (cwd /w)",
            ),
            result("ok", "close", crate::model::Stage::Eof, 5.0),
        ]);
        assert_eq!(exit_code(&rep, true, false), exit_codes::USAGE_OR_HARNESS);
        assert_eq!(
            no_verdict_lines(&rep),
            ["server `typo`: cannot launch `nodee`: no such file (cwd /w) (a usage error)"]
        );
    }

    #[test]
    fn machine_bound_cases_exit_2_and_are_named() {
        let rep = report_of(vec![
            crate::test_support::machine_bound("busy"),
            result("ok", "close", crate::model::Stage::Eof, 5.0),
        ]);
        let lines = machine_bound_lines(&rep);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("busy × close"), "{lines:?}");
        assert_eq!(exit_code(&rep, true, true), exit_codes::USAGE_OR_HARNESS);
        assert_eq!(exit_code(&rep, false, false), exit_codes::SUCCESS);
    }

    #[test]
    fn a_harness_error_exits_2_unless_something_else_failed() {
        let rep = report_of(vec![
            with_error("s", ErrorKind::Harness, "cannot start the supervisor"),
            result("ok", "close", crate::model::Stage::Eof, 5.0),
        ]);
        assert_eq!(exit_code(&rep, false, false), exit_codes::USAGE_OR_HARNESS);
        assert_eq!(
            exit_code(&rep, true, false),
            exit_codes::CONFORMANCE_FAILURE
        );
        assert!(no_verdict_lines(&rep)[0].starts_with("harness error in s × close (not scored)"));
        // The server's own failures and attacks are findings, not errors of the run.
        let rep = report_of(vec![
            with_error("s", ErrorKind::HandshakeTimeout, "no answer"),
            with_error("t", ErrorKind::AncestorSignalled, "killed its supervisor"),
        ]);
        assert_eq!(exit_code(&rep, false, false), exit_codes::SUCCESS);
        assert!(no_verdict_lines(&rep).is_empty());
    }
}
