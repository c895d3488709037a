//! Reading `/proc`: processes, trees, environments, scheduler statistics.

use std::fs;

/// One process as seen in `/proc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// `/proc/<pid>/stat` state letter; `Z` is a zombie (dead, not yet reaped).
    pub state: char,
    pub cmdline: String,
    /// When it started (clock ticks since boot): with the pid, who it is across an `exec`
    /// (which changes its command line) and unlike a reused pid.
    pub start_ticks: u64,
}

impl ProcInfo {
    pub fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }
}

/// The fields of `/proc/<pid>/stat` the suite uses: command name, state, ppid, pgid, sid,
/// start time.
fn read_stat(pid: i32) -> Option<(String, char, i32, i32, i32, u64)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain ") ".
    let close = stat.rfind(')')?;
    let comm = stat
        .get(stat.find('(')? + 1..close)
        .unwrap_or("")
        .to_string();
    let mut rest = stat.get(close + 2..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgid = rest.next()?.parse().ok()?;
    let sid = rest.next()?.parse().ok()?;
    // Field 22; `rest` began at field 3 and has given four.
    let start = rest.nth(15)?.parse().ok()?;
    Some((comm, state, ppid, pgid, sid, start))
}

/// Reads one process from `/proc`; `None` if it is gone.
pub fn proc_info(pid: i32) -> Option<ProcInfo> {
    Stat::read(pid).map(Stat::with_cmdline)
}

/// A process's `stat` alone: what the scans filter on before paying for its command line
/// (reading `cmdline` or `environ` walks the process's memory, several times a `stat`).
struct Stat {
    pid: i32,
    comm: String,
    state: char,
    ppid: i32,
    pgid: i32,
    sid: i32,
    start_ticks: u64,
}

impl Stat {
    fn read(pid: i32) -> Option<Self> {
        let (comm, state, ppid, pgid, sid, start_ticks) = read_stat(pid)?;
        Some(Self {
            pid,
            comm,
            state,
            ppid,
            pgid,
            sid,
            start_ticks,
        })
    }

    fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }

    fn with_cmdline(self) -> ProcInfo {
        let pid = self.pid;
        let cmdline = fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .map(|b| {
                let s: Vec<String> = b
                    .split(|&c| c == 0)
                    .filter(|p| !p.is_empty())
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect();
                s.join(" ")
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("[{}]", self.comm));
        ProcInfo {
            pid,
            ppid: self.ppid,
            pgid: self.pgid,
            sid: self.sid,
            state: self.state,
            cmdline,
            start_ticks: self.start_ticks,
        }
    }
}

fn all_stats() -> Vec<Stat> {
    pids().into_iter().filter_map(Stat::read).collect()
}

fn pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// Every process on the machine, from `/proc`.
pub fn all_processes() -> Vec<ProcInfo> {
    pids().into_iter().filter_map(proc_info).collect()
}

/// The thread ids of `pid` (its tasks).
pub fn threads(pid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// The live children of `parent`.
pub fn children(parent: i32) -> Vec<ProcInfo> {
    all_stats()
        .into_iter()
        .filter(|p| p.ppid == parent && !p.is_zombie())
        .map(Stat::with_cmdline)
        .collect()
}

/// All descendants of `root` (children, grandchildren, ...), zombies included, parents
/// before children.
pub fn descendants(root: i32) -> Vec<ProcInfo> {
    let mut all: Vec<Option<Stat>> = all_stats().into_iter().map(Some).collect();
    let mut out: Vec<ProcInfo> = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for slot in all.iter_mut() {
            if slot.as_ref().is_some_and(|c| c.ppid == p) {
                let child = slot.take().expect("just checked");
                frontier.push(child.pid);
                out.push(child.with_cmdline());
            }
        }
    }
    out
}

/// The live members of process group `pgid` (no command lines: this is read between a
/// trigger and the exit it times).
pub fn group_members(pgid: i32) -> Vec<i32> {
    all_stats()
        .into_iter()
        .filter(|p| p.pgid == pgid && !p.is_zombie())
        .map(|p| p.pid)
        .collect()
}

/// Live children of `pid`, by command line.
pub fn live_children(pid: i32) -> Vec<String> {
    children(pid).into_iter().map(|p| p.cmdline).collect()
}

/// Live processes (other than this one) whose environment holds `var=value`: every process
/// that inherited a marker, even one that escaped the process tree.
pub fn with_env(var: &str, value: &str) -> Vec<ProcInfo> {
    let needle = format!("{var}={value}");
    let me = own_pid();
    all_stats()
        .into_iter()
        .filter(|p| p.pid != me && !p.is_zombie())
        .filter(|p| {
            fs::read(format!("/proc/{}/environ", p.pid))
                .is_ok_and(|e| e.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
        })
        .map(Stat::with_cmdline)
        .collect()
}

/// Thread ids of `pid` (`/proc/<pid>/task`).
fn tasks(pid: i32) -> Vec<i32> {
    fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Children of every thread of `pid` (`/proc/<pid>/task/<tid>/children`): a child is listed
/// under the thread that forked it.
fn children_of(pid: i32, tids: &[i32]) -> Vec<i32> {
    tids.iter()
        .filter_map(|t| fs::read_to_string(format!("/proc/{pid}/task/{t}/children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// Is this thread running, runnable or in uninterruptible sleep (`stat` state R or D)?
fn task_busy(pid: i32, tid: i32) -> bool {
    task_state(pid, tid).is_some_and(|c| c == 'R' || c == 'D')
}

/// One thread's state letter (`R`, `S`, `D`, ...).
fn task_state(pid: i32, tid: i32) -> Option<char> {
    fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat"))
        .ok()
        .and_then(|s| s.get(s.rfind(')')? + 2..)?.chars().next())
}

/// CPU time and run-queue wait of one thread, nanoseconds (`schedstat`'s first two fields).
fn task_schedstat(pid: i32, tid: i32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
    let mut f = s.split_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// CPU time plus run-queue wait of every thread of one process, nanoseconds: how much it
/// computed or wanted to (0 for a process that is gone).
pub fn process_busy_ns(pid: i32) -> u64 {
    tasks(pid)
        .iter()
        .filter_map(|&t| task_schedstat(pid, t))
        .map(|(cpu, queued)| cpu + queued)
        .sum()
}

/// Run-queue wait of every thread of one process, nanoseconds (0 for a process that is gone).
pub fn process_queued_ns(pid: i32) -> u64 {
    tasks(pid)
        .iter()
        .filter_map(|&t| task_schedstat(pid, t))
        .map(|(_, queued)| queued)
        .sum()
}

/// Is some thread of this process running, runnable or in uninterruptible sleep? A thread
/// waiting for a CPU shows no new CPU time and no new run-queue time until it gets the CPU
/// (the kernel adds the wait then), so a slice of it reads like an idle one: only its state
/// tells it apart.
pub fn process_runnable(pid: i32) -> bool {
    tasks(pid).iter().any(|&t| task_busy(pid, t))
}

/// The machine's 1-minute load average (`/proc/loadavg`).
pub fn load_avg() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One reading of a process tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeReading {
    /// CPU time of every thread the tree ever had, nanoseconds.
    pub cpu_ns: u64,
    /// Time those threads spent runnable but waiting for a CPU, nanoseconds.
    pub queued_ns: u64,
    /// Per sample, the longest any one thread's reported wait for a CPU grew, summed over
    /// the samples: how long the tree was held back, counted once however many of its
    /// threads (a JVM's, a launcher and its server) waited side by side. The sum above
    /// counts each, and outgrows the wall clock.
    pub held_ns: u64,
    /// A thread is running, runnable, or in uninterruptible (disk) sleep right now.
    pub busy: bool,
    /// A thread is runnable and neither ran nor had a wait reported since the last sample
    /// (or is runnable and seen for the first time): it is waiting for a CPU, and the kernel adds that wait to its run-queue time only
    /// when it gets one. Until then the tree's own time reads too high.
    pub stalled: bool,
}

/// CPU time and run-queue wait of a process tree, summed over every thread the tree ever
/// had: membership is walked again at every sample (so threads and children born later
/// count), and each thread keeps its last reading after it is gone (so an exited thread or
/// child does not take its share with it).
#[derive(Debug)]
pub struct TreeSampler {
    root: i32,
    last: std::collections::HashMap<i32, (u64, u64)>,
    held_ns: u64,
}

impl TreeSampler {
    pub fn new(root: i32) -> Self {
        Self {
            root,
            last: std::collections::HashMap::new(),
            held_ns: 0,
        }
    }

    /// The tree as it is now.
    pub fn sample(&mut self) -> TreeReading {
        let mut pending = vec![self.root];
        let mut seen: Vec<i32> = Vec::new();
        let (mut busy, mut stalled) = (false, false);
        let mut longest = 0;
        while let Some(p) = pending.pop() {
            if seen.contains(&p) {
                continue;
            }
            seen.push(p);
            let tids = tasks(p);
            for &t in &tids {
                let state = task_state(p, t);
                if let Some(v) = task_schedstat(p, t) {
                    let before = self.last.insert(t, v);
                    longest = longest.max(v.1.saturating_sub(before.map_or(0, |b| b.1)));
                    // A thread first seen runnable may not have run yet: its wait is
                    // reported only when it does.
                    stalled = stalled || (state == Some('R') && before.is_none_or(|b| b == v));
                }
                busy = busy || matches!(state, Some('R' | 'D'));
            }
            pending.extend(children_of(p, &tids));
        }
        let (cpu_ns, queued_ns) = self
            .last
            .values()
            .fold((0, 0), |(c, q), (tc, tq)| (c + tc, q + tq));
        self.held_ns += longest;
        TreeReading {
            cpu_ns,
            queued_ns,
            held_ns: self.held_ns,
            busy,
            stalled,
        }
    }
}

/// The kernel's release (`/proc/sys/kernel/osrelease`), empty when unreadable.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This process's pid.
pub fn own_pid() -> i32 {
    nix::unistd::getpid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SignalName;
    use crate::os::signals::signal_pid;
    use std::time::Duration;

    #[test]
    fn descendants_include_grandchildren() {
        let mut c = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        // Until the forked child has exec'd, its command line is still the shell's.
        let has_sleep = || {
            descendants(c.id() as i32)
                .iter()
                .any(|p| p.cmdline.starts_with("sleep"))
        };
        while !has_sleep() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let d = descendants(c.id() as i32);
        assert!(d.iter().any(|p| p.cmdline.starts_with("sleep")), "{d:?}");
        let mut sampler = TreeSampler::new(c.id() as i32);
        assert!(sampler.sample().cpu_ns > 0, "the tree has used some CPU");
        for p in &d {
            signal_pid(p.pid, SignalName::Kill);
        }
        let _ = c.kill();
        let _ = c.wait();
    }

    /// Busy shells, twice as many as CPUs, killed when dropped (also on a failed assert).
    struct CpuHog(Vec<std::process::Child>);

    impl CpuHog {
        fn start() -> Self {
            let n = 2 * std::thread::available_parallelism().map_or(2, |n| n.get());
            Self(
                (0..n)
                    .map(|_| {
                        std::process::Command::new("sh")
                            .args(["-c", "while :; do :; done"])
                            .spawn()
                            .unwrap()
                    })
                    .collect(),
            )
        }
    }

    impl Drop for CpuHog {
        fn drop(&mut self) {
            for c in &mut self.0 {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    /// Samples `cmd`'s tree from its launch until it exits, as a supervisor does.
    fn queueing_of(cmd: &mut std::process::Command) -> TreeReading {
        let mut child = cmd.spawn().unwrap();
        let mut sampler = TreeSampler::new(child.id() as i32);
        let mut last = sampler.sample();
        while child.try_wait().unwrap().is_none() {
            last = sampler.sample();
            std::thread::sleep(Duration::from_millis(20));
        }
        last
    }

    /// Busy threads of one process until it has used 0.3 s of CPU (however loaded the
    /// machine): every thread's queueing counts, not the main thread's.
    const THREADS: &str = "import threading, time\n\
        def spin():\n    while time.process_time() < 0.3: pass\n\
        ts = [threading.Thread(target=spin) for _ in range(4)]\n\
        [t.start() for t in ts]; [t.join() for t in ts]\n";

    /// Under a CPU hog, a multi-threaded server and a launcher whose child does the work
    /// (`sh -c 'python3 …'`, as `npx` and `uvx` are) both show time spent waiting for a CPU:
    /// the window that excuses queueing must see it in every shape of tree.
    #[test]
    fn queueing_is_seen_in_threads_and_in_a_launchers_child() {
        let _hog = CpuHog::start();
        let threads = queueing_of(std::process::Command::new("python3").args(["-c", THREADS]));
        assert!(threads.queued_ns > 0, "threads: {threads:?}");
        // Held back is counted once for threads that wait side by side: never more than
        // their sum.
        assert!(
            threads.held_ns > 0 && threads.held_ns <= threads.queued_ns,
            "threads: {threads:?}"
        );
        let script = format!("python3 -c '{THREADS}'; exit 0");
        let launched = queueing_of(std::process::Command::new("sh").args(["-c", &script]));
        assert!(launched.queued_ns > 0, "launcher: {launched:?}");
        // The shell itself only waits: the CPU (and the queueing) are its child's.
        assert!(launched.cpu_ns > 250_000_000, "launcher: {launched:?}");
    }
}
