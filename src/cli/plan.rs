//! From parsed arguments and loaded manifests to a run plan: which cases, scored how,
//! written where. Pure: unit-tested without processes or files.

use std::path::PathBuf;

use super::args::{FailOn, RunOpts};
use crate::config::budgets::BudgetOverrides;
use crate::config::manifest::Manifest;
use crate::config::profiles::Profiles;
use crate::config::scenarios::{self, PlumbingOverride};
use crate::error::Error;
use crate::harness::Case;
use crate::model::{Ending, Revision, ScenarioId, Status, Untested};
use crate::render::Format;
use crate::rules::Catalogue;

/// Everything `run`/`check` will do.
#[derive(Debug)]
pub struct RunPlan {
    pub cases: Vec<Case>,
    pub revision: Revision,
    pub plumbing: PlumbingOverride,
    pub overrides: BudgetOverrides,
    pub jobs: usize,
    pub repeat: usize,
    /// Machine-bound cases are scored like others (else the run exits 2 naming them).
    pub accept_machine_bound: bool,
    pub format: Format,
    pub pruned: bool,
    pub outputs: Vec<(PathBuf, Format)>,
    pub baseline: Option<PathBuf>,
    /// A saved report to compare with (`--diff-against`): only a regression fails the run.
    pub diff_against: Option<PathBuf>,
    pub write_baseline: Option<PathBuf>,
    /// Where to write the official suite's YAML baseline too.
    pub write_expected_failures: Option<PathBuf>,
    /// The missed status that makes the exit code 1 (without a baseline).
    pub fail_threshold: Status,
    /// `--sdk` versions that yield no server: reported, never run, not scored.
    pub not_testable: Vec<Untested>,
    /// `check` without `--name`: each server is called, after the run, by the name it gave
    /// in its handshake (its command's name says `node` or `uv`, not which server it is).
    pub name_by_handshake: bool,
    /// `--triage`: the triage set first, the rest only where it found something.
    pub triage: bool,
    /// The date the census records on what it judged (`census --date`; else today, UTC).
    pub date: Option<String>,
}

/// `--expected-failures FILE`: the official YAML form, so a `.yaml` or `.yml` file.
fn expected_failures(opts: &RunOpts) -> Result<Option<PathBuf>, Error> {
    match &opts.expected_failures {
        Some(p) if !crate::config::baseline::is_official(p) => Err(Error::Usage(format!(
            "--expected-failures {}: the official baseline is YAML (a .yaml or .yml file)",
            p.display()
        ))),
        other => Ok(other.clone()),
    }
}

/// The scenarios asked for: the default endings, `all` (every profile too), or a list.
pub fn scenarios(given: &[String], profiles: &Profiles) -> Result<Vec<ScenarioId>, Error> {
    let all = scenarios::all_ids(profiles);
    if given.is_empty() {
        return Ok(scenarios::default_ids());
    }
    if given.iter().any(|s| s == "all") {
        return Ok(all);
    }
    given
        .iter()
        .map(|s| {
            let id: ScenarioId = s.parse()?;
            if !all.contains(&id) {
                let known: Vec<String> = all.iter().map(|a| a.to_string()).collect();
                return Err(Error::Usage(format!(
                    "unknown scenario `{s}` (known: {}, or `all`)",
                    known.join(", ")
                )));
            }
            Ok(id)
        })
        .collect()
}

/// `--hosts`: the close ending, the terminal endings and every host profile, added after
/// what was asked for (the default endings when nothing was): it adds, never replaces, so
/// the verdicts and the badge of the default endings stay those of a run without it.
pub fn with_hosts(mut chosen: Vec<ScenarioId>, profiles: &Profiles) -> Vec<ScenarioId> {
    let terminal = std::iter::once(Ending::Close)
        .chain(Ending::ALL.iter().copied().filter(|e| e.in_terminal()))
        .map(ScenarioId::Ending);
    let hosts = profiles.hosts().map(|p| ScenarioId::Profile(p.id.clone()));
    for id in terminal.into_iter().chain(hosts) {
        if !chosen.contains(&id) {
            chosen.push(id);
        }
    }
    chosen
}

/// The cases named by `--case SERVER/SCENARIO`, in the order given.
pub fn named_cases(
    named: &[String],
    servers: &[Manifest],
    known: &[ScenarioId],
) -> Result<Vec<Case>, Error> {
    named
        .iter()
        .map(|c| {
            // Scenario ids never contain '/', server names might.
            let (server, scenario) = c
                .rsplit_once('/')
                .ok_or_else(|| Error::Usage(format!("--case {c}: expected SERVER/SCENARIO")))?;
            let manifest = servers.iter().find(|m| m.name == server).ok_or_else(|| {
                let names: Vec<&str> = servers.iter().map(|m| m.name.as_str()).collect();
                Error::Usage(format!(
                    "--case {c}: unknown server `{server}` (known: {})",
                    names.join(", ")
                ))
            })?;
            let id = scenario
                .parse::<ScenarioId>()
                .ok()
                .filter(|id| known.contains(id))
                .ok_or_else(|| {
                    let names: Vec<String> = known.iter().map(|k| k.to_string()).collect();
                    Error::Usage(format!(
                        "--case {c}: unknown scenario `{scenario}` (known: {})",
                        names.join(", ")
                    ))
                })?;
            Ok(Case {
                manifest: manifest.clone(),
                scenario: id,
            })
        })
        .collect()
}

/// Parses `K/M` (1 ≤ K ≤ M).
pub fn partition(spec: &str) -> Result<(usize, usize), Error> {
    let bad = || Error::Usage(format!("--partition {spec}: expected K/M with 1 <= K <= M"));
    let (k, m) = spec.split_once('/').ok_or_else(bad)?;
    let (k, m): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        m.trim().parse().map_err(|_| bad())?,
    );
    if (1..=m).contains(&k) {
        Ok((k, m))
    } else {
        Err(bad())
    }
}

/// Keeps every `m`-th case starting at the `k`-th.
pub fn shard<T>(items: Vec<T>, (k, m): (usize, usize)) -> Vec<T> {
    items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % m == k - 1)
        .map(|(_, c)| c)
        .collect()
}

/// The run options of a census: with no scenario named, the default endings and every host
/// profile (what `--hosts` adds); `--partition` is taken out because a census shards its
/// servers, not its cases, so each shard installs only its own packages.
pub fn census_opts(opts: &RunOpts) -> RunOpts {
    let mut o = opts.clone();
    if o.scenarios.is_empty() && o.cases.is_empty() {
        o.hosts = true;
    }
    o.partition = None;
    o
}

/// Every server × every chosen scenario (with `--hosts`, every host profile too), or the
/// cases `--case` names; this shard of them with `--partition`.
fn cases(opts: &RunOpts, servers: &[Manifest], profiles: &Profiles) -> Result<Vec<Case>, Error> {
    let mut chosen = scenarios(&opts.scenarios, profiles)?;
    if opts.hosts {
        chosen = with_hosts(chosen, profiles);
    }
    let mut cases = if opts.cases.is_empty() {
        servers
            .iter()
            .flat_map(|m| {
                chosen.iter().map(|s| Case {
                    manifest: m.clone(),
                    scenario: s.clone(),
                })
            })
            .collect()
    } else {
        named_cases(&opts.cases, servers, &scenarios::all_ids(profiles))?
    };
    if let Some(p) = &opts.partition {
        cases = shard(cases, partition(p)?);
    }
    Ok(cases)
}

/// The baseline a run is held to: none with `--no-baseline` or `--diff-against`, else
/// `--baseline`, then `--expected-failures`, then the bundled suite's.
fn baseline(opts: &RunOpts, default_baseline: Option<PathBuf>) -> Result<Option<PathBuf>, Error> {
    if opts.no_baseline || opts.diff_against.is_some() {
        return Ok(None);
    }
    Ok(opts
        .baseline
        .clone()
        .or(expected_failures(opts)?)
        .or(default_baseline))
}

/// Plans a run of `servers` under `opts`.
pub fn plan(
    opts: &RunOpts,
    servers: &[Manifest],
    default_baseline: Option<PathBuf>,
    catalogue: &Catalogue,
    profiles: &Profiles,
) -> Result<RunPlan, Error> {
    let revision = match &opts.spec {
        Some(s) => catalogue.revision(s)?,
        None => catalogue.default_revision,
    };
    Ok(RunPlan {
        cases: cases(opts, servers, profiles)?,
        revision,
        plumbing: PlumbingOverride {
            stdio: opts.stdio,
            group: opts.group,
            via: opts.via,
        },
        overrides: BudgetOverrides {
            prompt_ms: opts.prompt_ms,
            grace_ms: opts.grace_ms,
            observe_ms: opts.observe_ms,
            handshake_ms: opts.handshake_ms,
        },
        jobs: opts.jobs,
        repeat: opts.repeat as usize,
        accept_machine_bound: opts.accept_machine_bound,
        format: opts.format,
        pruned: opts.pruned,
        outputs: outputs(opts)?,
        diff_against: opts.diff_against.clone(),
        baseline: baseline(opts, default_baseline)?,
        write_baseline: opts.write_baseline.clone(),
        write_expected_failures: opts.write_expected_failures.clone(),
        fail_threshold: threshold(opts.fail_on),
        not_testable: Vec::new(),
        name_by_handshake: false,
        triage: opts.triage,
        date: None,
    })
}

/// The missed status `--fail-on` makes the exit code 1.
fn threshold(fail_on: FailOn) -> Status {
    match fail_on {
        FailOn::Should => Status::Warning,
        FailOn::Must => Status::Failure,
    }
}

/// Each `--output` with its format, from its extension (none: `--format`'s); an output
/// without one is the conformance layout's directory when the run's format is
/// `conformance` (which needs one). An extension no format has is an error before the run.
fn outputs(opts: &RunOpts) -> Result<Vec<(PathBuf, Format)>, Error> {
    let outputs: Vec<(PathBuf, Format)> = opts
        .outputs
        .iter()
        .map(|p| {
            let f = match (Format::by_extension(p), p.extension()) {
                (Some(f), _) => f,
                (None, None) if opts.format == Format::Github => Format::Text,
                (None, None) => opts.format,
                (None, Some(ext)) => {
                    let known: Vec<String> = Format::ALL
                        .iter()
                        .filter(|f| !f.extension().is_empty())
                        .map(|f| format!(".{}", f.extension()))
                        .collect();
                    return Err(Error::Usage(format!(
                        "--output {}: no format writes .{} files (known: {})",
                        p.display(),
                        ext.to_string_lossy(),
                        known.join(" ")
                    )));
                }
            };
            Ok((p.clone(), f))
        })
        .collect::<Result<_, Error>>()?;
    if opts.format == Format::Conformance && !outputs.iter().any(|o| o.1 == Format::Conformance) {
        return Err(Error::Usage(
            "--format conformance needs --output DIR (the directory of checks.json files)".into(),
        ));
    }
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::manifest;
    use clap::Parser;

    fn opts(args: &[&str]) -> RunOpts {
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            o: RunOpts,
        }
        P::parse_from(std::iter::once("x").chain(args.iter().copied())).o
    }

    fn servers() -> Vec<Manifest> {
        let cwd = std::path::Path::new("/tmp");
        vec![
            manifest::adhoc("a", &[], cwd),
            manifest::adhoc("b", &[], cwd),
        ]
    }

    /// The plan a census makes of the test servers (no baseline).
    fn census_plan(o: &RunOpts) -> RunPlan {
        let (catalogue, profiles) = (Catalogue::bundled(), Profiles::bundled());
        plan(o, &servers(), None, &catalogue, &profiles).unwrap()
    }

    fn run(args: &[&str]) -> Result<RunPlan, Error> {
        plan(
            &opts(args),
            &servers(),
            Some("base.toml".into()),
            &Catalogue::bundled(),
            &Profiles::bundled(),
        )
    }

    #[test]
    fn the_default_is_every_server_under_every_default_ending() {
        let p = run(&[]).unwrap();
        assert_eq!(p.cases.len(), 2 * crate::model::Ending::DEFAULTS.len());
        assert_eq!(p.baseline, Some("base.toml".into()));
        assert_eq!(p.fail_threshold, Status::Warning);
        assert_eq!(p.revision, Catalogue::bundled().default_revision);
    }

    #[test]
    fn all_adds_every_profile_and_names_are_checked() {
        let profiles = Profiles::bundled();
        let n = scenarios::all_ids(&profiles).len();
        assert_eq!(run(&["--scenario", "all"]).unwrap().cases.len(), 2 * n);
        let e = run(&["--scenario", "nope"]).unwrap_err().to_string();
        assert!(e.contains("unknown scenario `nope`"), "{e}");
        let e = run(&["--scenario", "close:nope"]).unwrap_err().to_string();
        assert!(e.contains("unknown scenario `close:nope`"), "{e}");
        let e = run(&["--spec", "1999-01-01"]).unwrap_err().to_string();
        assert!(e.contains("unknown spec revision"), "{e}");
    }

    #[test]
    fn hosts_add_every_host_to_the_default_endings() {
        let p = run(&["--hosts"]).unwrap();
        let ids: Vec<String> = p.cases.iter().map(|c| c.scenario.to_string()).collect();
        let hosts = Profiles::bundled().hosts().count();
        let defaults = crate::model::Ending::DEFAULTS.len();
        assert_eq!(ids.len(), 2 * (defaults + hosts), "{ids:?}");
        for want in [
            "close",
            "exit",
            "crash",
            "stdin-null",
            "inflight",
            "sighup",
            "ctrl-c",
            "close:vscode",
            "close:claude-desktop",
        ] {
            assert!(ids.iter().any(|i| i == want), "{want}: {ids:?}");
        }
        let p = run(&["--hosts", "--scenario", "exit", "--stdio", "socketpair"]).unwrap();
        assert_eq!(p.cases.len(), 2 * (4 + hosts));
        assert_eq!(p.plumbing.stdio, Some(crate::model::StdioKind::Socketpair));
        assert!(opts_err(&["--group", "nope"]).contains("nope"));
    }

    #[test]
    fn a_census_runs_the_default_endings_and_every_host_and_shards_servers() {
        let hosts = Profiles::bundled().hosts().count();
        let o = census_opts(&opts(&["--partition", "1/2"]));
        assert_eq!(o.partition, None);
        let p = census_plan(&o);
        let ids: Vec<String> = p.cases.iter().map(|c| c.scenario.to_string()).collect();
        assert_eq!(
            ids.len(),
            2 * (crate::model::Ending::DEFAULTS.len() + hosts),
            "{ids:?}"
        );
        for want in ["exit", "inflight", "sighup", "close:vscode", "close:codex"] {
            assert!(ids.iter().any(|i| i == want), "{want}: {ids:?}");
        }
        let o = census_opts(&opts(&["--scenario", "close"]));
        let p = census_plan(&o);
        assert_eq!(p.cases.len(), 2, "a named scenario is all it runs");
    }

    fn opts_err(args: &[&str]) -> String {
        #[derive(Parser, Debug)]
        struct P {
            #[command(flatten)]
            o: RunOpts,
        }
        P::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn named_cases_shards_and_outputs() {
        let p = run(&["--case", "b/exit", "--case", "a/close:java"]).unwrap();
        let got: Vec<String> = p
            .cases
            .iter()
            .map(|c| format!("{}/{}", c.manifest.name, c.scenario))
            .collect();
        assert_eq!(got, ["b/exit", "a/close:java"]);
        for (c, says) in [
            ("no-slash", "expected SERVER/SCENARIO"),
            ("nobody/close", "unknown server `nobody`"),
            ("a/closed", "unknown scenario `closed`"),
        ] {
            let e = run(&["--case", c]).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        assert_eq!(
            run(&["--partition", "2/4"]).unwrap().cases.len(),
            (2 * crate::model::Ending::DEFAULTS.len()).div_ceil(4)
        );
        assert!(run(&["--partition", "5/4"]).is_err());
        let p = run(&["--output", "r.xml", "--output", "r.json", "--no-baseline"]).unwrap();
        assert_eq!(p.outputs[0].1, Format::Junit);
        assert_eq!(p.outputs[1].1, Format::Json);
        assert_eq!(p.baseline, None);
        let p = run(&[
            "--format",
            "conformance",
            "--output",
            "out",
            "--output",
            "r.json",
        ]);
        let p = p.unwrap();
        assert_eq!(p.outputs[0].1, Format::Conformance);
        assert_eq!(p.outputs[1].1, Format::Json);
        assert_eq!(
            run(&["--output", "out"]).unwrap().outputs[0].1,
            Format::Text
        );
        let e = run(&["--format", "conformance", "--output", "r.json"]).unwrap_err();
        assert!(e.to_string().contains("needs --output DIR"), "{e}");
        // The format of an output without an extension is --format's; one no format has is
        // refused before anything runs.
        let p = run(&[
            "--format", "html", "--output", "report", "--output", "r.sarif",
        ]);
        let formats: Vec<Format> = p.unwrap().outputs.iter().map(|o| o.1).collect();
        assert_eq!(formats, [Format::Html, Format::Sarif]);
        let e = run(&["--output", "r.pdf"]).unwrap_err().to_string();
        assert!(
            e.contains("r.pdf: no format writes .pdf files (known: .txt .json"),
            "{e}"
        );
        assert_eq!(
            run(&["--fail-on", "must"]).unwrap().fail_threshold,
            Status::Failure
        );
    }
}
