//! `check --watch` as an author uses it: the whole report first; then, after the server's
//! file is edited to hold a timer, only what changed; Ctrl-C stops it with exit 130 and
//! nothing left running. How long the stop took is printed, not asserted.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::{assert_nothing_left, fresh_mark, MARK};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Lines of `stdout` until one contains `want`; panics with what came after `wait`.
fn until(lines: &mpsc::Receiver<String>, seen: &mut String, want: &str, wait: Duration) {
    let deadline = Instant::now() + wait;
    while !seen.contains(want) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(l) => {
                seen.push_str(&l);
                seen.push('\n');
            }
            Err(_) => panic!("no `{want}` after {wait:?}; the output so far:\n{seen}"),
        }
    }
}

#[test]
fn watch_reruns_on_an_edit_shows_only_the_change_and_stops_on_ctrl_c() {
    let d = tempfile::Builder::new()
        .prefix("watch-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let server = d.path().join("server.js");
    let source = std::fs::read_to_string(Path::new(ROOT).join("fixtures/tiny/server.js")).unwrap();
    std::fs::write(&server, &source).unwrap();
    let mark = fresh_mark();
    let mut child = Command::new(BIN)
        .args([
            "check",
            "--watch",
            "--scenario",
            "close",
            "--scenario",
            "exit",
        ])
        .args(["--", "node", "server.js"])
        .current_dir(d.path())
        .env(MARK, &mark)
        .env_remove("MCP_SHUTDOWN_BIN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let said = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut seen = String::new();
    until(&lines, &mut seen, "spec ", Duration::from_secs(120));
    assert!(seen.contains("eof"), "the tiny server exits on EOF: {seen}");
    let first = seen.len();

    // The classic bug: a timer keeps the event loop alive after stdin ends.
    std::fs::write(
        &server,
        format!("{source}\nsetInterval(() => {{}}, 1000);\n"),
    )
    .unwrap();
    until(
        &lines,
        &mut seen,
        "changes since the last run:",
        Duration::from_secs(120),
    );
    until(&lines, &mut seen, "× exit: ", Duration::from_secs(30));
    let rerun = &seen[first..];
    assert!(rerun.contains("WORSE   "), "{rerun}");
    assert!(
        !rerun.contains("spec "),
        "the re-run shows changes, not the matrix: {rerun}"
    );
    assert!(
        rerun.contains("stdio-exit-on-eof: SUCCESS → WARNING"),
        "{rerun}"
    );

    let asked = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let took = asked.elapsed();
    let stderr = said.join().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}\n{stderr}");
    assert!(stderr.contains("stopped watching"), "{stderr}");
    println!("check --watch stopped {took:?} after SIGINT");
    assert_nothing_left(&mark, "check --watch");
}
