//! One case, run in its own supervisor process (`mcp-shutdown __case`).
//!
//! The supervisor is a child subreaper, so a server orphaned by its client is reparented to
//! it (not to init) and stays observable; it owns every process below it, so it can kill them
//! all at the end. Its stdin is a lifeline from the harness: when the harness goes away for
//! any reason, even SIGKILL, the lifeline reaches EOF and the supervisor kills its whole tree.
//!
//! Process tree of a case:
//! ```text
//! harness ── __case (subreaper) ──┬── server                   (driver = direct)
//!                                 └── __client ── server       (driver = client)
//! ```
//!
//! - [`protocol`]: the typed lines between harness, supervisor and stand-in client;
//! - [`ladder`]: the stop ladder as a pure state machine, run by [`drive`];
//! - [`direct`], [`via_client`]: the two drivers; [`client_stub`]: the stand-in client;
//! - [`launch`]: starting the server and the handshake; [`link`]: CPU tokens and aborting.

mod behind;
pub mod client_stub;
mod direct;
mod drive;
pub mod ladder;
mod launch;
mod link;
pub mod protocol;
mod via_client;

use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;
use std::sync::mpsc::channel;
use std::time::Duration;

use crate::exit_codes;
use crate::model::{Driver, Leftover, Observation, StdoutRecord, MAX_LEFTOVERS};
use crate::os::{mono_ns, procfs, signals, tree, Pidfd, ProcInfo};
use crate::rules;
use link::{abort, say_err, Link};
use protocol::{recv, send, CaseSpec, FromSupervisor, ToSupervisor};

/// Live (non-zombie) descendants of this supervisor, excluding `except`.
fn live_tree(except: &[i32]) -> Vec<ProcInfo> {
    procfs::descendants(procfs::own_pid())
        .into_iter()
        .filter(|p| !p.is_zombie() && !except.contains(&p.pid))
        .collect()
}

/// After the server ended, gives what it started up to the prompt budget to go away,
/// counting only the time it sat idle: a slice in which what is left computed or queued for
/// a CPU (a storm of children unwinding after SIGINT on a loaded machine) is it still going
/// away, not staying. The ladder's wall-clock backstop bounds a descendant that keeps
/// computing. Polling `/proc` is fine here: it bounds a wait, it does not time an exit.
fn settle_descendants(prompt_ms: u64, except: &[i32]) -> Vec<ProcInfo> {
    const MS: u64 = 1_000_000;
    let start = mono_ns();
    let cap = start + ladder::wall_cap_ms(prompt_ms) * MS;
    let (mut idle_ns, mut last_ns) = (0, start);
    let mut last: HashMap<i32, u64> = HashMap::new();
    loop {
        tree::reap_any_children();
        let live = live_tree(except);
        let now = mono_ns();
        let busy: HashMap<i32, u64> = live
            .iter()
            .map(|p| (p.pid, procfs::process_busy_ns(p.pid)))
            .collect();
        let used: u64 = busy
            .iter()
            .filter_map(|(pid, ns)| Some(ns.saturating_sub(*last.get(pid)?)))
            .sum();
        let slice = now - last_ns;
        // Idle: less than 5 % of the slice used or queued, as the ladder judges idleness,
        // and nothing runnable now (a wait for a CPU is reported only once it is over).
        let runnable = live.iter().any(|p| procfs::process_runnable(p.pid));
        if used * 20 <= slice && !runnable {
            idle_ns += slice;
        }
        if live.is_empty() || idle_ns >= prompt_ms * MS || now >= cap {
            return live;
        }
        (last, last_ns) = (busy, now);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `process` to exit for as long as it is doing something: gives up only once it
/// has sat idle (as [`settle_descendants`] judges idleness) for `idle_ms`, so that an exit
/// already under way (stdout closed, the interpreter finalising) lands however busy the
/// machine is. True if it exited.
fn exits_unless_idle(process: &Pidfd, idle_ms: u64) -> bool {
    const MS: u64 = 1_000_000;
    let start = mono_ns();
    let cap = start + ladder::wall_cap_ms(idle_ms) * MS;
    let (mut idle_ns, mut last_ns) = (0, start);
    let mut last = procfs::process_busy_ns(process.pid());
    loop {
        if matches!(process.wait_exit(Duration::from_millis(20)), Ok(Some(_))) {
            return true;
        }
        let (now, busy) = (mono_ns(), procfs::process_busy_ns(process.pid()));
        let slice = now - last_ns;
        if busy.saturating_sub(last) * 20 <= slice && !procfs::process_runnable(process.pid()) {
            idle_ns += slice;
        }
        if idle_ns >= idle_ms * MS || now >= cap {
            return false;
        }
        (last, last_ns) = (busy, now);
    }
}

/// Builds leftovers from the processes still alive and the tree seen before the trigger.
fn leftovers(alive: &[ProcInfo], before: &[ProcInfo]) -> Vec<Leftover> {
    alive
        .iter()
        .map(|p| {
            let parent = before
                .iter()
                .find(|b| b.pid == p.pid)
                .map(|b| b.ppid)
                .unwrap_or(p.ppid);
            Leftover {
                pid: p.pid,
                cmdline: p.cmdline.clone(),
                started_by: Some(parent),
                started_by_cmdline: before
                    .iter()
                    .find(|b| b.pid == parent)
                    .map(|b| b.cmdline.clone()),
            }
        })
        .collect()
}

/// Records what is left, kills everything, and takes the stdout record and stderr tail.
fn finish(
    result: &mut Observation,
    record: &StdoutRecord,
    stderr: &launch::StderrTap,
    alive: &[ProcInfo],
    before: &[ProcInfo],
) {
    let mut all = leftovers(alive, before);
    if all.len() > MAX_LEFTOVERS {
        result.leftovers_omitted = (all.len() - MAX_LEFTOVERS) as u64;
        all.truncate(MAX_LEFTOVERS);
    }
    result.leftovers = all;
    // Everything still running is killed now; the survivors were recorded above.
    tree::kill_all_descendants();
    result.stdout = record.clone();
    result.stderr_tail = stderr.text();
    result.stderr_bytes = stderr.bytes();
}

/// Tells the harness every second that this supervisor can still run (see
/// `harness::supervise`: one that stops, e.g. by SIGSTOP from a server, is lost).
fn heartbeat() {
    std::thread::spawn(|| loop {
        send(&mut std::io::stdout().lock(), &FromSupervisor::Alive);
        std::thread::sleep(Duration::from_secs(1));
    });
}

/// SIGTERM, SIGINT or SIGHUP to the supervisor aborts the case: everything it started goes.
fn abort_on_signals() {
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ]) {
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                abort("interrupted");
            }
        });
    }
}

/// Entry point of `mcp-shutdown __case`: reads a [`CaseSpec`] line from stdin, runs it,
/// prints a result line to stdout. Never leaves a process behind. Returns the exit code.
pub fn main(helper: &Path) -> i32 {
    // The harness sets the case's marker; run by hand, make one. Before any thread or child
    // exists: everything this case starts inherits it.
    if std::env::var_os(tree::CASE_MARK).is_none() {
        std::env::set_var(
            tree::CASE_MARK,
            format!("{}-{}", procfs::own_pid(), mono_ns()),
        );
    }
    if let Err(e) = signals::become_subreaper() {
        say_err(&format!("mcp-shutdown: cannot become a subreaper: {e}"));
        return exit_codes::SUPERVISOR_SETUP;
    }
    let mut lifeline = BufReader::new(std::io::stdin());
    let Some(spec) = recv::<CaseSpec>(&mut lifeline) else {
        say_err("mcp-shutdown __case: expected a case spec on stdin");
        return 2;
    };
    if let Some(dir) = &spec.cgroup {
        tree::set_case_cgroup(dir.clone());
    }
    heartbeat();
    // Abort paths: the harness went away (lifeline EOF), a signal, or the hard deadline.
    let (go_tx, go_rx) = channel();
    std::thread::spawn(move || {
        while let Some(ToSupervisor::Go) = recv::<ToSupervisor>(&mut lifeline) {
            let _ = go_tx.send(());
        }
        abort("the harness went away");
    });
    let link = Link {
        go: go_rx,
        deadline_ms: spec.deadline_ms(),
        stamps: link::Stamps::starting_now(),
    };
    abort_on_signals();
    link::set_deadline(spec.deadline_ms());
    link::watch_deadline();
    let mut observation = match spec.scenario.driver {
        Driver::Direct => direct::run(&spec, &link),
        Driver::Client | Driver::Terminal => via_client::run(&spec, helper, &link),
    };
    // A handshake the backstop ended was marked where it failed.
    let decided = rules::machine_bound(&observation, &spec.scenario);
    observation.machine_bound = decided.or(observation.machine_bound.take());
    observation.load_avg = procfs::load_avg();
    tree::kill_all_descendants();
    let mut timing = link.stamps.timing(crate::os::mono_ns());
    timing.cpu_ms = crate::os::clock::cpu_ms_with_reaped();
    observation.timing = Some(timing);
    send(
        &mut std::io::stdout().lock(),
        &FromSupervisor::Result {
            observation: Box::new(observation),
        },
    );
    0
}
