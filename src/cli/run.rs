//! Carrying out a run plan: the harness, the interrupt handler, the outputs, the baseline and
//! the exit code.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::plan::RunPlan;
use crate::config::baseline::Baseline;
use crate::error::Error;
use crate::exit_codes;
use crate::harness::Harness;
use crate::model::Report;
use crate::render::{self, diff, Format};

/// Stops every case's tree on Ctrl-C / SIGTERM / SIGHUP; the flag says it happened.
fn on_interrupt(harness: &Harness) -> Arc<AtomicBool> {
    let interrupted = Arc::new(AtomicBool::new(false));
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ]) {
        let h = harness.clone();
        let flag = interrupted.clone();
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                flag.store(true, Ordering::SeqCst);
                h.interrupt();
            }
        });
    }
    interrupted
}

fn write_outputs(plan: &RunPlan, report: &Report) -> Result<(), Error> {
    if plan.pruned && plan.format == Format::Text {
        print!("{}", diff::render_pruned(report));
    } else {
        print!("{}", render::render(report, plan.format));
    }
    for (path, format) in &plan.outputs {
        if *format == Format::Conformance {
            super::write_conformance(report, path, std::time::SystemTime::now())?;
            continue;
        }
        std::fs::write(path, render::render(report, *format)).map_err(Error::io(path))?;
    }
    if let Some(path) = &plan.write_baseline {
        std::fs::write(path, Baseline::from_report(report).to_toml()).map_err(Error::io(path))?;
    }
    Ok(())
}

/// Runs the plan; returns the exit code of the run.
pub fn execute(plan: RunPlan) -> Result<ExitCode, Error> {
    execute_with(plan, |_| Ok(()))
}

/// Runs the plan, lets `finish` complete the report (the census adds what it knows of each
/// package) before anything is written or scored, and returns the exit code of the run.
pub fn execute_with(
    plan: RunPlan,
    finish: impl FnOnce(&mut Report) -> Result<(), Error>,
) -> Result<ExitCode, Error> {
    let baseline = plan.baseline.as_deref().map(Baseline::load).transpose()?;
    let harness = Harness::locate()
        .ok_or(Error::NoBinary)?
        // A progress line only for a person watching: never in logs or pipes.
        .progress(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .jobs(plan.jobs)
        .revision(plan.revision)
        .budgets(plan.overrides)
        .plumbing(plan.plumbing)
        .repeat(plan.repeat);
    let interrupted = on_interrupt(&harness);
    let mut report = harness.run(&plan.cases);
    report.not_testable = plan.not_testable.clone();
    crate::harness::release_cgroups();
    if interrupted.load(Ordering::SeqCst) {
        eprintln!("mcp-shutdown: interrupted; every server and descendant was stopped");
        return Ok(ExitCode::from(exit_codes::INTERRUPTED));
    }
    finish(&mut report)?;
    write_outputs(&plan, &report)?;
    let failed = match &baseline {
        Some(b) => {
            let cmp = b.compare(&report);
            if plan.format == Format::Text || cmp.fails() {
                eprint!("{}", cmp.render());
            }
            cmp.fails()
        }
        None => report.fails(plan.fail_threshold),
    };
    Ok(ExitCode::from(if failed {
        exit_codes::CONFORMANCE_FAILURE
    } else {
        exit_codes::SUCCESS
    }))
}
