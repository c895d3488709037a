//! `--sdk SPEC`: SDK kits instantiated into the kit cache and run as ordinary manifests, so
//! every view, baseline, diff and badge works on them unchanged. A version that yields no
//! server is carried into the report as not testable, with its reason.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::args::SdkCmd;
use crate::config::manifest::{self, Manifest};
use crate::error::Error;
use crate::kits::{self, Instance, Kit, KitTarget, Prepared, Source, SourceNotTestable};
use crate::model::Untested;

/// What the `--sdk` arguments produced.
#[derive(Debug, Default)]
pub struct SdkServers {
    pub manifests: Vec<Manifest>,
    pub untested: Vec<Untested>,
    /// Versions that had to install something (the others were ready in the cache).
    pub installs: usize,
}

/// One version to instantiate: its line's kit, its label for messages, its source.
struct Job<'k> {
    kit: &'k Kit,
    label: String,
    source: Source,
}

/// Parses every argument and finds its kit before anything touches the network, so a typo
/// in the last `--sdk` fails at once.
fn requests<'k>(
    specs: &[String],
    all: &'k [Kit],
) -> Result<Vec<(&'k Kit, kits::SdkRequest)>, Error> {
    specs
        .iter()
        .map(|s| {
            let req = kits::parse_sdk_arg(s)?;
            Ok((kits::find_kit(all, &req.line)?, req))
        })
        .collect()
}

/// The versions each request names (registry listings for published releases).
fn jobs<'k>(reqs: Vec<(&'k Kit, kits::SdkRequest)>) -> Result<Vec<Job<'k>>, Error> {
    let mut out = Vec::new();
    for (kit, req) in reqs {
        match req.target {
            KitTarget::Registry(sel) => {
                let releases = kits::versions(kit, &sel)?;
                eprintln!(
                    "sdk {}: {} version(s) to instantiate",
                    kit.id,
                    releases.len()
                );
                out.extend(releases.into_iter().map(|r| Job {
                    kit,
                    label: r.version.clone(),
                    source: Source::Release(r),
                }));
            }
            KitTarget::Local { path, name } => out.push(Job {
                kit,
                label: path.display().to_string(),
                source: Source::Local { path, name },
            }),
        }
    }
    Ok(out)
}

/// The reason without the "<line> <version>: " the error's wording starts with (the report
/// names line and version itself).
fn reason(e: &SourceNotTestable, line: &str, version: &str) -> String {
    if let SourceNotTestable::Unsupported { reason, .. } = e {
        return reason.to_string();
    }
    let text = e.to_string();
    let prefix = format!("{line} {version}: ");
    if let Some(rest) = text.strip_prefix(&prefix) {
        return rest.to_string();
    }
    // A local source's errors name its label (`python local-1a2b3c4d: ...`), not its path.
    text.strip_prefix(&format!("{line} local-"))
        .and_then(|rest| rest.split_once(": "))
        .map_or(text.clone(), |(_, rest)| rest.to_string())
}

/// The instances as manifests, through the same parser as a manifest on disk.
fn manifests_of(instances: &[Instance]) -> Result<Vec<Manifest>, Error> {
    instances
        .iter()
        .map(|i| {
            let path = i.cwd.join(format!("{}.toml", i.name));
            Ok(manifest::parse(&path, &i.manifest_toml())?)
        })
        .collect()
}

/// `typescript-local-fix-timer` → `typescript-local-fix.1a2b3c4d-timer`: the hash of the
/// build's content (its version's `+local.<hash>`) after its name.
fn disambiguated(m: &Manifest) -> String {
    let hash = m
        .about
        .sdk_version
        .as_deref()
        .and_then(|v| v.rsplit_once("local.").map(|(_, h)| h))
        .unwrap_or("?");
    match m
        .about
        .shape
        .as_deref()
        .and_then(|s| m.name.strip_suffix(&format!("-{s}")))
    {
        Some(head) => format!(
            "{head}.{hash}-{}",
            m.about.shape.as_deref().unwrap_or_default()
        ),
        None => format!("{}.{hash}", m.name),
    }
}

/// `sdk lines` and `sdk versions LINE@SEL`: what the kits cover, from the kits and the
/// registries, for scripts (the SDK tracker asks which releases are new).
pub fn list(action: SdkCmd, kits_dir: &Path) -> Result<std::process::ExitCode, Error> {
    let all = kits::load_kits(kits_dir)?;
    match action {
        SdkCmd::Lines => {
            for k in &all {
                println!("{}", k.id);
            }
        }
        SdkCmd::Versions { spec } => {
            let req = kits::parse_sdk_arg(&spec)?;
            let kit = kits::find_kit(&all, &req.line)?;
            let KitTarget::Registry(sel) = req.target else {
                return Err(Error::Usage(format!(
                    "sdk versions {spec}: a local build has no published releases"
                )));
            };
            for r in kits::versions(kit, &sel)? {
                println!("{}\t{}", r.version, r.date.unwrap_or_default());
            }
        }
    }
    Ok(std::process::ExitCode::from(crate::exit_codes::SUCCESS))
}

/// One source of one kit as manifests, or why it is not testable.
pub fn manifests_for(
    kit: &Kit,
    source: &Source,
    cache: &Path,
) -> Result<Result<Vec<Manifest>, String>, Error> {
    match kits::prepare(kit, source, cache) {
        Ok(p) => Ok(Ok(manifests_of(&p.instances)?)),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// One progress line per version on stderr: what is ready, what was installed, what not.
fn progress(n: usize, of: usize, job: &Job, outcome: &Result<Prepared, SourceNotTestable>) {
    let what = match outcome {
        Ok(p) if p.installed => format!(
            "{} server(s), installed in {:.1} s",
            p.instances.len(),
            p.seconds
        ),
        Ok(p) => format!("{} server(s), cached", p.instances.len()),
        Err(e) => format!(
            "not testable: {}",
            reason(e, &job.kit.id, &job.label)
                .lines()
                .next()
                .unwrap_or_default()
        ),
    };
    eprintln!("sdk [{n}/{of}] {} {}: {what}", job.kit.id, job.label);
}

/// Installs run a few at a time: most of their time is the registry and the disk, and each
/// version's directory has its own lock, so they do not collide.
fn workers(n: usize) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    cpus.clamp(1, 4).min(n.max(1))
}

fn prepare_all(jobs: &[Job], cache: &Path) -> Vec<Result<Prepared, SourceNotTestable>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<Prepared, SourceNotTestable>>>> =
        jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers(jobs.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = jobs.get(i) else { break };
                let outcome = kits::prepare(job.kit, &job.source, cache);
                progress(
                    done.fetch_add(1, Ordering::SeqCst) + 1,
                    jobs.len(),
                    job,
                    &outcome,
                );
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// Instantiates every `--sdk` argument's versions from the kits in `kits_dir` into `cache`.
pub fn load(specs: &[String], kits_dir: &Path, cache: &Path) -> Result<SdkServers, Error> {
    let all = kits::load_kits(kits_dir)?;
    let jobs = jobs(requests(specs, &all)?)?;
    let cache = std::path::absolute(cache).map_err(Error::io(cache))?;
    let cache = cache.as_path();
    eprintln!("sdk: kit cache {}", cache.display());
    let mut out = SdkServers::default();
    let started = std::time::Instant::now();
    let outcomes = prepare_all(&jobs, cache);
    let seconds = started.elapsed().as_secs_f64();
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome {
            Ok(p) => {
                out.installs += usize::from(p.installed);
                for mut m in manifests_of(&p.instances)? {
                    match out.manifests.iter().find(|x| x.name == m.name) {
                        // The same version asked for twice (`@1.24.0` and `@latest`) runs once.
                        Some(x) if x.launch.cwd == m.launch.cwd => continue,
                        // Two local builds that go by one name (two edits of one commit):
                        // the second is told apart by its content hash.
                        Some(_) => m.name = disambiguated(&m),
                        None => {}
                    }
                    out.manifests.push(m);
                }
            }
            Err(e) => out.untested.push(Untested {
                line: job.kit.id.clone(),
                version: job.label.clone(),
                reason: reason(&e, &job.kit.id, &job.label),
            }),
        }
    }
    // One line a benchmark can read: how long the versions took and how many installed.
    eprintln!(
        "sdk: {} version(s) in {seconds:.1} s: {} installed, {} cached, {} not testable; {} server(s)",
        jobs.len(),
        out.installs,
        jobs.len() - out.installs - out.untested.len(),
        out.untested.len(),
        out.manifests.len()
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> Vec<Kit> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kits");
        kits::load_kits(&dir).unwrap()
    }

    #[test]
    fn argument_errors_come_before_any_listing() {
        let all = bundled();
        let e = requests(&["typescript@1.0.0".into(), "nosuch@1.0".into()], &all)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("`nosuch`") && e.contains("typescript"), "{e}");
        let e = requests(&["typescript@1.x.0".into()], &all)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("typescript@1.x.0"), "{e}");
        let ok = requests(&["python@1.26.0".into(), "go=../go-sdk".into()], &all).unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].0.id, "go");
    }

    #[test]
    fn reasons_drop_the_line_and_version_the_report_already_names() {
        let e = SourceNotTestable::Unsupported {
            line: "typescript".into(),
            version: "0.4.0".into(),
            reason: kits::Unsupported::Listed("predates 1.0".into()),
        };
        assert_eq!(reason(&e, "typescript", "0.4.0"), "predates 1.0");
        let e = SourceNotTestable::Incomplete {
            line: "go".into(),
            version: "1.0.0".into(),
            what: kits::Incomplete::Output("no-binary".into()),
        };
        assert_eq!(
            reason(&e, "go", "1.0.0"),
            "installation finished but did not create no-binary"
        );
        let e = SourceNotTestable::Incomplete {
            line: "go".into(),
            version: "local-1a2b3c4d".into(),
            what: kits::Incomplete::Output("no-binary".into()),
        };
        assert_eq!(
            reason(&e, "go", "../go-sdk"),
            "installation finished but did not create no-binary"
        );
        let e = SourceNotTestable::MissingProgram {
            line: "go".into(),
            program: "go".into(),
        };
        assert_eq!(
            reason(&e, "go", "1.0.0"),
            "go: needs `go`, which is not on PATH"
        );
    }

    #[test]
    fn at_most_four_installers_and_never_more_than_jobs() {
        assert_eq!(workers(1), 1);
        assert!(workers(100) <= 4);
        assert_eq!(workers(0), 1);
    }
}
