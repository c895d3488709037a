//! The harness never leaks, even when it is interrupted or killed mid-run: every process a
//! run started (supervisors, stand-in clients, servers, their children, a setsid daemon,
//! orphans) is gone shortly after. Processes of one run are found by a marker in the
//! environment they all inherit, so tests running at the same time do not interfere.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rstest::rstest;

const MARK: &str = "MCP_SHUTDOWN_TEST_MARK";

/// Live (non-zombie) processes whose environment carries `MARK=mark`.
fn marked(mark: &str) -> Vec<(i32, String)> {
    mcp_shutdown_conformance::internals::with_env(MARK, mark)
        .into_iter()
        .map(|p| (p.pid, p.cmdline))
        .collect()
}

fn wait_for(what: &str, timeout: Duration, mark: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ok() {
        if Instant::now() >= deadline {
            let left: Vec<String> = marked(mark)
                .into_iter()
                .map(|(pid, cmd)| {
                    let ppid =
                        mcp_shutdown_conformance::internals::proc_info(pid).map_or(0, |p| p.ppid);
                    format!("pid {pid} (parent {ppid}): {cmd}")
                })
                .collect();
            panic!(
                "timed out waiting for {what}; marked processes:\n{}",
                left.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[rstest]
#[case::sigint(libc_signal::INT)]
#[case::sigterm(libc_signal::TERM)]
#[case::sigkill(libc_signal::KILL)]
fn killing_the_harness_mid_run_leaves_nothing(#[case] signal: i32) {
    let mark = format!("{signal}-{}", std::process::id());
    let mut harness = Command::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
        .args(["run", "--format", "json"])
        .args(["--manifest", "conformance/hostile/hostile-daemon.toml"])
        .args(["--manifest", "conformance/hostile/hostile-immortal.toml"])
        .args(["--manifest", "conformance/hostile/hostile-leaks-child.toml"])
        .args(["--manifest", "conformance/hostile/hostile-sh-launcher.toml"])
        // Long windows keep every case's orphans (observe) and leaked daemon (prompt: how
        // long descendants get to go away) alive until the harness is killed, so the state
        // below is reached however slowly a loaded machine starts the cases. With short
        // ones, the daemon cases could end before the immortal server was orphaned.
        .args(["--scenario", "exit", "--scenario", "crash"])
        .args(["--observe-ms", "60000", "--prompt-ms", "60000"])
        .env(MARK, &mark)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Mid-run: a server already orphaned (its client is dead and it was reparented to the
    // case's supervisor) and a double-forked setsid daemon alive.
    wait_for("an orphaned server", Duration::from_secs(60), &mark, || {
        let procs = marked(&mark);
        let parent_of =
            |pid: i32| mcp_shutdown_conformance::internals::proc_info(pid).map_or(0, |p| p.ppid);
        let is_supervisor = |pid: i32| procs.iter().any(|(p, c)| *p == pid && c.contains("__case"));
        procs
            .iter()
            .any(|(p, c)| c.contains("immortal.py") && is_supervisor(parent_of(*p)))
            && procs.iter().any(|(_, c)| c.contains("daemon.py"))
    });
    assert!(!marked(&mark).is_empty());
    unsafe_free_kill(harness.id() as i32, signal);
    let status = harness.wait().unwrap();
    if signal != libc_signal::KILL {
        assert_eq!(
            status.code(),
            Some(128 + signal),
            "an interrupted run exits 128 + n"
        );
    }
    wait_for(
        "every marked process to go away",
        Duration::from_secs(10),
        &mark,
        || marked(&mark).is_empty(),
    );
}

fn unsafe_free_kill(pid: i32, signal: i32) {
    let sig = match signal {
        libc_signal::HUP => mcp_shutdown_conformance::model::SignalName::Hup,
        libc_signal::INT => mcp_shutdown_conformance::model::SignalName::Int,
        libc_signal::TERM => mcp_shutdown_conformance::model::SignalName::Term,
        _ => mcp_shutdown_conformance::model::SignalName::Kill,
    };
    mcp_shutdown_conformance::internals::signal_pid(pid, sig);
}

mod libc_signal {
    pub const HUP: i32 = 1;
    pub const INT: i32 = 2;
    pub const KILL: i32 = 9;
    pub const TERM: i32 = 15;
}

/// A fixture whose setup is slow, on a cold cache: the signal kills the setup's whole group
/// at once (its `sleep 30` never finishes), nothing else starts, no stamp says it is set up,
/// and the run exits `128 + n`. The bounds are generous: what is asserted is that the run
/// did not wait for the setup, not how fast it stopped.
#[rstest]
#[case::sigint(libc_signal::INT)]
#[case::sigterm(libc_signal::TERM)]
#[case::sighup(libc_signal::HUP)]
fn an_interrupt_kills_a_running_setup_and_stamps_nothing(#[case] signal: i32) {
    let mark = format!("setup-{signal}-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("slow.toml"),
        "name = \"slow-setup\"\ncommand = \"sh\"\nargs = [\"-c\", \"cat\"]\n\n\
         [setup]\ncommand = [\"sh\", \"-c\", \"sleep 30 && touch out\"]\noutputs = [\"out\"]\n",
    )
    .unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
        .args(["run", "--format", "json", "--no-baseline", "--manifest"])
        .arg(dir.path().join("slow.toml"))
        .env(MARK, &mark)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sleeping = || marked(&mark).iter().any(|(_, c)| c.contains("sleep 30"));
    wait_for(
        "the setup to start",
        Duration::from_secs(60),
        &mark,
        sleeping,
    );
    unsafe_free_kill(run.id() as i32, signal);
    let status = run.wait().unwrap();
    // A run that waited for its setup would find `out` written (below): no clock needed.
    assert_eq!(status.code(), Some(128 + signal), "{status:?}");
    wait_for(
        "the setup's processes to go away",
        Duration::from_secs(10),
        &mark,
        || marked(&mark).is_empty(),
    );
    for left in [".mcp-shutdown-setup.stamp", "out"] {
        assert!(!dir.path().join(left).exists(), "{left} was written");
    }
}

/// A server that SIGKILLs the harness itself (the parent of its supervisor): the run dies,
/// but every supervisor sees its lifeline close and ends its tree, and the cgroups of a
/// harness that is gone are swept by the next run.
#[test]
fn a_server_that_kills_the_harness_leaves_nothing() {
    let mark = format!("kills-harness-{}", std::process::id());
    let status = Command::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
        .args(["run", "--format", "json", "--no-baseline"])
        .args([
            "--manifest",
            "conformance/hostile-harness/hostile-kills-harness.toml",
        ])
        // One case: with the harness gone, a second case's server would look for the
        // harness above its orphaned supervisor and find this test process (a subreaper).
        .args(["--scenario", "close"])
        .env(MARK, &mark)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(9),
        "the server killed the harness: {status:?}"
    );
    wait_for(
        "every marked process to go away",
        Duration::from_secs(15),
        &mark,
        || marked(&mark).is_empty(),
    );
}
