//! Our `--format conformance` output and our YAML baseline judged by the official MCP
//! conformance suite's own code, not by a restatement of it: `@modelcontextprotocol/
//! conformance` is installed from npm into the user's cache, and its result reader, its
//! baseline loader and evaluation, and its tier-check scorer are loaded from the installed
//! bundle (a node script finds them there by what they do and imports them). Fed a passing
//! and a failing server, they must conclude what we do.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mcp_shutdown_conformance::internals::setup::on_path;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The official package, pinned: the script finds its functions in the published bundle.
const OFFICIAL: &str = "0.1.16";
/// It reads results with `fs.globSync` (Node 22); installed from npm when `node` is older.
const NODE: &str = "22";

fn said(out: &Output) -> String {
    format!(
        "{}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn bounded(seconds: u32, program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new("timeout");
    c.args(["-k", "5", &seconds.to_string()])
        .arg(program)
        .env("npm_config_update_notifier", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_audit", "false")
        .env_remove("MCP_SHUTDOWN_BIN")
        .stdin(Stdio::null());
    c
}

/// The user's cache, as the tool resolves it.
fn user_cache() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("MCP_SHUTDOWN_CACHE").unwrap_or_else(|| {
        env("XDG_CACHE_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".cache")))
            .unwrap_or_else(std::env::temp_dir)
            .join("mcp-shutdown")
    })
}

fn node_major(node: &Path) -> Option<u32> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let v = String::from_utf8_lossy(&out.stdout);
    v.trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The official package (and a Node it runs on) in the user's cache: (node, package dir).
fn official() -> Option<(PathBuf, PathBuf)> {
    if !on_path("npm") || !on_path("node") {
        crate::skip::missing(
            "official",
            "npm",
            "npm and node run the official suite's code",
        );
        return None;
    }
    let dir = user_cache().join(format!("test-tools/official-conformance-{OFFICIAL}"));
    let package = dir.join("node_modules/@modelcontextprotocol/conformance");
    let system = PathBuf::from("node");
    let need_node = node_major(&system).is_none_or(|m| m < NODE.parse().unwrap());
    let node = if need_node {
        dir.join("node_modules/.bin/node")
    } else {
        system
    };
    fs::create_dir_all(&dir).unwrap();
    let lock = fs::File::create(dir.with_extension("lock")).unwrap();
    let _held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .unwrap();
    if !package.join("dist/index.js").is_file() || (need_node && !node.is_file()) {
        if !dir.join("package.json").is_file() {
            fs::write(dir.join("package.json"), "{\"private\": true}\n").unwrap();
        }
        let mut install = bounded(600, "npm");
        install
            .args(["install", "--save-exact", "--no-audit", "--no-fund"])
            .arg(format!("@modelcontextprotocol/conformance@{OFFICIAL}"))
            .current_dir(&dir);
        if need_node {
            install.arg(format!("node@{NODE}"));
        }
        let out = install.output().unwrap();
        assert!(out.status.success(), "npm install: {}", said(&out));
    }
    Some((node, package))
}

/// Finds the official functions in the installed bundle by what they do, exports them from
/// a copy beside it (so its imports resolve) without running its command line, and applies
/// them to a results directory and a baseline. Prints one JSON object.
const JUDGE: &str = r#"
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkg, results, baseline] = process.argv.slice(2);
const src = readFileSync(join(pkg, 'dist/index.js'), 'utf-8');
// The name of the function whose body holds `marker`.
function around(marker) {
  const at = src.indexOf(marker);
  if (at < 0) throw new Error(`official bundle: no ${marker}`);
  const fns = [...src.slice(0, at).matchAll(/function\s+([\w$]+)\s*\(/g)];
  return fns[fns.length - 1][1];
}
// tier-check's server path: `return score(read(dir), scenarios, 'server')`.
const tier = src.match(/return ([\w$]+)\(([\w$]+)\([\w$]+\),[\w$]+,`server`\)/);
if (!tier) throw new Error('official bundle: no tier-check server scoring');
const [, score, read] = tier;
if (around('`**/checks.json`') !== read) throw new Error('official bundle: reader mismatch');
const names = {
  readResults: read,
  scoreTier: score,
  loadExpectedFailures: around('Invalid expected-failures file: expected an object'),
  evaluateBaseline: around('staleEntries:'),
  stripTimestamp: around('-\\d{4}-\\d{2}-\\d{2}T'),
};
const tail = src.match(/[\w$]+\.parse\(\);export\{\};?\s*$/);
if (!tail) throw new Error('official bundle: no command-line tail');
const exports = Object.entries(names).map(([k, v]) => `${v} as ${k}`).join(',');
const api = join(pkg, 'dist', 'official-api.mjs');
// The tail ends a comma expression: `0` stands in for the command line's `parse()`.
writeFileSync(api, src.slice(0, tail.index) + `0;export{${exports}};`);
const o = await import(pathToFileURL(api).href);

const read_ = o.readResults(results);
const tierScore = o.scoreTier(read_, [], 'server');
// The scenarios as the official runner hands them to the baseline: name and checks.
const scenarios = readdirSync(results).map((d) => ({
  scenario: o.stripTimestamp(d).replace(/^server-/, ''),
  checks: JSON.parse(readFileSync(join(results, d, 'checks.json'), 'utf-8')),
}));
const expected = await o.loadExpectedFailures(baseline);
const evaluation = o.evaluateBaseline(scenarios, expected.server ?? []);
console.log(JSON.stringify({ names, tier: tierScore, baseline: evaluation }));
"#;

fn judge(node: &Path, package: &Path, results: &Path, baseline: &Path) -> Value {
    let script = results.with_extension("judge.mjs");
    fs::write(&script, JUDGE).unwrap();
    let out = bounded(120, node)
        .arg(&script)
        .arg(package)
        .arg(results)
        .arg(baseline)
        .output()
        .unwrap();
    assert!(out.status.success(), "the official code: {}", said(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said(&out)))
}

/// `run --scenario close` of `manifests` in the conformance layout (and the YAML baseline
/// that makes it pass, when asked for); returns our exit code.
fn run(manifests: &[PathBuf], out: &Path, extra: &[&str]) -> Output {
    let mut c = bounded(300, BIN);
    c.args([
        "run",
        "--scenario",
        "close",
        "--grace-ms",
        "300",
        "--observe-ms",
        "500",
    ]);
    for m in manifests {
        c.arg("--manifest").arg(m);
    }
    c.args(["--format", "conformance", "--output"])
        .arg(out)
        .args(extra)
        .current_dir(ROOT);
    c.output().unwrap()
}

#[test]
fn the_official_code_reads_our_results_and_baseline_as_its_own() {
    let Some((node, package)) = official() else {
        return;
    };
    let d = tempfile::Builder::new()
        .prefix("official-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let hostile = Path::new(ROOT).join("conformance/hostile");
    let good = hostile.join("hostile-baseline.toml");
    let bad = hostile.join("hostile-stdout-log.toml");

    // A passing and a failing server (stdout-log misses a MUST: a FAILURE check).
    let both = d.path().join("both");
    let base = d.path().join("expected-failures.yaml");
    let ran = run(
        &[good.clone(), bad.clone()],
        &both,
        &[
            "--no-baseline",
            "--write-expected-failures",
            base.to_str().unwrap(),
        ],
    );
    assert_eq!(ran.status.code(), Some(1), "{}", said(&ran));
    let yaml = fs::read_to_string(&base).unwrap();
    assert!(yaml.contains("- hostile-stdout-log+close\n"), "{yaml}");
    let v = judge(&node, &package, &both, &base);
    // The tier scorer: one scenario of two passes.
    assert_eq!(v["tier"]["passed"], 1, "{v:#}");
    assert_eq!(v["tier"]["failed"], 1, "{v:#}");
    assert_eq!(v["tier"]["pass_rate"], 0.5, "{v:#}");
    assert_eq!(v["tier"]["status"], "fail", "{v:#}");
    // The baseline we wrote passes the official evaluation: the failure is expected.
    assert_eq!(v["baseline"]["exitCode"], 0, "{v:#}");
    assert_eq!(
        v["baseline"]["expectedFailures"],
        serde_json::json!(["hostile-stdout-log+close"]),
        "{v:#}"
    );
    // And ours, read from the same file.
    let ours = run(
        &[good.clone(), bad.clone()],
        &d.path().join("again"),
        &["--expected-failures", base.to_str().unwrap()],
    );
    assert_eq!(ours.status.code(), Some(0), "{}", said(&ours));

    // The failing server fixed (the passing one's behaviour under its name): the official
    // evaluation calls the baseline stale, the scorer gives it a pass, and so do we.
    let fixed_manifest = d.path().join("hostile-stdout-log.toml");
    let text = fs::read_to_string(&good)
        .unwrap()
        .replace(
            "name = \"hostile-baseline\"",
            "name = \"hostile-stdout-log\"",
        )
        .replace(
            "cwd = \"../../fixtures/hostile\"",
            &format!("cwd = \"{ROOT}/fixtures/hostile\""),
        );
    fs::write(&fixed_manifest, text).unwrap();
    let fixed = d.path().join("fixed");
    let ran = run(
        std::slice::from_ref(&fixed_manifest),
        &fixed,
        &["--expected-failures", base.to_str().unwrap()],
    );
    assert_eq!(ran.status.code(), Some(1), "{}", said(&ran));
    assert!(
        String::from_utf8_lossy(&ran.stderr).contains("stale baseline"),
        "{}",
        said(&ran)
    );
    let v = judge(&node, &package, &fixed, &base);
    assert_eq!(v["baseline"]["exitCode"], 1, "{v:#}");
    assert_eq!(
        v["baseline"]["staleEntries"],
        serde_json::json!(["hostile-stdout-log+close"]),
        "{v:#}"
    );
    assert_eq!(v["tier"]["pass_rate"], 1, "{v:#}");
    assert_eq!(v["tier"]["status"], "pass", "{v:#}");
}
