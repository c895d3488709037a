//! The binary as a user installs it: copied out of the checkout into an empty directory and
//! run where the checkout (its build path) is hidden, in a mount namespace with a tmpfs over
//! it (`unshare -m`, as root). Where no namespace can be made, it runs from a directory
//! outside the checkout instead, which still shows that nothing is read from the build path
//! unless the namespace is there. `run`, `--sdk` and `census` must then work from the suite
//! the binary carries, extracted into the user's cache, and say so in the report.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use mcp_shutdown_conformance::internals::setup::on_path;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn said(out: &Output) -> String {
    format!(
        "{}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether this machine lets us hide the checkout (root, `unshare` and tmpfs).
fn can_hide() -> bool {
    static CAN: OnceLock<bool> = OnceLock::new();
    *CAN.get_or_init(|| {
        Command::new("unshare")
            .args([
                "-m",
                "sh",
                "-c",
                "mount -t tmpfs tmpfs \"$0\" && test ! -e \"$0/Cargo.toml\"",
            ])
            .arg(ROOT)
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// A directory outside the checkout (the system's temporary directory).
pub fn outside(prefix: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    assert!(!d.path().starts_with(ROOT), "temp dir inside the checkout");
    d
}

/// `bin args...` in `cwd`, with the checkout hidden when that is possible.
pub fn relocated(bin: &Path, cwd: &Path, args: &[&str]) -> Output {
    let mut c = Command::new("timeout");
    c.args(["-k", "5", "900"]);
    if can_hide() {
        c.args([
            "unshare",
            "-m",
            "sh",
            "-c",
            "mount -t tmpfs tmpfs \"$0\" && exec \"$@\"",
        ])
        .arg(ROOT);
    }
    c.arg(bin)
        .args(args)
        .current_dir(cwd)
        .env_remove("MCP_SHUTDOWN_BIN")
        .env_remove("MCP_SHUTDOWN_KIT_CACHE")
        // Cargo sets it for the tests; a user's shell has none.
        .env_remove("CARGO_MANIFEST_DIR")
        .env("npm_config_update_notifier", "false")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The binary copied into an empty directory outside the checkout.
pub fn copied(bin: &Path) -> (tempfile::TempDir, PathBuf) {
    let d = outside("relocated-");
    let to = d.path().join("bin/mcp-shutdown");
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(bin, &to).unwrap();
    (d, to)
}

fn report(out: &Output, path: &Path) -> Value {
    let text = fs::read(path).unwrap_or_else(|e| panic!("no report ({e}): {}", said(out)));
    serde_json::from_slice(&text).unwrap()
}

fn statuses(r: &Value) -> Vec<(String, String)> {
    r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().into(),
                c["status"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// The relocated checks of the issue: `check`, `run --server`, `run --sdk`, `census`, of the
/// binary copied into an empty directory.
pub fn relocated_checks(bin: &Path) {
    let (dir, bin) = copied(bin);
    relocated_checks_of(&bin, dir.path());
}

/// The relocated checks of an installed command (a copied binary, or the launcher an npm
/// package or a wheel installed), run from `work`, a directory outside the checkout.
pub fn relocated_checks_of(bin: &Path, work: &Path) {
    if !on_path("node") || !on_path("npm") {
        crate::skip::missing(
            "relocated",
            "npm",
            "the bundled node fixture and --sdk use it",
        );
        return;
    }
    assert!(!work.starts_with(ROOT));
    let cache = mcp_cache();
    assert!(!cache.starts_with(ROOT));

    // check: a server of the user's own.
    fs::copy(
        Path::new(ROOT).join("fixtures/tiny/server.js"),
        work.join("server.js"),
    )
    .unwrap();
    let out = relocated(
        bin,
        work,
        &[
            "check",
            "--scenario",
            "close",
            "--output",
            "check.json",
            "--",
            "node",
            "server.js",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "check: {}", said(&out));
    let r = report(&out, &work.join("check.json"));
    assert!(
        statuses(&r["results"][0])
            .iter()
            .all(|(_, s)| s == "SUCCESS"),
        "{r:#}"
    );

    // run --server: a bundled fixture, installed into the user's cache.
    let out = relocated(
        bin,
        work,
        &[
            "run",
            "--server",
            "node-1.30.0-timer",
            "--scenario",
            "exit",
            "--output",
            "run.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "run --server: {}", said(&out));
    let run = report(&out, &work.join("run.json"));
    assert_eq!(run["host"]["suite_source"], "embedded", "{:#}", run["host"]);
    let suite = PathBuf::from(run["host"]["suite_path"].as_str().unwrap());
    assert!(suite.starts_with(&cache), "{}", suite.display());
    assert!(suite
        .join("fixtures/node-sdk-1.30.0/node_modules/@modelcontextprotocol/sdk/package.json")
        .is_file());
    let bundled = statuses(&run["results"][0]);
    assert!(
        !bundled.is_empty() && run["results"][0]["error"].is_null(),
        "{run:#}"
    );

    // run --sdk: a kit instance, in the user's kit cache; the same shape, the same verdicts.
    let out = relocated(
        bin,
        work,
        &[
            "run",
            "--sdk",
            "typescript@1.24.0",
            "--shape",
            "timer",
            "--scenario",
            "exit",
            "--output",
            "sdk.json",
        ],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "run --sdk: {}",
        said(&out)
    );
    let sdk = report(&out, &work.join("sdk.json"));
    assert_eq!(sdk["results"].as_array().unwrap().len(), 1, "{sdk:#}");
    assert!(sdk["results"][0]["error"].is_null(), "{sdk:#}");
    assert_eq!(statuses(&sdk["results"][0]), bundled, "{sdk:#}");
    assert_eq!(sdk["host"]["suite_source"], "embedded");

    // census on a one-server listing.
    let small: Value = serde_json::from_slice(
        &fs::read(Path::new(ROOT).join("conformance/census/small.json")).unwrap(),
    )
    .unwrap();
    let one = serde_json::json!({ "servers": [small["servers"][0].clone()] });
    fs::write(work.join("one.json"), one.to_string()).unwrap();
    let out = relocated(
        bin,
        work,
        &[
            "census",
            "--listing",
            "one.json",
            "--scenario",
            "exit",
            "--output",
            "census.json",
        ],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "census: {}",
        said(&out)
    );
    let census = report(&out, &work.join("census.json"));
    let results = census["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{census:#}");
    assert!(results[0]["error"].is_null(), "{census:#}");
    assert!(!statuses(&results[0]).is_empty(), "{census:#}");
}

/// The user's cache, as the binary resolves it.
fn mcp_cache() -> PathBuf {
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

#[test]
fn the_binary_alone_runs_every_command_where_its_checkout_is_hidden() {
    relocated_checks(Path::new(BIN));
}

/// The catalogues (rules, fixes, endings, kits) come from the binary itself, with no node
/// needed: a stdlib-only Python server is checked, its report rendered again with its fix,
/// and the rules and kit lines listed, where the checkout is hidden.
#[test]
fn the_binary_alone_reads_its_catalogues_from_itself() {
    if !on_path("python3") {
        crate::skip::missing("relocated", "python3", "the hostile fixtures use it");
        return;
    }
    let (dir, bin) = copied(Path::new(BIN));
    let work = dir.path();
    for f in ["mcp_min.py", "sigterm_only.py"] {
        fs::copy(
            Path::new(ROOT).join("fixtures/hostile").join(f),
            work.join(f),
        )
        .unwrap();
    }
    let run = |args: &[&str], code: i32| {
        let out = relocated(&bin, work, args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", said(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let rules = run(&["rules"], 0);
    assert!(rules.contains("stdio-exit-on-eof"), "{rules}");
    let lines = run(&["sdk", "lines"], 0);
    assert!(lines.lines().any(|l| l == "typescript"), "{lines}");
    let check = [
        "check",
        "--scenario",
        "close",
        "--name",
        "held",
        "--output",
        "r.json",
        "--",
        "python3",
        "-u",
        "sigterm_only.py",
    ];
    let said_then = run(&check, 1);
    let again = run(&["report", "render", "--from", "r.json"], 0);
    for text in [&said_then, &again] {
        assert!(text.contains("FIX      held: "), "{text}");
    }
}

#[test]
fn outside_a_checkout_errors_name_the_users_paths_once() {
    let (dir, bin) = copied(Path::new(BIN));
    let out = relocated(&bin, dir.path(), &["run", "--manifest", "nope.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nope.toml"), "{err}");
    assert!(!err.contains(ROOT), "names the build path: {err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
}

/// `cargo` for a crate of its own: none of the outer `cargo test`'s variables (its
/// manifest dir, target dir, package name, build-script output, ...) leak into it. Build
/// scripts that read `OUT_DIR` (ring's) would otherwise be rebuilt, with everything above
/// them, whenever the outer one changed.
fn inner_cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| {
            (k.starts_with("CARGO_") && k != "CARGO_HOME")
                || k == "OUT_DIR"
                || k == "RUSTC_BOOTSTRAP"
        }) {
            c.env_remove(k);
        }
    }
    c.stdin(Stdio::null());
    c
}

/// What `cargo package` puts in the crate under the suite's trees is exactly what the binary
/// embeds: no source is missing (a nested package would be), and no setup's output
/// (node_modules, target, venvs, stamps) is shipped.
#[test]
fn the_packaged_crate_holds_exactly_the_embedded_suite() {
    let out = inner_cargo()
        .args(["package", "--list", "--allow-dirty"])
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo package --list: {}", said(&out));
    let roots = ["conformance/", "kits/", "fixtures/"];
    let packaged: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| roots.iter().any(|r| l.starts_with(r)))
        .map(str::to_owned)
        .collect();
    let embedded: std::collections::BTreeSet<String> =
        mcp_shutdown_conformance::internals::embedded_paths()
            .map(str::to_owned)
            .collect();
    let missing: Vec<_> = embedded.difference(&packaged).collect();
    let extra: Vec<_> = packaged.difference(&embedded).take(20).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "embedded but not packaged: {missing:?}\npackaged but not embedded (first 20): {extra:?}"
    );
}

/// `cargo package` makes a crate whose binary passes the same checks. It builds in its own
/// target directory, with the workspace's build directory for the dependencies (compiled
/// once, not again for the package).
#[test]
fn the_packaged_crate_builds_a_binary_that_passes_the_relocated_checks() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("package-check");
    let out = inner_cargo()
        .args(["package", "--allow-dirty", "--no-verify", "--target-dir"])
        .arg(&target)
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo package: {}", said(&out));
    let name = format!("mcp-shutdown-conformance-{}", env!("CARGO_PKG_VERSION"));
    let crate_file = target.join(format!("package/{name}.crate"));
    let unpacked = outside("packaged-");
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(&crate_file)
        .arg("-C")
        .arg(unpacked.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "tar: {}", said(&out));
    // Built from one place per checkout, outside it, that keeps the files the package did
    // not change: the build is then as incremental as the checkout's own (a fresh directory
    // each run compiled the whole crate again, a minute of CPU).
    let place = std::env::temp_dir().join(format!(
        "mcp-shutdown-package-check-{}",
        ROOT.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    fs::create_dir_all(&place).unwrap();
    let lock = fs::File::create(place.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let src = place.join(&name);
    sync_tree(&unpacked.path().join(&name), &src);
    // What the packaged crate embeds: the suite's sources, never what setups install.
    for f in [
        "conformance/servers/node-1.30.0-timer.toml",
        "kits/typescript/kit.toml",
        "fixtures/node-sdk-1.30.0/package-lock.json",
    ] {
        assert!(src.join(f).is_file(), "{f} not packaged");
    }
    let build_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir")
        .to_path_buf();
    let out = inner_cargo()
        .args(["build", "--bin", "mcp-shutdown", "--target-dir"])
        .arg(&target)
        .arg("--config")
        .arg(format!(
            "build.build-dir={:?}",
            build_dir.join("package-build")
        ))
        .current_dir(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build of the package: {}",
        said(&out)
    );
    relocated_checks(&target.join("debug/mcp-shutdown"));
}

/// Makes `to` hold exactly the files of `from`: a file whose content is the same is left
/// alone (its modification time too, so cargo does not rebuild for it), the others are
/// copied or removed.
fn sync_tree(from: &Path, to: &Path) {
    fn files(root: &Path, dir: &Path, out: &mut std::collections::BTreeSet<PathBuf>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                files(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let (mut new, mut old) = Default::default();
    files(from, from, &mut new);
    files(to, to, &mut old);
    for f in old.difference(&new) {
        fs::remove_file(to.join(f)).unwrap();
    }
    for f in &new {
        let (a, b) = (from.join(f), to.join(f));
        if fs::read(&b).ok() != Some(fs::read(&a).unwrap()) {
            fs::create_dir_all(b.parent().unwrap()).unwrap();
            fs::copy(&a, &b).unwrap();
        }
    }
}
