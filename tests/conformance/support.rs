use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_shutdown_conformance::internals::with_env;
use mcp_shutdown_conformance::model::{stage_after, JudgedCase, PlumbingOverride, Stage, SLICE_MS};
use mcp_shutdown_conformance::{manifest, Case, Harness};
use serde_json::{json, Value};

/// The variable every process of a test case carries (the harness adds it to the server's
/// environment), so that a test can look for anything the case left running.
pub const MARK: &str = "MCP_SHUTDOWN_TEST_MARK";

pub fn harness() -> Harness {
    Harness::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
}

/// A mark no other test case uses.
pub fn fresh_mark() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Live processes a case with `mark` left: carrying the mark, or named after it (a daemon
/// that emptied its environment names itself after the mark it had).
pub fn left_running(mark: &str) -> Vec<String> {
    let named = format!("-{mark}");
    let mut out: Vec<String> = with_env(MARK, mark)
        .into_iter()
        .map(|p| format!("pid {} (parent {}): {}", p.pid, p.ppid, p.cmdline))
        .collect();
    for p in mcp_shutdown_conformance::internals::all_processes() {
        if !p.is_zombie()
            && p.cmdline
                .split(' ')
                .next()
                .is_some_and(|a| a.ends_with(&named))
        {
            out.push(format!("pid {} (parent {}): {}", p.pid, p.ppid, p.cmdline));
        }
    }
    out
}

/// Waits (a few seconds at most) until nothing of the case with `mark` runs; panics with
/// what is left otherwise.
pub fn assert_nothing_left(mark: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = left_running(mark);
        if left.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            panic!("{what} left processes running:\n{}", left.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs one manifest × scenario for real, and checks that nothing of it is left running.
pub fn run(path: &Path, scenario: &str) -> JudgedCase {
    run_with(path, scenario, PlumbingOverride::default())
}

/// [`run`], with the server's stdio, group or command line overridden.
pub fn run_with(path: &Path, scenario: &str, plumbing: PlumbingOverride) -> JudgedCase {
    let m = manifest::load_file(path).unwrap_or_else(|e| panic!("{e}"));
    let mark = fresh_mark();
    let r = harness()
        .server_env(MARK, &mark)
        .plumbing(plumbing)
        .run_one(&Case {
            manifest: m,
            scenario: scenario.parse().unwrap_or_else(|e| panic!("{e}")),
        });
    assert_nothing_left(&mark, &format!("{} under {scenario}", path.display()));
    r
}

/// The classes a snapshot pins: stage, exit status, error kind, verdicts, leftovers and
/// stdout purity. No milliseconds, pids or paths, so snapshots hold on a loaded machine.
pub fn classes(r: &JudgedCase) -> Value {
    let checks: serde_json::Map<String, Value> = r
        .checks
        .iter()
        .map(|c| (c.id.to_string(), json!(c.status)))
        .collect();
    // Where a signal and end-of-file reach the server at the same moment (a zero wait
    // between two steps; a terminal hang-up, which signals the group as its host dies),
    // which one a multi-threaded runtime acts on first is a race: the exit status is not a
    // class there, the stage and the verdicts are.
    let racy = r.scenario.to_string() == "sighup"
        || r.ladder.as_ref().is_some_and(|l| {
            l.steps.len() > 1 && l.steps[..l.steps.len() - 1].iter().any(|s| s.wait_ms == 0)
        });
    json!({
        "server": r.server,
        "scenario": r.scenario,
        "stage": stage_class(r),
        "exit_status": if racy { None } else { r.exit_status },
        "error": r.error.as_ref().map(|e| e.kind),
        "checks": checks,
        "leftovers": r.leftover_count(),
        "stdout_violation": r.stdout.first_violation.as_ref().map(|v| v.kind),
    })
}

/// The stage as a class. A host that waits less than one accounting slice (50 ms) before
/// its next step (Codex's `exec` SIGKILLs 4–41 ms after its SIGTERM) races the server's
/// exit: own-time accounting cannot tell a server that needed the next step from a machine
/// that was busy, so either stage is what the host can do to it, and the class is the race
/// (`sigterm|sigkill`); the verdicts are classes as ever. So is a signal that comes with
/// the end-of-file (a zero wait after the stdin closes: Goose's exit closes the pipes and
/// sends the parent-death SIGTERM together): `eof|sigterm`.
fn stage_class(r: &JudgedCase) -> Value {
    let (Some(stage), Some(ladder)) = (r.stage, r.ladder.as_ref()) else {
        return json!(r.stage);
    };
    let name = |s: Stage| json!(s).as_str().unwrap_or_default().to_string();
    for j in 1..ladder.steps.len() {
        let wait = ladder.steps[j - 1].wait_ms;
        let after = stage_after(&ladder.steps[j].action);
        let before = ladder.steps[..j]
            .iter()
            .map(|s| stage_after(&s.action))
            .rfind(|s| *s != Stage::Eof)
            .unwrap_or(Stage::Eof);
        if wait >= SLICE_MS || (wait == 0 && before != Stage::Eof) {
            continue;
        }
        if before != after && (stage == before || stage == after) {
            return json!(format!("{}|{}", name(before), name(after)));
        }
    }
    json!(stage)
}

/// Snapshot name for a case: stable and file-name safe.
pub fn snapshot_name(r: &JudgedCase) -> String {
    format!("{}__{}", r.server, r.scenario.file_stem())
}

/// The rstest `#[values]` lists of endings must be literals, so they repeat the default
/// endings; this ties them together: every manifest in `dir` has a snapshot under every
/// default ending (a new ending missing from a test's list has none).
pub fn assert_snapshot_per_default_ending(dir: &str, module: &str) {
    let servers = mcp_shutdown_conformance::manifest::load(std::path::Path::new(dir)).unwrap();
    let snapshots = std::path::Path::new("tests/conformance/snapshots");
    let missing: Vec<String> = servers
        .iter()
        .flat_map(|m| {
            mcp_shutdown_conformance::model::Ending::DEFAULTS
                .iter()
                .map(move |s| format!("conformance__{module}__{}__{s}.snap", m.name))
        })
        .filter(|f| !snapshots.join(f).is_file())
        .collect();
    assert!(missing.is_empty(), "snapshots missing: {missing:?}");
}
