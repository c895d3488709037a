//! Ending a case's whole tree: everything below the supervisor and everything that carries
//! its case marker.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};

use super::procfs::own_pid;
use super::procfs::{descendants, with_env, ProcInfo};
use super::signals::signal_pid;
use crate::model::SignalName;

/// The environment variable that marks every process of one case: set by the supervisor on
/// itself before it starts anything, so every process of the case inherits it.
pub const CASE_MARK: &str = "MCP_SHUTDOWN_CASE";

/// The cgroup of this supervisor's case, when the harness made one: its other members are
/// killed with the rest.
static CASE_CGROUP: OnceLock<PathBuf> = OnceLock::new();

/// Tells the kill loop about the case's cgroup (once, before any child exists).
pub fn set_case_cgroup(dir: PathBuf) {
    let _ = CASE_CGROUP.set(dir);
}

/// The processes of one case: those carrying its `CASE_MARK`.
pub fn marked(mark: &str) -> Vec<ProcInfo> {
    with_env(CASE_MARK, mark)
}

/// Kills every descendant of this process, and every process carrying this process's case
/// mark, and reaps them. Used by the per-case supervisor, which is a subreaper and owns every
/// process below it, so reaping any child is safe here. Loops because a dying process can
/// fork and orphans arrive by reparenting; it stops only after two empty scans in a row, so a
/// process caught between parents in one scan is seen in the next.
pub fn kill_all_descendants() -> Vec<ProcInfo> {
    let me = own_pid();
    let mark = std::env::var(CASE_MARK).ok();
    let mut killed: Vec<ProcInfo> = Vec::new();
    let mut empty_scans = 0;
    for _ in 0..500 {
        reap_any_children();
        let mut live: Vec<ProcInfo> = descendants(me)
            .into_iter()
            .filter(|p| !p.is_zombie())
            .collect();
        if let Some(m) = &mark {
            for p in marked(m) {
                if !live.iter().any(|l| l.pid == p.pid) {
                    live.push(p);
                }
            }
        }
        if let Some(dir) = CASE_CGROUP.get() {
            // Killed at once: membership is authoritative, whatever their parent or marker.
            for pid in super::containment::kill_others(dir) {
                if !killed.iter().any(|k| k.pid == pid) {
                    killed.extend(super::procfs::proc_info(pid));
                }
            }
        }
        if live.is_empty() {
            empty_scans += 1;
            if empty_scans >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        empty_scans = 0;
        for p in &live {
            signal_pid(p.pid, SignalName::Kill);
            if !killed.iter().any(|k| k.pid == p.pid) {
                killed.push(p.clone());
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    reap_any_children();
    killed
}

/// Reaps every exited child without blocking.
pub fn reap_any_children() {
    while let Ok(s) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        if s == WaitStatus::StillAlive {
            break;
        }
    }
}
