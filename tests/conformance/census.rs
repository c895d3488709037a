//! `mcp-shutdown census` end to end, with real published servers (npm and PyPI) installed
//! into a shared cache and launched offline from it: a malformed listing gives a reason per
//! entry (file, entry, field) and still runs the valid rest; a small listing runs with
//! `--site` and gives a leaderboard row per server; a server that refuses placeholder
//! credentials is "not testable", never a failure; `diff` compares two census reports;
//! `--with-sdk` runs a server again with a patched SDK inside its install (proved in its
//! node_modules and by the build's marker at run time); the
//! leaderboard page loads in headless Chromium (missing Chromium: a failure under `CI=true`,
//! reported skipped elsewhere).
//!
//! The cache is `$MCP_SHUTDOWN_CENSUS_CACHE`, else `target/census-cache` (kept between runs:
//! the first run downloads three packages and uv, about two minutes; later runs install
//! nothing). Each run uses two scenarios (`close` and the VS Code host) to stay short.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const EVERYTHING: &str = "modelcontextprotocol-server-everything-2026.8.31";
const TIME: &str = "mcp-server-time-2026.10.19";
const STRIPE: &str = "stripe-mcp-0.3.3";

pub(crate) fn cache() -> PathBuf {
    std::env::var_os("MCP_SHUTDOWN_CENSUS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .unwrap()
                .join("census-cache")
        })
}

/// One census run: its directory (`r.json`, the site in `site/`) and its output.
pub(crate) struct Run {
    dir: PathBuf,
    out: Output,
}

impl Run {
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    pub(crate) fn report(&self) -> Value {
        serde_json::from_slice(&fs::read(self.dir.join("r.json")).unwrap()).unwrap()
    }
}

fn census(listing: &str, tag: &str, site: bool) -> Run {
    census_with(
        listing,
        tag,
        site,
        &["--scenario", "close", "--scenario", "close:vscode"],
    )
}

pub(crate) fn census_with(listing: &str, tag: &str, site: bool, args: &[&str]) -> Run {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("census-{tag}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["census", "--listing", listing, "--cache"])
        .arg(cache())
        .args(args)
        .args(["--format", "text", "--output"])
        .arg(dir.join("r.json"))
        .stdin(Stdio::null());
    if site {
        cmd.arg("--site").arg(dir.join("site"));
    }
    let out = cmd.output().unwrap();
    let run = Run { dir, out };
    // 0, or 1 when a real server misses a SHOULD: a finding, not a failure of the command.
    assert!(
        matches!(run.out.status.code(), Some(0 | 1)),
        "census {listing}: {}\n{}",
        run.out.status,
        run.stderr()
    );
    run
}

fn malformed() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| census("conformance/census/malformed.json", "malformed", false))
}

pub(crate) fn small() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| census("conformance/census/small.json", "small", true))
}

fn servers(report: &Value) -> Vec<String> {
    let mut s: Vec<String> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["server"].as_str().unwrap().to_string())
        .collect();
    s.dedup();
    s
}

#[test]
fn a_malformed_listing_names_file_entry_and_field_and_runs_the_valid_rest() {
    let run = malformed();
    let err = run.stderr();
    let file = "conformance/census/malformed.json";
    for (entry, field) in [
        (
            "entry 0 (io.github.example/missing-version)",
            "/servers/0/server/packages/0/version (line 10): missing `version`",
        ),
        (
            "entry 1 (io.github.example/container-only)",
            "/servers/1/server/packages/0/registryType",
        ),
        (
            "entry 4 (io.github.example/http-package)",
            "/servers/4/server/packages/0/transport/type",
        ),
        (
            "entry 5 (io.github.example/needs-host)",
            "/servers/5/server/packages/0/environmentVariables/0",
        ),
        (
            "entry 6 (io.github.example/wrong-types)",
            "/servers/6/server/packages/0/version (line 128): `version` must be a string",
        ),
        (
            "entry 7 (io.github.example/crate)",
            "unknown registryType `cargo`",
        ),
        (
            "entry 9 (io.github.example/remote-only)",
            "/servers/9/server/remotes",
        ),
        (
            "entry 11 (io.github.example/args-object)",
            "/servers/11/server/packages/0/packageArguments",
        ),
        (
            "entry 12 (not a reverse dns name)",
            "/servers/12/server/name",
        ),
    ] {
        let line = err
            .lines()
            .find(|l| l.starts_with(file) && l.contains(entry))
            .unwrap_or_else(|| panic!("no line for {entry}:\n{err}"));
        assert!(line.contains(field), "{line}");
    }
    assert_eq!(
        err.lines().filter(|l| l.starts_with(file)).count(),
        13,
        "{err}"
    );
    assert!(err.contains("2 entries to run, 13 skipped"), "{err}");
    assert_eq!(servers(&run.report()), [EVERYTHING, TIME]);
}

#[test]
fn a_small_listing_runs_end_to_end_into_a_leaderboard_with_every_row() {
    let run = small();
    let report = run.report();
    assert_eq!(servers(&report), [EVERYTHING, TIME, STRIPE]);
    let site = run.dir.join("site");
    let index = fs::read_to_string(site.join("index.html")).unwrap();
    assert_eq!(index.matches("<tr class=\"server\"").count(), 3, "{index}");
    for (server, name) in [
        (
            EVERYTHING,
            "io.github.modelcontextprotocol/server-everything",
        ),
        (TIME, "io.github.modelcontextprotocol/server-time"),
        (STRIPE, "io.github.stripe/mcp"),
    ] {
        assert!(
            index.contains(&format!("<a href=\"servers/{server}.html\">{name}</a>")),
            "no row for {name}"
        );
        for f in [
            format!("servers/{server}.html"),
            format!("servers/{server}.md"),
            format!("badges/{server}.svg"),
            format!("badges/{server}.json"),
            format!("badges/{server}-hosts.svg"),
            format!("badges/{server}-hosts.json"),
        ] {
            assert!(site.join(&f).is_file(), "{f} missing");
        }
        let page = fs::read_to_string(site.join(format!("servers/{server}.html"))).unwrap();
        assert!(
            page.contains(name) && page.contains("README snippet"),
            "{server}"
        );
    }
    // Each host column says where its ladder comes from (read from source here).
    assert!(
        index.contains("<th title=\"read: microsoft/vscode @ 0baa8cd78ba4\">vscode</th>"),
        "the vscode column's source"
    );
    assert!(index.contains(">node</td><td>npx</td>") && index.contains(">python</td><td>uvx</td>"));
    let saved: Value =
        serde_json::from_slice(&fs::read(site.join("report.json")).unwrap()).unwrap();
    assert_eq!(saved, report, "the site's report.json is the run's");
    let info = &report["servers"][TIME]["package"];
    assert_eq!(info["launcher"], "uvx");
    assert_eq!(info["identifier"], "mcp-server-time");
}

/// Each case's verdicts: (server, scenario) → stage, why not testable, each check's outcome
/// (by case: a merge orders cases by server name, a run by listing).
pub(crate) fn verdicts(
    report: &Value,
    scenario: &str,
) -> std::collections::BTreeMap<String, Value> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["scenario"] == scenario)
        .map(|r| {
            let checks: Vec<_> = r["checks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| (c["id"].clone(), c["outcome"].clone()))
                .collect();
            let key = format!("{} × {scenario}", r["server"].as_str().unwrap());
            let reason = r["not_testable"]["reason"].clone();
            (key, serde_json::json!([r["stage"], reason, checks]))
        })
        .collect()
}

#[test]
fn shards_by_server_merge_into_the_unsharded_run_verdict_for_verdict() {
    // With 3 shards the small listing's servers fall 1 / 0 / 2 (FNV-1a of their names):
    // an empty shard writes nothing and succeeds.
    let empty = Command::new(BIN)
        .args(["census", "--listing", "conformance/census/small.json"])
        .args(["--shard", "2/3", "--scenario", "close"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&empty.stderr);
    assert!(empty.status.success(), "{said}");
    assert!(said.contains("shard 2/3 holds no server"), "{said}");
    let shards: Vec<Run> = ["1/3", "3/3"]
        .iter()
        .map(|k| {
            let tag = format!("shard-{}", k.replace('/', "-of-"));
            census_with(
                "conformance/census/small.json",
                &tag,
                false,
                &["--shard", k, "--scenario", "close"],
            )
        })
        .collect();
    assert_eq!(servers(&shards[0].report()), [TIME]);
    assert_eq!(servers(&shards[1].report()), [EVERYTHING, STRIPE]);
    let merged = Command::new(BIN)
        .args(["report", "merge"])
        .args(shards.iter().map(|r| r.dir.join("r.json")))
        .output()
        .unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let merged: Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(
        verdicts(&merged, "close"),
        verdicts(&small().report(), "close")
    );
}

#[test]
fn a_server_refusing_placeholder_credentials_is_not_testable_never_a_failure() {
    let run = small();
    let report = run.report();
    let stripe: Vec<&Value> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["server"] == STRIPE)
        .collect();
    assert_eq!(stripe.len(), 2);
    for r in &stripe {
        assert_eq!(r["not_testable"]["reason"], "needs-credentials", "{r:#}");
        assert!(r["not_testable"]["message"]
            .as_str()
            .unwrap()
            .contains("STRIPE_SECRET_KEY"));
        for c in r["checks"].as_array().unwrap() {
            assert!(
                !matches!(c["status"].as_str(), Some("FAILURE" | "WARNING")),
                "{c:#}"
            );
        }
    }
    assert_eq!(report["summary"]["not_testable"], 2);
    assert_eq!(report["summary"]["no_verdict"]["credentials"], 2);
    let text = String::from_utf8_lossy(&run.out.stdout);
    assert!(
        text.contains(&format!(
            "SKIP     {STRIPE} close: not testable: needs credentials"
        )),
        "{text}"
    );
    let index = fs::read_to_string(run.dir.join("site/index.html")).unwrap();
    let row = index
        .lines()
        .find(|l| l.contains(&format!("data-server=\"{STRIPE}\"")))
        .unwrap();
    assert!(row.contains("not testable: needs credentials"), "{row}");
    let badge = fs::read_to_string(run.dir.join(format!("site/badges/{STRIPE}.json"))).unwrap();
    assert!(badge.contains("could not run: credentials"), "{badge}");
    // JUnit: skipped, never a failure.
    let junit = Command::new(BIN)
        .args(["report", "render", "--format", "junit", "--from"])
        .arg(run.dir.join("r.json"))
        .output()
        .unwrap();
    let xml = String::from_utf8_lossy(&junit.stdout);
    let suite = &xml[xml.find(&format!("name=\"{STRIPE}\"")).unwrap()..];
    let suite = &suite[..suite.find("</testsuite>").unwrap()];
    assert!(
        suite.contains("<skipped") && !suite.contains("<failure"),
        "{suite}"
    );
}

#[test]
fn diff_compares_two_census_reports() {
    let (old, new) = (malformed().dir.join("r.json"), small().dir.join("r.json"));
    let out = Command::new(BIN)
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}\n{said}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains(" new · 0 removed · "), "{said}");
    // The New section runs to the next heading (the stage tables follow it).
    let new_section = &said[said.find("### New").expect("stripe is new")..];
    let new_section = &new_section[..new_section[4..]
        .find("### ")
        .map_or(new_section.len(), |i| i + 4)];
    assert!(
        new_section.contains(&format!("| {STRIPE} | close |")),
        "{said}"
    );
    // The servers both listings share are compared check by check, not reported as new.
    assert!(!new_section.contains(&format!("| {TIME} |")), "{said}");
}

#[test]
fn the_leaderboard_loads_in_headless_chromium_with_every_row() {
    if !crate::reports::chromium_or_skip(
        "census::the_leaderboard_loads_in_headless_chromium_with_every_row",
    ) {
        return;
    }
    let run = small();
    let page = run.dir.join("site/index.html");
    let (status, dom, stderr) = crate::reports::headless(
        &page,
        &["--dump-dom".into(), "--enable-logging=stderr".into()],
    );
    assert!(status.success(), "chromium --dump-dom: {status}\n{stderr}");
    assert!(
        !stderr.contains("Uncaught") && !stderr.contains(":CONSOLE"),
        "the page's script failed:\n{stderr}"
    );
    // The script's last act: counting the rows it can sort.
    assert!(dom.contains("data-rows=\"3\""), "{dom:.400}");
    for s in [EVERYTHING, TIME, STRIPE] {
        assert!(
            dom.contains(&format!("data-server=\"{s}\"")),
            "no row for {s}"
        );
    }
    let png = run.dir.join("leaderboard.png");
    let (status, _, stderr) = crate::reports::headless(
        &page,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1400,900".into(),
        ],
    );
    assert!(
        status.success(),
        "chromium --screenshot: {status}\n{stderr}"
    );
    let bytes = fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert!(bytes.len() > 10 * 1024, "{} bytes only", bytes.len());
}

/// `npm pack @modelcontextprotocol/sdk@1.32.2` (the release the everything server's install
/// holds) with its stdio transport's `start()` writing a marker to stderr, packed again
/// byte for byte reproducibly, so its local build is named and cached the same every run.
fn marked_sdk(dir: &Path) -> PathBuf {
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).unwrap();
    run(Command::new("npm")
        .args([
            "pack",
            "@modelcontextprotocol/sdk@1.32.2",
            "--prefer-offline",
        ])
        .arg("--pack-destination")
        .arg(dir)
        .env("npm_config_cache", cache().join("npm"))
        .current_dir(dir));
    run(Command::new("tar")
        .args(["-xzf", "modelcontextprotocol-sdk-1.32.2.tgz"])
        .current_dir(dir));
    for build in ["esm", "cjs"] {
        let p = dir.join(format!("package/dist/{build}/server/stdio.js"));
        let js = fs::read_to_string(&p).unwrap();
        let old = "this._stdin.on('error', this._onerror);";
        assert_eq!(js.matches(old).count(), 1, "{}", p.display());
        let new = format!("{old} process.stderr.write('{MARKER}\\n');");
        fs::write(&p, js.replace(old, &new)).unwrap();
    }
    let out = dir.join("modelcontextprotocol-sdk-1.32.2-marked.tgz");
    run(Command::new("sh")
        .arg("-c")
        .arg("tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - package | gzip -n > \"$1\"")
        .arg("sh")
        .arg(&out)
        .current_dir(dir));
    out
}

const MARKER: &str = "with-sdk-marker: the patched transport started";

/// `--with-sdk typescript@local:marked=TGZ --with-sdk python@2.2.0`: the npm server's install
/// gets the build through npm `overrides` (read back from its node_modules, and its marker
/// seen on the server's stderr at run time), the PyPI server's environment gets `mcp` 2.2.0
/// (read back); each leaves the other registry's server untouched and says why; the report
/// carries the before → after sections.
#[test]
fn with_sdk_replaces_the_sdk_inside_an_install_and_reports_before_and_after() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("with-sdk-marked");
    let tgz = marked_sdk(&tmp);
    let out = Command::new(BIN)
        .args([
            "census",
            "--listing",
            "conformance/census/small.json",
            "--cache",
        ])
        .arg(cache())
        .args([
            "--server",
            EVERYTHING,
            "--server",
            TIME,
            "--scenario",
            "close",
        ])
        .arg("--with-sdk")
        .arg(format!("typescript@local:marked={}", tgz.display()))
        .args(["--with-sdk", "python@2.2.0"])
        .args(["--format", "text", "--output"])
        .arg(tmp.join("r.json"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
    let after = format!("{EVERYTHING}.with-typescript-local-marked");
    let report: Value = serde_json::from_slice(&fs::read(tmp.join("r.json")).unwrap()).unwrap();
    let time_after = format!("{TIME}.with-python-2.2.0");
    assert_eq!(
        servers(&report),
        [
            EVERYTHING.to_string(),
            TIME.into(),
            after.clone(),
            time_after.clone()
        ]
    );
    let w = &report["with_sdk"][0];
    assert_eq!(
        (w["line"].as_str(), w["replacement"].as_str()),
        (Some("typescript"), Some("local:marked"))
    );
    let everything = &w["servers"][0];
    assert_eq!(everything["after"], after.as_str());
    assert_eq!(everything["copies"][0]["version"], "1.32.2");
    assert_eq!(everything["replaced"][0]["version"], "1.32.2");
    assert!(everything["not_replaced"].is_null(), "{everything:#}");
    assert_eq!(everything["endings"][0]["scenario"], "close");
    assert_eq!(w["servers"][1]["untouched"]["why"], "other-registry");
    // PyPI: mcp 2.3.0 in the server's own environment, 2.2.0 read back from the pinned one.
    let time = &report["with_sdk"][1]["servers"][1];
    assert_eq!(time["after"], time_after.as_str());
    assert_eq!(time["copies"][0]["version"], "2.3.0");
    assert_eq!(time["replaced"][0]["version"], "2.2.0", "{time:#}");
    assert_eq!(
        report["with_sdk"][1]["servers"][0]["untouched"]["why"],
        "other-registry"
    );
    // Every copy in the project's node_modules is the build: read back here too.
    let project = fs::read_dir(cache().join("with-sdk"))
        .unwrap()
        .flatten()
        .map(|d| d.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("typescript-local-marked-")
        })
        .expect("the project of the build")
        .join(EVERYTHING);
    let lock: Value =
        serde_json::from_slice(&fs::read(project.join("node_modules/.package-lock.json")).unwrap())
            .unwrap();
    let copies: Vec<(&String, &Value)> = lock["packages"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.ends_with("node_modules/@modelcontextprotocol/sdk"))
        .collect();
    assert!(!copies.is_empty());
    for (path, entry) in copies {
        let resolved = entry["resolved"].as_str().unwrap_or_default();
        assert!(
            resolved.ends_with("modelcontextprotocol-sdk-1.32.2-marked.tgz"),
            "{path}: {entry}"
        );
    }
    // At run time: the server with the build wrote the marker, the one as installed did not.
    let stderr_of = |server: &str| {
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["server"] == server)
            .unwrap()["stderr_tail"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(stderr_of(&after).contains(MARKER), "{}", stderr_of(&after));
    assert!(!stderr_of(EVERYTHING).contains(MARKER));
    assert!(
        text.contains("WITH SDK typescript local:marked, 1.32.2+local.")
            && text.contains("merging this changes ")
            && text.contains(&format!("untouched  {TIME}: a pypi package")),
        "{text}"
    );
    assert!(
        err.contains(&format!(
            "with-sdk typescript local:marked: {EVERYTHING}: 1 copy replaced"
        )),
        "{err}"
    );
}

/// `--with-sdk` refuses what it cannot run before installing anything: a range, a line of
/// another ecosystem.
#[test]
fn with_sdk_refuses_ranges_and_other_ecosystems_before_any_install() {
    for (arg, says) in [
        ("typescript@1.0.0..1.2.0", "one release or one local build"),
        (
            "go@1.0.0",
            "the census runs npm and PyPI servers; go is a go SDK",
        ),
    ] {
        let out = Command::new(BIN)
            .args([
                "census",
                "--listing",
                "conformance/census/small.json",
                "--cache",
            ])
            .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-census-cache"))
            .args(["--with-sdk", arg])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("install phase"), "{err}");
    }
}
