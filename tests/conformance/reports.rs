//! The report formats against real consumers, from one real run of a few fast hostile
//! fixtures: every format re-rendered from the saved JSON is byte for byte what the run
//! wrote; the JUnit XML parsed by `junitparser` (PyPI); the HTML page loaded by a headless
//! Chromium (Debian's `chromium`), its DOM read back and a screenshot taken.
//!
//! Tools are installed on first use and kept: the venv in `target/test-tools/venv`, Chromium
//! by `apt-get` when `/usr/bin/chromium` is missing. A tool that cannot be installed fails the
//! test with its install hint under `CI=true`, and is reported skipped elsewhere (`skip.rs`). The screenshot is left in
//! `target/report-screenshot.png` for people to look at.

use std::ffi::OsString;
use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const JUNITPARSER: &str = "4.0.2";
const CHROMIUM: &str = "/usr/bin/chromium";
/// Every browser call is bounded: `timeout` sends SIGTERM after this, SIGKILL 5 s later.
const BROWSER_SECONDS: &str = "60";

/// The run's files: `r.json` (its stdout), `r.html`, `r.xml`, `r.md`, `r.txt`, `r.sarif`
/// (its `--output`s). Run once for the whole module.
fn run_dir() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, p) = DIR.get_or_init(|| {
        let d = tempfile::Builder::new()
            .prefix("reports-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let p = d.path().to_path_buf();
        let mut args: Vec<OsString> = vec!["run".into()];
        for m in [
            "hostile-baseline",
            "hostile-sigterm-only",
            "hostile-leaks-child",
        ] {
            args.push("--manifest".into());
            args.push(format!("conformance/hostile/{m}.toml").into());
        }
        for a in [
            "--scenario",
            "close",
            "--scenario",
            "crash",
            "--format",
            "json",
        ] {
            args.push(a.into());
        }
        for ext in ["html", "xml", "md", "txt", "sarif"] {
            args.push("--output".into());
            args.push(p.join(format!("r.{ext}")).into());
        }
        let out = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        // hostile-sigterm-only misses SHOULDs, so the run fails (1), and says so only there.
        assert_eq!(
            out.status.code(),
            Some(1),
            "mcp-shutdown {args:?}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        fs::write(p.join("r.json"), &out.stdout).unwrap();
        (d, p)
    });
    p
}

fn report() -> Value {
    serde_json::from_slice(&fs::read(run_dir().join("r.json")).unwrap()).unwrap()
}

/// Where the first difference is, with a line of context from both sides.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let line = a[..at].iter().filter(|&&c| c == b'\n').count() + 1;
    let around = |s: &[u8]| {
        let from = s[..at.min(s.len())]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        let to = s[at.min(s.len())..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(s.len(), |i| at + i);
        format!("{:?}", String::from_utf8_lossy(&s[from..to]))
    };
    let rest = |s: &[u8]| format!("{:?}", String::from_utf8_lossy(&s[at.min(s.len())..]));
    if at == a.len().min(b.len()) {
        // One is the other plus a tail (a trailing newline, say).
        return format!(
            "lengths {} and {}; equal up to byte {at}, then run has {} and render has {}",
            a.len(),
            b.len(),
            rest(a),
            rest(b)
        );
    }
    format!(
        "lengths {} and {}; first difference at byte {at}, line {line}:\n  run:    {}\n  render: {}",
        a.len(),
        b.len(),
        around(a),
        around(b)
    )
}

#[test]
fn every_format_renders_again_byte_for_byte() {
    let dir = run_dir();
    let from = dir.join("r.json");
    let mut differ = Vec::new();
    for (format, file) in [
        ("text", "r.txt"),
        ("json", "r.json"),
        ("junit", "r.xml"),
        ("markdown", "r.md"),
        ("html", "r.html"),
        ("sarif", "r.sarif"),
    ] {
        let written = fs::read(dir.join(file)).unwrap();
        let out = Command::new(BIN)
            .args(["report", "render", "--from"])
            .arg(&from)
            .args(["--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "render {format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            written.len() > 100,
            "{file} is nearly empty: {:?}",
            String::from_utf8_lossy(&written)
        );
        if out.stdout != written {
            differ.push(format!(
                "{format} ({file}): {}",
                first_difference(&written, &out.stdout)
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "re-rendered reports differ from the run's:\n{}",
        differ.join("\n")
    );
}

/// The SARIF log validates against the SARIF 2.1.0 schema (tests/data/README.md), and its
/// results carry each missed rule's fix.
#[test]
fn sarif_validates_against_the_schema() {
    let schema =
        fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json"))
            .unwrap();
    let schema: Value = serde_json::from_slice(&schema).unwrap();
    let validator = jsonschema::draft4::new(&schema).expect("the SARIF schema compiles");
    let log: Value = serde_json::from_slice(&fs::read(run_dir().join("r.sarif")).unwrap()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(!validator.is_valid(&serde_json::json!({ "version": "2.0", "runs": [] })));
    let results = log["runs"][0]["results"].as_array().unwrap();
    let term = results
        .iter()
        .find(|r| {
            r["ruleId"] == "stdio-exit-on-eof"
                && r["properties"]["server"] == "hostile-sigterm-only"
        })
        .unwrap_or_else(|| panic!("hostile-sigterm-only misses stdio-exit-on-eof: {results:#?}"));
    let text = term["message"]["text"].as_str().unwrap();
    assert!(text.contains("\nFix: "), "{text}");
}

/// Runs a command to completion, bounded by `timeout`, and says what failed.
fn run_bounded(seconds: &str, program: &Path, args: &[&str], what: &str) -> Result<Output, String> {
    let out = Command::new("timeout")
        .args(["-k", "5", seconds])
        .arg(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: cannot start {}: {e}", program.display()))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "{what} failed ({}{}):\n{}{}",
            out.status,
            if out.status.code() == Some(124) {
                ", timed out"
            } else {
                ""
            },
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn target_dir() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap()
}

/// The Python of `target/test-tools/venv` with junitparser installed (made on first use), or
/// why it could not be made.
fn junitparser_python() -> Result<PathBuf, String> {
    let venv = target_dir().join("test-tools/venv");
    let python = venv.join("bin/python");
    let stamp = venv.join(format!(".junitparser-{JUNITPARSER}"));
    if stamp.is_file() && python.is_file() {
        return Ok(python);
    }
    let _ = fs::remove_dir_all(&venv);
    let venv_arg = venv.to_str().unwrap();
    run_bounded(
        "300",
        Path::new("python3"),
        &["-m", "venv", venv_arg],
        "python3 -m venv",
    )?;
    let pin = format!("junitparser=={JUNITPARSER}");
    let py = python.to_str().unwrap();
    run_bounded(
        "300",
        Path::new(py),
        &["-m", "pip", "install", &pin],
        "pip install",
    )?;
    fs::write(&stamp, "").unwrap();
    Ok(python)
}

/// Reads the XML the way a CI test tab does and holds it against the JSON report.
const JUNIT_CONSUMER: &str = r#"
import json, sys
from importlib.metadata import version
from junitparser import JUnitXml, Failure, Skipped, Error

xml_path, json_path = sys.argv[1], sys.argv[2]
report = json.load(open(json_path, encoding="utf-8"))
xml = JUnitXml.fromfile(xml_path)
suites = list(xml)
cases = [case for suite in suites for case in suite]
checks = [(r, c) for r in report["results"] for c in r["checks"]]
print(f"junitparser {version('junitparser')}: {len(suites)} suites, {len(cases)} test cases; "
      f"report: {len(report['results'])} results, {len(checks)} checks")

assert len(cases) == len(checks), f"{len(cases)} test cases for {len(checks)} checks"
assert xml.tests == len(checks), f"testsuites tests={xml.tests}"
assert [s.name for s in suites] == list(dict.fromkeys(r["server"] for r in report["results"]))

by_key = {(case.classname, case.name): case for case in cases}
assert len(by_key) == len(cases), "two test cases share a classname and name"
kinds = {"SUCCESS": [], "INFO": [], "WARNING": [Failure], "FAILURE": [Failure], "SKIPPED": [Skipped]}
for r, c in checks:
    key = (r["server"], f"{r['scenario']} {c['id']}")
    assert key in by_key, f"no test case for {key}"
    got = by_key[key].result
    assert [type(x) for x in got] == kinds[c["status"]], f"{key}: {c['status']} became {got}"
    for x in got:
        # The check's message, then (for a miss) the server's first fix for its rule.
        fixes = [f["text"] for f in report["servers"].get(r["server"], {}).get("fixes", []) if c["id"] in f["rules"]]
        want = c["message"] + (f" Fix: {fixes[0]}" if fixes and type(x) is Failure else "")
        assert x.message == want, f"{key}: message {x.message!r} != {want!r}"
failures = sum(1 for _, c in checks if c["status"] in ("WARNING", "FAILURE"))
assert xml.failures == failures, f"failures={xml.failures}, expected {failures}"
assert xml.skipped == sum(1 for _, c in checks if c["status"] == "SKIPPED")

r = next(r for r in report["results"] if (r["server"], r["scenario"]) == ("hostile-sigterm-only", "close"))
c = next(c for c in r["checks"] if c["id"] == "stdio-exit-on-eof")
case = by_key[("hostile-sigterm-only", "close stdio-exit-on-eof")]
[f] = case.result
print("failure:", f.type, repr(f.message))
assert f.message.startswith(c["message"] + " Fix: "), f"message {f.message!r} != {c['message']!r} + its fix"
assert f.type == c["status"], f.type
for part in ("Requirement (SHOULD, spec ", "Expected: ", "Actual: stage sigterm, exited ", "\nFix: Exit when stdin ends"):
    assert part in f.text, f"{part!r} not in {f.text!r}"
assert abs(case.time - r["exit_ms"] / 1000) < 0.001, (case.time, r["exit_ms"])
print("ok")
"#;

#[test]
fn junit_is_read_by_junitparser() {
    let python = match junitparser_python() {
        Ok(p) => p,
        Err(e) => {
            return crate::skip::missing(
                "reports::junit_is_read_by_junitparser",
                "python3",
                &format!(
                    "junitparser=={JUNITPARSER} could not be installed from PyPI into a venv \
                     (python3 with the venv module, and pip reaching PyPI): {e}"
                ),
            );
        }
    };
    let dir = run_dir();
    let script = dir.join("junit_consumer.py");
    fs::write(&script, JUNIT_CONSUMER).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .arg(dir.join("r.xml"))
        .arg(dir.join("r.json"))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "junitparser rejected r.xml ({}):\n{said}",
        out.status
    );
    assert!(said.contains("\nok\n"), "{said}");
}

/// Is `/usr/bin/chromium` there, installed with apt-get if it was missing (tried once per
/// test binary)? The error says why it could not be installed.
pub(crate) fn chromium_installed() -> &'static Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        if Path::new(CHROMIUM).is_file() {
            return Ok(());
        }
        let apt = Path::new("apt-get");
        run_bounded("600", apt, &["update"], "apt-get update")?;
        run_bounded(
            "900",
            apt,
            &["install", "-y", "--no-install-recommends", "chromium"],
            "apt-get install -y --no-install-recommends chromium",
        )?;
        if Path::new(CHROMIUM).is_file() {
            Ok(())
        } else {
            Err("apt-get installed chromium but there is no /usr/bin/chromium".into())
        }
    })
}

/// Is Chromium there for `test`? When it is missing and cannot be installed, the test fails
/// under CI and is reported skipped elsewhere (the caller returns).
pub(crate) fn chromium_or_skip(test: &str) -> bool {
    match chromium_installed() {
        Ok(()) => true,
        Err(e) => {
            crate::skip::missing(
                test,
                "chromium",
                &format!("no {CHROMIUM}, and apt-get could not install it: {e}"),
            );
            false
        }
    }
}

/// `/usr/bin/chromium` (callers ask [`chromium_or_skip`] first).
fn chromium() -> &'static Path {
    assert!(
        chromium_installed().is_ok(),
        "ask chromium_or_skip before running Chromium"
    );
    Path::new(CHROMIUM)
}

/// Kills a process group when dropped, whatever happened (a panic included).
struct Group(i32);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.0) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Processes still running (zombies aside) in a process group, or naming `mark` in their
/// command line or environment (`ps e`): Chromium's crashpad handlers leave the group and
/// the session, but keep the environment they were started with.
fn still_running(pgid: i32, mark: &Path) -> Vec<(i32, String)> {
    let out = Command::new("ps")
        .args(["-e", "-ww", "e", "-o", "pid=,pgid=,stat=,args="])
        .output()
        .unwrap();
    let mark = mark.to_str().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pid: i32 = f.next()?.parse().ok()?;
            let group: i32 = f.next()?.parse().ok()?;
            let stat = f.next()?;
            let args = f.collect::<Vec<_>>().join(" ");
            let ours = group == pgid || args.contains(mark);
            (ours && !stat.starts_with('Z')).then_some((pid, args))
        })
        .collect()
}

/// Runs headless Chromium on `page` with `extra` flags, in its own process group with a fresh
/// profile, bounded by `timeout`. Whatever it started is killed afterwards, and the test fails
/// if anything of it had to be. Returns (exit status, stdout, stderr).
pub(crate) fn headless(
    page: &Path,
    extra: &[String],
) -> (std::process::ExitStatus, String, String) {
    let chromium = chromium();
    let profile = tempfile::Builder::new()
        .prefix("chromium-profile-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let logs = tempfile::tempdir().unwrap();
    // Output to files, not pipes: a helper that outlived the browser would hold a pipe open.
    let (stdout, stderr) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "5", BROWSER_SECONDS])
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .env("MCP_SHUTDOWN_TEST_BROWSER", profile.path())
        // Its crash database and any per-user configuration stay in the fresh profile too.
        .env("HOME", profile.path())
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout).unwrap())
        .stderr(fs::File::create(&stderr).unwrap())
        .process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let group = Group(child.id() as i32);
    let status = child.wait().unwrap();
    drop(group);
    // What the kill hit takes a moment to go; anything still there after that is a leak.
    let mut left = still_running(child.id() as i32, profile.path());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left = still_running(child.id() as i32, profile.path());
    }
    for (pid, _) in &left {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    assert!(
        left.is_empty(),
        "chromium processes outlived their process group's kill: {left:#?}"
    );
    let stderr = fs::read_to_string(&stderr).unwrap_or_default();
    assert_ne!(
        status.code(),
        Some(124),
        "chromium did not finish within {BROWSER_SECONDS} s ({:?}):\n{stderr}",
        started.elapsed()
    );
    (
        status,
        fs::read_to_string(&stdout).unwrap_or_default(),
        stderr,
    )
}

#[test]
fn html_dom_in_headless_chromium() {
    if !chromium_or_skip("reports::html_dom_in_headless_chromium") {
        return;
    }
    let report = report();
    let results = report["results"].as_array().unwrap();
    let page = run_dir().join("r.html");
    let source = fs::read_to_string(&page).unwrap();
    // The page has no script at all; the DOM Chromium built must have none either.
    assert!(
        !source.contains("<script"),
        "the page is meant to have no script"
    );

    let (status, dom, stderr) = headless(&page, &["--dump-dom".into()]);
    assert!(status.success(), "chromium --dump-dom: {status}\n{stderr}");
    assert!(
        dom.starts_with("<html") || dom.starts_with("<!DOCTYPE"),
        "not a DOM:\n{stderr}\n{dom:.300}"
    );
    assert!(
        dom.contains("<h1>MCP shutdown conformance</h1>"),
        "{dom:.500}"
    );
    assert!(
        !dom.contains("<script") && !stderr.contains("Uncaught"),
        "a script ran: {stderr}"
    );

    // The matrix: one row per server, one column per scenario, a cell linking to each case.
    let matrix = &dom[dom
        .find("<table class=\"matrix\">")
        .expect("no matrix in the DOM")..];
    let matrix = &matrix[..matrix.find("</table>").unwrap()];
    let mut servers: Vec<&str> = Vec::new();
    for r in results {
        let s = r["server"].as_str().unwrap();
        if !servers.contains(&s) {
            servers.push(s);
        }
    }
    assert_eq!(
        matrix.matches("<tr>").count(),
        1 + servers.len(),
        "{matrix}"
    );
    for s in &servers {
        assert!(
            matrix.contains(&format!("<tr><th>{s}</th>")),
            "no row for {s}: {matrix}"
        );
    }
    assert!(
        matrix.contains("<th>server</th><th>close</th><th>crash</th>"),
        "{matrix}"
    );
    // Each cell: the stage, the latency, what was left behind (as the JSON says).
    for (i, r) in results.iter().enumerate() {
        let mut text = r["stage"].as_str().unwrap().to_string();
        if let Some(t) = r["exit_ms"].as_f64() {
            text += &format!(" {t:.0} ms");
        }
        match r["leftovers"].as_array().unwrap().len() {
            0 => {}
            n => text += &format!(" · {n} left behind"),
        }
        let cell = format!("<a href=\"#case-{i}\">{text}</a></td>");
        assert!(matrix.contains(&cell), "no cell {cell}: {matrix}");
    }

    // One timeline per result, each parsed as SVG (the DOM keeps its elements).
    assert_eq!(
        dom.matches("<svg").count(),
        results.len(),
        "svg elements in the DOM"
    );
    assert_eq!(dom.matches("</svg>").count(), results.len());
    assert_eq!(dom.matches("<section class=\"case").count(), results.len());
    // Each ends in an exit dot, or in a "still running" arrow for a survivor.
    let survived = results.iter().filter(|r| r["exit_ms"].is_null()).count();
    assert_eq!(
        survived, 1,
        "hostile-sigterm-only survives its client's crash"
    );
    assert_eq!(dom.matches("class=\"running\"").count(), survived);
    assert_eq!(
        dom.matches("class=\"exit\"").count(),
        results.len() - survived
    );
}

#[test]
fn html_screenshot_in_headless_chromium() {
    if !chromium_or_skip("reports::html_screenshot_in_headless_chromium") {
        return;
    }
    let page = run_dir().join("r.html");
    let png = target_dir().join("report-screenshot.png");
    let _ = fs::remove_file(&png);
    let (status, _, stderr) = headless(
        &page,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1400,2000".into(),
        ],
    );
    assert!(
        status.success(),
        "chromium --screenshot: {status}\n{stderr}"
    );
    let bytes = fs::read(&png)
        .unwrap_or_else(|e| panic!("no screenshot at {}: {e}\n{stderr}", png.display()));
    assert!(
        bytes.len() > 10 * 1024,
        "screenshot of {} bytes only: {}",
        bytes.len(),
        png.display()
    );
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1400, 2000), "screenshot size");
}
