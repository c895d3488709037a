//! The test-runner entry points as a server author uses them, each in its own runner: the
//! pytest plugin (`pytest --mcp-shutdown CMD` and the `mcp_shutdown` fixture) in pytest, and
//! the vitest/jest matchers (`expect(await checkShutdown(cmd)).toConform()`) in vitest, on a
//! TypeScript test file that tsc type-checks against the matchers' declarations first. Each
//! runs a real green server and a real red one, built on the real SDKs (the bundled shapes of
//! `mcp` 1.30.0 and `@modelcontextprotocol/sdk` 1.30.0: a non-daemon thread, a timer, and the
//! fixed shape of each), and checks the runner's own verdict and that a failure carries the
//! report. The plugin and matchers are installed from the packages `scripts/dist/pypi.sh` and
//! `scripts/dist/npm.sh` build (with the binary's own package as their dependency); pytest,
//! vitest and the SDKs come from PyPI and npm once, under `target/test-tools/`. A tool that
//! cannot be installed fails the test naming it; nothing is skipped.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::packaging::{bounded, dist, locked, ok, said, target_dir, tempdir};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const PYTEST: &str = "9.0.2";
/// vitest 3 runs on Node 20 (4.x and 5.x ask for newer); vite 7 is the newest it takes.
const VITEST: &str = "3.2.4";
const VITE: &str = "7.3.8";
/// The bundled TypeScript fixture's SDK and zod (fixtures/node-sdk-1.30.0/package.json).
const NODE_SDK: &str = "1.30.0";
const ZOD: &str = "3.25.76";
/// What the TypeScript test file is checked with (as tests/conformance/packaging.rs pins them).
const TYPESCRIPT: &str = "5.9.3";
const TYPES_NODE: &str = "20.19.43";

fn fixture(dir: &str, file: &str) -> PathBuf {
    Path::new(ROOT).join("fixtures").join(dir).join(file)
}

fn copy_into(dir: &Path, files: &[PathBuf]) {
    fs::create_dir_all(dir).unwrap();
    for f in files {
        fs::copy(f, dir.join(f.file_name().unwrap())).unwrap();
    }
}

/// A venv with the `mcp` SDK (the Python fixture's hash-locked requirements) and pytest.
fn pytest_venv() -> PathBuf {
    let venv = target_dir().join("test-tools/pytest-plugin-venv");
    let reqs = fixture("python-mcp-1.30.0", "requirements.txt");
    let stamp = venv.join(format!(".installed-{PYTEST}"));
    locked("pytest-plugin-venv", || {
        if stamp.is_file() && venv.join("bin/pytest").is_file() {
            return;
        }
        let _ = fs::remove_dir_all(&venv);
        let need = format!(
            "the pytest plugin's test needs mcp (fixtures/python-mcp-1.30.0) and pytest=={PYTEST} \
             from PyPI in a venv at {}",
            venv.display()
        );
        ok(
            bounded(300, "python3").args(["-m", "venv"]).arg(&venv),
            &format!("{need}: python3 -m venv"),
        );
        let pip = venv.join("bin/pip");
        ok(
            bounded(600, &pip)
                .args(["install", "--quiet", "--no-deps", "--require-hashes"])
                .args(["--only-binary", ":all:", "-r"])
                .arg(&reqs),
            &format!("{need}: pip install -r requirements.txt"),
        );
        ok(
            bounded(600, &pip)
                .args(["install", "--quiet"])
                .arg(format!("pytest=={PYTEST}")),
            &format!("{need}: pip install pytest"),
        );
        fs::write(&stamp, "").unwrap();
    });
    venv
}

/// `pytest ARGS` in `project`, with the venv first on PATH (as after `source .venv/bin/activate`).
fn pytest(venv: &Path, project: &Path, args: &[&str]) -> Output {
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    bounded(600, venv.join("bin/pytest"))
        .args(["-p", "no:cacheprovider", "-q"])
        .args(args)
        .env("PATH", path)
        .env("VIRTUAL_ENV", venv)
        .current_dir(project)
        .output()
        .unwrap()
}

#[test]
fn pytest_plugin_passes_a_fixed_server_and_fails_a_thread_server_with_the_report() {
    let venv = pytest_venv();
    let dist = dist();
    let d = tempdir("pytest-plugin-");
    // The plugin and the binary's wheel, as `pip install pytest-mcp-shutdown` would bring them.
    locked("pytest-plugin-venv", || {
        let pip = venv.join("bin/pip");
        ok(
            bounded(300, &pip).args([
                "uninstall",
                "--quiet",
                "--yes",
                "pytest-mcp-shutdown",
                "mcp-shutdown-conformance",
            ]),
            "pip uninstall (an earlier build's wheels)",
        );
        // No index: pytest is there already, the binary's wheel is the plugin's dependency.
        ok(
            bounded(300, &pip)
                .args(["install", "--quiet", "--no-index"])
                .arg(&dist.wheel)
                .arg(&dist.plugin_wheel),
            "pip install (the binary's and the plugin's wheels)",
        );
        let servers = [
            fixture("python-mcp-1.30.0", "server_fixed.py"),
            fixture("python-mcp-1.30.0", "server_thread.py"),
        ];
        let project = d.path().join("fixture-tests");
        copy_into(&project, &servers);
        fs::copy(
            Path::new(ROOT).join("tests/plugins/pytest/test_shutdown.py"),
            project.join("test_shutdown.py"),
        )
        .unwrap();
        // The fixture: two tests pass, the thread server's `assert_conforms` fails.
        let out = pytest(&venv, &project, &[]);
        let text = said(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains("1 failed, 2 passed"), "{text}");
        assert!(
            text.contains("FAILED test_shutdown.py::test_thread_server_conforms"),
            "{text}"
        );
        assert_carries_the_report(&text);

        // The command-line option: one test per server command.
        let project = d.path().join("option");
        copy_into(&project, &servers);
        let out = pytest(
            &venv,
            &project,
            &[
                "--mcp-shutdown",
                "python server_fixed.py",
                "--mcp-shutdown",
                "python server_thread.py",
                "--mcp-shutdown-args",
                "--scenario close --scenario exit",
                "-rA",
            ],
        );
        let text = said(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains("1 failed, 1 passed"), "{text}");
        assert!(
            text.contains("PASSED ::mcp-shutdown[python server_fixed.py]")
                && text.contains("FAILED ::mcp-shutdown[python server_thread.py]"),
            "{text}"
        );
        assert_carries_the_report(&text);
    });
}

/// A failure shows the report: the rule missed, and what held the server with its fix.
fn assert_carries_the_report(text: &str) {
    assert!(text.contains("stdio-exit-on-eof"), "{text}");
    assert!(text.contains("HELD BY"), "what held it: {text}");
    assert!(text.contains("FIX "), "the fix: {text}");
}

#[test]
fn vitest_matchers_pass_a_fixed_server_and_fail_a_timer_server_with_the_report() {
    let dist = dist();
    let d = tempdir("vitest-plugin-");
    let project = d.path().join("project");
    copy_into(
        &project,
        &[
            fixture("node-sdk-1.30.0", "fixed.mjs"),
            fixture("node-sdk-1.30.0", "timer.mjs"),
            Path::new(ROOT).join("tests/plugins/vitest/shutdown.test.ts"),
            Path::new(ROOT).join("tests/plugins/vitest/vitest.config.mjs"),
            Path::new(ROOT).join("tests/plugins/vitest/tsconfig.json"),
        ],
    );
    fs::write(
        project.join("package.json"),
        "{\"name\": \"server-under-test\", \"version\": \"1.0.0\", \"private\": true, \"type\": \"module\"}\n",
    )
    .unwrap();
    // Registry packages from a shared cache (fetched once); ours from the built tarballs.
    let cache = target_dir().join("test-tools/npm-cache-plugins");
    locked("npm-cache-plugins", || {
        ok(
            bounded(600, "npm")
                .args(["install", "--prefer-offline", "--no-audit", "--no-fund"])
                .arg(format!("vitest@{VITEST}"))
                .arg(format!("vite@{VITE}"))
                .arg(format!("@modelcontextprotocol/sdk@{NODE_SDK}"))
                .arg(format!("zod@{ZOD}"))
                .arg(format!("typescript@{TYPESCRIPT}"))
                .arg(format!("@types/node@{TYPES_NODE}"))
                .args([&dist.npm_main, &dist.npm_platform, &dist.npm_vitest])
                .env("npm_config_cache", &cache)
                .current_dir(&project),
            &format!(
                "the vitest matchers' test needs vitest@{VITEST}, vite@{VITE}, \
                 @modelcontextprotocol/sdk@{NODE_SDK}, zod@{ZOD}, typescript@{TYPESCRIPT} and \
                 @types/node@{TYPES_NODE} from npm: npm install"
            ),
        )
    });
    // The matchers' types on vitest's expect, as an author's editor sees them.
    ok(
        bounded(300, project.join("node_modules/.bin/tsc"))
            .args(["-p", "."])
            .current_dir(&project),
        "tsc (the test file, typed against the matchers)",
    );
    let out = bounded(600, "npx")
        .args(["--offline", "vitest", "run", "--reporter", "verbose"])
        .env("npm_config_cache", &cache)
        .env("NO_COLOR", "1")
        .current_dir(&project)
        .output()
        .unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("1 failed | 2 passed"), "{text}");
    assert!(
        text.contains("✓ shutdown.test.ts > the fixed server conforms"),
        "{text}"
    );
    assert!(
        text.contains("✓ shutdown.test.ts > the timer server is told what it missed"),
        "{text}"
    );
    assert!(
        text.contains("× shutdown.test.ts > the timer server conforms"),
        "{text}"
    );
    assert_carries_the_report(&text);
}
