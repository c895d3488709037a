//! `run --sdk`: kit instances on the command line. Argument errors are clear, and a real run
//! proves the point of the local path: the TypeScript SDK 1.24.0 with its stdio transport
//! patched to exit on stdin EOF passes `stdio-exit-on-eof` in the timer shape, where the
//! published 1.24.0 needs SIGTERM. Installs go to the default kit cache (`target/kit-cache`),
//! the one `mcp-shutdown run --sdk` uses, so they happen once per checkout.

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp-shutdown"))
}

#[test]
fn an_unknown_line_lists_the_known_ones() {
    cli()
        .args(["run", "--sdk", "typescirpt@1.24.0"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no kit for SDK line `typescirpt`")
                .and(predicate::str::contains("typescript"))
                .and(predicate::str::contains("python")),
        );
}

#[test]
fn bad_version_syntax_names_the_argument() {
    for (arg, says) in [
        ("typescript@1.x", "--sdk \"typescript@1.x\""),
        ("typescript@", "the version after '@' is empty"),
        ("@1.24.0", "the SDK line is missing"),
        ("typescript=", "the path after '=' is empty"),
        ("typescript@2.0.0..1.0.0", "the range is empty"),
    ] {
        cli()
            .args(["run", "--sdk", arg])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
}

/// The default kit cache, as the binary finds it when run from the repository.
fn kit_cache() -> PathBuf {
    std::env::var_os("MCP_SHUTDOWN_KIT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/kit-cache"))
}

fn sh(cmd: &mut Std) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The stdio transport's `start()` of 1.24.0, made to end the process when stdin ends.
const PATCH: &str = "this._stdin.on('error', this._onerror);
        const endOnEof = () => { void this.close().finally(() => process.exit(0)); };
        this._stdin.once('end', endOnEof);
        this._stdin.once('close', endOnEof);";

/// `npm pack @modelcontextprotocol/sdk@1.24.0`, both builds of `server/stdio.js` patched,
/// packed again byte-for-byte reproducibly (sorted, mtime 0, `gzip -n`), so its content
/// hash — the local label — is the same every run and the install is cached.
fn patched_sdk(dir: &Path) -> PathBuf {
    let npm_cache = kit_cache().join("npm");
    sh(Std::new("npm")
        .args([
            "pack",
            "@modelcontextprotocol/sdk@1.24.0",
            "--prefer-offline",
        ])
        .arg("--pack-destination")
        .arg(dir)
        .env("npm_config_cache", &npm_cache)
        .current_dir(dir));
    sh(Std::new("tar")
        .args(["-xzf", "modelcontextprotocol-sdk-1.24.0.tgz"])
        .current_dir(dir));
    for build in ["esm", "cjs"] {
        let p = dir.join(format!("package/dist/{build}/server/stdio.js"));
        let js = std::fs::read_to_string(&p).unwrap();
        let old = "this._stdin.on('error', this._onerror);";
        assert_eq!(js.matches(old).count(), 1, "{}", p.display());
        std::fs::write(&p, js.replace(old, PATCH)).unwrap();
    }
    let out = dir.join("modelcontextprotocol-sdk-1.24.0-exit-on-eof.tgz");
    sh(Std::new("sh")
        .arg("-c")
        .arg("tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - package | gzip -n > \"$1\"")
        .arg("sh")
        .arg(&out)
        .current_dir(dir));
    out
}

fn check<'a>(result: &'a Value, rule: &str) -> &'a str {
    result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == rule)
        .and_then(|c| c["status"].as_str())
        .unwrap_or_else(|| panic!("no {rule} check in {result}"))
}

/// The report of a run with one release and one patched local build of it: the release
/// needs SIGTERM after stdin closes (a missed SHOULD), the patched build exits on EOF.
/// Returns the report and the patched build's server name.
fn release_needs_sigterm_fix_exits_on_eof(
    stdout: &[u8],
    stderr: &str,
    release: &str,
    local: &str,
) -> (Value, String) {
    let report: Value = serde_json::from_slice(stdout).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{stderr}");
    let by = |prefix: &str| {
        results
            .iter()
            .find(|r| r["server"].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}* in {results:?}"))
    };
    let (published, patched) = (by(release), by(local));
    assert_eq!(published["stage"], "sigterm", "{published}");
    assert_eq!(check(published, "stdio-exit-on-eof"), "WARNING");
    assert_eq!(patched["stage"], "eof", "{patched}");
    assert_eq!(check(patched, "stdio-exit-on-eof"), "SUCCESS");
    let name = patched["server"].as_str().unwrap().to_string();
    (report, name)
}

/// One run: the published 1.24.0, the patched build of it, and 0.4.0 (no template fits):
/// timer shape, `close` only, scored by the revision whose EOF rule is a SHOULD.
#[test]
fn a_patched_local_sdk_exits_on_eof_where_the_release_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let tgz = patched_sdk(tmp.path());
    let out = cli()
        .args(["run", "--sdk", "typescript@1.24.0", "--sdk"])
        .arg(format!("typescript={}", tgz.display()))
        .args(["--sdk", "typescript@0.4.0", "--shape", "timer"])
        .args([
            "--scenario",
            "close",
            "--spec",
            "2026-07-28",
            "--format",
            "json",
        ])
        .arg("--output")
        .arg(tmp.path().join("report.json"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The release misses a SHOULD.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("sdk [3/3]"),
        "one progress line per version: {stderr}"
    );
    // The JSON went to its --output file, not to the terminal too.
    assert!(out.stdout.is_empty(), "{stderr}");
    let (report, local) = release_needs_sigterm_fix_exits_on_eof(
        &std::fs::read(tmp.path().join("report.json")).unwrap(),
        &stderr,
        "typescript-1.24.0-timer",
        "typescript-local-",
    );
    let version = report["servers"][&local]["sdk_version"].as_str().unwrap();
    assert!(version.starts_with("1.24.0+local."), "{version}");
    let untested = &report["not_testable_versions"][0];
    assert_eq!(
        (&untested["line"], &untested["version"]),
        (&"typescript".into(), &"0.4.0".into())
    );
    assert!(
        untested["reason"].as_str().unwrap().contains("predate"),
        "{untested}"
    );
    // The same report, re-rendered: the history names the build where the stage changed.
    let text = cli()
        .args(["report", "render", "--format", "text", "--from"])
        .arg(tmp.path().join("report.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("HISTORY  typescript: 2 versions"), "{text}");
    assert!(
        text.contains(
            "changed at local:modelcontextprotocol-sdk-1.24.0-exit-on-eof (sigterm → eof)"
        ),
        "{text}"
    );
    // The two builds, paired by shape and ending, before → after: one check fixed.
    let diff = cli()
        .arg("diff")
        .arg(tmp.path().join("report.json"))
        .args(["--before", "typescript@1.24.0"])
        .args([
            "--after",
            "typescript@local:modelcontextprotocol-sdk-1.24.0-exit-on-eof",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&diff.stdout);
    assert_eq!(diff.status.code(), Some(0), "{md}");
    assert!(md.contains("**1 fixed · 0 broken"), "{md}");
    assert!(
        md.contains("| typescript/timer | close | sigterm · "),
        "{md}"
    );
    assert!(
        text.contains("NOT TESTABLE\n  typescript 0.4.0: 0.x releases predate"),
        "{text}"
    );
}

/// `mcp` 1.20.0's wheel with `stdin_reader` ending the process once stdin is exhausted,
/// rezipped reproducibly (entries sorted, fixed timestamps, its RECORD line updated) so
/// its content hash — the local label — is the same every run.
fn patched_python_sdk(dir: &Path) -> PathBuf {
    sh(Std::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
        ])
        .args(["mcp==1.20.0", "-d"])
        .arg(dir.join("orig")));
    let script = r#"
import base64, hashlib, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
old = ("                    await read_stream_writer.send(session_message)\n"
       "        except anyio.ClosedResourceError:\n            await anyio.lowlevel.checkpoint()\n")
new = old + "        __import__('os')._exit(0)\n"
with zipfile.ZipFile(src) as z:
    files = {n: z.read(n) for n in z.namelist()}
py = files["mcp/server/stdio.py"].decode()
assert py.count(old) == 1, "stdin_reader changed"
files["mcp/server/stdio.py"] = py.replace(old, new).encode()
data = files["mcp/server/stdio.py"]
digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
record = next(n for n in files if n.endswith(".dist-info/RECORD"))
lines = [f"mcp/server/stdio.py,sha256={digest},{len(data)}" if l.startswith("mcp/server/stdio.py,") else l
         for l in files[record].decode().splitlines()]
files[record] = ("\n".join(lines) + "\n").encode()
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for n in sorted(files):
        z.writestr(zipfile.ZipInfo(n, (1980, 1, 1, 0, 0, 0)), files[n], zipfile.ZIP_DEFLATED)
"#;
    let name = "mcp-1.20.0-py3-none-any.whl";
    std::fs::create_dir_all(dir.join("patched")).unwrap();
    let out = dir.join("patched").join(name);
    sh(Std::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir.join("orig").join(name))
        .arg(&out));
    // The kit dates a wheel by its mtime and resolves its dependencies as of then: 1.20.0's
    // upload (2025-10-30T22:14:51Z), as for the release (today's pydantic breaks it).
    let uploaded = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_761_862_491);
    std::fs::File::options()
        .write(true)
        .open(&out)
        .and_then(|f| f.set_modified(uploaded))
        .unwrap();
    out
}

/// The same proof for Python: `mcp` 1.20.0's thread shape (a non-daemon thread) needs
/// SIGTERM after stdin closes; with the transport patched it exits on EOF.
#[test]
fn a_patched_local_python_sdk_exits_on_eof_where_the_release_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let whl = patched_python_sdk(tmp.path());
    let out = cli()
        .args(["run", "--sdk", "python@1.20.0", "--sdk"])
        .arg(format!("python={}", whl.display()))
        .args(["--shape", "thread", "--scenario", "close"])
        .args(["--spec", "2026-07-28", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    release_needs_sigterm_fix_exits_on_eof(
        &out.stdout,
        &stderr,
        "python-1.20.0-thread",
        "python-local-",
    );
}

/// `sdk lines` names every kit of the suite, offline; `sdk versions` refuses a local build
/// and `--bisect` anything but one range, before touching a registry.
#[test]
fn sdk_lines_and_the_bisect_arguments() {
    let out = cli().args(["sdk", "lines"]).output().unwrap();
    assert!(out.status.success());
    let lines = String::from_utf8_lossy(&out.stdout);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kits");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.join("kit.toml").exists() {
            let id = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(lines.lines().any(|l| l == id), "{id} not in {lines}");
        }
    }
    let out = cli()
        .args(["sdk", "versions", "typescript=../nowhere"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no published releases"));
    let out = cli()
        .args(["run", "--sdk", "python@1.26.0", "--bisect"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a range of releases"));
}
