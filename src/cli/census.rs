//! `mcp-shutdown census`: a registry listing → validated entries → the install phase → the
//! entries run as ordinary manifests through the usual plan and harness → the report, with
//! each package described and servers that need real credentials marked, and the site.

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::args::{CensusArgs, CensusCmd, RegistrySource};
use super::plan;
use crate::census::{
    self, carry, credentials, launch_errors, registry, with_sdk, Entry, InstallProgress,
    ParseOptions,
};
use crate::config::manifest::Manifest;
use crate::config::profiles::Profiles;
use crate::error::Error;
use crate::harness::locate;
use crate::kits;
use crate::model::{CensusRun, Report};
use crate::render::merge;
use crate::rules::Catalogue;

/// Runs a census; the exit code is the run's (1 when a server misses a scored rule).
pub fn run(a: CensusArgs) -> Result<ExitCode, Error> {
    if let Some(CensusCmd::Snapshot { source, output }) = a.action {
        return snapshot(&source, &output);
    }
    let variables = parse_vars(&a.vars)?;
    let shard = a.shard.as_deref().map(shard_spec).transpose()?;
    let (name, text) = read_source(&a)?;
    let entries = read_listing(&name, &text, variables)?;
    let listed: BTreeSet<String> = entries.iter().map(|e| e.server_name.clone()).collect();
    let previous = a.previous.as_deref().map(super::load_report).transpose()?;
    let entries = chosen(entries, &a)?;
    let Some(entries) = my_shard(entries, shard) else {
        return Ok(ExitCode::SUCCESS);
    };
    let (entries, carry) = match &previous {
        Some(prev) => carry_forward(prev, entries, &listed, shard),
        None => (entries, None),
    };
    let carried_any = carry.as_ref().is_some_and(|c| !c.carried.is_empty());
    let cache = std::path::absolute(a.cache.unwrap_or_else(default_cache))
        .map_err(Error::io("the census cache"))?;
    // Argument mistakes and local builds before any install.
    let replacements = replacements(&a.with_sdk)?;
    let installed = install_phase(&entries, &cache)?;
    if installed.is_empty() && !carried_any {
        return Err(Error::Usage(format!(
            "{}: no entry could be installed",
            name.display()
        )));
    }
    let what_ifs = with_sdk_phase(replacements, &installed, &cache)?;
    let opts = plan::census_opts(&a.opts);
    let manifests = manifests_of(&installed, &what_ifs, &cache);
    let (rules, profiles) = (Catalogue::bundled(), Profiles::bundled());
    let mut plan = plan::plan(&opts, &manifests, None, &rules, &profiles)?;
    let date = run_date(a.date.as_deref())?;
    plan.date = Some(date.clone());
    let started = Instant::now();
    let (site_dir, site_url, history_file) = (a.site, a.site_url, a.history);
    super::run::execute_with(plan, |report| {
        describe(report, started, &installed, &what_ifs);
        dated(
            report,
            &date,
            opts.triage,
            previous.as_ref().zip(carry.as_ref()),
        )?;
        report.with_sdk = what_ifs
            .iter()
            .map(|(r, p)| with_sdk::pair(report, r, p))
            .collect();
        super::census_site::publish(
            report,
            history_file.as_deref(),
            site_dir.as_deref(),
            site_url.as_deref(),
        )
    })
}

/// The entries `--server` and `--partition` choose (the partition said on stderr).
fn chosen(entries: Vec<Entry>, a: &CensusArgs) -> Result<Vec<Entry>, Error> {
    let entries = select(entries, &a.servers, a.opts.partition.as_deref())?;
    if let Some(p) = &a.opts.partition {
        eprintln!("census: partition {p}: {} entries", entries.len());
    }
    Ok(entries)
}

/// Every installed entry's manifest, then each replacement's.
fn manifests_of(installed: &[Entry], what_ifs: &[WhatIfRun], cache: &Path) -> Vec<Manifest> {
    let mut manifests: Vec<Manifest> = installed
        .iter()
        .map(|e| census::manifest(e, cache))
        .collect();
    for (_, prepared) in what_ifs {
        manifests.extend(prepared.iter().filter_map(|p| p.manifest.clone()));
    }
    manifests
}

/// The listing's name and text: the `--listing` file, or every page of `--registry`.
fn read_source(a: &CensusArgs) -> Result<(PathBuf, String), Error> {
    Ok(match &a.listing {
        Some(path) => (
            path.clone(),
            std::fs::read_to_string(path).map_err(Error::io(path))?,
        ),
        None => {
            let s = read_registry(&a.source)?;
            (PathBuf::from(&s.query.base), s.to_listing())
        }
    })
}

/// `--shard K/N`'s entries; `None` when the shard holds no server (nothing to run or write).
fn my_shard(entries: Vec<Entry>, shard: Option<(u64, u64)>) -> Option<Vec<Entry>> {
    let Some((k, n)) = shard else {
        return Some(entries);
    };
    let mine: Vec<Entry> = entries
        .into_iter()
        .filter(|e| census::shard_of(&e.server_name, n) == k)
        .collect();
    eprintln!("census: shard {k}/{n}: {} entries", mine.len());
    if mine.is_empty() {
        // More shards than servers is no fault: this shard has nothing to report.
        eprintln!("census: shard {k}/{n} holds no server: nothing to run or write");
        return None;
    }
    Some(mine)
}

/// `--previous`: the entries still to run, and what was carried and dropped (this shard's).
fn carry_forward(
    prev: &Report,
    entries: Vec<Entry>,
    listed: &BTreeSet<String>,
    shard: Option<(u64, u64)>,
) -> (Vec<Entry>, Option<carry::Plan>) {
    let mine = |n: &str| shard.is_none_or(|(k, n_)| census::shard_of(n, n_) == k);
    let p = carry::plan(prev, entries, listed, mine);
    say_carried(&p);
    (p.run.clone(), Some(p))
}

/// The census's date on the report, each server's pass (all full without `--triage`), and
/// the servers carried forward from `--previous` merged in, with the dropped ones named.
fn dated(
    report: &mut Report,
    date: &str,
    triage: bool,
    carry: Option<(&Report, &carry::Plan)>,
) -> Result<(), Error> {
    if !triage {
        let every = report.servers.keys().cloned().collect();
        census::triage::mark(report, &every, date);
    }
    if let Some((prev, c)) = carry {
        let part = carry::carried(prev, &c.carried);
        *report = merge::merge(vec![report.clone(), part])
            .map_err(|e| Error::Usage(format!("--previous: {e}")))?;
    }
    report.census = Some(CensusRun {
        date: date.to_string(),
        dropped: carry.map(|(_, c)| c.dropped.clone()).unwrap_or_default(),
    });
    Ok(())
}

/// `$MCP_SHUTDOWN_CENSUS_CACHE`, else the user's cache directory: shared by every census, so
/// a package is downloaded once per machine.
fn default_cache() -> PathBuf {
    if let Some(p) = std::env::var_os("MCP_SHUTDOWN_CENSUS_CACHE") {
        return PathBuf::from(p);
    }
    crate::harness::locate::user_cache().join("census")
}

/// What `--previous` decided, on stderr.
fn say_carried(p: &carry::Plan) {
    for n in &p.dropped {
        eprintln!("census: dropped {n}: the listing no longer holds it");
    }
    for id in &p.undated {
        eprintln!("census: {id}: the previous report does not say when it judged it: run again");
    }
    eprintln!(
        "census: --previous: {} carried forward, {} new or updated to run, {} dropped",
        p.carried.len(),
        p.run.len(),
        p.dropped.len()
    );
}

/// `--date`, checked (a calendar date), else today in UTC.
fn run_date(given: Option<&str>) -> Result<String, Error> {
    match given {
        Some(d) => d
            .parse::<jiff::civil::Date>()
            .map(|d| d.to_string())
            .map_err(|e| Error::Usage(format!("--date {d}: {e}"))),
        None => Ok(super::run::today()),
    }
}

/// `--var NAME=VALUE` pairs.
fn parse_vars(vars: &[String]) -> Result<BTreeMap<String, String>, Error> {
    vars.iter()
        .map(|v| {
            v.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| Error::Usage(format!("--var {v}: expected NAME=VALUE")))
        })
        .collect()
}

/// `--shard K/N` (1-based K).
fn shard_spec(spec: &str) -> Result<(u64, u64), Error> {
    let (k, n) = plan::partition(spec)
        .map_err(|_| Error::Usage(format!("--shard {spec}: expected K/N with 1 <= K <= N")))?;
    Ok((k as u64, n as u64))
}

/// Every page of the registry `--registry` names; what it dropped goes to stderr.
fn read_registry(source: &RegistrySource) -> Result<registry::Snapshot, Error> {
    let base = source
        .registry
        .clone()
        .ok_or_else(|| Error::Usage("--registry URL is required".into()))?;
    let updated_since = source
        .updated_since
        .as_deref()
        .map(registry::updated_since)
        .transpose()?;
    let query = registry::Query {
        base,
        updated_since,
    };
    let s = registry::read(&query, registry::http_get)?;
    for d in &s.dropped {
        eprintln!(
            "{}: dropped {} {} ({})",
            query.base, d.name, d.version, d.status
        );
    }
    eprintln!(
        "census: {}: {} servers in {} pages of /{}, {} deleted or deprecated dropped",
        query.base,
        s.servers.len(),
        s.pages,
        s.api,
        s.dropped.len()
    );
    Ok(s)
}

/// `census snapshot`: the registry's listing saved whole (a temporary file renamed once
/// every page is read, so a failed read leaves no file).
fn snapshot(source: &RegistrySource, output: &Path) -> Result<ExitCode, Error> {
    let s = read_registry(source)?;
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(Error::io(dir))?;
    std::io::Write::write_all(&mut tmp, s.to_listing().as_bytes()).map_err(Error::io(output))?;
    tmp.persist(output)
        .map_err(|e| Error::io(output)(e.error))?;
    eprintln!("census: snapshot written to {}", output.display());
    Ok(ExitCode::SUCCESS)
}

/// The runnable entries of a listing; why each other one is skipped goes to stderr, one line
/// each naming the file, the entry and the field.
fn read_listing(
    path: &Path,
    text: &str,
    variables: BTreeMap<String, String>,
) -> Result<Vec<Entry>, Error> {
    let listing = census::parse_listing_with(path, text, &ParseOptions { variables })?;
    for s in &listing.skipped {
        // A well-formed package the suite cannot run (docker, HTTP) is no fault of the file.
        let kind = if s.not_runnable() {
            "skipped"
        } else {
            "invalid"
        };
        eprintln!("{}: {kind} {s}", path.display());
    }
    eprintln!(
        "census: {}: {} entries to run, {} skipped",
        path.display(),
        listing.entries.len(),
        listing.skipped.len()
    );
    if listing.entries.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no runnable entry in the listing",
            path.display()
        )));
    }
    Ok(listing.entries)
}

/// `--server` (entry or registry name) and `--partition K/M` over entries: a shard installs
/// and runs only its own servers.
fn select(
    entries: Vec<Entry>,
    names: &[String],
    partition: Option<&str>,
) -> Result<Vec<Entry>, Error> {
    let matches = |e: &Entry, n: &String| &e.id == n || &e.server_name == n;
    if let Some(n) = names
        .iter()
        .find(|n| !entries.iter().any(|e| matches(e, n)))
    {
        return Err(Error::Usage(format!("--server {n}: not in the listing")));
    }
    let chosen: Vec<Entry> = entries
        .into_iter()
        .filter(|e| names.is_empty() || names.iter().any(|n| matches(e, n)))
        .collect();
    Ok(match partition {
        Some(p) => plan::shard(chosen, plan::partition(p)?),
        None => chosen,
    })
}

/// Installs every entry (a progress line on a terminal, a line per real install otherwise);
/// returns those ready to launch offline. A failed install is reported and left out; a full
/// disk ends the census (once, not once per entry left).
fn install_phase(entries: &[Entry], cache: &Path) -> Result<Vec<Entry>, Error> {
    let started = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let bar = ProgressBar::with_draw_target(
        Some(entries.len() as u64),
        if tty {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("install [{pos}/{len}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut cached = 0;
    let results = census::install(entries, cache, &mut |p| match p {
        InstallProgress::Runtime { tool, version } => {
            bar.println(format!("installing {tool} {version}"))
        }
        InstallProgress::Started { id, .. } => bar.set_message(id),
        InstallProgress::Finished {
            id,
            cached: was,
            ok,
            elapsed,
            ..
        } => {
            bar.inc(1);
            cached += usize::from(was);
            if !was && !tty {
                let how = if ok { "installed" } else { "failed" };
                eprintln!("census: {how} {id} in {:.1} s", elapsed.as_secs_f64());
            }
        }
    });
    bar.finish_and_clear();
    let mut ready = Vec::new();
    let mut unattempted = 0;
    for (e, r) in entries.iter().zip(results) {
        match r {
            Ok(()) => ready.push(e.clone()),
            Err(census::InstallError::DiskFull { .. }) => unattempted += 1,
            Err(err) => eprintln!("census: {} left out: {err}", e.id),
        }
    }
    eprintln!(
        "census: install phase {:.1} s: {} ready ({cached} already cached), {} failed",
        started.elapsed().as_secs_f64(),
        ready.len(),
        entries.len() - ready.len()
    );
    if unattempted > 0 {
        return Err(disk_full(cache, unattempted));
    }
    Ok(ready)
}

/// The census stops: `left` entries were not installed or prepared because the disk under
/// the cache is full.
fn disk_full(cache: &Path, left: usize) -> Error {
    Error::Io {
        path: cache.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            format!(
                "the disk is full, {left} entries not attempted: free space and run again \
                 (what was installed stays cached)"
            ),
        ),
    }
}

/// One `--with-sdk` and what each entry became.
type WhatIfRun = (with_sdk::Replacement, Vec<with_sdk::PreparedEntry>);

/// `--with-sdk`: each replacement resolved (a release checked against its registry, a local
/// build built).
fn replacements(specs: &[String]) -> Result<Vec<with_sdk::Replacement>, Error> {
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let all = kits::load_kits(&locate::kits_dir()?)?;
    specs.iter().map(|s| replacement(s, &all)).collect()
}

/// Every installed entry prepared with each replacement; a full disk ends the census.
fn with_sdk_phase(
    replacements: Vec<with_sdk::Replacement>,
    entries: &[Entry],
    cache: &Path,
) -> Result<Vec<WhatIfRun>, Error> {
    let mut out = Vec::new();
    for r in replacements {
        let started = Instant::now();
        let prepared = with_sdk::prepare(&r, entries, cache, &mut |line| {
            eprintln!("with-sdk {} {}: {line}", r.line, r.shown())
        })
        .map_err(|full| disk_full(cache, full.left))?;
        eprintln!(
            "with-sdk {} {}: {:.1} s: {} of {} servers run with it",
            r.line,
            r.shown(),
            started.elapsed().as_secs_f64(),
            prepared.iter().filter(|p| p.manifest.is_some()).count(),
            prepared.len()
        );
        out.push((r, prepared));
    }
    Ok(out)
}

/// One `--with-sdk` argument as the replacement it names.
fn replacement(spec: &str, all: &[kits::Kit]) -> Result<with_sdk::Replacement, Error> {
    let req = kits::parse_sdk_arg(spec)?;
    let kit = kits::find_kit(all, &req.line)?;
    let registry = match kit.ecosystem {
        kits::Ecosystem::Npm => census::Registry::Npm,
        kits::Ecosystem::Pypi => census::Registry::Pypi,
        other => {
            return Err(Error::Usage(format!(
                "--with-sdk {spec}: the census runs npm and PyPI servers; {} is a {} SDK",
                kit.id,
                other.as_str()
            )))
        }
    };
    let source = match req.target {
        kits::KitTarget::Registry(
            sel @ (kits::VersionSel::Exact(_) | kits::VersionSel::Latest),
        ) => {
            let release = kits::versions(kit, &sel)?
                .pop()
                .ok_or_else(|| Error::Usage(format!("--with-sdk {spec}: no such release")))?;
            with_sdk::SdkSource::Release {
                version: release.version,
            }
        }
        kits::KitTarget::Registry(_) => {
            return Err(Error::Usage(format!(
                "--with-sdk {spec}: one release or one local build (a range is for `run --sdk`)"
            )))
        }
        kits::KitTarget::Local { path, name } => {
            let built = kits::build(kit, &path, name.as_deref(), &locate::kit_cache()?)
                .map_err(|e| Error::Usage(format!("--with-sdk {spec}: {e}")))?;
            with_sdk::SdkSource::Artifact {
                path: built.artifact,
                name: built.name,
                version: built.sdk_version,
            }
        }
    };
    let others = all
        .iter()
        .filter(|k| k.ecosystem == kit.ecosystem && k.package != kit.package)
        .map(|k| (k.id.clone(), k.package.clone()))
        .collect();
    Ok(with_sdk::Replacement {
        line: kit.id.clone(),
        package: kit.package.clone(),
        registry,
        source,
        others,
    })
}

/// The run phase's time on stderr, then what the report says of each package, and which
/// servers could not be judged: a listing whose launch command is not in its package first (the launcher said so), then a server
/// that needs real credentials. Both are counted apart, on stderr and on the leaderboard.
fn describe(report: &mut Report, started: Instant, entries: &[Entry], what_ifs: &[WhatIfRun]) {
    eprintln!(
        "census: run phase {:.1} s ({} cases)",
        started.elapsed().as_secs_f64(),
        report.results.len()
    );
    let mut secrets = BTreeMap::new();
    // A server run with an SDK replaced is its entry's package under another name.
    let named = entries.iter().map(|e| (e.id.clone(), e)).chain(
        what_ifs
            .iter()
            .flat_map(|(r, prepared)| prepared.iter().map(move |p| (r, p)))
            .filter_map(|(r, p)| {
                let e = entries.iter().find(|e| e.id == p.server.server)?;
                p.server.after.as_ref().map(|_| (r.server_name(e), e))
            }),
    );
    let mut ids = Vec::new();
    for (id, e) in named {
        if let Some(info) = report.servers.get_mut(&id) {
            info.package = Some(census::package_info(e));
        }
        secrets.insert(id.clone(), e.placeholders.clone());
        ids.push(id);
    }
    launch_errors::mark(report, &ids);
    credentials::mark(report, &secrets);
    for (what, n) in not_testable_servers(report) {
        eprintln!("census: {n} server(s) not testable: {what}");
    }
}

/// How many servers could not be judged, by why (`launch command not in the package`, ...).
fn not_testable_servers(report: &Report) -> BTreeMap<&'static str, usize> {
    let mut seen: Vec<&str> = Vec::new();
    let mut counts = BTreeMap::new();
    for r in &report.results {
        if let Some(n) = r
            .not_testable
            .as_ref()
            .filter(|_| !seen.contains(&r.server.as_str()))
        {
            seen.push(&r.server);
            *counts.entry(n.reason.label()).or_default() += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<Entry> {
        let text = std::fs::read_to_string("conformance/census/servers.json").unwrap();
        census::parse_listing(Path::new("servers.json"), &text)
            .unwrap()
            .entries
    }

    #[test]
    fn servers_are_chosen_by_either_name_and_sharded_whole() {
        let all = entries();
        let by_id = select(all.clone(), &["stripe-mcp-0.3.3".into()], None).unwrap();
        let by_name = select(all.clone(), &["io.github.stripe/mcp".into()], None).unwrap();
        assert_eq!(by_id, by_name);
        assert_eq!(by_id.len(), 1);
        assert!(select(all.clone(), &["nope".into()], None).is_err());
        let a = select(all.clone(), &[], Some("1/2")).unwrap();
        let b = select(all.clone(), &[], Some("2/2")).unwrap();
        assert_eq!(a.len() + b.len(), all.len());
        assert!(a.iter().all(|e| !b.contains(e)));
    }

    #[test]
    fn vars_are_name_value_pairs() {
        let v = parse_vars(&["allowed_directory=/tmp/x".into()]).unwrap();
        assert_eq!(v["allowed_directory"], "/tmp/x");
        assert!(parse_vars(&["=x".into()]).is_err());
        assert!(parse_vars(&["novalue".into()]).is_err());
    }
}
