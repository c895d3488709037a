//! Host profiles and launch plumbing, run for real: the reference servers under every host's
//! ladder, the reference fixed server over every plumbing, and the one fixture whose verdict
//! depends on whether its stdin is a pipe or a socket.

use std::path::{Path, PathBuf};

use mcp_shutdown_conformance::internals::Profiles;
use mcp_shutdown_conformance::model::{ErrorKind, PlumbingOverride, Stage};
use rstest::rstest;

use crate::support::{classes, run, run_with, snapshot_name};

/// Every host profile, as literals (rstest needs them); tied to the catalogue below.
const HOSTS: [&str; 35] = [
    "vscode",
    "vscode-quit",
    "codex",
    "codex-exec",
    "gemini-cli",
    "gemini-cli-terminal-closed",
    "gemini-cli-sigkill",
    "qwen-code",
    "qwen-code-terminal-closed",
    "qwen-code-sigterm",
    "qwen-code-prompt",
    "opencode",
    "opencode-ctrl-c-twice",
    "opencode-terminal-closed",
    "opencode-sigterm",
    "opencode-sigkill",
    "continue-cli",
    "continue-cli-terminal-closed",
    "copilot-cli",
    "copilot-cli-terminal-closed",
    "copilot-cli-sigterm",
    "cline-cli-prompt",
    "cline-cli-ctrl-c-twice",
    "cline-cli-terminal-closed",
    "cline-cli-sigkill",
    "zed",
    "zed-legacy",
    "goose",
    "goose-quit",
    "ts-legacy",
    "continue",
    "claude-code",
    "claude-code-terminal-closed",
    "claude-code-sigkill",
    "claude-desktop",
];

#[rstest]
fn reference_server_under_host_profile(
    #[files("conformance/servers/node-1.30.0-*.toml")] manifest: PathBuf,
    #[values(
        "close:vscode",
        "close:vscode-quit",
        "close:codex",
        "close:codex-exec",
        "close:gemini-cli",
        "close:gemini-cli-terminal-closed",
        "close:gemini-cli-sigkill",
        "close:qwen-code",
        "close:qwen-code-terminal-closed",
        "close:qwen-code-sigterm",
        "close:qwen-code-prompt",
        "close:opencode",
        "close:opencode-ctrl-c-twice",
        "close:opencode-terminal-closed",
        "close:opencode-sigterm",
        "close:opencode-sigkill",
        "close:continue-cli",
        "close:continue-cli-terminal-closed",
        "close:copilot-cli",
        "close:copilot-cli-terminal-closed",
        "close:copilot-cli-sigterm",
        "close:cline-cli-prompt",
        "close:cline-cli-ctrl-c-twice",
        "close:cline-cli-terminal-closed",
        "close:cline-cli-sigkill",
        "close:zed",
        "close:zed-legacy",
        "close:goose",
        "close:goose-quit",
        "close:ts-legacy",
        "close:continue",
        "close:claude-code",
        "close:claude-code-terminal-closed",
        "close:claude-code-sigkill",
        "close:claude-desktop"
    )]
    scenario: &str,
) {
    let r = run(&manifest, scenario);
    insta::assert_yaml_snapshot!(snapshot_name(&r), classes(&r));
}

#[test]
fn every_host_profile_is_run_above() {
    let bundled: Vec<String> = Profiles::bundled()
        .hosts()
        .map(|p| p.id.to_string())
        .collect();
    assert_eq!(bundled, HOSTS);
}

fn plumbing(stdio: &str, group: &str, via: &str) -> PlumbingOverride {
    let kebab = |s: &str| serde_json::Value::String(s.into());
    PlumbingOverride {
        stdio: Some(serde_json::from_value(kebab(stdio)).unwrap()),
        group: Some(serde_json::from_value(kebab(group)).unwrap()),
        via: Some(serde_json::from_value(kebab(via)).unwrap()),
    }
}

#[rstest]
fn the_reference_fixed_server_exits_on_eof_over_any_plumbing(
    #[values("pipes", "socketpair")] stdio: &str,
    #[values("host", "own", "session")] group: &str,
    #[values("direct", "shell")] via: &str,
) {
    let m = Path::new("conformance/servers/node-1.32.2-fixed.toml");
    let r = run_with(m, "close", plumbing(stdio, group, via));
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.stage, Some(Stage::Eof), "{stdio}/{group}/{via}");
    assert_eq!(r.leftover_count(), 0, "{:?}", r.leftovers);
    let planned = r.ladder.as_ref().unwrap().plumbing;
    assert_eq!(planned, plumbing(stdio, group, via).apply(planned));
}

#[test]
fn a_server_that_opens_dev_stdin_works_on_pipes_and_fails_on_a_socketpair() {
    let m = Path::new("conformance/hostile/hostile-devstdin.toml");
    let pipes = run_with(m, "close", plumbing("pipes", "own", "direct"));
    assert!(pipes.error.is_none(), "{:?}", pipes.error);
    assert_eq!(pipes.stage, Some(Stage::Eof));
    let socket = run_with(m, "close", plumbing("socketpair", "own", "direct"));
    let e = socket
        .error
        .as_ref()
        .expect("no handshake over a socketpair");
    assert_eq!(e.kind, ErrorKind::ExitedBeforeHandshake);
    assert!(
        e.message.contains("No such device or address"),
        "{}",
        e.message
    );
    // The host whose plumbing is a socketpair sees the same.
    let vscode = run(m, "close:vscode");
    assert_eq!(
        vscode.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::ExitedBeforeHandshake)
    );
}

/// Real hosts, installed from npm into the cache (once) and driven by `host measure`:
/// the measured ladder of each tested path must be the one its bundled profile carries.
/// A host that cannot be installed is a failure with the reason under CI=true.
fn measure(test: &str, host: &str, paths: &[&str]) -> Option<String> {
    if which("npm").is_none() {
        crate::skip::missing(test, "npm", "not on PATH");
        return None;
    }
    let mut cmd = assert_cmd::Command::cargo_bin("mcp-shutdown").unwrap();
    cmd.args(["host", "measure", host, "--repeats", "2"]);
    for p in paths {
        cmd.args(["--path", p]);
    }
    let out = cmd
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() && unreachable_registry(&stderr) {
        crate::skip::missing(test, "npm", &format!("the host did not install: {stderr}"));
        return None;
    }
    // Installed, and the measurement failed: the suite's fault, never a skip.
    assert!(
        out.status.success(),
        "`host measure {host}` failed: {stderr}"
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned() + &stderr)
}

/// The registry could not give the host (no network, no such package there): the only
/// failure a host test may skip for outside CI.
fn unreachable_registry(stderr: &str) -> bool {
    stderr.contains("cannot install") || stderr.contains("registry:")
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(tool))
            .find(|f| f.is_file())
    })
}

fn steps_line(toml: &str, id: &str) -> String {
    let start = toml
        .find(&format!("id = \"{id}\"\n"))
        .unwrap_or_else(|| panic!("no profile {id} in:\n{toml}"));
    let rest = &toml[start..];
    let steps = &rest[rest.find("steps = [").expect("steps")..];
    let end = steps.find("\n]").expect("end of steps");
    steps[..end]
        .lines()
        .skip(1)
        .map(|l| l.split(", wait_ms").next().unwrap_or("").trim().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn claude_code_measures_sigint_sigterm_sigkill_to_the_pid_and_walks_away_only_when_killed() {
    let Some(out) = measure(
        "hosts::claude_code_measures",
        "claude-code",
        &["mcp-list", "quit-command", "sigkill"],
    ) else {
        return;
    };
    assert_eq!(
        steps_line(&out, "claude-code"),
        "{ do = \"sigint\" { do = \"sigterm\" { do = \"sigkill\"",
        "{out}"
    );
    assert!(
        out.contains("triggers = [\"mcp-list\", \"quit-command\"]"),
        "{out}"
    );
    assert_eq!(
        steps_line(&out, "claude-code-sigkill"),
        "{ do = \"close-pipes\"",
        "{out}"
    );
    assert!(
        out.contains("stdio = \"socketpair\", group = \"host\""),
        "{out}"
    );
}

#[test]
fn codex_exec_kills_at_once_and_its_tui_leaves_the_server_to_its_daemon() {
    let Some(out) = measure("hosts::codex_measures", "codex", &["exec", "quit-command"]) else {
        return;
    };
    // The SIGKILL comes tens of ms after the SIGTERM: on a loaded machine the recorder may
    // not run in between to read its EOF, a race of the recorder's, not the host's.
    let exec = steps_line(&out, "codex-exec");
    assert!(
        [
            "{ do = \"sigterm\", to = \"group\" { do = \"close-stdin\" { do = \"sigkill\"",
            "{ do = \"sigterm\", to = \"group\" { do = \"sigkill\"",
        ]
        .contains(&exec.as_str()),
        "{out}"
    );
    assert!(out.contains("daemon = \"codex\""), "{out}");
    assert_eq!(steps_line(&out, "codex"), "{ do = \"nothing\"", "{out}");
    assert!(
        !out.contains("app-server --listen") || out.contains("killed by pid"),
        "{out}"
    );
}

#[test]
fn copilot_cli_sends_sigterm_to_the_tree_then_sigkill_and_its_launcher_signalled_sends_nothing() {
    let Some(out) = measure(
        "hosts::copilot_cli_measures",
        "copilot-cli",
        &["quit-command", "sigterm"],
    ) else {
        return;
    };
    // Whether the recorder lives to see its pipes close before the SIGKILL ~2 ms later is a
    // race of the recorder's, not the host's: the ladder's ends are the host's.
    let quit = steps_line(&out, "copilot-cli");
    assert!(
        quit.starts_with("{ do = \"sigterm\", to = \"tree\"")
            && quit.ends_with("{ do = \"sigkill\""),
        "{out}"
    );
    assert_eq!(
        steps_line(&out, "copilot-cli-sigterm"),
        "{ do = \"nothing\"",
        "{out}"
    );
    assert!(out.contains("abandons = true"), "{out}");
}

#[test]
fn an_unknown_host_lists_the_known_ones() {
    let out = assert_cmd::Command::cargo_bin("mcp-shutdown")
        .unwrap()
        .args(["host", "measure", "no-such-host"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("known: claude-code, codex"), "{err}");
}

/// `check --real-host`: the user's server under the real host binary, judged by the rules
/// and reported like any run. `None` when the host cannot be installed (a failure under
/// CI=true).
fn under_real_host(
    test: &str,
    host: &str,
    path: &str,
    server: &[&str],
) -> Option<(i32, serde_json::Value)> {
    if which("npm").is_none() {
        crate::skip::missing(test, "npm", "not on PATH");
        return None;
    }
    let out = assert_cmd::Command::cargo_bin("mcp-shutdown")
        .unwrap()
        .args([
            "check",
            "--format",
            "json",
            "--real-host",
            host,
            "--path",
            path,
            "--",
        ])
        .args(server)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    if code == 2 && unreachable_registry(&stderr) {
        crate::skip::missing(test, "npm", &format!("the host did not install: {stderr}"));
        return None;
    }
    let mut report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: exit {code}, stderr:\n{stderr}"));
    report["stderr"] = stderr.into();
    Some((code, report))
}

/// What a failed assertion needs to say about a real-host run, in a few lines (a whole
/// report is cut off in CI's log): each case's stage, error, signals and checks, and what
/// the command printed.
fn brief(code: i32, report: &serde_json::Value) -> String {
    let mut out = format!("exit {code}\n");
    for c in report["results"].as_array().into_iter().flatten() {
        let checks: Vec<String> = c["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|k| format!("{}={}", k["id"], k["status"]))
            .collect();
        out += &format!(
            "{} stage={} exit_ms={} error={} signals={} leftovers={} note={}\n  {}\n",
            c["server"],
            c["stage"],
            c["exit_ms"],
            c["error"],
            c["real_host"]["signals"],
            c["leftovers"],
            c["note"],
            checks.join(" ")
        );
    }
    out + "stderr:\n" + report["stderr"].as_str().unwrap_or("")
}

fn status_of<'a>(case: &'a serde_json::Value, rule: &str) -> &'a str {
    case["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == rule)
        .and_then(|c| c["status"].as_str())
        .unwrap_or("absent")
}

#[test]
fn a_server_under_the_real_claude_code_is_judged_by_the_rules() {
    let test = "hosts::a_server_under_the_real_claude_code";
    // Exits at end of input, and so at Claude Code's first signal, SIGINT.
    let Some((code, report)) = under_real_host(
        test,
        "claude-code",
        "quit-command",
        &["node", "fixtures/tiny/server.js"],
    ) else {
        return;
    };
    assert_eq!(code, 0, "{}", brief(code, &report));
    let case = &report["results"][0];
    assert_eq!(case["scenario"], "close:claude-code", "{case:#}");
    assert_eq!(case["real_host"]["trigger"], "quit-command", "{case:#}");
    assert_eq!(case["stage"], "sigint", "{case:#}");
    // Seen, not guessed from the time: the host's own SIGINT.
    let first = &case["real_host"]["signals"][0];
    assert_eq!(first["signal"], "SIGINT", "{case:#}");
    assert_eq!(first["from"], "host", "{case:#}");
    assert_eq!(
        status_of(case, "process-no-leaked-descendants"),
        "SUCCESS",
        "{case:#}"
    );
    // Its stdout is the host's: not judged.
    assert_eq!(
        status_of(case, "stdio-stdout-only-mcp"),
        "absent",
        "{case:#}"
    );

    // Leaves `sleep 600` behind: a finding against the server, and nothing left running.
    let Some((code, report)) = under_real_host(
        test,
        "claude-code",
        "quit-command",
        &["python3", "fixtures/hostile/leaks_child.py"],
    ) else {
        return;
    };
    assert_eq!(code, 1, "{}", brief(code, &report));
    let case = &report["results"][0];
    assert_eq!(
        status_of(case, "process-no-leaked-descendants"),
        "WARNING",
        "{case:#}"
    );
    let left = case["leftovers"][0]["pid"].as_i64().unwrap() as i32;
    assert!(
        !std::path::Path::new(&format!("/proc/{left}")).exists()
            || std::fs::read_to_string(format!("/proc/{left}/stat"))
                .is_ok_and(|s| s.contains(") Z")),
        "pid {left} still running"
    );
}

#[test]
fn a_quit_path_the_host_lacks_is_a_usage_error_naming_its_paths() {
    let out = assert_cmd::Command::cargo_bin("mcp-shutdown")
        .unwrap()
        .args(["check", "--real-host", "codex", "--path", "mcp-list", "--"])
        .args(["node", "fixtures/tiny/server.js"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("its paths: exec, quit-command"), "{err}");
}

/// Pids whose command line contains `needle`.
fn pids_running(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains(needle) && !stat.contains(") Z")
        })
        .collect()
}

#[test]
fn sigterm_of_check_under_a_real_host_leaves_nothing_running() {
    if which("npm").is_none() {
        crate::skip::missing(
            "hosts::sigterm_of_check_under_a_real_host",
            "npm",
            "not on PATH",
        );
        return;
    }
    // A command line of its own, so the test finds only its own server.
    let tag = format!("realhost-sigterm-{}", std::process::id());
    let bin = assert_cmd::cargo::cargo_bin("mcp-shutdown");
    let mut child = std::process::Command::new(bin)
        .args([
            "check",
            "--real-host",
            "claude-code",
            "--path",
            "quit-command",
            "--",
        ])
        .args(["python3", "fixtures/hostile/immortal.py", &tag])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The server itself: not the harness (whose own command line names the tag too), nor
    // the `sh -c 'cd DIR && exec CMD'` the host starts before it becomes the server.
    let harness = child.id() as i32;
    let server = || -> Vec<i32> {
        pids_running(&tag)
            .into_iter()
            .filter(|p| *p != harness)
            .filter(|p| {
                !std::fs::read(format!("/proc/{p}/cmdline"))
                    .unwrap_or_default()
                    .starts_with(b"/bin/sh")
            })
            .collect()
    };
    let end = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while server().is_empty() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!server().is_empty(), "the host never started the server");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(server(), Vec::<i32>::new(), "left running");
}
