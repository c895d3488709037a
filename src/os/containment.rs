//! Per-case cgroups: the authoritative membership of a case that `setsid`, a scrubbed
//! environment or a renamed binary cannot escape, a kill that reaches every member at once,
//! and a process limit against fork storms.
//!
//! Membership comes from the cgroup v2 hierarchy when the harness may create cgroups there
//! (its own cgroup is writable: root, or a delegated subtree), else from the v1 freezer
//! controller; the limit from the pids controller (v2 if enabled for us, else v1). Hybrid
//! hosts (v1 controllers plus a controller-less v2 hierarchy) get v2 membership and the v1
//! pids limit. Where no cgroup can be created (an unprivileged user without delegation),
//! there is none and the harness falls back to the subreaper and the environment marker.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;

use super::procfs::own_pid;
use super::signals::signal_pid;
use crate::model::{Containment, Membership, SignalName};

/// A cgroup hierarchy this process may create cgroups in.
#[derive(Clone, Debug)]
struct Hierarchy {
    /// The directory of this harness's cgroups: `<mount>/<own cgroup>/mcp-shutdown-<pid>`.
    root: PathBuf,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    V2,
    V1Freezer,
    V1Pids,
}

/// The cgroups available to this harness process; probed once.
#[derive(Clone, Debug, Default)]
pub struct Cgroups {
    membership: Option<Hierarchy>,
    limit: Option<Hierarchy>,
}

/// The mount point and own path of every cgroup hierarchy, from `/proc/self`.
fn hierarchies() -> Vec<(PathBuf, Kind)> {
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let own_path = |pred: &dyn Fn(&str) -> bool| {
        own.lines().find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, ctrls, path) = (f.next()?, f.next()?, f.next()?);
            pred(ctrls).then(|| path.trim_start_matches('/').to_string())
        })
    };
    let mut out = Vec::new();
    for line in mounts.lines() {
        // `id parent major:minor root mountpoint opts... - fstype source superopts`
        let (left, right) = line.split_once(" - ").unwrap_or((line, ""));
        let fields: Vec<&str> = left.split(' ').collect();
        let sup: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(mnt), Some(fstype)) = (fields.get(3), fields.get(4), sup.first())
        else {
            continue;
        };
        // Only mounts of the hierarchy's root: a bind mount of a subtree would mislead.
        if *root != "/" {
            continue;
        }
        let opts = sup.get(2).copied().unwrap_or("");
        let has = |c: &str| opts.split(',').any(|o| o == c);
        let found = match *fstype {
            "cgroup2" => own_path(&|c| c.is_empty()).map(|p| (p, Kind::V2)),
            "cgroup" if has("freezer") => {
                own_path(&|c| c.split(',').any(|x| x == "freezer")).map(|p| (p, Kind::V1Freezer))
            }
            "cgroup" if has("pids") => {
                own_path(&|c| c.split(',').any(|x| x == "pids")).map(|p| (p, Kind::V1Pids))
            }
            _ => None,
        };
        if let Some((path, kind)) = found {
            out.push((Path::new(mnt).join(path), kind));
        }
    }
    out
}

/// Is there a process with this pid (a harness that may still own its cgroups)?
fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes the cgroups left by harnesses that are gone, killing anything still in them.
fn sweep_stale(base: &Path) {
    let Ok(dir) = fs::read_dir(base) else { return };
    for e in dir.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("mcp-shutdown-")
            .and_then(|p| p.parse().ok())
        else {
            continue;
        };
        if pid == own_pid() || alive(pid) {
            continue;
        }
        if let Ok(cases) = fs::read_dir(e.path()) {
            for c in cases.filter_map(Result::ok).filter(|c| c.path().is_dir()) {
                kill_members(&c.path(), None);
                let _ = fs::remove_dir(c.path());
            }
        }
        let _ = fs::remove_dir(e.path());
    }
}

/// Makes this harness's directory in a hierarchy, if it may.
fn make_root(base: &Path, kind: Kind) -> Option<Hierarchy> {
    sweep_stale(base);
    let root = base.join(format!("mcp-shutdown-{}", own_pid()));
    match fs::create_dir(&root) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    // A cgroup we cannot move processes into is no use (no write access to cgroup.procs).
    let probe = root.join("probe");
    let ok = fs::create_dir(&probe).is_ok() && fs::metadata(probe.join("cgroup.procs")).is_ok();
    let _ = fs::remove_dir(&probe);
    ok.then_some(Hierarchy { root, kind })
}

impl Cgroups {
    /// Probes the hierarchies this process may make cgroups in.
    pub fn probe() -> Self {
        let found = hierarchies();
        let pick = |kind: Kind| {
            found
                .iter()
                .filter(|(_, k)| *k == kind)
                .find_map(|(base, k)| make_root(base, *k))
        };
        let membership = pick(Kind::V2).or_else(|| pick(Kind::V1Freezer));
        let v2_pids = membership.as_ref().filter(|h| {
            h.kind == Kind::V2 && fs::write(h.root.join("cgroup.subtree_control"), "+pids").is_ok()
        });
        let limit = match v2_pids {
            Some(h) => Some(h.clone()),
            None => pick(Kind::V1Pids),
        };
        Self { membership, limit }
    }

    /// What a report says about containment under a per-case task limit `pids_max`.
    pub fn describe(&self, pids_max: Option<u64>) -> Containment {
        Containment {
            membership: match self.membership.as_ref().map(|h| h.kind) {
                Some(Kind::V2) => Membership::CgroupV2,
                Some(_) => Membership::CgroupV1,
                None => Membership::Subreaper,
            },
            pids_max: pids_max.filter(|_| self.limit.is_some()),
        }
    }

    /// A cgroup (one per hierarchy in use) for one case, limited to `pids_max` tasks.
    pub fn case(&self, name: &str, pids_max: Option<u64>) -> CaseGroup {
        let make = |h: &Hierarchy| {
            let dir = h.root.join(name);
            fs::create_dir(&dir).ok().map(|()| dir)
        };
        let membership = self.membership.as_ref().and_then(make);
        let limit = match (&self.limit, &self.membership) {
            (Some(l), Some(m)) if l.root == m.root => membership.clone(),
            (Some(l), _) => make(l),
            _ => None,
        };
        if let (Some(dir), Some(max)) = (&limit, pids_max) {
            let _ = fs::write(dir.join("pids.max"), max.to_string());
        }
        CaseGroup {
            dirs: [membership.clone(), limit]
                .into_iter()
                .flatten()
                .fold(Vec::new(), |mut v, d| {
                    if !v.contains(&d) {
                        v.push(d);
                    }
                    v
                }),
            membership,
        }
    }

    /// Removes this harness's (empty) directories.
    pub fn remove(&self) {
        for h in [&self.membership, &self.limit].into_iter().flatten() {
            let _ = fs::remove_dir(&h.root);
        }
    }
}

/// The cgroups of one case.
#[derive(Clone, Debug, Default)]
pub struct CaseGroup {
    /// Every directory the case's processes are in.
    dirs: Vec<PathBuf>,
    /// The one whose membership is authoritative, if any.
    membership: Option<PathBuf>,
}

fn procs(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Kills every process in `dir` until it is empty (at most about 2 s), freezing it first
/// where that is possible so nothing can fork in between. Returns the pids it killed.
fn kill_members(dir: &Path, except: Option<i32>) -> Vec<i32> {
    let mut killed: Vec<i32> = Vec::new();
    let v2_kill = dir.join("cgroup.kill");
    let v1_freezer = dir.join("freezer.state");
    for _ in 0..400 {
        let members: Vec<i32> = procs(dir)
            .into_iter()
            .filter(|p| Some(*p) != except)
            .collect();
        if members.is_empty() {
            break;
        }
        for p in &members {
            if !killed.contains(p) {
                killed.push(*p);
            }
        }
        if except.is_none() && v2_kill.exists() && fs::write(&v2_kill, "1").is_ok() {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        // Never freeze a cgroup this process is in: it could not thaw it.
        let frozen =
            except.is_none() && v1_freezer.exists() && fs::write(&v1_freezer, "FROZEN").is_ok();
        for p in procs(dir).into_iter().filter(|p| Some(*p) != except) {
            signal_pid(p, SignalName::Kill);
        }
        if frozen {
            let _ = fs::write(&v1_freezer, "THAWED");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    killed
}

impl CaseGroup {
    pub fn is_contained(&self) -> bool {
        self.membership.is_some()
    }

    /// The cgroup whose membership is authoritative, if any.
    pub fn membership_dir(&self) -> Option<&Path> {
        self.membership.as_deref()
    }

    /// Moves `pid` (and all its threads) into the case.
    pub fn add(&self, pid: u32) -> io::Result<()> {
        join(&self.dirs, pid)
    }

    /// Kills every member, reaps those that are this process's children, and returns them.
    pub fn kill(&self) -> Vec<i32> {
        let Some(dir) = &self.membership else {
            return Vec::new();
        };
        let killed = kill_members(dir, None);
        reap(&killed);
        killed
    }

    /// How many forks the pids limit refused.
    pub fn limit_hits(&self) -> u64 {
        self.dirs
            .iter()
            .filter_map(|d| fs::read_to_string(d.join("pids.events")).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| l.strip_prefix("max ")?.trim().parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum()
    }

    /// Removes the (now empty) cgroups.
    pub fn remove(&self) {
        for d in &self.dirs {
            let _ = fs::remove_dir(d);
        }
    }
}

/// Writes `pid` into `cgroup.procs` of each directory.
pub fn join(dirs: &[PathBuf], pid: u32) -> io::Result<()> {
    for d in dirs {
        fs::write(d.join("cgroup.procs"), pid.to_string())?;
    }
    Ok(())
}

/// Kills the other members of the case cgroup `dir` (for the supervisor, which is in it).
pub fn kill_others(dir: &Path) -> Vec<i32> {
    kill_members(dir, Some(own_pid()))
}

/// Reaps those of `pids` that are this process's children (orphans adopted by a subreaper).
pub fn reap(pids: &[i32]) {
    for _ in 0..100 {
        let mut left = false;
        for &p in pids {
            let status = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
            if let Ok(nix::sys::wait::WaitStatus::StillAlive) = status {
                left = true;
            }
        }
        if !left {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where cgroups can be made (root here), a case's members are found and killed whatever
    /// they do to escape; elsewhere the probe says there is no containment.
    #[test]
    fn a_case_cgroup_holds_and_kills_a_setsid_daemon() {
        let groups = Cgroups::probe();
        if groups.membership.is_none() {
            assert_eq!(groups.describe(None).membership, Membership::Subreaper);
            return;
        }
        let case = groups.case(&format!("unit-{}", std::process::id()), Some(64));
        assert!(case.is_contained());
        // The shell joins the case, then starts a setsid'd, environment-less daemon.
        let mut shell = std::process::Command::new("sh")
            .args([
                "-c",
                "read x; setsid env -i sleep 300 </dev/null >/dev/null 2>&1 & read y",
            ])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        case.add(shell.id()).unwrap();
        use std::io::Write as _;
        writeln!(shell.stdin.as_mut().unwrap(), "go").unwrap();
        let dir = case.membership.clone().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while procs(&dir).len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(procs(&dir).len(), 2, "the shell and its daemon");
        let killed = case.kill();
        assert_eq!(killed.len(), 2, "{killed:?}");
        assert!(procs(&dir).is_empty());
        let _ = shell.wait();
        case.remove();
        groups.remove();
    }
}
