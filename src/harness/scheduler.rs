//! The harness: runs setups, then cases concurrently, each in its own supervisor process,
//! longest first, with a bounded number running at once; then judges every result.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::progress::Progress;
use super::tokens::cpu_tokens;
use crate::config::budgets::{resolve, BudgetOverrides};
use crate::config::manifest::{Manifest, Setup};
use crate::config::profiles::Profiles;
use crate::config::scenarios;
use crate::model::{
    Budgets, ErrorKind, ExitStatus, Host, JudgedCase, Observation, Report, Revision, RuleId,
    ScenarioId, ServerInfo, SignalName, Tool,
};
use crate::os::{mono_ns, ms_between, signals};
use crate::rules::{self, Catalogue};
use crate::supervisor::protocol::{recv, send, CaseSpec, FromSupervisor, ToSupervisor};

/// One server × scenario to run.
#[derive(Clone, Debug)]
pub struct Case {
    pub manifest: Manifest,
    pub scenario: ScenarioId,
}

impl Case {
    /// One case per default ending (`close`, `exit`, `crash`, `stdin-null`, `sigterm`,
    /// `sigint`, `inflight`) for a server.
    pub fn all_default(manifest: &Manifest) -> Vec<Case> {
        scenarios::default_ids()
            .into_iter()
            .map(|scenario| Case {
                manifest: manifest.clone(),
                scenario,
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
    revision: Revision,
    catalogue: Catalogue,
    profiles: Profiles,
    live: Arc<Mutex<Vec<u32>>>,
    interrupted: Arc<AtomicBool>,
    progress: bool,
}

impl Harness {
    /// `helper` is the `mcp-shutdown` binary, which hosts the per-case supervisor.
    pub fn new(helper: impl Into<PathBuf>) -> Self {
        let catalogue = Catalogue::bundled();
        Self {
            helper: helper.into(),
            jobs: 16,
            overrides: BudgetOverrides::default(),
            revision: catalogue.default_revision,
            catalogue,
            profiles: Profiles::bundled(),
            live: Arc::default(),
            interrupted: Arc::default(),
            progress: false,
        }
    }

    /// Finds the `mcp-shutdown` binary (see [`super::locate::helper`]).
    pub fn locate() -> Option<Self> {
        super::locate::helper().map(Self::new)
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

    /// The spec revision whose rule levels score the run (default: the catalogue's).
    pub fn revision(mut self, rev: Revision) -> Self {
        self.revision = rev;
        self
    }

    pub fn revision_of(&self) -> Revision {
        self.revision
    }

    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    pub fn profiles(&self) -> &Profiles {
        &self.profiles
    }

    /// The budgets in force for a manifest.
    pub fn budgets_for(&self, m: &Manifest) -> Budgets {
        resolve(&m.budgets, &self.overrides)
    }

    /// Stops every running case: each supervisor kills its whole tree and exits.
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        for pid in self.live.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            signals::signal_pid(*pid as i32, SignalName::Term);
        }
    }

    /// Runs every case and returns the judged report, results in input order.
    pub fn run(&self, cases: &[Case]) -> Report {
        let results = self.run_cases(cases);
        let mut servers = std::collections::BTreeMap::new();
        for c in cases {
            let m = &c.manifest;
            servers.insert(
                m.name.clone(),
                ServerInfo {
                    description: m.description.clone(),
                    sdk: m.about.sdk.clone(),
                    sdk_version: m.about.sdk_version.clone(),
                    shape: m.about.shape.clone(),
                },
            );
        }
        let judged: Vec<RuleId> = results
            .iter()
            .flat_map(|r| r.checks.iter().map(|c| c.id))
            .collect();
        let mut report = Report {
            schema_version: crate::model::report::SCHEMA_VERSION,
            tool: Tool::this(),
            spec: self.revision,
            budgets: self.overrides.apply(Budgets::default()),
            host: host(),
            servers,
            rules: self.catalogue.infos(judged, self.revision),
            summary: Default::default(),
            results,
        };
        report.resummarize();
        report
    }

    /// Runs cases and judges them, results in input order.
    pub fn run_cases(&self, cases: &[Case]) -> Vec<JudgedCase> {
        let mut order: Vec<usize> = (0..cases.len()).collect();
        // Longest first, so the run costs little more than its longest case.
        order.sort_by_key(|&i| {
            let b = self.budgets_for(&cases[i].manifest);
            std::cmp::Reverse(
                scenarios::build(&cases[i].scenario, &b, &self.profiles)
                    .map_or(0, |s| s.max_wait_ms()),
            )
        });
        let queue = Mutex::new(order.into_iter().collect::<VecDeque<usize>>());
        let slots: Vec<Mutex<Option<JudgedCase>>> =
            cases.iter().map(|_| Mutex::new(None)).collect();
        let progress = Progress::new(cases.len(), self.progress);
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..self.jobs.min(cases.len()))
                .map(|_| {
                    s.spawn(|| loop {
                        let Some(i) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front()
                        else {
                            break;
                        };
                        let r = self.run_one_with(&cases[i], &progress);
                        *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                    })
                })
                .collect();
            for w in workers {
                let _ = w.join();
            }
        });
        progress.finish();
        slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .expect("every case ran")
            })
            .collect()
    }

    /// Runs one case in a supervisor process and judges it.
    pub fn run_one(&self, case: &Case) -> JudgedCase {
        self.run_one_with(case, &Progress::new(1, false))
    }

    fn run_one_with(&self, case: &Case, progress: &Progress) -> JudgedCase {
        let m = &case.manifest;
        let budgets = self.budgets_for(m);
        let scenario = match scenarios::build(&case.scenario, &budgets, &self.profiles) {
            Ok(s) => s,
            Err(e) => {
                return JudgedCase {
                    observation: Observation::failed(
                        &m.name,
                        &case.scenario,
                        ErrorKind::Harness,
                        e.to_string(),
                    ),
                    budgets: Some(budgets),
                    ladder: None,
                    checks: Vec::new(),
                };
            }
        };
        let setup = m.setup.as_ref().map(setup_once).unwrap_or(Ok(()));
        let mut observation = if self.interrupted.load(Ordering::SeqCst) {
            Observation::failed(
                &m.name,
                &case.scenario,
                ErrorKind::Harness,
                "interrupted before it started".into(),
            )
        } else if let Err(msg) = setup {
            Observation::failed(&m.name, &case.scenario, ErrorKind::SetupFailed, msg)
        } else {
            let spec = CaseSpec {
                server: m.name.clone(),
                launch: m.launch.clone(),
                protocol: m.protocol,
                scenario: scenario.clone(),
                budgets,
                inflight: m.inflight.clone(),
            };
            self.supervise(&spec, progress)
        };
        observation.note = rules::note(&observation, &scenario);
        let checks = self
            .catalogue
            .judge(&observation, &scenario, &budgets, self.revision);
        JudgedCase {
            observation,
            budgets: Some(budgets),
            ladder: Some(scenario.ladder()),
            checks,
        }
    }

    fn supervise(&self, spec: &CaseSpec, progress: &Progress) -> Observation {
        let started = mono_ns();
        let mut r = self.supervise_inner(spec, progress);
        r.wall_ms = ms_between(started, mono_ns());
        r
    }

    fn supervise_inner(&self, spec: &CaseSpec, progress: &Progress) -> Observation {
        let fail = |msg: String| {
            Observation::failed(&spec.server, &spec.scenario.id, ErrorKind::Harness, msg)
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
            signals::signal_pid(child.id() as i32, SignalName::Term);
        }
        // The write end stays open until the case is done: it is the supervisor's lifeline.
        let mut lifeline = child.stdin.take().expect("piped");
        send(&mut lifeline, spec);
        let mut stderr = child.stderr.take().expect("piped");
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let mut lines = BufReader::new(child.stdout.take().expect("piped"));
        // The CPU-token protocol (see `supervisor::link`).
        progress.case_started();
        let mut token = None;
        let mut out = None;
        while let Some(msg) = recv::<FromSupervisor>(&mut lines) {
            match msg {
                FromSupervisor::NeedCpu => {
                    token = Some(cpu_tokens().acquire());
                    progress.busy(true);
                    send(&mut lifeline, &ToSupervisor::Go);
                }
                FromSupervisor::FreeCpu => {
                    if token.take().is_some() {
                        progress.busy(false);
                    }
                }
                FromSupervisor::Result { observation } => out = Some(*observation),
            }
        }
        if token.take().is_some() {
            progress.busy(false);
        }
        progress.case_done();
        let status = child.wait();
        drop(lifeline);
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|p| *p != child.id());
        let err = err_reader.join().unwrap_or_default();
        out.unwrap_or_else(|| {
            fail(format!(
                "the case supervisor ended without a result ({}){}",
                status
                    .map(|s| ExitStatus::from(s).to_string())
                    .unwrap_or_else(|e| e.to_string()),
                if err.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", err.trim())
                }
            ))
        })
    }
}

/// The machine this run is on.
fn host() -> Host {
    Host {
        os: std::env::consts::OS.into(),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// Runs a setup at most once per process and key; a failure is remembered, so that the
/// cases of a broken fixture fail fast with the same message instead of retrying it each.
fn setup_once(setup: &Setup) -> Result<(), String> {
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
    let r = super::setup::ensure(setup).map_err(|e| e.to_string());
    done.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(setup.cwd.clone(), r.clone());
    r
}
