//! What keeps a process alive, read from `/proc` at the moment it should have exited.

use std::collections::BTreeMap;
use std::fs;

use super::procfs::live_children;
use crate::model::{Diagnostics, ProcState, Runtime};

fn fd_kind(target: &str) -> &'static str {
    if target.starts_with("pipe:") {
        "pipe"
    } else if target.starts_with("socket:") {
        "socket"
    } else if target.contains("[eventfd") {
        "eventfd"
    } else if target.contains("[timerfd") {
        "timerfd"
    } else if target.contains("[eventpoll") {
        "epoll"
    } else if target.contains("[signalfd") {
        "signalfd"
    } else if target.starts_with("anon_inode:") {
        "anon"
    } else if target.starts_with("/dev/") {
        "device"
    } else {
        "file"
    }
}

/// Recognises the runtime from the executable's file name.
pub fn runtime_of(exe: &str) -> Option<Runtime> {
    Runtime::of_exe(exe)
}

/// Thread names with counts: `["main", "node (x7)"]`.
fn counted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    let mut out = Vec::new();
    let mut i = 0;
    while i < names.len() {
        let n = names[i..].iter().take_while(|x| **x == names[i]).count();
        out.push(if n > 1 {
            format!("{} (x{n})", names[i])
        } else {
            names[i].clone()
        });
        i += n;
    }
    out
}

/// Reads what holds `pid` from `/proc`. Best effort: missing entries are skipped. The hint
/// is left empty: its wording belongs to the rules (`rules::explain::hint`).
pub fn diagnose(pid: i32) -> Diagnostics {
    let exe = fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let names: Vec<String> = fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| fs::read_to_string(e.ok()?.path().join("comm")).ok())
                .map(|s| s.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    let mut fds = BTreeMap::new();
    if let Ok(d) = fs::read_dir(format!("/proc/{pid}/fd")) {
        for e in d.filter_map(Result::ok) {
            if let Ok(t) = fs::read_link(e.path()) {
                *fds.entry(fd_kind(&t.to_string_lossy()).to_string())
                    .or_insert(0) += 1;
            }
        }
    }
    Diagnostics {
        pid,
        state: super::procfs::proc_info(pid).map(|p| ProcState::from_letter(p.state)),
        runtime: runtime_of(&exe),
        threads: names.len(),
        thread_names: counted(names),
        fds,
        children: live_children(pid),
        hint: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_kinds_and_runtimes() {
        assert_eq!(fd_kind("pipe:[123]"), "pipe");
        assert_eq!(fd_kind("anon_inode:[timerfd]"), "timerfd");
        assert_eq!(fd_kind("/tmp/x.log"), "file");
        assert_eq!(runtime_of("/usr/bin/node"), Some(Runtime::Node));
        assert_eq!(runtime_of("/x/.venv/bin/python3.11"), Some(Runtime::Python));
        assert_eq!(
            runtime_of("/usr/lib/jvm/java-17/bin/java"),
            Some(Runtime::Jvm)
        );
        assert_eq!(runtime_of("/x/target/release/server"), None);
        assert_eq!(
            counted(vec!["b".into(), "a".into(), "b".into()]),
            ["a", "b (x2)"]
        );
    }

    #[test]
    fn diagnoses_this_process() {
        let d = diagnose(crate::os::procfs::own_pid());
        assert!(d.threads >= 1);
        assert!(d.fds.values().sum::<usize>() >= 3);
    }
}
