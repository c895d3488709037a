//! Tests that need a tool this machine may lack (a browser, a toolchain, a PyPI package):
//! nothing passes that did not run. Under `CI=true` a missing tool fails the test with its
//! install hint (CI must have it); elsewhere the test says at once that it was skipped, and
//! the end of the run lists every skipped test, its last line counting them:
//!
//! ```text
//! test result: ok. 12 passed; 0 failed; ...
//! SKIPPED client_ladders::real_client_follows_its_profile(go-sdk-1.8.0): `go` is missing (install: apt-get install -y golang-go)
//! 1 test skipped for a missing tool (passed without running; under CI=true it fails)
//! ```
//!
//! libtest has no "skipped" outcome, so such a test returns early (reported `ok`); the list is
//! printed when the test binary exits, after libtest's own summary.

use std::sync::{Mutex, Once};

static SKIPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// Is this a CI run (`CI=true`, as GitHub Actions and `.ci/run`'s CI set it)?
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// How to install a tool the tests use, on this project's machines (Debian).
pub fn install_hint(tool: &str) -> String {
    let apt = |p: &str| format!("apt-get install -y --no-install-recommends {p}");
    match tool {
        "go" => apt("golang-go"),
        "java" => apt("openjdk-17-jdk-headless"),
        "mvn" => apt("maven"),
        "node" | "npm" | "npx" => apt("nodejs npm"),
        "python3" => apt("python3 python3-venv"),
        "chromium" => apt("chromium"),
        other => format!("put `{other}` on PATH"),
    }
}

/// `test` cannot run because `tool` is missing (`why`: how the tool was looked for, or why
/// installing it failed). Under CI this panics with the install hint; elsewhere it records
/// the skip and returns, and the caller returns at once.
pub fn missing(test: &str, tool: &str, why: &str) {
    let hint = install_hint(tool);
    if in_ci() {
        panic!("{test}: `{tool}` is missing ({why}); CI must have it: {hint}");
    }
    let line = format!("{test}: `{tool}` is missing (install: {hint}; {why})");
    eprintln!("SKIPPED {line}");
    SKIPPED.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    AT_EXIT.call_once(|| {
        // SAFETY: registers a function without arguments that only reads a static; it runs
        // once, on the process's normal exit, after libtest printed its summary.
        unsafe {
            libc::atexit(print_skipped);
        }
    });
}

extern "C" fn print_skipped() {
    let list = SKIPPED.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = String::new();
    for line in list.iter() {
        out.push_str(&format!("SKIPPED {line}\n"));
    }
    let n = list.len();
    out.push_str(&format!(
        "{n} test{} skipped for a missing tool (passed without running; under CI=true {} fail)\n",
        if n == 1 { "" } else { "s" },
        if n == 1 { "it would" } else { "they would" }
    ));
    // Straight to the file descriptor: at exit, std's stdout may already be torn down.
    // SAFETY: writes an owned, live buffer to fd 1.
    unsafe {
        libc::write(1, out.as_ptr().cast(), out.len());
    }
}

#[test]
fn install_hints_name_a_package() {
    assert_eq!(
        install_hint("go"),
        "apt-get install -y --no-install-recommends golang-go"
    );
    assert!(install_hint("zig").contains("`zig`"));
}
