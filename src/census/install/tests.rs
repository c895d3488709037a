//! Tests of the install phase: launches, steps, keys, stamps and locks, with a fake runner.

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
fn keys_hash_as_before_so_old_stamps_still_count() {
    assert_eq!(format!("{:016x}", fnv1a("npm-x")), "3d07d382da068237");
}

#[test]
fn tail_keeps_the_last_lines() {
    assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
    assert_eq!(tail("a", 5), "a");
}

/// Counts runs; fails the steps whose program is `fail`.
struct Fake(AtomicUsize);

impl StepRunner for Fake {
    fn run(&self, step: &InstallStep, log: &mut File) -> std::io::Result<StepOutcome> {
        self.0.fetch_add(1, Ordering::SeqCst);
        writeln!(log, "ran {}", step.render())?;
        // Long enough for a concurrent caller to reach the lock.
        std::thread::sleep(Duration::from_millis(50));
        if step.program == "fail" {
            writeln!(log, "npm error code E404")?;
            return Ok(StepOutcome::Failed {
                status: "exit status: 1".into(),
            });
        }
        Ok(StepOutcome::Success)
    }
}

fn step(program: &str) -> InstallStep {
    InstallStep {
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
    assert!(matches!(seen[0], InstallProgress::Runtime { .. }));
    let err = install_entry(&fake, &es[1], dir.path(), Some(&Err(UvError::NoPython))).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("install of mcp-server-time-2026.10.19: uv {UV_VERSION} is not available: `python3` is not on PATH")
    );
}

/// Every command fails as a full disk makes it fail.
struct FullDisk(AtomicUsize);

impl StepRunner for FullDisk {
    fn run(&self, _: &InstallStep, _: &mut File) -> std::io::Result<StepOutcome> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(std::io::ErrorKind::StorageFull.into())
    }
}

#[test]
fn a_full_disk_stops_the_installs_after_it() {
    let dir = TempDir::new();
    let full = FullDisk(AtomicUsize::new(0));
    let es = entries();
    let results = install_with(&full, &es, dir.path(), &mut |_| {});
    let first = results[0].as_ref().unwrap_err();
    assert!(first.is_disk_full(dir.path()), "{first}");
    let second = results[1].as_ref().unwrap_err();
    assert_eq!(
        second.to_string(),
        format!(
            "install of mcp-server-time-2026.10.19: not attempted: the disk of the install cache {} is full",
            dir.path().display()
        )
    );
    // uv's first step and the npm entry's: nothing for the entry after the full disk.
    assert_eq!(full.0.load(Ordering::SeqCst), 2);
}
