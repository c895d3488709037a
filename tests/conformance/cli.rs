//! The command line as a user meets it: exit codes and messages.

use assert_cmd::Command;
use predicates::prelude::*;

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
}

#[test]
fn malformed_manifest_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "name = \"x\"\ncommand = \"true\"\nargz = []\n").unwrap();
    cli()
        .args(["run", "--manifest"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("bad.toml:3:1")
                .and(predicate::str::contains("unknown field `argz`")),
        );
}

#[test]
fn wrong_type_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "name = \"x\"\ncommand = 3\n").unwrap();
    cli()
        .args(["run", "--manifest"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("bad.toml:2").and(predicate::str::contains("invalid type")),
        );
}

#[test]
fn unknown_server_name_is_a_usage_error() {
    cli()
        .args([
            "run",
            "--manifest",
            "conformance/hostile",
            "--server",
            "no-such-server",
        ])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("unknown server `no-such-server`")
                .and(predicate::str::contains("hostile-baseline")),
        );
}

#[test]
fn unknown_scenario_and_revision_are_usage_errors() {
    cli()
        .args(["check", "--scenario", "nope", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown scenario `nope`"));
    cli()
        .args(["rules", "--spec", "1999-01-01"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown spec revision"));
}

/// A typo in the command is the user's: a usage error (exit 2) that says what cannot be
/// launched, and no verdict against the server.
#[test]
fn command_that_does_not_exist_is_a_usage_error() {
    cli()
        .args([
            "check",
            "--scenario",
            "close",
            "--",
            "mcp-shutdown-no-such-command-xyz",
        ])
        .assert()
        .code(2)
        .stdout(
            predicate::str::contains("spawn-failed (usage)")
                .and(predicate::str::contains("FAIL").not()),
        )
        .stderr(predicate::str::contains(
            "cannot launch `mcp-shutdown-no-such-command-xyz`: no such file",
        ));
}

#[test]
fn server_that_never_answers_gets_a_verdict() {
    cli()
        .args([
            "run",
            "--manifest",
            "conformance/hostile/hostile-silent.toml",
            "--scenario",
            "close",
            "--format",
            "json",
        ])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("\"kind\": \"handshake-timeout\"")
                .and(predicate::str::contains("Not testable")),
        );
}

#[test]
fn conformant_server_passes_with_exit_code_zero() {
    let out = cli()
        .args([
            "run",
            "--manifest",
            "conformance/hostile/hostile-baseline.toml",
            "--format",
            "json",
        ])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["spec"], "2026-07-28");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 9, "the nine default endings");
    for r in results {
        let expected = match r["scenario"].as_str().unwrap() {
            "sigterm" => "sigterm",
            "sigint" | "ctrl-c" => "sigint",
            "sighup" => "sighup",
            _ => "eof",
        };
        assert_eq!(r["stage"], expected, "{}", r["scenario"]);
        assert!(r["exit_ms"].is_number());
        assert!(
            r["checks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["status"] == "SUCCESS" || c["status"] == "INFO"),
            "{r}"
        );
    }
}

#[test]
fn fail_on_must_ignores_missed_shoulds() {
    cli()
        .args([
            "run",
            "--manifest",
            "conformance/hostile/hostile-sigterm-only.toml",
            "--scenario",
            "close",
            "--fail-on",
            "must",
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("sigterm"));
}

#[test]
fn rules_show_levels_per_revision() {
    cli()
        .args(["rules", "--spec", "2025-06-18"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"stdio-exit-on-eof\s+INFO").unwrap());
    cli()
        .args(["rules", "--spec", "2026-07-28"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"stdio-exit-on-eof\s+SHOULD").unwrap());
}

#[test]
fn bundled_baseline_loads_and_names_only_real_servers_scenarios_and_rules() {
    use mcp_shutdown_conformance::internals::{all_ids, Baseline, Catalogue, Profiles};
    use mcp_shutdown_conformance::manifest;
    let b = Baseline::load(std::path::Path::new("conformance/expected-failures.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let servers: Vec<String> = manifest::load(std::path::Path::new("conformance/servers"))
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    let rules: Vec<_> = Catalogue::bundled()
        .rules
        .into_iter()
        .map(|r| r.id)
        .collect();
    let scenarios = all_ids(&Profiles::bundled());
    assert!(!b.entries.is_empty());
    for (server, by_scenario) in &b.entries {
        assert!(
            servers.contains(server),
            "baseline names unknown server {server}"
        );
        for (sc, ids) in by_scenario {
            assert!(scenarios.contains(sc), "{server}: unknown scenario {sc}");
            for id in ids {
                assert!(rules.contains(id), "{server} {sc}: unknown rule {id}");
            }
        }
    }
}

#[test]
fn badges_are_written_one_pair_per_server() {
    let dir = tempfile::tempdir().unwrap();
    // A copy of the baseline fixture under a dotted name, as real server names have.
    let dotted = dir.path().join("dotted.toml");
    let text = std::fs::read_to_string("conformance/hostile/hostile-baseline.toml").unwrap();
    let cwd = std::fs::canonicalize("fixtures/hostile").unwrap();
    let text = text
        .replace(
            "name = \"hostile-baseline\"",
            "name = \"hostile-1.2.3-baseline\"",
        )
        .replace(
            "cwd = \"../../fixtures/hostile\"",
            &format!("cwd = {:?}", cwd.display().to_string()),
        );
    std::fs::write(&dotted, text).unwrap();
    let report = dir.path().join("r.json");
    let out = cli()
        .args(["run", "--manifest"])
        .arg(&dotted)
        .args([
            "--manifest",
            "conformance/hostile/hostile-sigterm-only.toml",
        ])
        .args(["--scenario", "close", "--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    std::fs::write(&report, out).unwrap();
    let badges = dir.path().join("badges");
    cli()
        .args(["report", "badges", "--from"])
        .arg(&report)
        .arg("--out")
        .arg(&badges)
        .assert()
        .success();
    for server in ["hostile-1.2.3-baseline", "hostile-sigterm-only"] {
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(badges.join(format!("{server}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(json["schemaVersion"], 1);
        let expected = if server == "hostile-1.2.3-baseline" {
            "green"
        } else {
            "yellow"
        };
        assert_eq!(json["color"], expected, "{server}: {json}");
        assert!(badges.join(format!("{server}.svg")).is_file());
    }
}

#[test]
fn the_same_server_scores_differently_under_two_revisions() {
    let run = |spec: &str| {
        cli()
            .args([
                "run",
                "--manifest",
                "conformance/hostile/hostile-sigterm-only.toml",
                "--scenario",
                "close",
            ])
            .args(["--spec", spec, "--format", "json"])
            .output()
            .unwrap()
    };
    let (old, new) = (run("2025-06-18"), run("2026-07-28"));
    // Before 2026-07-28 the spec has no EOF rule: reported as INFO, nothing missed.
    assert_eq!(old.status.code(), Some(0));
    assert_eq!(new.status.code(), Some(1));
    let status = |out: &std::process::Output| {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["results"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "stdio-exit-on-eof")
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(
        (status(&old), status(&new)),
        ("INFO".into(), "WARNING".into())
    );
}

#[test]
fn named_cases_run_exactly_those_cells() {
    let out = cli()
        .args([
            "run",
            "--manifest",
            "conformance/hostile",
            "--case",
            "hostile-missing-command/close",
            "--case",
            "hostile-crash-at-start/stdin-null",
            "--no-baseline",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells: Vec<(String, String)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["server"].as_str().unwrap().to_string(),
                r["scenario"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("hostile-missing-command".into(), "close".into()),
            ("hostile-crash-at-start".into(), "stdin-null".into())
        ]
    );
}

#[test]
fn a_bad_case_name_is_a_usage_error() {
    for (case, says) in [
        ("no-slash", "expected SERVER/SCENARIO"),
        ("nobody/close", "unknown server `nobody`"),
        ("hostile-silent/closed", "unknown scenario `closed`"),
    ] {
        cli()
            .args(["run", "--manifest", "conformance/hostile", "--case", case])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
}

#[test]
fn check_hosts_prints_the_host_view_for_any_command() {
    let out = cli()
        .args(["check", "--hosts", "--format", "text", "--"])
        .args(["python3", "-u", "fixtures/hostile/baseline.py"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // Named by its handshake, not `python3`; the defaults stay (`--hosts` adds).
    assert!(
        text.contains("HOSTS    hostile-baseline: ends gently on closing stdin"),
        "{text}"
    );
    for ending in [
        "exit",
        "crash",
        "stdin-null",
        "sigterm",
        "sigint",
        "inflight",
    ] {
        assert!(text.contains(ending), "{ending}: {text}");
    }
    // A server that exits on EOF is told no EOF fix, whatever hosts never end its session.
    assert!(!text.contains("non-daemon"), "{text}");
    assert!(text.contains("host left it running"), "{text}");
    for host in mcp_shutdown_conformance::internals::Profiles::bundled().hosts() {
        assert!(
            text.contains(&format!("\n  {} ", host.id)),
            "{}: {text}",
            host.id
        );
    }
    for terminal in ["terminal closed", "Ctrl-C"] {
        assert!(text.contains(terminal), "{terminal}: {text}");
    }
    // Where each ladder comes from, next to its verdict: read, measured or observed.
    for basis in ["read: microsoft/vscode", "measured: 2.1.332", "observed: "] {
        assert!(text.contains(basis), "{basis}: {text}");
    }
}

/// Outputs are checked before anything runs: an extension no format has, and `--jobs 0`,
/// are usage errors and no server is launched.
#[test]
fn bad_outputs_and_jobs_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("launched");
    let server = format!("touch '{}'; exec sleep 30", mark.display());
    cli()
        .args(["check", "--output"])
        .arg(dir.path().join("r.pdf"))
        .args(["--", "sh", "-c", &server])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no format writes .pdf files"));
    cli()
        .args(["check", "--jobs", "0", "--", "sh", "-c", &server])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("from 1 to 4096"));
    assert!(!mark.exists(), "a server was launched");
}

/// A page written to a file (into a folder made for it) is not printed too, and the exit code
/// is the verdict's.
#[test]
fn an_output_file_goes_to_its_new_folder_not_to_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("new/folder/r.html");
    let out = cli()
        .args([
            "run",
            "--manifest",
            "conformance/hostile/hostile-sigterm-only.toml",
        ])
        .args([
            "--scenario",
            "close",
            "--no-baseline",
            "--format",
            "html",
            "--output",
        ])
        .arg(&page)
        .arg("--output")
        .arg(dir.path().join("r.sarif"))
        .assert()
        .code(1)
        .get_output()
        .clone();
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>How to fix</h2>"), "no fix in the page");
    assert!(dir.path().join("r.sarif").exists());
}
