//! The harness: runs setups, then cases concurrently, each in its own supervisor process,
//! longest first, with a bounded number running at once; then judges every result.

use std::collections::VecDeque;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::gate::{self, Gates, Probe, Turn};
use super::progress::Progress;
use super::supervise::Supervised;
use crate::config::budgets::{resolve, BudgetOverrides};
use crate::config::manifest::Manifest;
use crate::config::profiles::Profiles;
use crate::config::scenarios::{self, PlumbingOverride};
use crate::model::MACHINE_BOUND_RETRIES;
use crate::model::{
    Budgets, Containment, ErrorKind, Host, JudgedCase, Observation, Report, Revision, RuleId,
    Scenario, ScenarioId, ServerInfo, SignalName, Tool,
};
use crate::os::containment::Cgroups;
use crate::os::{mono_ns, ms_between, procfs, signals};
use crate::rules::{self, Catalogue};
use crate::supervisor::protocol::CaseSpec;

/// The default limit on tasks per case: far above any real server, low enough that a fork
/// storm cannot take the machine down.
pub const DEFAULT_MAX_PIDS: u64 = 4096;

/// The variable that tells a server which run of a repeated case it is (1-based; 1 without
/// `--repeat`).
pub const RUN_VAR: &str = "MCP_SHUTDOWN_RUN";

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

/// One run of a case, where it stands in the run.
#[derive(Clone, Copy)]
struct CaseRun<'a> {
    case: &'a Case,
    /// Which run of a repeated case this is (1-based), given to the server as
    /// `MCP_SHUTDOWN_RUN` (a fixture can seed its randomness with it).
    run: usize,
    /// Its place in the run's queue for CPU tokens (0 first).
    rank: usize,
    progress: &'a Progress,
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
    max_pids: Option<u64>,
    server_env: std::collections::BTreeMap<String, String>,
    plumbing: PlumbingOverride,
    repeat: usize,
    /// `(server, scenario)` of cases expected to run their ladder's waits out (a baseline's
    /// expected failures): they start first, so that their idle waits overlap the others'.
    full_waits: Arc<std::collections::BTreeSet<(String, String)>>,
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
            max_pids: Some(DEFAULT_MAX_PIDS),
            server_env: Default::default(),
            plumbing: PlumbingOverride::default(),
            repeat: 1,
            full_waits: Arc::default(),
        }
    }

    /// Finds the `mcp-shutdown` binary (see [`super::locate::helper`]).
    pub fn locate() -> Option<Self> {
        super::locate::helper().map(Self::new)
    }

    /// Cases (`server`, `scenario`) expected to wait their ladders out, such as a baseline's
    /// expected failures: scheduled first. Only the order changes, never a verdict.
    pub fn expect_full_waits(mut self, cases: impl IntoIterator<Item = (String, String)>) -> Self {
        self.full_waits = Arc::new(cases.into_iter().collect());
        self
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

    /// The most tasks (processes and threads) one case may have, where a pids controller
    /// exists (default 4096; `None`: no limit). A case that hits it says so in its note.
    pub fn max_pids(mut self, limit: Option<u64>) -> Self {
        self.max_pids = limit;
        self
    }

    /// A variable added to every server's environment, after the manifest's (default: none;
    /// tests use one to find every process a case started).
    pub fn server_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.server_env.insert(name.into(), value.into());
        self
    }

    /// Runs every case this many times (default 1), each a real launch scheduled like any
    /// other case; the report has one result per case with every run in its `repeat`.
    pub fn repeat(mut self, times: usize) -> Self {
        self.repeat = times.max(1);
        self
    }

    /// How servers get their stdio, process group and command line, overriding each
    /// ending's and profile's (default: none): "this ladder, but over a socketpair".
    pub fn plumbing(mut self, plumbing: PlumbingOverride) -> Self {
        self.plumbing = plumbing;
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
        let mut results = self.run_cases(cases);
        let mut servers = cases
            .iter()
            .map(|c| (c.manifest.name.clone(), server_info(&c.manifest)))
            .collect();
        super::identify::enrich(&super::identify::suite_kits(), &mut servers, &mut results);
        self.report(servers, cases.iter().map(|c| &c.scenario), results)
    }

    /// The report of judged `results`: what this harness's run carries besides them (the
    /// machine, the budgets, the wording of the rules and profiles that judged them).
    pub fn report<'a>(
        &self,
        servers: std::collections::BTreeMap<String, ServerInfo>,
        scenarios: impl IntoIterator<Item = &'a ScenarioId>,
        results: Vec<JudgedCase>,
    ) -> Report {
        let judged: Vec<RuleId> = results
            .iter()
            .flat_map(|r| r.checks.iter().map(|c| c.id))
            .collect();
        let mut report = Report {
            schema_version: crate::model::report::SCHEMA_VERSION,
            tool: Tool::this(),
            spec: self.revision,
            budgets: self.overrides.apply(Budgets::default()),
            host: Host {
                containment: Some(containment(self.max_pids)),
                suite_source: None,
                suite_path: None,
                ..host()
            },
            servers,
            rules: self.catalogue.infos(judged, self.revision),
            profiles: self.profiles.infos(scenarios),
            summary: Default::default(),
            results,
            not_testable: Vec::new(),
            with_sdk: Vec::new(),
            census: None,
        };
        report.resummarize();
        rules::fixes::Fixes::bundled().attach(&mut report);
        report
    }

    /// Runs cases and judges them, results in input order (each case's repeated runs made
    /// into one result).
    pub fn run_cases(&self, cases: &[Case]) -> Vec<JudgedCase> {
        let expanded: Vec<(&Case, usize)> = cases
            .iter()
            .flat_map(|c| (1..=self.repeat).map(move |run| (c, run)))
            .collect();
        if self.repeat <= 1 {
            return self.run_each(&expanded);
        }
        let mut runs = self.run_each(&expanded).into_iter();
        (0..cases.len())
            .map(|_| rules::repeat::aggregate(runs.by_ref().take(self.repeat).collect()))
            .collect()
    }

    /// Runs cases once each, results in input order.
    fn run_each(&self, cases: &[(&Case, usize)]) -> Vec<JudgedCase> {
        let order = self.longest_first(cases);
        // A case's place in that order is also its place in the queue for CPU tokens: the
        // supervisors all start at once, and the longest must not wait behind short ones.
        let mut rank = vec![0; cases.len()];
        for (pos, &i) in order.iter().enumerate() {
            rank[i] = pos;
        }
        let queue = Mutex::new(order.into_iter().collect::<VecDeque<usize>>());
        let slots: Vec<Mutex<Option<JudgedCase>>> =
            cases.iter().map(|_| Mutex::new(None)).collect();
        let progress = Progress::new(cases.len(), self.progress);
        let gates = Gates::default();
        let handshakes = self.handshakes(cases);
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..self.jobs.min(cases.len()))
                .map(|_| {
                    s.spawn(|| {
                        let claim = |i: usize| {
                            let (c, run) = cases[i];
                            gates.claim(&c.manifest.name, run, &c.scenario, handshakes[i])
                        };
                        while let Some((i, turn)) = gate::next_case(&queue, claim) {
                            let (case, run) = cases[i];
                            let at = CaseRun {
                                case,
                                run,
                                rank: rank[i],
                                progress: &progress,
                            };
                            let r = self.run_deciding(&at, turn);
                            *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                        }
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

    /// The cases' indices, longest first, so the run costs little more than its longest
    /// case: the cases known to wait their ladders out, then by how long their ladders can
    /// wait.
    fn longest_first(&self, cases: &[(&Case, usize)]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..cases.len()).collect();
        order.sort_by_key(|&i| {
            let c = cases[i].0;
            let b = self.budgets_for(&c.manifest);
            let full = self
                .full_waits
                .contains(&(c.manifest.name.clone(), c.scenario.to_string()));
            std::cmp::Reverse((
                full,
                scenarios::build_with(&c.scenario, &b, &self.profiles, &self.plumbing)
                    .map_or(0, |s| s.max_wait_ms()),
            ))
        });
        order
    }

    /// Whether each case makes a handshake (a scenario with stdin on /dev/null makes none).
    fn handshakes(&self, cases: &[(&Case, usize)]) -> Vec<bool> {
        cases
            .iter()
            .map(|(c, _)| {
                scenarios::build_with(
                    &c.scenario,
                    &self.budgets_for(&c.manifest),
                    &self.profiles,
                    &self.plumbing,
                )
                .is_ok_and(|s| !s.stdin_null)
            })
            .collect()
    }

    /// Runs a case, and again while the machine's load decided it (at most
    /// [`MACHINE_BOUND_RETRIES`] more times): the earlier runs' readings go with the result.
    fn run_deciding(&self, at: &CaseRun, turn: Turn) -> JudgedCase {
        let mut r = self.run_one_with(at, turn);
        let mut before = Vec::new();
        while before.len() < MACHINE_BOUND_RETRIES && !self.interrupted.load(Ordering::SeqCst) {
            let Some(bound) = r.observation.machine_bound.clone() else {
                break;
            };
            before.push(bound);
            at.progress.run_again();
            r = self.run_one_with(at, Turn::Go(None));
        }
        r.observation.machine_bound_before = before;
        r
    }

    /// Runs one case in a supervisor process and judges it, again while the machine decided
    /// it, as a run does.
    pub fn run_one(&self, case: &Case) -> JudgedCase {
        let progress = Progress::new(1, false);
        let at = CaseRun {
            case,
            run: 1,
            rank: 0,
            progress: &progress,
        };
        self.run_deciding(&at, Turn::Go(None))
    }

    /// `turn`: launch it (perhaps as its server's probe), or take the probe's failure.
    fn run_one_with(&self, at: &CaseRun, turn: Turn) -> JudgedCase {
        let CaseRun {
            case,
            run,
            rank,
            progress,
        } = *at;
        let m = &case.manifest;
        let budgets = self.budgets_for(m);
        let scenario =
            match scenarios::build_with(&case.scenario, &budgets, &self.profiles, &self.plumbing) {
                Ok(s) => s,
                Err(e) => return unbuilt(case, budgets, e.to_string()),
            };
        let setup_started = mono_ns();
        let setup = m
            .setup
            .as_ref()
            .map(super::setup::ensure_once)
            .unwrap_or(Ok(()));
        let setup_ms = ms_between(setup_started, mono_ns());
        // A case that launches nothing is done at once, as far as the progress line goes.
        let skipped = |o: Observation| {
            progress.case_skipped();
            o
        };
        let failed = |kind, why| skipped(Observation::failed(&m.name, &case.scenario, kind, why));
        let mut observation = if self.interrupted.load(Ordering::SeqCst) {
            failed(ErrorKind::Harness, "interrupted before it started".into())
        } else if let Err(msg) = setup {
            failed(ErrorKind::SetupFailed, msg)
        } else if let Turn::Same { by, error } = &turn {
            skipped(gate::same_cause(&m.name, &case.scenario, by, error))
        } else {
            let spec = self.case_spec(case, run, &scenario, budgets);
            let probe = match turn {
                Turn::Go(p) => p,
                Turn::Same { .. } => None,
            };
            let o = self.supervise(&spec, rank, progress, probe.as_ref());
            if let Some(p) = probe {
                p.finish(&o);
            }
            o
        };
        observation.timing.get_or_insert_default().setup_ms = setup_ms;
        observation.note = rules::note(&observation, &scenario);
        let checks = self
            .catalogue
            .judge(&observation, &scenario, &budgets, self.revision);
        JudgedCase {
            observation,
            budgets: Some(budgets),
            ladder: Some(scenario.ladder()),
            checks,
            repeat: None,
            not_testable: None,
        }
    }

    /// What the supervisor is told of one case: the server's launch (with the run's
    /// environment and its run number), the scenario and the budgets.
    fn case_spec(
        &self,
        case: &Case,
        run: usize,
        scenario: &Scenario,
        budgets: Budgets,
    ) -> CaseSpec {
        let m = &case.manifest;
        let mut launch = m.launch.clone();
        launch.env.extend(self.server_env.clone());
        launch.env.insert(RUN_VAR.into(), run.to_string());
        CaseSpec {
            server: m.name.clone(),
            launch,
            protocol: m.protocol,
            scenario: scenario.clone(),
            budgets,
            inflight: m.inflight.clone(),
            cgroup: None,
        }
    }

    fn supervise(
        &self,
        spec: &CaseSpec,
        rank: usize,
        progress: &Progress,
        probe: Option<&Probe>,
    ) -> Observation {
        let started = mono_ns();
        let mut r = self.supervise_inner(spec, rank, progress, probe);
        r.wall_ms = ms_between(started, mono_ns());
        r
    }

    fn supervise_inner(
        &self,
        spec: &CaseSpec,
        rank: usize,
        progress: &Progress,
        probe: Option<&Probe>,
    ) -> Observation {
        let n = CASE_COUNTER.fetch_add(1, Ordering::SeqCst);
        let group = cgroups().case(&format!("case-{n}"), self.max_pids);
        let mut spec = spec.clone();
        spec.cgroup = group.membership_dir().map(Path::to_path_buf);
        let case = Supervised {
            spec,
            mark: format!("{}-{n}-{}", procfs::own_pid(), mono_ns()),
            group,
            progress,
            rank,
            probe,
        };
        let asked = mono_ns();
        let first = case.first_token();
        let queued_ms = ms_between(asked, mono_ns());
        let child = match case.spawn(&self.helper) {
            Ok(c) => c,
            Err(o) => return *o,
        };
        let pid = child.id();
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(pid);
        // An interrupt that came between the caller's check and this registration has already
        // signalled the supervisors it knew of: stop this one too (it cleans up its tree).
        if self.interrupted.load(Ordering::SeqCst) {
            signals::signal_pid(pid as i32, SignalName::Term);
        }
        let mut o = case.run(child, Some(first));
        o.timing.get_or_insert_default().token_wait_ms += queued_ms;
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|p| *p != pid);
        o.limit_hits = case.group.limit_hits();
        o
    }
}

/// The next case a worker runs, in the run's order, with its turn at its server's gate: the
/// first whose server is not being probed by another case. `None` when none is left.
/// A case whose scenario could not be built (a profile or plumbing the catalogue lacks): a
/// harness error, judged by nothing.
fn unbuilt(case: &Case, budgets: Budgets, why: String) -> JudgedCase {
    JudgedCase {
        observation: Observation::failed(
            &case.manifest.name,
            &case.scenario,
            ErrorKind::Harness,
            why,
        ),
        budgets: Some(budgets),
        ladder: None,
        checks: Vec::new(),
        repeat: None,
        not_testable: None,
    }
}

/// Numbers the cases of this process (for cgroup names and markers).
static CASE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The cgroups this process may use, probed once. Probing also makes this process a child
/// subreaper: an orphan of a case whose supervisor died comes back here, not to init, so the
/// sweep can reap it.
fn cgroups() -> &'static Cgroups {
    static GROUPS: OnceLock<Cgroups> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let _ = signals::become_subreaper();
        Cgroups::probe()
    })
}

/// How this process contains its cases, for the report.
pub fn containment(max_pids: Option<u64>) -> Containment {
    cgroups().describe(max_pids)
}

/// Removes this process's (empty) cgroup directories; for the end of a command.
pub fn release_cgroups() {
    cgroups().remove();
}

/// What a report says of a server: its manifest's description and what it is.
pub fn server_info(m: &Manifest) -> ServerInfo {
    ServerInfo {
        description: m.description.clone(),
        sdk: m.about.sdk.clone(),
        sdk_version: m.about.sdk_version.clone(),
        shape: m.about.shape.clone(),
        ..ServerInfo::default()
    }
}

/// The machine this run is on.
fn host() -> Host {
    Host {
        os: std::env::consts::OS.into(),
        kernel: crate::os::procfs::kernel_release(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        containment: None,
        suite_source: None,
        suite_path: None,
    }
}
