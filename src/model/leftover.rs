//! What a case left running: each process the server left behind, and the groups the
//! reports list them in.

use serde::{Deserialize, Serialize};

/// A process the server left behind, and who started it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leftover {
    pub pid: i32,
    pub cmdline: String,
    /// Its parent while the session was live (before orphans were reparented).
    pub started_by: Option<i32>,
    pub started_by_cmdline: Option<String>,
}

/// Leftovers with the same command line and parent, as reports list them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftoverGroup {
    pub cmdline: String,
    pub started_by_cmdline: Option<String>,
    pub started_by: Option<i32>,
    pub pids: Vec<i32>,
}

/// Groups leftovers by command line and parent, in order of first appearance: three hundred
/// forked workers are one line of a report, not three hundred.
pub fn group_leftovers(list: &[Leftover]) -> Vec<LeftoverGroup> {
    let mut groups: Vec<LeftoverGroup> = Vec::new();
    for l in list {
        match groups
            .iter_mut()
            .find(|g| g.cmdline == l.cmdline && g.started_by_cmdline == l.started_by_cmdline)
        {
            Some(g) => g.pids.push(l.pid),
            None => groups.push(LeftoverGroup {
                cmdline: l.cmdline.clone(),
                started_by_cmdline: l.started_by_cmdline.clone(),
                started_by: l.started_by,
                pids: vec![l.pid],
            }),
        }
    }
    groups
}

/// How many pids a group names before "and N more".
const PIDS_SHOWN: usize = 3;

/// `pid 4242 `sleep 600` (started by `x`)`, or, for a group,
/// `300 × `sleep 600` (pids 1, 2, 3 and 297 more; started by `x`)`: bounded however many.
impl std::fmt::Display for LeftoverGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let by = self.started_by_cmdline.as_deref().unwrap_or("?");
        if let [pid] = self.pids.as_slice() {
            return write!(f, "pid {pid} `{}` (started by `{by}`)", self.cmdline);
        }
        write!(
            f,
            "{} × `{}` ({}; started by `{by}`)",
            self.pids.len(),
            self.cmdline,
            self.pid_list()
        )
    }
}

impl LeftoverGroup {
    /// `pid 4242`, or `pids 1, 2, 3 and 297 more`.
    pub fn pid_list(&self) -> String {
        let shown: Vec<String> = self
            .pids
            .iter()
            .take(PIDS_SHOWN)
            .map(|p| p.to_string())
            .collect();
        let more = self.pids.len().saturating_sub(PIDS_SHOWN);
        let word = if self.pids.len() == 1 { "pid" } else { "pids" };
        if more > 0 {
            format!("{word} {} and {more} more", shown.join(", "))
        } else {
            format!("{word} {}", shown.join(", "))
        }
    }
}

/// The most leftovers a report lists one by one; beyond it they are only counted.
pub const MAX_LEFTOVERS: usize = 1000;
