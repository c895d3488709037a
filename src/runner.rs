//! The harness: runs setups, then cases concurrently, each in its own supervisor process,
//! longest first, with a bounded number running at once; then judges every result.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::budgets::{BudgetOverrides, Budgets};
use crate::case::CaseSpec;
use crate::manifest::Manifest;
use crate::observation::{CaseResult, ErrorKind};
use crate::report::Report;
use crate::rules::Catalogue;
use crate::scenario::Scenario;

/// One server × scenario to run.
#[derive(Clone, Debug)]
pub struct Case {
    pub manifest: Manifest,
    pub scenario: String,
}

impl Case {
    /// One case per default ending (`close`, `exit`, `crash`, `stdin-null`, `sigterm`,
    /// `sigint`, `inflight`) for a server.
    pub fn all_default(manifest: &Manifest) -> Vec<Case> {
        crate::scenario::SCENARIOS
            .iter()
            .map(|s| Case {
                manifest: manifest.clone(),
                scenario: s.to_string(),
            })
            .collect()
    }
}

/// Runs cases. Configured by values; changes no global process state.
#[derive(Clone, Debug)]
pub struct Harness {
    helper: PathBuf,
    jobs: usize,
    overrides: BudgetOverrides,
    revision: String,
    catalogue: Catalogue,
    live: Arc<Mutex<Vec<u32>>>,
    interrupted: Arc<AtomicBool>,
    progress: bool,
    counts: Arc<Counts>,
}

/// Live counts for the progress line.
#[derive(Debug, Default)]
struct Counts {
    done: std::sync::atomic::AtomicUsize,
    running: std::sync::atomic::AtomicUsize,
    /// Cases holding a CPU token (starting up, or in the timed window after the trigger).
    busy: std::sync::atomic::AtomicUsize,
}

/// CPU tokens, process-wide so that parallel tests share them: one per CPU, at least two.
fn cpu_tokens() -> &'static Semaphore {
    static GATE: OnceLock<Semaphore> = OnceLock::new();
    GATE.get_or_init(|| {
        Semaphore::new(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .max(2),
        )
    })
}

/// A counting semaphore (std has none).
#[derive(Debug)]
struct Semaphore {
    free: Mutex<usize>,
    cv: std::sync::Condvar,
}

struct Permit<'a>(&'a Semaphore);

impl Semaphore {
    fn new(n: usize) -> Self {
        Self {
            free: Mutex::new(n),
            cv: std::sync::Condvar::new(),
        }
    }

    fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.0.cv.notify_one();
    }
}

impl Harness {
    /// `helper` is the `mcp-shutdown` binary, which hosts the per-case supervisor.
    pub fn new(helper: impl Into<PathBuf>) -> Self {
        let catalogue = Catalogue::bundled();
        Self {
            helper: helper.into(),
            jobs: 16,
            overrides: BudgetOverrides::default(),
            revision: catalogue.default_revision.clone(),
            catalogue,
            live: Arc::default(),
            interrupted: Arc::default(),
            progress: false,
            counts: Arc::default(),
        }
    }

    /// Finds the `mcp-shutdown` binary (see [`crate::case::default_helper`]).
    pub fn locate() -> Option<Self> {
        crate::case::default_helper().map(Self::new)
    }

    /// How many cases run at once (default 16: most of a case is waiting).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }

    /// Print a progress line to stderr while cases run (for terminals; default off).
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Budgets given for the whole run; they override manifests' values (default: none).
    pub fn budgets(mut self, overrides: BudgetOverrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// The spec revision whose rule levels score the run (default 2026-07-28).
    pub fn revision(mut self, rev: impl Into<String>) -> Self {
        self.revision = rev.into();
        self
    }

    pub fn revision_name(&self) -> &str {
        &self.revision
    }

    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// The budgets in force for a manifest.
    pub fn budgets_for(&self, m: &Manifest) -> Budgets {
        Budgets::default().with(&m.budgets).with(&self.overrides)
    }

    /// Stops every running case: each supervisor kills its whole tree and exits.
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        for pid in self.live.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            crate::process::signal_pid(*pid as i32, crate::process::SignalName::Term);
        }
    }

    /// Runs every case and returns the judged report, results in input order.
    pub fn run(&self, cases: &[Case]) -> Report {
        let results = self.run_cases(cases);
        let mut report = Report::new(&self.revision, self.overrides, results);
        for c in cases {
            let m = &c.manifest;
            report.servers.insert(
                m.name.clone(),
                crate::report::ServerInfo {
                    description: m.description.clone(),
                    sdk: m.about.sdk.clone(),
                    sdk_version: m.about.sdk_version.clone(),
                    shape: m.about.shape.clone(),
                },
            );
        }
        report
    }

    /// Runs cases and judges them, results in input order.
    pub fn run_cases(&self, cases: &[Case]) -> Vec<CaseResult> {
        let mut order: Vec<usize> = (0..cases.len()).collect();
        // Longest first, so the run costs little more than its longest case.
        order.sort_by_key(|&i| {
            let b = self.budgets_for(&cases[i].manifest);
            std::cmp::Reverse(
                Scenario::from_id(&cases[i].scenario, &b).map_or(0, |s| s.max_wait_ms()),
            )
        });
        let queue = Mutex::new(order.into_iter().collect::<VecDeque<usize>>());
        let slots: Vec<Mutex<Option<CaseResult>>> =
            cases.iter().map(|_| Mutex::new(None)).collect();
        let finished = AtomicBool::new(false);
        std::thread::scope(|s| {
            if self.progress {
                s.spawn(|| self.print_progress(cases.len(), &finished));
            }
            let workers: Vec<_> = (0..self.jobs.min(cases.len()))
                .map(|_| {
                    s.spawn(|| loop {
                        let Some(i) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front()
                        else {
                            break;
                        };
                        let r = self.run_one(&cases[i]);
                        *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                    })
                })
                .collect();
            for w in workers {
                let _ = w.join();
            }
            finished.store(true, Ordering::SeqCst);
        });
        slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .expect("every case ran")
            })
            .collect()
    }

    fn print_progress(&self, total: usize, finished: &AtomicBool) {
        use std::sync::atomic::Ordering::Relaxed;
        let mut err = std::io::stderr();
        while !finished.load(Ordering::SeqCst) {
            let c = &self.counts;
            let (done, running, busy) = (
                c.done.load(Relaxed),
                c.running.load(Relaxed),
                c.busy.load(Relaxed),
            );
            let _ = write!(
                err,
                "\r\x1b[K[{done}/{total}] {busy} starting or timing an exit, {} waiting on a grace period or an orphan",
                running.saturating_sub(busy)
            );
            let _ = err.flush();
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let _ = write!(err, "\r\x1b[K");
    }

    /// Runs one case in a supervisor process and judges it.
    pub fn run_one(&self, case: &Case) -> CaseResult {
        let m = &case.manifest;
        let budgets = self.budgets_for(m);
        let Some(scenario) = Scenario::from_id(&case.scenario, &budgets) else {
            return CaseResult::failed(
                &m.name,
                &case.scenario,
                ErrorKind::Harness,
                format!("unknown scenario `{}`", case.scenario),
            );
        };
        let setup = m.setup.as_ref().map(setup_once).unwrap_or(Ok(()));
        let mut result = if self.interrupted.load(Ordering::SeqCst) {
            CaseResult::failed(
                &m.name,
                &case.scenario,
                ErrorKind::Harness,
                "interrupted before it started".into(),
            )
        } else if let Err(msg) = setup {
            CaseResult::failed(&m.name, &case.scenario, ErrorKind::SetupFailed, msg)
        } else {
            let spec = CaseSpec {
                server: m.name.clone(),
                launch: m.launch.clone(),
                protocol: m.protocol,
                scenario: scenario.clone(),
                budgets,
                inflight: m.inflight.clone(),
            };
            self.supervise(&spec)
        };
        result.checks = self
            .catalogue
            .judge(&result, &scenario, &budgets, &self.revision);
        result
    }

    fn supervise(&self, spec: &CaseSpec) -> CaseResult {
        let started = crate::process::mono_ns();
        let mut r = self.supervise_inner(spec);
        r.wall_ms = crate::process::ms_between(started, crate::process::mono_ns());
        r
    }

    fn supervise_inner(&self, spec: &CaseSpec) -> CaseResult {
        let fail = |msg: String| {
            CaseResult::failed(&spec.server, &spec.scenario.id, ErrorKind::Harness, msg)
        };
        let mut cmd = Command::new(&self.helper);
        cmd.arg("__case")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own group: a terminal's Ctrl-C reaches the harness, which then stops cases in order.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return fail(format!(
                    "cannot start the supervisor {}: {e}",
                    self.helper.display()
                ))
            }
        };
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(child.id());
        // An interrupt that came between the caller's check and this registration has already
        // signalled the supervisors it knew of: stop this one too (it cleans up its tree).
        if self.interrupted.load(Ordering::SeqCst) {
            crate::process::signal_pid(child.id() as i32, crate::process::SignalName::Term);
        }
        // The write end stays open until the case is done: it is the supervisor's lifeline.
        let mut lifeline = child.stdin.take().expect("piped");
        let line = serde_json::to_string(spec).expect("spec serializes");
        let _ = writeln!(lifeline, "{line}");
        let mut stderr = child.stderr.take().expect("piped");
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let mut out = String::new();
        let mut lines = std::io::BufReader::new(child.stdout.take().expect("piped")).lines();
        // The CPU-token protocol (see `case::Link`): grant on `need-cpu`, take back on `free-cpu`.
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.counts;
        c.running.fetch_add(1, Relaxed);
        let mut token = None;
        for line in lines.by_ref().map_while(Result::ok) {
            match line.as_str() {
                crate::case::NEED_CPU => {
                    token = Some(cpu_tokens().acquire());
                    c.busy.fetch_add(1, Relaxed);
                    let _ = writeln!(lifeline, "{}", crate::case::GO);
                    let _ = lifeline.flush();
                }
                crate::case::FREE_CPU => {
                    if token.take().is_some() {
                        c.busy.fetch_sub(1, Relaxed);
                    }
                }
                _ => out = line,
            }
        }
        if token.take().is_some() {
            c.busy.fetch_sub(1, Relaxed);
        }
        c.running.fetch_sub(1, Relaxed);
        c.done.fetch_add(1, Relaxed);
        let status = child.wait();
        drop(lifeline);
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|p| *p != child.id());
        let err = err_reader.join().unwrap_or_default();
        match serde_json::from_str::<CaseResult>(out.trim()) {
            Ok(r) => r,
            Err(_) => fail(format!(
                "the case supervisor ended without a result ({}){}",
                status
                    .map(|s| crate::process::ExitStatus::from(s).to_string())
                    .unwrap_or_else(|e| e.to_string()),
                if err.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", err.trim())
                }
            )),
        }
    }
}

/// Runs a setup at most once per process and key; a failure is remembered, so that the
/// cases of a broken fixture fail fast with the same message instead of retrying it each.
fn setup_once(setup: &crate::manifest::Setup) -> Result<(), String> {
    static DONE: OnceLock<Mutex<HashMap<PathBuf, Result<(), String>>>> = OnceLock::new();
    let done = DONE.get_or_init(Mutex::default);
    if let Some(r) = done
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&setup.cwd)
    {
        return r.clone();
    }
    // Concurrent callers serialize on the setup's file lock, not on this map.
    let r = crate::setup::ensure(setup).map_err(|e| e.to_string());
    done.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(setup.cwd.clone(), r.clone());
    r
}

/// The directory of bundled server manifests.
pub fn bundled_suite() -> PathBuf {
    let local = Path::new("conformance/servers");
    if local.is_dir() {
        return local.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/servers")
}
