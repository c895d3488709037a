//! A launcher that ends on a signal sent to it alone can leave the server behind it running
//! (`npx` does on SIGTERM). The harness then sends the server that signal itself, as a host
//! that signals the process group does, and waits as a ladder's last steps do (the grace
//! period, then SIGKILL): the server is judged on what it does with the signal, and the
//! launcher's part is recorded as the launcher's (`model::launcher_left`).

use std::time::Duration;

use super::settle_descendants;
use crate::model::launcher_left::signal_to_launcher_alone;
use crate::model::scenario::stage_after;
use crate::model::{Action, Budgets, LauncherLeft, Observation, SignalName, Stage, Target};
use crate::os::{identify, mono_ns, procfs, Pidfd, ProcInfo};

/// [`settle_for`] a prompt budget.
pub fn settle(result: &mut Observation, budgets: &Budgets, except: &[i32]) -> Vec<ProcInfo> {
    settle_for(result, budgets, budgets.prompt_ms, except)
}

/// What is still running `settle_ms` after the launched process ended (`except`: it and
/// the harness's own processes), and a prompt budget after the server its launchers left
/// running ended too, when they did.
pub fn settle_for(
    result: &mut Observation,
    budgets: &Budgets,
    settle_ms: u64,
    except: &[i32],
) -> Vec<ProcInfo> {
    let alive = settle_descendants(settle_ms, except);
    signal_left_server(result, budgets.prompt_ms, budgets.grace_ms, alive, except)
}

/// When the launchers ended on a signal sent to them alone and `alive` (what was still
/// running a prompt budget after) holds the server behind them: signals the server, records
/// what it did in `launcher_left`, and returns what is still running a prompt budget after
/// the server's own end. Else returns `alive` as it is.
fn signal_left_server(
    result: &mut Observation,
    prompt_ms: u64,
    grace_ms: u64,
    alive: Vec<ProcInfo>,
    except: &[i32],
) -> Vec<ProcInfo> {
    let Some(signal) = signal_to_launcher_alone(result.steps.iter().map(|s| s.action)) else {
        return alive;
    };
    let ended = !matches!(result.stage, None | Some(Stage::Survived));
    let Some(p) = result.server_process.as_ref().filter(|_| ended) else {
        return alive;
    };
    if p.launchers.is_empty() || !alive.iter().any(|a| a.pid == p.pid) {
        return alive;
    }
    // Opened while it is known alive and unreaped (only this process reaps it): no reused pid.
    let Ok(server) = Pidfd::open(p.pid as u32) else {
        return alive;
    };
    let (launchers, agent) = (p.launchers.clone(), identify::launcher_agent(p.pid));
    let queued = procfs::process_queued_ns(p.pid);
    let t = mono_ns();
    let _ = server.signal(signal);
    let grace = Duration::from_millis(grace_ms);
    let (stage, at) = match server.wait_exit(grace) {
        Ok(Some(at)) => (
            stage_after(&Action::Signal {
                signal,
                to: Target::Process,
            }),
            Some(at),
        ),
        _ => {
            let _ = server.signal(SignalName::Kill);
            match server.wait_exit(grace) {
                Ok(Some(at)) => (Stage::Sigkill, Some(at)),
                _ => (Stage::Survived, None),
            }
        }
    };
    // Read before the server is reaped (settling reaps it): its threads' run-queue time.
    let runqueue_ms =
        at.map(|_| procfs::process_queued_ns(p.pid).saturating_sub(queued) as f64 / 1e6);
    result.launcher_left = Some(LauncherLeft {
        launchers,
        agent,
        signal,
        left_ms: result
            .exit_ns
            .map_or(0.0, |e| t.saturating_sub(e) as f64 / 1e6),
        stage,
        exit_ms: at.map(|a| a.saturating_sub(t) as f64 / 1e6),
        runqueue_ms,
    });
    settle_descendants(prompt_ms, except)
}
