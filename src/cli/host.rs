//! `mcp-shutdown host measure <host>[@VERSION|@A..B|@all]` and `host history <host>`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::args::{HostCmd, RunOpts};

use crate::error::Error;
use crate::harness::locate;
use crate::hosts::catalogue::{self, HostSpec};
use crate::hosts::install::{self, Releases};
use crate::hosts::measure::{self, Measurement, Options};
use crate::hosts::{emit, HostError};
use crate::kits::VersionSel;

/// `HOST[@VERSION|@latest|@A..B|@all]`: the host's id and, when `@` was written, which
/// releases (the grammar `--sdk` has too).
fn parse_spec(spec: &str) -> Result<(String, Option<VersionSel>), Error> {
    crate::kits::parse_named(spec).map_err(|e| Error::Usage(format!("{spec}: {e}")))
}

/// The newest release and `n` more spread evenly (by position) over `candidates`.
pub fn spread_pick(candidates: &[String], n: usize) -> Vec<String> {
    let Some(newest) = candidates.last() else {
        return Vec::new();
    };
    let mut out = vec![newest.clone()];
    let rest = &candidates[..candidates.len() - 1];
    if !rest.is_empty() {
        for i in 0..n.min(rest.len()) {
            let idx = i * rest.len() / n.min(rest.len());
            out.push(rest[idx].clone());
        }
    }
    out.sort_by_key(|v| candidates.iter().position(|c| c == v));
    out.dedup();
    out
}

fn versions(spec: &HostSpec, wanted: &VersionSel) -> Result<Vec<String>, HostError> {
    let rel: Releases = install::releases(spec.package)?;
    let all: Vec<String> = rel.dated.iter().map(|(v, _)| v.clone()).collect();
    let known = |v: &str| -> Result<String, HostError> {
        if all.iter().any(|a| a == v) {
            Ok(v.to_string())
        } else {
            Err(HostError::NoSuchVersion {
                package: spec.package.into(),
                asked: v.into(),
                newest: rel.newest.clone(),
            })
        }
    };
    Ok(match wanted {
        VersionSel::Latest => vec![rel.newest.clone()],
        VersionSel::Exact(v) => vec![known(v)?],
        VersionSel::Range { from, to } => {
            // An open end is the oldest or the newest release.
            let end = |v: Option<&String>| v.cloned().unwrap_or_default();
            let a = from
                .as_deref()
                .map_or_else(|| Ok(end(all.first())), known)?;
            let b = to.as_deref().map_or_else(|| Ok(end(all.last())), known)?;
            let (i, j) = (
                all.iter().position(|x| *x == a).unwrap_or(0),
                all.iter().position(|x| *x == b).unwrap_or(0),
            );
            spread_pick(&all[i.min(j)..=i.max(j)], 5)
        }
        VersionSel::All => {
            let newest_date = rel
                .dated
                .iter()
                .find(|(v, _)| *v == rel.newest)
                .map(|(_, d)| d.clone())
                .unwrap_or_default();
            let cutoff = newest_date.parse::<jiff::Timestamp>().ok().and_then(|t| {
                t.checked_sub(jiff::SignedDuration::from_hours(24 * 365))
                    .ok()
            });
            let recent: Vec<String> = rel
                .dated
                .iter()
                .filter(|(_, d)| match (&cutoff, d.parse::<jiff::Timestamp>()) {
                    (Some(c), Ok(t)) => t >= *c,
                    _ => true,
                })
                .map(|(v, _)| v.clone())
                .collect();
            spread_pick(&recent, 5)
        }
    })
}

fn find(id: &str) -> Result<&'static HostSpec, HostError> {
    catalogue::find(id)
        .ok_or_else(|| HostError::Unknown(id.to_string(), catalogue::known().join(", ")))
}

pub fn run(cmd: HostCmd) -> Result<ExitCode, Error> {
    match cmd {
        HostCmd::List => {
            for h in catalogue::HOSTS {
                let t: Vec<&str> = h.paths.iter().map(|p| p.trigger).collect();
                println!("{:18} {:28} {}", h.id, h.package, t.join(", "));
            }
        }
        HostCmd::History { host } => print!("{}", emit::history(&saved(find(&host)?))),
        HostCmd::Profiles { from } => {
            let text = std::fs::read_to_string(&from).map_err(|source| Error::Io {
                path: from.clone(),
                source,
            })?;
            // `measure --json` writes a list; the cache keeps one measurement per file.
            let ms: Vec<Measurement> = serde_json::from_str(&text)
                .or_else(|_| serde_json::from_str(&text).map(|m| vec![m]))
                .map_err(|e| Error::Usage(format!("{}: {e}", from.display())))?;
            for m in &ms {
                let name = catalogue::find(&m.host).map_or(m.host.as_str(), |h| h.name);
                println!("{}", emit::profiles_toml(m, name));
            }
        }
        HostCmd::Measure {
            spec,
            repeats,
            only,
            json,
        } => measure_releases(&spec, repeats, &only, json)?,
    }
    Ok(ExitCode::from(crate::exit_codes::SUCCESS))
}

/// The measurements the cache keeps of `spec`, oldest release first.
fn saved(spec: &HostSpec) -> Vec<Measurement> {
    let dir = locate::user_cache().join("hosts").join("measurements");
    let mut ms: Vec<Measurement> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("{}@", spec.id))
                })
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter_map(|t| serde_json::from_str(&t).ok())
                .collect()
        })
        .unwrap_or_default();
    let order: Vec<String> = install::releases(spec.package)
        .map(|r| r.dated.into_iter().map(|(v, _)| v).collect())
        .unwrap_or_default();
    ms.sort_by_key(|m| order.iter().position(|v| *v == m.version));
    ms
}

/// `host measure`: each release asked for, installed once, measured, kept in the cache and
/// printed as profiles; the history of the releases when there are several.
fn measure_releases(
    spec: &str,
    repeats: u32,
    only: &[String],
    json: Option<PathBuf>,
) -> Result<(), Error> {
    let (id, wanted) = parse_spec(spec)?;
    let wanted = wanted.unwrap_or(VersionSel::Latest);
    let host = find(&id)?;
    let cache = locate::user_cache();
    let helper = std::env::current_exe().map_err(|_| Error::NoBinary)?;
    let _guard = crate::os::hostproc::kill_on_interrupt();
    let opts = Options {
        repeats,
        only,
        helper: &helper,
    };
    let mut all = Vec::new();
    for version in versions(host, &wanted)? {
        let (exe, installed) = install::ensure(&cache, host.package, host.bin, &version)?;
        let how = if installed {
            "installed"
        } else {
            "cached (nothing installed)"
        };
        eprintln!("{}@{version}: {how}", host.package);
        let m = measure::measure(host, &exe, &version, installed, &opts, &mut |l| {
            eprintln!("  {l}")
        })?;
        eprintln!(
            "{}@{version}: {} paths × {repeats} repeats in {:.1} s",
            host.id,
            m.paths.len(),
            m.wall_ms as f64 / 1000.0
        );
        let saved = measure::saved_path(&cache, host.id, &version);
        if let Some(p) = saved.parent() {
            let _ = std::fs::create_dir_all(p);
        }
        let _ = std::fs::write(&saved, serde_json::to_string_pretty(&m).unwrap_or_default());
        println!("{}", emit::profiles_toml(&m, host.name));
        all.push(m);
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&all).unwrap_or_default();
        std::fs::write(&path, text).map_err(|source| Error::Io { path, source })?;
    }
    if all.len() > 1 {
        print!("{}", emit::history(&all));
    }
    Ok(())
}

/// The release `check --real-host HOST` runs when no version is given: the one its bundled
/// profiles were measured on (the ladder a stage is read from is then that release's own),
/// else the newest.
fn measured_release(host: &HostSpec) -> Option<String> {
    crate::config::profiles::Profiles::bundled()
        .iter()
        .filter_map(|p| p.measured.as_ref())
        .find(|m| m.package == host.package)
        .map(|m| m.version.clone())
}

/// The release `--real-host` runs: the one its profiles were measured at, else the latest,
/// or the one asked for.
fn real_host_release(host: &HostSpec, wanted: Option<VersionSel>) -> Result<String, Error> {
    Ok(match wanted {
        None => match measured_release(host) {
            Some(v) => v,
            None => versions(host, &VersionSel::Latest)?.remove(0),
        },
        Some(sel @ (VersionSel::Latest | VersionSel::Exact(_))) => versions(host, &sel)?.remove(0),
        _ => {
            return Err(Error::Usage(
                "--real-host takes HOST, HOST@VERSION or HOST@latest".into(),
            ))
        }
    })
}

/// `check --real-host HOST[@VERSION|@latest] [--path TRIGGER] -- CMD`: the server under the
/// real host, judged by the rules and reported like any run (`--format`, `--output`, exit
/// codes).
pub fn real_host(
    opts: &RunOpts,
    spec: &str,
    only: &[String],
    command: &[String],
) -> Result<ExitCode, Error> {
    let (id, wanted) = parse_spec(spec)?;
    let host = find(&id)?;
    if let Some(bad) = only
        .iter()
        .find(|t| !host.paths.iter().any(|p| p.trigger == t.as_str()))
    {
        let known: Vec<&str> = host.paths.iter().map(|p| p.trigger).collect();
        return Err(Error::Usage(format!(
            "--path {bad}: {id} has no such quit path (its paths: {})",
            known.join(", ")
        )));
    }
    let version = real_host_release(host, wanted)?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let server = crate::config::manifest::adhoc(&command[0], &command[1..], &cwd);
    let plan = crate::cli::plan::plan(
        opts,
        std::slice::from_ref(&server),
        None,
        &crate::rules::Catalogue::bundled(),
        &crate::config::profiles::Profiles::bundled(),
    )?;
    let baseline = plan
        .baseline
        .as_deref()
        .map(crate::config::baseline::Baseline::load)
        .transpose()?;
    let against = crate::cli::run::saved_report(&plan)?;
    crate::cli::run::prepare_outputs(&plan)?;
    let harness = crate::cli::run::harness_of(&plan, baseline.as_ref())?;
    let cache = locate::user_cache();
    let (exe, _) = install::ensure(&cache, host.package, host.bin, &version)?;
    let started = std::time::Instant::now();
    let _guard = crate::os::hostproc::kill_on_interrupt();
    let settle = std::time::Duration::from_millis(harness.budgets_for(&server).prompt_ms);
    let runs = crate::hosts::realhost::check(host, &exe, command, only, settle, &mut |line| {
        eprintln!("mcp-shutdown: {line}")
    })?;
    let judged = crate::hosts::realhost::judge(&harness, host, &version, &server, &runs);
    for line in &judged.unjudged {
        eprintln!("mcp-shutdown: {line}");
    }
    let report = harness.report(judged.servers, judged.scenarios.iter(), judged.results);
    crate::cli::run::conclude(
        &plan,
        baseline.as_ref(),
        against.as_ref(),
        &report,
        started.elapsed(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_with_the_sdk_grammar() {
        assert_eq!(parse_spec("codex").unwrap(), ("codex".into(), None));
        assert_eq!(
            parse_spec("codex@all").unwrap(),
            ("codex".into(), Some(VersionSel::All))
        );
        assert!(parse_spec("codex@2.0.0..1.0.0")
            .unwrap_err()
            .to_string()
            .contains("range is empty"));
    }

    #[test]
    fn the_newest_and_five_spread_back() {
        let v: Vec<String> = (0..30).map(|i| format!("1.{i}.0")).collect();
        let p = spread_pick(&v, 5);
        assert_eq!(p.len(), 6);
        assert_eq!(p.last().unwrap(), "1.29.0");
        assert_eq!(p[0], "1.0.0");
    }
}
