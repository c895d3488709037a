//! The tool as its users install it, from empty directories and without a registry: the npm
//! tarballs with `npm install` and `npx`, the wheel with `pip` in a fresh venv and with `uvx
//! --from`, the GitHub Action's `run:` steps through `packaging/action/local_runner.py`, and
//! the `--format conformance` layout type-checked by `tsc` against the official suite's
//! `ConformanceCheck` and validated with zod.
//!
//! Cheap on purpose (CI runs it on every push): the packages are built once from this test
//! build's debug binary, stripped of its debug info (a release build takes minutes), and
//! cached under `target/test-tools/packaging-dist/` keyed by that binary and the packaging
//! sources; every check runs `--scenario close` (and `crash` for the layout) against a tiny
//! server. Tools (uv, PyYAML; TypeScript, zod) are installed on first use under
//! `target/test-tools/`, behind file locks so that parallel test processes (nextest) install
//! them once. A tool that cannot be installed fails the test naming it; nothing is skipped.

use std::collections::hash_map::DefaultHasher;
use std::ffi::OsStr;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");

const UV: &str = "0.13.8";
const PYYAML: &str = "6.0.3";
/// The official suite's own TypeScript line (its devDependencies: `typescript ^5.5.4`) and
/// the zod it depends on (`zod ^4.3.6`), in @modelcontextprotocol/conformance 0.1.16.
const TYPESCRIPT: &str = "5.9.3";
const ZOD: &str = "4.3.6";
const TYPES_NODE: &str = "20.19.43";

pub(crate) fn target_dir() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap()
}

pub(crate) fn tempdir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn tiny_server() -> PathBuf {
    Path::new(ROOT).join("fixtures/tiny/server.js")
}

fn hostile(name: &str) -> PathBuf {
    Path::new(ROOT).join("fixtures/hostile").join(name)
}

/// `program` under `timeout` (SIGTERM after `seconds`, SIGKILL 5 s later), stdin closed,
/// without the caller's npm and pip configuration getting in the way.
pub(crate) fn bounded(seconds: u32, program: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new("timeout");
    c.args(["-k", "5", &seconds.to_string()])
        .arg(program)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("npm_config_update_notifier", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_audit", "false")
        .env_remove("MCP_SHUTDOWN_BIN")
        .stdin(Stdio::null());
    c
}

pub(crate) fn said(out: &Output) -> String {
    let timed_out = if out.status.code() == Some(124) {
        " (timed out)"
    } else {
        ""
    };
    format!(
        "{}{timed_out}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs to completion; panics with everything it said unless it succeeded.
pub(crate) fn ok(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(out.status.success(), "{what} failed: {}", said(&out));
    out
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}): {}", said(out)))
}

/// Runs `f` holding an exclusive lock on `target/test-tools/<name>.lock`.
pub(crate) fn locked<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let dir = target_dir().join("test-tools");
    fs::create_dir_all(&dir).unwrap();
    let file = fs::File::create(dir.join(format!("{name}.lock"))).unwrap();
    let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .unwrap();
    let out = f();
    drop(lock);
    out
}

/// The packages, built once per test binary and cached across processes.
pub(crate) struct Dist {
    pub npm_main: PathBuf,
    pub npm_platform: PathBuf,
    /// The vitest/jest matchers.
    pub npm_vitest: PathBuf,
    pub wheel: PathBuf,
    /// The pytest plugin's wheel.
    pub plugin_wheel: PathBuf,
}

/// What the packages are made of: the binary and every packaging source.
fn dist_key() -> String {
    let mut h = DefaultHasher::new();
    let m = fs::metadata(BIN).unwrap();
    (m.len(), m.mtime(), m.mtime_nsec()).hash(&mut h);
    let root = Path::new(ROOT);
    let mut files = vec![
        root.join("scripts/dist/npm.sh"),
        root.join("scripts/dist/pypi.sh"),
        root.join("scripts/dist/pypi.py"),
    ];
    for d in [
        "packaging/npm",
        "packaging/pypi",
        "packaging/pytest-mcp-shutdown",
    ] {
        let walk = walk(&root.join(d));
        files.extend(walk);
    }
    for f in files {
        f.hash(&mut h);
        fs::read(&f).unwrap().hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

pub(crate) fn dist() -> &'static Dist {
    static DIST: OnceLock<Dist> = OnceLock::new();
    DIST.get_or_init(|| {
        let base = target_dir().join("test-tools/packaging-dist");
        let dir = base.join(dist_key());
        locked("packaging-dist", || {
            if !dir.join(".done").is_file() {
                let _ = fs::remove_dir_all(&base);
                build_dist(&dir);
            }
        });
        let wheel = |prefix: &str| {
            fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    let name = p.file_name().unwrap().to_string_lossy();
                    name.starts_with(prefix) && name.ends_with(".whl")
                })
                .unwrap_or_else(|| panic!("no {prefix}*.whl in {}", dir.display()))
        };
        Dist {
            npm_main: dir.join(format!("mcp-shutdown-conformance-{VERSION}.tgz")),
            npm_platform: dir.join(format!("mcp-shutdown-conformance-linux-x64-{VERSION}.tgz")),
            npm_vitest: dir.join(format!("mcp-shutdown-conformance-vitest-{VERSION}.tgz")),
            wheel: wheel("mcp_shutdown_conformance-"),
            plugin_wheel: wheel("pytest_mcp_shutdown-"),
        }
    })
}

/// Runs the dist scripts on a stripped copy of the debug binary.
fn build_dist(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let bin = dir.join("mcp-shutdown");
    let stripped = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(BIN)
        .arg(&bin)
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        fs::copy(BIN, &bin).unwrap();
    }
    let out = ok(
        bounded(300, Path::new(ROOT).join("scripts/dist/npm.sh"))
            .env("MCP_SHUTDOWN_DIST_BIN", &bin)
            .env("MCP_SHUTDOWN_DIST_DIR", dir)
            .env("npm_config_cache", dir.join("npm-cache")),
        "scripts/dist/npm.sh",
    );
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(printed.lines().count(), 3, "{printed}");
    let out = ok(
        bounded(300, Path::new(ROOT).join("scripts/dist/pypi.sh"))
            .env("MCP_SHUTDOWN_DIST_BIN", &bin)
            .env("MCP_SHUTDOWN_DIST_DIR", dir),
        "scripts/dist/pypi.sh",
    );
    let wheels = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        wheels.lines().count(),
        2,
        "the binary's and the plugin's: {wheels}"
    );
    for wheel in wheels.lines() {
        assert!(Path::new(wheel).is_file(), "{wheel}");
    }
    let _ = fs::remove_dir_all(dir.join("npm-cache"));
    fs::write(dir.join(".done"), "").unwrap();
}

/// The Python of `target/test-tools/packaging-venv`, with uv and PyYAML.
pub(crate) fn py_tools() -> PathBuf {
    let venv = target_dir().join("test-tools/packaging-venv");
    let python = venv.join("bin/python");
    let stamp = venv.join(format!(".installed-{UV}-{PYYAML}"));
    locked("packaging-venv", || {
        if stamp.is_file() && python.is_file() {
            return;
        }
        let _ = fs::remove_dir_all(&venv);
        let need = format!(
            "the packaging tests need uv=={UV} and pyyaml=={PYYAML} from PyPI in a venv at {}",
            venv.display()
        );
        ok(
            bounded(300, "python3").args(["-m", "venv"]).arg(&venv),
            &format!("{need}: python3 -m venv"),
        );
        ok(
            bounded(600, &python)
                .args(["-m", "pip", "install", "--quiet"])
                .arg(format!("uv=={UV}"))
                .arg(format!("pyyaml=={PYYAML}")),
            &format!("{need}: pip install"),
        );
        fs::write(&stamp, "").unwrap();
    });
    python
}

/// `target/test-tools/npm-packaging`, with TypeScript, zod and Node's types.
fn npm_tools() -> PathBuf {
    let dir = target_dir().join("test-tools/npm-packaging");
    let stamp = dir.join(format!(".installed-{TYPESCRIPT}-{ZOD}-{TYPES_NODE}"));
    locked("npm-packaging", || {
        if stamp.is_file() {
            return;
        }
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("package.json"), "{\"private\": true}\n").unwrap();
        ok(
            bounded(600, "npm")
                .args(["install", "--save-exact", "--no-audit", "--no-fund"])
                .arg(format!("typescript@{TYPESCRIPT}"))
                .arg(format!("zod@{ZOD}"))
                .arg(format!("@types/node@{TYPES_NODE}"))
                .current_dir(&dir),
            &format!(
                "the conformance-layout test needs typescript@{TYPESCRIPT}, zod@{ZOD} and \
                 @types/node@{TYPES_NODE} from npm in {}: npm install",
                dir.display()
            ),
        );
        fs::write(&stamp, "").unwrap();
    });
    dir
}

/// A new npm project in `dir` with `packages` (tarball files) installed from an empty cache,
/// offline: nothing comes from a registry.
fn npm_project(dir: &Path, packages: &[&Path], extra: &[&str]) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("package.json"),
        "{\"name\": \"server-under-test\", \"version\": \"1.0.0\", \"private\": true}\n",
    )
    .unwrap();
    ok(
        bounded(300, "npm")
            .args(["install", "--offline", "--no-audit", "--no-fund"])
            .args(extra)
            .args(packages)
            .env("npm_config_cache", dir.join(".npm-cache"))
            .current_dir(dir),
        "npm install (tarballs)",
    );
}

/// One `close` case that ended at EOF with every check holding.
fn assert_clean_close(report: &Value) {
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{report:#}");
    let r = &results[0];
    assert_eq!(r["scenario"], "close");
    assert_eq!(r["stage"], "eof", "{r:#}");
    for c in r["checks"].as_array().unwrap() {
        assert!(
            c["status"] == "SUCCESS" || c["status"] == "SKIPPED" || c["status"] == "INFO",
            "{c:#}"
        );
    }
}

#[test]
fn npm_tarballs_install_offline_and_npx_checks_a_node_server() {
    // Outside the checkout: the relocated checks hide it.
    let d = crate::relocated::outside("npm-");
    let project = d.path().join("project");
    let dist = dist();
    npm_project(&project, &[&dist.npm_main, &dist.npm_platform], &[]);
    let npx = |args: &[&OsStr]| {
        bounded(300, "npx")
            .arg("--offline")
            .args(args)
            .env("npm_config_cache", project.join(".npm-cache"))
            .current_dir(&project)
            .output()
            .unwrap()
    };
    let out = npx(&["mcp-shutdown".as_ref(), "--version".as_ref()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("mcp-shutdown {VERSION}\n"),
        "{}",
        said(&out)
    );
    let out = npx(&[
        "mcp-shutdown-conformance".as_ref(),
        "check".as_ref(),
        "--scenario".as_ref(),
        "close".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        "--".as_ref(),
        "node".as_ref(),
        tiny_server().as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_clean_close(&json(&out));
    // The installed package is the whole tool: every command, where the checkout is hidden.
    let work = d.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    crate::relocated::relocated_checks_of(&project.join("node_modules/.bin/mcp-shutdown"), &work);
}

#[test]
fn npm_launcher_without_its_platform_package_says_what_to_do() {
    let d = tempdir("npm-bare-");
    let project = d.path().join("project");
    npm_project(&project, &[&dist().npm_main], &["--omit=optional"]);
    let out = bounded(120, "npx")
        .args(["--offline", "mcp-shutdown", "--version"])
        .env("npm_config_cache", project.join(".npm-cache"))
        .current_dir(&project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("@mcp-shutdown-conformance/linux-x64") && err.contains("--omit=optional"),
        "{err}"
    );
}

#[test]
fn wheel_installs_with_pip_and_runs_with_uvx() {
    // Outside the checkout: the relocated checks hide it.
    let d = crate::relocated::outside("wheel-");
    let wheel = &dist().wheel;
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.contains("-py3-none-manylinux_2_"), "{name}");
    let venv = d.path().join("venv");
    ok(
        bounded(300, "python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    );
    ok(
        bounded(300, venv.join("bin/pip"))
            .args(["install", "--quiet", "--no-index"])
            .arg(wheel),
        "pip install (the wheel)",
    );
    let check = |program: &mut Command| {
        let out = program
            .args(["check", "--scenario", "close", "--format", "json", "--"])
            .arg("python3")
            .arg(hostile("baseline.py"))
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", said(&out));
        assert_clean_close(&json(&out));
    };
    check(&mut bounded(300, venv.join("bin/mcp-shutdown-conformance")));
    let out = ok(
        bounded(60, venv.join("bin/mcp-shutdown")).arg("--version"),
        "mcp-shutdown --version",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("mcp-shutdown {VERSION}\n")
    );
    // uvx, offline from the file, in an empty cache.
    let uv = py_tools().with_file_name("uv");
    let mut uvx = bounded(300, uv);
    uvx.args(["tool", "run", "--offline", "--from"])
        .arg(wheel)
        .arg("mcp-shutdown-conformance")
        .env("UV_CACHE_DIR", d.path().join("uv-cache"))
        .env("UV_TOOL_DIR", d.path().join("uv-tools"))
        .env("UV_PYTHON_DOWNLOADS", "never");
    check(&mut uvx);
    // The installed wheel is the whole tool: every command, where the checkout is hidden.
    let work = d.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    crate::relocated::relocated_checks_of(&venv.join("bin/mcp-shutdown"), &work);
}

/// Runs the composite action's steps with `inputs` through the local runner, from `workspace`.
fn run_action(workspace: &Path, temp: &Path, inputs: &[(&str, String)]) -> Value {
    let mut c = bounded(300, py_tools());
    c.arg(Path::new(ROOT).join("packaging/action/local_runner.py"))
        .arg(ROOT)
        .arg(workspace)
        .arg(temp);
    for (k, v) in inputs {
        c.arg("--input").arg(format!("{k}={v}"));
    }
    let out = c
        .env("npm_config_offline", "true")
        .env("npm_config_cache", temp.join("npm-cache"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("local_runner printed no result ({e}): {}", said(&out)));
    let failed = v["result"] == "failure";
    assert_eq!(out.status.success(), !failed, "{}", said(&out));
    v
}

fn step<'a>(result: &'a Value, id: &str) -> &'a Value {
    let steps = result["steps"].as_array().unwrap();
    let found = steps.iter().find(|s| s["id"] == id || s["name"] == id);
    found.unwrap_or_else(|| panic!("no step {id}: {result:#}"))
}

#[test]
fn action_installs_from_the_tarballs_and_writes_every_report() {
    let d = tempdir("action-");
    let ws = d.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    fs::copy(tiny_server(), ws.join("server.js")).unwrap();
    let dist = dist();
    let packages = format!(
        "{} {}",
        dist.npm_main.display(),
        dist.npm_platform.display()
    );
    let r = run_action(
        &ws,
        &d.path().join("runner-temp"),
        &[
            ("command", "node server.js".into()),
            ("scenarios", "close".into()),
            ("formats", "text junit markdown html conformance".into()),
            ("badges", "badges".into()),
            ("package", packages),
        ],
    );
    assert_eq!(r["result"], "success", "{r:#}");
    assert_eq!(r["outputs"]["exit-code"], "0", "{r:#}");
    let out = PathBuf::from(r["outputs"]["output-dir"].as_str().unwrap());
    assert_eq!(out, ws.join("mcp-shutdown-report"));
    let report: Value =
        serde_json::from_slice(&fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_clean_close(&report);
    for f in ["report.txt", "junit.xml", "report.md", "report.html"] {
        assert!(out.join(f).is_file(), "{f} missing: {r:#}");
    }
    let layout: Vec<String> = walk(&out.join("conformance"))
        .iter()
        .map(|f| unstamped(f.strip_prefix(out.join("conformance")).unwrap()))
        .collect();
    // The server is named by its handshake (`tiny`), not by its command (`node`).
    assert_eq!(layout, ["server-tiny+close/checks.json"], "{r:#}");
    assert!(ws.join("badges/tiny.svg").is_file(), "{r:#}");
    assert!(r["summary"].as_str().unwrap().contains("tiny"), "{r:#}");
    // The upload step is not run here; what it would upload exists.
    let upload = step(&r, "Upload the reports");
    assert_eq!(upload["outcome"], "not-run");
    let paths = upload["with"]["path"].as_str().unwrap();
    assert!(paths.contains(out.to_str().unwrap()), "{paths}");
    assert_eq!(
        step(&r, "Fail on the tool's exit code")["outcome"],
        "skipped"
    );
}

#[test]
fn action_fails_the_job_on_a_missed_rule_and_on_no_server() {
    let d = tempdir("action-fail-");
    let ws = d.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    let server = format!("python3 -u {}", hostile("sigterm_only.py").display());
    let r = run_action(
        &ws,
        &d.path().join("t1"),
        &[
            ("command", server),
            ("scenarios", "close".into()),
            ("args", "--grace-ms 300".into()),
            ("hosts", "false".into()),
            ("binary", BIN.into()),
        ],
    );
    assert_eq!(r["result"], "failure", "{r:#}");
    assert_eq!(r["outputs"]["exit-code"], "1", "{r:#}");
    assert_eq!(
        step(&r, "run")["outcome"],
        "success",
        "reports first: {r:#}"
    );
    assert_eq!(step(&r, "Upload the reports")["outcome"], "not-run");
    assert_eq!(
        step(&r, "Fail on the tool's exit code")["outcome"],
        "failure"
    );
    assert!(ws.join("mcp-shutdown-report/report.md").is_file());

    let r = run_action(&ws, &d.path().join("t2"), &[("binary", BIN.into())]);
    assert_eq!(r["result"], "failure", "{r:#}");
    assert_eq!(step(&r, "run")["outcome"], "failure", "{r:#}");
    assert!(step(&r, "run")["stdout"]
        .as_str()
        .unwrap()
        .contains("give command"));
    let r = run_action(
        &ws,
        &d.path().join("t3"),
        &[
            ("binary", BIN.into()),
            ("command", "true".into()),
            ("repeat", "x".into()),
        ],
    );
    assert!(
        step(&r, "run")["stdout"]
            .as_str()
            .unwrap()
            .contains("repeat"),
        "{r:#}"
    );
}

/// `ConformanceCheck` of @modelcontextprotocol/conformance 0.1.16 (`src/types.ts`), field for
/// field: its npm package ships only a bundled `dist/index.js`, no declarations to import.
const OFFICIAL_TYPES: &str = r#"// ConformanceCheck of @modelcontextprotocol/conformance 0.1.16 (src/types.ts), restated.
export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
export interface SpecReference {
  id: string;
  url?: string;
}
export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  status: CheckStatus;
  timestamp: string;
  specReferences?: SpecReference[];
  details?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  errorMessage?: string;
  logs?: string[];
}
"#;

/// Reads a results directory as the official suite's readers do (every `**/checks.json`; a
/// scenario passes with a SUCCESS and no FAILURE), validating each file with zod.
const VALIDATE: &str = r#"import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { ConformanceCheck } from './types.js';

// The interface as a strict zod schema; the annotation makes tsc prove that the two agree.
const Check: z.ZodType<ConformanceCheck> = z.strictObject({
  id: z.string().min(1),
  name: z.string().min(1),
  description: z.string().min(1),
  status: z.enum(['SUCCESS', 'FAILURE', 'WARNING', 'SKIPPED', 'INFO']),
  timestamp: z.iso.datetime(),
  specReferences: z.array(z.strictObject({ id: z.string().min(1), url: z.url().optional() })).optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  errorMessage: z.string().optional(),
  logs: z.array(z.string()).optional(),
});

const dir = process.argv[2];
const scenarios: Record<string, object> = {};
for (const file of readdirSync(dir, { recursive: true }) as string[]) {
  if (!file.endsWith('checks.json')) continue;
  const checks = z.array(Check).parse(JSON.parse(readFileSync(join(dir, file), 'utf-8')));
  const passed = checks.filter((c) => c.status === 'SUCCESS').length;
  const failed = checks.filter((c) => c.status === 'FAILURE').length;
  scenarios[dirname(file)] = {
    statuses: checks.map((c) => c.status),
    scenarioPassed: failed === 0 && passed > 0,
  };
}
console.log(JSON.stringify(scenarios));
"#;

const TSCONFIG: &str = r#"{"compilerOptions": {"strict": true, "module": "nodenext",
  "moduleResolution": "nodenext", "target": "es2022", "types": ["node"], "outDir": "build",
  "skipLibCheck": true}, "include": ["*.ts"]}"#;

/// `server-x+close-2026-07-28T12-00-00-000Z/checks.json` → `server-x+close/checks.json`,
/// asserting the official directory name's timestamp (`toISOString()`, `:` and `.` as `-`).
fn unstamped(rel: &Path) -> String {
    let dir = rel.parent().unwrap().to_str().unwrap();
    let (name, stamp) = dir.split_at(dir.len() - "-2026-07-28T12-00-00-000Z".len());
    let shape: String = stamp
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    assert_eq!(shape, "-9999-99-99T99-99-99-999Z", "{}", rel.display());
    format!("{name}/{}", rel.file_name().unwrap().to_str().unwrap())
}

/// Every `checks.json` under `dir`, relative path (timestamp cut) → contents with
/// timestamps blanked; each file is `JSON.stringify(checks, null, 2)` (no final newline).
fn layout(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for file in walk(dir) {
        let raw = fs::read(&file).unwrap();
        assert!(raw.ends_with(b"]"), "{}: trailing newline", file.display());
        let mut v: Value = serde_json::from_slice(&raw).unwrap();
        for c in v.as_array_mut().unwrap() {
            assert!(c["timestamp"].as_str().unwrap().ends_with('Z'), "{c:#}");
            c["timestamp"] = Value::from("");
        }
        files.push((unstamped(file.strip_prefix(dir).unwrap()), v.to_string()));
    }
    files
}

/// A TypeScript project in `dir`: the official types, `files` as typed literals, and tools.
fn ts_project(dir: &Path, files: &[(String, String)]) -> PathBuf {
    let npm = npm_tools();
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("types.ts"), OFFICIAL_TYPES).unwrap();
    fs::write(dir.join("tsconfig.json"), TSCONFIG).unwrap();
    for (i, (path, text)) in files.iter().enumerate() {
        let ts = format!(
            "// {path}\nimport type {{ ConformanceCheck }} from './types.js';\n\
             export const checks: ConformanceCheck[] = {text};\n"
        );
        fs::write(dir.join(format!("checks_{i}.ts")), ts).unwrap();
    }
    std::os::unix::fs::symlink(npm.join("node_modules"), dir.join("node_modules")).unwrap();
    npm.join("node_modules/.bin/tsc")
}

#[test]
fn conformance_layout_type_checks_against_the_official_types() {
    let d = tempdir("conformance-");
    let (out, out2, report) = (
        d.path().join("out"),
        d.path().join("out2"),
        d.path().join("r.json"),
    );
    let run = bounded(300, BIN)
        .args([
            "run",
            "--no-baseline",
            "--scenario",
            "close",
            "--scenario",
            "crash",
        ])
        .args(["--manifest", "conformance/hostile/hostile-baseline.toml"])
        .args([
            "--manifest",
            "conformance/hostile/hostile-sigterm-only.toml",
        ])
        .args([
            "--grace-ms",
            "300",
            "--observe-ms",
            "500",
            "--format",
            "conformance",
        ])
        .arg("--output")
        .arg(&out)
        .arg("--output")
        .arg(&report)
        .current_dir(ROOT)
        .output()
        .unwrap();
    // hostile-sigterm-only misses SHOULDs: exit 1, and the index lists the four files.
    assert_eq!(run.status.code(), Some(1), "{}", said(&run));
    let index = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(index.lines().count(), 4, "{index}");
    assert!(
        index.contains("server-hostile-sigterm-only+close/checks.json  "),
        "{index}"
    );
    ok(
        bounded(60, BIN)
            .args(["report", "render", "--format", "conformance", "--from"])
            .arg(&report)
            .arg("--out")
            .arg(&out2),
        "report render --format conformance --out",
    );
    let files = layout(&out);
    assert_eq!(
        files,
        layout(&out2),
        "the same layout from the saved report"
    );

    // Static: each file, as a TypeScript literal, is a ConformanceCheck[] (excess properties
    // are errors too); validate.ts proves the zod schema equals the interface.
    let ts = d.path().join("ts");
    let tsc = ts_project(&ts, &files);
    fs::write(ts.join("validate.ts"), VALIDATE).unwrap();
    ok(
        bounded(300, &tsc).arg("-p").arg(&ts),
        "tsc (checks.json as ConformanceCheck[])",
    );
    // Not vacuous: a wrong status and an unknown field fail it.
    let wrong = d.path().join("wrong");
    let bad = r#"[{"id": "x", "name": "X", "description": "d", "status": "PASSED", "timestamp": "t", "extra": 1}]"#;
    let tsc_wrong = ts_project(&wrong, &[("wrong".into(), bad.into())]);
    let told = bounded(300, &tsc_wrong)
        .args(["--noEmit", "-p"])
        .arg(&wrong)
        .output()
        .unwrap();
    assert!(
        !told.status.success(),
        "tsc accepted a wrong check: {}",
        said(&told)
    );
    assert!(said(&told).contains("TS2322"), "{}", said(&told));

    // Run time: zod, then the official readers' scoring.
    let checked = ok(
        bounded(120, "node")
            .arg(ts.join("build/validate.js"))
            .arg(&out)
            .current_dir(&ts),
        "node validate.js (zod)",
    );
    let stamped: Value = serde_json::from_slice(&checked.stdout).unwrap();
    let scored: serde_json::Map<String, Value> = stamped
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let key = unstamped(&Path::new(k).join("checks.json"));
            (key.trim_end_matches("/checks.json").to_string(), v.clone())
        })
        .collect();
    let results: Value = serde_json::from_slice(&fs::read(&report).unwrap()).unwrap();
    for r in results["results"].as_array().unwrap() {
        let key = format!(
            "server-{}+{}",
            r["server"].as_str().unwrap(),
            r["scenario"].as_str().unwrap().replace(':', "-")
        );
        let want: Vec<&Value> = r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["status"])
            .collect();
        let got: Vec<&Value> = scored[&key]["statuses"]
            .as_array()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(got, want, "{key}: {scored:?}");
        // No MUST failed: every scenario passes by the official readers' measure.
        assert_eq!(scored[&key]["scenarioPassed"], true, "{key}: {scored:?}");
    }
}
