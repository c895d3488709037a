//! The install phase and the offline launch (the recipe in `conformance/census/RECIPE.md`).
//!
//! Every package goes once, at its exact version and with all its dependencies, into one
//! shared cache directory:
//!
//! ```text
//! $CACHE/npm/          npm's cache (npm_config_cache); npx installs land in npm/_npx/<hash>
//! $CACHE/uv/           a venv holding the pinned uv (uv, uvx)
//! $CACHE/uv-cache/     uv's cache (UV_CACHE_DIR); uvx environments live in archive-v0
//! $CACHE/uv-tools/     an empty tool dir, so a user's `uv tool install`s are not picked up
//! $CACHE/work/         the empty working directory of installs and launches
//! $CACHE/stamps/       one stamp per installed package@version (and one for uv)
//! $CACHE/locks/        the lock files that serialize installs across processes
//! $CACHE/logs/         the full output of each install
//! ```
//!
//! An install is the launcher's own command run online with a no-op in place of the server
//! (`npx --yes --package=ID@VER -- true`, `uvx --from ID==VER python -c ""`), so npx and uvx
//! fill exactly the directories they later read; it is then repeated with the offline switches
//! to prove the launch will not need the network. The launch runs the same launcher with
//! those switches, so a missing package fails at once instead of downloading mid-measurement.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::listing::{Entry, Registry, Runtime};

/// The uv release the census installs from PyPI (and so the uvx every PyPI server runs under).
pub const UV_VERSION: &str = "0.13.9";

/// Bumped when the install commands change, so old stamps no longer count.
const RECIPE: &str = "census-recipe-1";

/// An install that takes longer is stopped: a resolver stuck on the network, not a slow disk.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// Lines of install output kept in an error.
const TAIL_LINES: usize = 25;

/// How to start one entry from the cache, offline: argv (no shell), environment additions and
/// working directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Launch {
    /// `npx` (looked up on `PATH`, as users run it) or the absolute path of the cached `uvx`.
    pub program: String,
    pub args: Vec<String>,
    /// Added to the caller's environment.
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

/// What the install phase is doing, for a progress line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Installing a launcher into the cache (uv, once per cache).
    Runtime { tool: String, version: String },
    Started {
        index: usize,
        total: usize,
        id: String,
    },
    Finished {
        index: usize,
        total: usize,
        id: String,
        /// Already installed by an earlier run (the stamp was there).
        cached: bool,
        ok: bool,
        elapsed: Duration,
    },
}

/// Why a package is not ready to launch offline.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InstallError {
    #[error("installing {id} needs `{program}`, which is not on PATH")]
    MissingProgram { id: String, program: String },
    #[error("install cache {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("install of {id}: `{command}` could not start: {source}")]
    Spawn {
        id: String,
        command: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("install of {id}: `{command}` failed ({status}); full output in {}; last lines:\n{tail}", log.display())]
    Failed {
        id: String,
        command: String,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error("install of {id}: `{command}` still running after {}s, stopped; full output in {}; last lines:\n{tail}", timeout.as_secs(), log.display())]
    TimedOut {
        id: String,
        command: String,
        timeout: Duration,
        log: PathBuf,
        tail: String,
    },
    #[error("install of {id}: uv {UV_VERSION} is not available: {reason}")]
    NoUv {
        id: String,
        #[source]
        reason: UvError,
    },
}

/// Why the pinned uv could not be put into the cache.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UvError {
    #[error("`python3` is not on PATH")]
    NoPython,
    #[error("{0}")]
    Install(Box<InstallError>),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + '_ {
    move |e| InstallError::Io {
        path: path.to_path_buf(),
        source: Arc::new(e),
    }
}

/// One command of the recipe, as data (so the pure parts can be tested without running it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

impl Step {
    /// For messages and stamps; words with spaces quoted so the line reads unambiguously.
    pub fn render(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|w| {
                if w.is_empty() || w.contains(char::is_whitespace) {
                    format!("{w:?}")
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The environment it sets, then the command: what a stamp records and a log shows.
    pub fn render_with_env(&self) -> String {
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if env.is_empty() {
            self.render()
        } else {
            format!("env {} {}", env.join(" "), self.render())
        }
    }
}

/// Where a step ran to, as far as the install logic cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failed { status: String },
    TimedOut,
}

/// Runs steps; the real one spawns processes, tests count calls.
trait Runner {
    fn run(&self, step: &Step, log: &mut File) -> std::io::Result<Outcome>;
}

struct System;

impl Runner for System {
    fn run(&self, step: &Step, log: &mut File) -> std::io::Result<Outcome> {
        writeln!(log, "$ {}", step.render_with_env())?;
        let out = log.try_clone()?;
        let err = log.try_clone()?;
        let mut child = Command::new(&step.program)
            .args(&step.args)
            .envs(&step.env)
            .current_dir(&step.cwd)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own group, so a timeout stops the install's children (sh, node-gyp, …) too.
            .process_group(0)
            .spawn()?;
        let deadline = Instant::now() + INSTALL_TIMEOUT;
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(if status.success() {
                    Outcome::Success
                } else {
                    Outcome::Failed {
                        status: status.to_string(),
                    }
                });
            }
            if Instant::now() >= deadline {
                // std has no killpg; the kill(1) utility reaches the whole group.
                let group = format!("-{}", child.id());
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &group])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Outcome::TimedOut);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The cache layout.
fn npm_cache(cache: &Path) -> PathBuf {
    cache.join("npm")
}
fn uv_venv(cache: &Path) -> PathBuf {
    cache.join("uv")
}
fn uvx_path(cache: &Path) -> PathBuf {
    uv_venv(cache).join("bin").join("uvx")
}
fn work_dir(cache: &Path) -> PathBuf {
    cache.join("work")
}

/// The environment every npx step and launch gets. The npm cache is the shared one; the
/// notifier, funding and audit requests are switched off because they touch the network and
/// print to the terminal.
fn npm_env(cache: &Path, offline: bool) -> BTreeMap<String, String> {
    let mut env = BTreeMap::from([
        (
            "npm_config_cache".to_string(),
            npm_cache(cache).display().to_string(),
        ),
        ("npm_config_update_notifier".into(), "false".into()),
        ("npm_config_fund".into(), "false".into()),
        ("npm_config_audit".into(), "false".into()),
        ("NO_UPDATE_NOTIFIER".into(), "1".into()),
    ]);
    // `offline` makes npm answer from the cache or fail with ENOTCACHED, never fetch.
    env.insert("npm_config_offline".into(), offline.to_string());
    env
}

/// The environment every uvx step and launch gets: uv's cache and an empty tool dir under
/// `$CACHE`, no user or project `uv.toml`, and never a Python download (none can be fetched
/// here; uv uses the interpreters it finds).
fn uv_env(cache: &Path, offline: bool) -> BTreeMap<String, String> {
    let mut env = BTreeMap::from([
        (
            "UV_CACHE_DIR".to_string(),
            cache.join("uv-cache").display().to_string(),
        ),
        (
            "UV_TOOL_DIR".to_string(),
            cache.join("uv-tools").display().to_string(),
        ),
        ("UV_NO_CONFIG".into(), "1".into()),
        ("UV_PYTHON_DOWNLOADS".into(), "never".into()),
        ("UV_NO_PROGRESS".into(), "1".into()),
    ]);
    if offline {
        env.insert("UV_OFFLINE".into(), "1".into());
    }
    env
}

/// The online install step of an entry and the offline check that follows it.
pub fn install_steps(entry: &Entry, cache: &Path) -> [Step; 2] {
    let spec_args = |offline: bool| -> Step {
        match entry.runtime {
            Runtime::Npx => {
                let mut args = vec!["--yes".to_string()];
                args.extend(entry.runtime_args.iter().cloned());
                args.push(format!("--package={}@{}", entry.identifier, entry.version));
                args.extend(["--".to_string(), "true".to_string()]);
                let mut env = npm_env(cache, offline);
                // Lifecycle scripts (postinstall downloads and builds) print into the install
                // log instead of npm's own debug log, so a failure's tail says what failed.
                env.insert("npm_config_foreground_scripts".into(), "true".into());
                Step {
                    program: "npx".into(),
                    args,
                    env,
                    cwd: work_dir(cache),
                }
            }
            Runtime::Uvx => {
                let mut args = entry.runtime_args.clone();
                args.push("--from".into());
                args.push(format!("{}=={}", entry.identifier, entry.version));
                args.extend(["python".to_string(), "-c".to_string(), String::new()]);
                let mut env = uv_env(cache, offline);
                // Bytecode compiled once at install: a launch then imports .pyc files instead
                // of compiling every module again (PYTHONDONTWRITEBYTECODE is common in CI and
                // would make that happen on every start).
                env.insert("UV_COMPILE_BYTECODE".into(), "1".into());
                Step {
                    program: uvx_path(cache).display().to_string(),
                    args,
                    env,
                    cwd: work_dir(cache),
                }
            }
        }
    };
    [spec_args(false), spec_args(true)]
}

/// The offline launch of an entry from the cache.
pub fn launch(entry: &Entry, cache: &Path) -> Launch {
    let (program, mut env) = match entry.runtime {
        Runtime::Npx => ("npx".to_string(), npm_env(cache, true)),
        Runtime::Uvx => (uvx_path(cache).display().to_string(), uv_env(cache, true)),
    };
    // The server's own variables go last: they are what its README asks for.
    env.extend(entry.env.clone());
    Launch {
        program,
        args: entry.args.clone(),
        env,
        cwd: work_dir(cache),
    }
}

/// 64-bit FNV-1a: stable across Rust releases (unlike `DefaultHasher`), enough for a stamp name.
fn fnv1a(data: &str) -> u64 {
    data.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A file-name-safe key for one install: readable prefix, hash of everything that matters.
fn install_key(entry: &Entry, steps: &[Step]) -> String {
    let readable = super::listing::entry_id(&entry.identifier, &entry.version);
    let what = format!(
        "{RECIPE}\n{}\n{}",
        entry.registry,
        steps
            .iter()
            .map(Step::render)
            .collect::<Vec<_>>()
            .join("\n")
    );
    format!("{}-{readable}-{:016x}", entry.registry, fnv1a(&what))
}

/// The last `n` lines of a log, for an error message.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn read_tail(log: &mut File) -> String {
    let mut text = String::new();
    // Only the end matters; a huge log is read from its last 64 KiB.
    let len = log.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = log.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let mut bytes = vec![];
    let _ = log.read_to_end(&mut bytes);
    text.push_str(&String::from_utf8_lossy(&bytes));
    tail(&text, TAIL_LINES)
}

/// Is `program` runnable: an executable path, or found on `PATH`.
fn on_path(program: &str) -> bool {
    which::which(program).is_ok()
}

/// Holds an exclusive lock on `locks/<key>.lock` until dropped. The lock belongs to the open
/// file, so it is released if the process dies, and threads of one process exclude each
/// other as separate processes do.
struct Lock(#[allow(dead_code)] File);

// `File::lock` is std since 1.89, the crate's rust-version.
fn lock(cache: &Path, key: &str) -> Result<Lock, InstallError> {
    let dir = cache.join("locks");
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let path = dir.join(format!("{key}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err(&path))?;
    file.lock().map_err(io_err(&path))?;
    Ok(Lock(file))
}

fn stamp_content(steps: &[Step]) -> String {
    let mut content = format!("{RECIPE}\n");
    for step in steps {
        content.push_str(&step.render_with_env());
        content.push('\n');
    }
    content
}

fn stamp_path(cache: &Path, key: &str) -> PathBuf {
    cache.join("stamps").join(format!("{key}.stamp"))
}

fn stamped(cache: &Path, key: &str, content: &str) -> bool {
    fs::read_to_string(stamp_path(cache, key)).is_ok_and(|s| s == content)
}

/// Written by rename, so a reader never sees half a stamp.
fn write_stamp(cache: &Path, key: &str, content: &str) -> Result<(), InstallError> {
    let path = stamp_path(cache, key);
    let dir = cache.join("stamps");
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    fs::write(&tmp, content).map_err(io_err(&tmp))?;
    fs::rename(&tmp, &path).map_err(io_err(&path))
}

/// Runs `steps` in order under the key's lock unless the stamp says they already ran; returns
/// whether it was cached.
fn run_once(
    runner: &dyn Runner,
    cache: &Path,
    id: &str,
    key: &str,
    steps: &[Step],
) -> Result<bool, InstallError> {
    let content = stamp_content(steps);
    // Fast path without the lock: a finished stamp is never rewritten with other content.
    if stamped(cache, key, &content) {
        return Ok(true);
    }
    let _lock = lock(cache, key)?;
    if stamped(cache, key, &content) {
        return Ok(true);
    }
    for dir in [work_dir(cache), cache.join("logs")] {
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    }
    let log_path = cache.join("logs").join(format!("{key}.log"));
    let mut log = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&log_path)
        .map_err(io_err(&log_path))?;
    for step in steps {
        let outcome = runner
            .run(step, &mut log)
            .map_err(|e| InstallError::Spawn {
                id: id.to_string(),
                command: step.render(),
                source: Arc::new(e),
            })?;
        match outcome {
            Outcome::Success => {}
            Outcome::Failed { status } => {
                return Err(InstallError::Failed {
                    id: id.to_string(),
                    command: step.render(),
                    status,
                    tail: read_tail(&mut log),
                    log: log_path,
                })
            }
            Outcome::TimedOut => {
                return Err(InstallError::TimedOut {
                    id: id.to_string(),
                    command: step.render(),
                    timeout: INSTALL_TIMEOUT,
                    tail: read_tail(&mut log),
                    log: log_path,
                })
            }
        }
    }
    write_stamp(cache, key, &content)?;
    Ok(false)
}

/// The steps that put the pinned uv into `$CACHE/uv`: a venv of the system Python and uv from
/// PyPI at [`UV_VERSION`].
fn uv_steps(cache: &Path) -> Vec<Step> {
    let venv = uv_venv(cache);
    vec![
        Step {
            program: "python3".into(),
            args: vec![
                "-m".into(),
                "venv".into(),
                "--clear".into(),
                venv.display().to_string(),
            ],
            env: BTreeMap::new(),
            cwd: cache.to_path_buf(),
        },
        Step {
            program: venv.join("bin").join("python").display().to_string(),
            args: vec![
                "-m".into(),
                "pip".into(),
                "install".into(),
                "--disable-pip-version-check".into(),
                "--no-input".into(),
                format!("uv=={UV_VERSION}"),
            ],
            env: BTreeMap::from([("PIP_NO_INPUT".to_string(), "1".to_string())]),
            cwd: cache.to_path_buf(),
        },
    ]
}

/// Installs every entry (at most once per package@version and recipe, whatever the number of
/// processes doing it at once) and verifies each can start offline. One result per entry, in
/// order.
pub fn install(
    entries: &[Entry],
    cache: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Vec<Result<(), InstallError>> {
    install_with(&System, entries, cache, progress)
}

fn install_with(
    runner: &dyn Runner,
    entries: &[Entry],
    cache: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Vec<Result<(), InstallError>> {
    let uv = if entries.iter().any(|e| e.runtime == Runtime::Uvx) {
        Some(ensure_uv(runner, cache, progress))
    } else {
        None
    };
    let total = entries.len();
    let mut results = Vec::with_capacity(total);
    for (index, entry) in entries.iter().enumerate() {
        let started = Instant::now();
        progress(Progress::Started {
            index,
            total,
            id: entry.id.clone(),
        });
        let result = install_entry(runner, entry, cache, uv.as_ref());
        progress(Progress::Finished {
            index,
            total,
            id: entry.id.clone(),
            cached: matches!(result, Ok(true)),
            ok: result.is_ok(),
            elapsed: started.elapsed(),
        });
        results.push(result.map(|_| ()));
    }
    results
}

fn ensure_uv(
    runner: &dyn Runner,
    cache: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), UvError> {
    if !on_path("python3") {
        return Err(UvError::NoPython);
    }
    let steps = uv_steps(cache);
    let key = format!("uv-{UV_VERSION}");
    let content = stamp_content(&steps);
    if !stamped(cache, &key, &content) || !uvx_path(cache).exists() {
        progress(Progress::Runtime {
            tool: "uv".into(),
            version: UV_VERSION.into(),
        });
        // A stamp whose venv has gone (someone removed `$CACHE/uv`) must not count.
        let _ = fs::remove_file(stamp_path(cache, &key));
    }
    run_once(runner, cache, "uv", &key, &steps)
        .map(|_| ())
        .map_err(|e| UvError::Install(Box::new(e)))
}

fn install_entry(
    runner: &dyn Runner,
    entry: &Entry,
    cache: &Path,
    uv: Option<&Result<(), UvError>>,
) -> Result<bool, InstallError> {
    match (entry.registry, uv) {
        (Registry::Pypi, Some(Err(reason))) => {
            return Err(InstallError::NoUv {
                id: entry.id.clone(),
                reason: reason.clone(),
            })
        }
        (Registry::Npm, _) if !on_path("npx") => {
            return Err(InstallError::MissingProgram {
                id: entry.id.clone(),
                program: "npx".into(),
            })
        }
        _ => {}
    }
    let steps = install_steps(entry, cache);
    let key = install_key(entry, &steps);
    run_once(runner, cache, &entry.id, &key, &steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::census::listing::parse_listing;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system temp dir, removed on drop (std only).
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> Self {
            static N: AtomicUsize = AtomicUsize::new(0);
            let n = N.fetch_add(1, Ordering::SeqCst);
            let p = std::env::temp_dir().join(format!("census-test-{}-{n}", std::process::id()));
            let _ = fs::remove_dir_all(&p);
            fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn entries() -> Vec<Entry> {
        let text = r#"[
          {"name":"a.b/npm","version":"1","packages":[{"registryType":"npm",
           "identifier":"@scope/pkg","version":"1.2.3","transport":{"type":"stdio"},
           "packageArguments":[{"type":"positional","value":"/tmp"}],
           "environmentVariables":[{"name":"TOKEN","isSecret":true,"isRequired":true}]}]},
          {"name":"a.b/py","version":"1","packages":[{"registryType":"pypi",
           "identifier":"mcp-server-time","version":"2026.10.19","transport":{"type":"stdio"}}]}
        ]"#;
        parse_listing(Path::new("l.json"), text).unwrap().entries
    }

    #[test]
    fn npx_launch_is_offline_from_the_shared_cache() {
        let e = &entries()[0];
        let l = launch(e, Path::new("/c"));
        assert_eq!(l.program, "npx");
        assert_eq!(l.args, ["-y", "@scope/pkg@1.2.3", "/tmp"]);
        assert_eq!(l.env["npm_config_cache"], "/c/npm");
        assert_eq!(l.env["npm_config_offline"], "true");
        assert_eq!(l.env["TOKEN"], crate::census::PLACEHOLDER);
        assert_eq!(l.cwd, Path::new("/c/work"));
    }

    #[test]
    fn uvx_launch_uses_the_cached_uv_offline() {
        let e = &entries()[1];
        let l = launch(e, Path::new("/c"));
        assert_eq!(l.program, "/c/uv/bin/uvx");
        assert_eq!(l.args, ["mcp-server-time==2026.10.19"]);
        assert_eq!(l.env["UV_OFFLINE"], "1");
        assert_eq!(l.env["UV_CACHE_DIR"], "/c/uv-cache");
        assert_eq!(l.env["UV_PYTHON_DOWNLOADS"], "never");
    }

    #[test]
    fn install_steps_fill_what_the_launch_reads_then_prove_it_offline() {
        let [online, offline] = install_steps(&entries()[0], Path::new("/c"));
        assert_eq!(
            online.render(),
            "npx --yes --package=@scope/pkg@1.2.3 -- true"
        );
        assert_eq!(online.env["npm_config_offline"], "false");
        assert_eq!(offline.args, online.args);
        assert_eq!(offline.env["npm_config_offline"], "true");
        let [online, offline] = install_steps(&entries()[1], Path::new("/c"));
        assert_eq!(
            online.render(),
            r#"/c/uv/bin/uvx --from mcp-server-time==2026.10.19 python -c """#
        );
        assert!(!online.env.contains_key("UV_OFFLINE"));
        assert_eq!(offline.env["UV_OFFLINE"], "1");
    }

    #[test]
    fn keys_are_file_names_and_change_with_the_command() {
        let es = entries();
        let a = install_key(&es[0], &install_steps(&es[0], Path::new("/c")));
        assert!(a.starts_with("npm-scope-pkg-1.2.3-"), "{a}");
        assert!(!a.contains('/'));
        let mut other = es[0].clone();
        other.runtime_args = vec!["--node-options=--max-old-space-size=100".into()];
        let b = install_key(&other, &install_steps(&other, Path::new("/c")));
        assert_ne!(a, b);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }

    /// Counts runs; fails the steps whose program is `fail`.
    struct Fake(AtomicUsize);

    impl Runner for Fake {
        fn run(&self, step: &Step, log: &mut File) -> std::io::Result<Outcome> {
            self.0.fetch_add(1, Ordering::SeqCst);
            writeln!(log, "ran {}", step.render())?;
            // Long enough for a concurrent caller to reach the lock.
            std::thread::sleep(Duration::from_millis(50));
            if step.program == "fail" {
                writeln!(log, "npm error code E404")?;
                return Ok(Outcome::Failed {
                    status: "exit status: 1".into(),
                });
            }
            Ok(Outcome::Success)
        }
    }

    fn step(program: &str) -> Step {
        Step {
            program: program.into(),
            args: vec!["x y".into()],
            env: BTreeMap::new(),
            cwd: PathBuf::from("/"),
        }
    }

    #[test]
    fn a_stamped_install_does_not_run_again() {
        let dir = TempDir::new();
        let fake = Fake(AtomicUsize::new(0));
        let steps = [step("a"), step("b")];
        assert!(!run_once(&fake, dir.path(), "p", "k", &steps).unwrap());
        assert!(run_once(&fake, dir.path(), "p", "k", &steps).unwrap());
        assert_eq!(fake.0.load(Ordering::SeqCst), 2);
        // Other commands under the same key are a different install.
        assert!(!run_once(&fake, dir.path(), "p", "k", &steps[..1]).unwrap());
    }

    #[test]
    fn concurrent_installs_of_one_package_run_it_once() {
        let dir = TempDir::new();
        let fake = Fake(AtomicUsize::new(0));
        let steps = [step("a")];
        let cached: Vec<bool> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| run_once(&fake, dir.path(), "p", "k", &steps).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(fake.0.load(Ordering::SeqCst), 1);
        assert_eq!(cached.iter().filter(|c| !**c).count(), 1);
    }

    #[test]
    fn a_failed_install_names_the_command_and_keeps_its_output_tail() {
        let dir = TempDir::new();
        let fake = Fake(AtomicUsize::new(0));
        let err = run_once(&fake, dir.path(), "p-1", "k", &[step("fail"), step("b")]).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("install of p-1: `fail \"x y\"` failed (exit status: 1)"),
            "{msg}"
        );
        assert!(
            msg.ends_with("ran fail \"x y\"\nnpm error code E404"),
            "{msg}"
        );
        assert_eq!(
            fake.0.load(Ordering::SeqCst),
            1,
            "stops at the first failure"
        );
        assert!(!stamp_path(dir.path(), "k").exists());
    }

    #[test]
    fn a_missing_uv_fails_only_the_pypi_entries() {
        let dir = TempDir::new();
        let fake = Fake(AtomicUsize::new(0));
        let es = entries();
        let mut seen = vec![];
        let results = install_with(&fake, &es[1..], dir.path(), &mut |p| seen.push(p));
        // The fake "installs" uv without creating it, and the entry then runs its two steps.
        assert!(results[0].is_ok());
        assert!(matches!(seen[0], Progress::Runtime { .. }));
        let err =
            install_entry(&fake, &es[1], dir.path(), Some(&Err(UvError::NoPython))).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("install of mcp-server-time-2026.10.19: uv {UV_VERSION} is not available: `python3` is not on PATH")
        );
    }
}
