//! `run --sdk LINE@A..B --bisect`: the first release in a range whose stages differ from
//! the range's first release, found by bisection (about log2(n) releases run, not n); with
//! `--checkout PATH`, then the first commit between that release's tag and the one before
//! it, each commit built from the checkout as a local build.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use super::args::RunOpts;
use super::{plan, run as runner, sdk};
use crate::config::manifest::Manifest;
use crate::config::profiles::Profiles;
use crate::error::Error;
use crate::exit_codes;
use crate::kits::{self, Kit, KitTarget, Source, VersionSel};
use crate::render::history::stage_of;
use crate::rules::Catalogue;

/// What a build did: shape × ending → stage (with the in-flight outcome where there is one).
type Signature = BTreeMap<(String, String), String>;

/// The first index in `0..n` whose signature differs from index 0's, given that the last
/// one does: `probe(i)` says whether `i` still behaves like index 0. Pure; asks about
/// ⌈log2 n⌉ indices.
pub fn first_change(
    n: usize,
    mut probe: impl FnMut(usize) -> Result<bool, Error>,
) -> Result<usize, Error> {
    let (mut same, mut differs) = (0, n - 1);
    while differs - same > 1 {
        let mid = same + (differs - same) / 2;
        if probe(mid)? {
            same = mid;
        } else {
            differs = mid;
        }
    }
    Ok(differs)
}

/// The cases of `manifests` run as `opts` say, summed up as a signature.
fn signature(manifests: &[Manifest], opts: &RunOpts) -> Result<Signature, Error> {
    let plan = plan::plan(
        opts,
        manifests,
        None,
        &Catalogue::bundled(),
        &Profiles::bundled(),
    )?;
    let report = runner::harness_of(&plan, None)?.run(&plan.cases);
    crate::harness::release_cgroups();
    Ok(report
        .results
        .iter()
        .map(|r| {
            let shape = report
                .servers
                .get(&r.server)
                .and_then(|s| s.shape.clone())
                .unwrap_or_else(|| r.server.clone());
            ((shape, r.scenario.to_string()), stage_of(r))
        })
        .collect())
}

/// Builds `source` and runs it: its signature, or why it has none.
fn probe(
    kit: &Kit,
    source: Source,
    label: &str,
    shapes: &[String],
    opts: &RunOpts,
    cache: &Path,
) -> Result<Signature, Error> {
    let manifests = sdk::manifests_for(kit, &source, cache)?
        .map_err(|why| Error::Usage(format!("bisect: {label} cannot be tested: {why}")))?;
    let manifests: Vec<Manifest> = manifests
        .into_iter()
        .filter(|m| shapes.is_empty() || shapes.iter().any(|s| m.about.shape.as_deref() == Some(s)))
        .collect();
    let sig = signature(&manifests, opts)?;
    let shown: Vec<String> = sig
        .iter()
        .map(|((shape, ending), stage)| format!("{shape} {ending} {stage}"))
        .collect();
    eprintln!("bisect: {label}: {}", shown.join(" · "));
    Ok(sig)
}

fn changes(a: &Signature, b: &Signature) -> String {
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|((shape, ending), v)| {
            let w = b.get(&(shape.clone(), ending.clone()));
            format!("{shape} {ending}: {v} → {}", w.map_or("–", String::as_str))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Runs the bisection `run --sdk SPEC --bisect [--checkout PATH]` asks for.
pub fn run(
    spec: &str,
    checkout: Option<&Path>,
    shapes: &[String],
    opts: &RunOpts,
    kits_dir: &Path,
    cache: &Path,
) -> Result<ExitCode, Error> {
    let all = kits::load_kits(kits_dir)?;
    let req = kits::parse_sdk_arg(spec)?;
    let kit = kits::find_kit(&all, &req.line)?;
    let releases = range_of(kit, req.target, spec)?;
    let cache = std::path::absolute(cache).map_err(Error::io(cache))?;
    let at = |i: usize| {
        let r = releases[i].clone();
        let label = format!("{} {}", kit.id, r.version);
        probe(kit, Source::Release(r), &label, shapes, opts, &cache)
    };
    let n = releases.len();
    let (first, last) = (at(0)?, at(n - 1)?);
    if first == last {
        println!(
            "{} {} and {} behave alike: nothing to bisect",
            kit.id,
            releases[0].version,
            releases[n - 1].version
        );
        return Ok(ExitCode::from(exit_codes::SUCCESS));
    }
    let mut seen = BTreeMap::from([(0, first.clone()), (n - 1, last)]);
    let i = first_change(n, |i| {
        let sig = at(i)?;
        let same = sig == first;
        seen.insert(i, sig);
        Ok(same)
    })?;
    let (before, after) = (&releases[i - 1].version, &releases[i].version);
    println!(
        "{} {after} is the first release that changed (after {before}): {}",
        kit.id,
        changes(&seen[&(i - 1)], &seen[&i])
    );
    match checkout {
        Some(dir) => commits(
            kit,
            dir,
            (before, after),
            &seen[&(i - 1)],
            shapes,
            opts,
            &cache,
        ),
        None => Ok(ExitCode::from(exit_codes::SUCCESS)),
    }
}

/// The releases of `LINE@A..B` or `LINE@all`, at least two of them.
fn range_of(kit: &kits::Kit, target: KitTarget, spec: &str) -> Result<Vec<kits::Release>, Error> {
    let sel = match target {
        KitTarget::Registry(sel @ (VersionSel::Range { .. } | VersionSel::All)) => sel,
        _ => {
            return Err(Error::Usage(format!(
                "--bisect needs a range of releases (LINE@A..B or LINE@all), not {spec:?}"
            )))
        }
    };
    let releases = kits::versions(kit, &sel)?;
    if releases.len() < 2 {
        return Err(Error::Usage(format!(
            "--bisect: {spec} holds fewer than two releases"
        )));
    }
    Ok(releases)
}

fn git(e: kits::git::GitError) -> Error {
    Error::Usage(format!("--checkout: {e}"))
}

/// The commits (hash, subject) from the earlier release's tag to the later one's, and the
/// later tag; an error when a tag is missing or nothing lies between them.
fn tagged_commits(
    origin: &Path,
    dir: &Path,
    before: &str,
    after: &str,
) -> Result<(Vec<(String, String)>, String), Error> {
    let tag = |v: &str| -> Result<String, Error> {
        kits::git::tag_of(origin, v).map_err(git)?.ok_or_else(|| {
            Error::Usage(format!(
                "--checkout: no tag for release {v} in {}",
                dir.display()
            ))
        })
    };
    let (from, to) = (tag(before)?, tag(after)?);
    let list = kits::git::commits_between(origin, &from, &to).map_err(git)?;
    if list.is_empty() {
        return Err(Error::Usage(format!(
            "--checkout: no commits between {from} and {to}"
        )));
    }
    eprintln!("bisect: {} commit(s) from {from} to {to}", list.len());
    Ok((list, to))
}

/// Bisects the commits between two releases' tags in a checkout.
fn commits(
    kit: &Kit,
    dir: &Path,
    (before, after): (&str, &str),
    old: &Signature,
    shapes: &[String],
    opts: &RunOpts,
    cache: &Path,
) -> Result<ExitCode, Error> {
    let origin = std::fs::canonicalize(dir).map_err(Error::io(dir))?;
    let (list, to) = tagged_commits(&origin, dir, before, after)?;
    let clone = cache.join("kits").join(&kit.id).join("bisect-clone");
    // The later tag, built from the checkout, must behave as its release did: otherwise the
    // change is not in the commits between the tags (a dependency, the packaging).
    let n = list.len() + 1;
    let at = |i: usize| -> Result<Signature, Error> {
        let (hash, subject) = &list[i];
        kits::git::checkout_at(&origin, &clone, hash).map_err(git)?;
        let short = &hash[..12.min(hash.len())];
        let source = Source::Local {
            path: clone.clone(),
            name: Some(short.to_string()),
        };
        probe(
            kit,
            source,
            &format!("{short} {subject}"),
            shapes,
            opts,
            cache,
        )
    };
    let mut last = BTreeMap::new();
    let end = at(n - 2)?;
    if &end == old {
        println!(
            "{} {to} built from the checkout behaves like {before}: the change is not in the commits between the tags",
            kit.id
        );
        return Ok(ExitCode::from(exit_codes::SUCCESS));
    }
    last.insert(n - 1, end);
    // Index 0 stands for the earlier release itself, index i for the i-th commit after it.
    let i = first_change(n, |i| {
        let sig = at(i - 1)?;
        let same = &sig == old;
        last.insert(i, sig);
        Ok(same)
    })?;
    let (hash, subject) = &list[i - 1];
    let after_sig = last.remove(&i).map_or_else(|| at(i - 1), Ok)?;
    println!(
        "{} commit {hash} is the first that changed ({subject}): {}",
        kit.id,
        changes(old, &after_sig)
    );
    Ok(ExitCode::from(exit_codes::SUCCESS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisection_finds_the_first_change_in_few_probes() {
        for n in 2..40 {
            for change in 1..n {
                let mut asked = 0;
                let found = first_change(n, |i| {
                    asked += 1;
                    Ok(i < change)
                })
                .unwrap();
                assert_eq!(found, change, "n={n}");
                assert!(asked <= (n as f64).log2().ceil() as usize, "n={n}: {asked}");
            }
        }
    }
}
