//! `census --with-sdk`: every published server of a listing run again with one SDK replaced
//! inside its install, for the question a merge decides ("which real servers change?").
//!
//! npm servers get a project of their own beside the cache, holding the install's lockfile
//! and an `overrides` entry for the SDK's package, so every copy in the dependency tree is
//! replaced and nothing else moves; each copy is then read back from `node_modules` and
//! checked ([`npm`]). PyPI servers run through uvx with the release or wheel pinned by
//! `--with` and `--overrides` ([`pypi`]). A server whose install holds no copy of the package
//! is left untouched and says why. After the run, [`pair`] sets each server's endings side
//! by side, from the report alone.

use std::path::{Path, PathBuf};

use super::install::{CachedLaunch, InstallError};
use super::listing::{Entry, Registry};
use crate::config::manifest::Manifest;
use crate::kits::Version;
use crate::model::{
    EndingPair, JudgedCase, Owner, Report, SdkCopy, Stage, Untouched, WhatIf, WhatIfServer,
};

mod npm;
mod pypi;
#[cfg(test)]
mod tests;

/// The SDK a `--with-sdk` puts into every install that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// The SDK line (kit id).
    pub line: String,
    /// Its package in its registry (`@modelcontextprotocol/sdk`, `mcp`).
    pub package: String,
    pub registry: Registry,
    pub source: SdkSource,
    /// The other SDK lines of the same registry, as (line, package): a server holding one of
    /// them and not this one "uses another SDK".
    pub others: Vec<(String, String)>,
}

/// A published release, or an artifact a local checkout was built into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SdkSource {
    Release {
        version: String,
    },
    Artifact {
        path: PathBuf,
        /// `local-<name>`, as `--sdk` names a local build.
        name: String,
        /// The version it declares, with `+local.<hash>` of its content.
        version: String,
    },
}

impl Replacement {
    /// For file and server names: `1.24.0`, `local-eof-fix`.
    pub fn label(&self) -> &str {
        match &self.source {
            SdkSource::Release { version } => version,
            SdkSource::Artifact { name, .. } => name,
        }
    }

    /// As a report names it: `1.24.0`, `local:eof-fix`.
    pub fn shown(&self) -> String {
        match &self.source {
            SdkSource::Release { version } => version.clone(),
            SdkSource::Artifact { name, .. } => {
                format!("local:{}", name.strip_prefix("local-").unwrap_or(name))
            }
        }
    }

    /// The full version: a release's, or a local build's with `+local.<hash>`.
    pub fn version(&self) -> &str {
        match &self.source {
            SdkSource::Release { version } | SdkSource::Artifact { version, .. } => version,
        }
    }

    /// The version a replaced copy declares in its metadata (without build metadata).
    pub fn declared(&self) -> &str {
        let v = self.version();
        v.split('+').next().unwrap_or(v)
    }

    /// The server name of an entry run with the replacement.
    pub fn server_name(&self, entry: &Entry) -> String {
        format!("{}.with-{}-{}", entry.id, self.line, self.label())
    }
}

/// A copy found in an install, with where it came from (the npm lockfile's `resolved`, a
/// wheel's `direct_url.json`): a local build and its release declare one version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub copy: SdkCopy,
    pub resolved: Option<String>,
}

/// What an install holds: its copies of each SDK package of the registry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    pub copies: Vec<(String, Found)>,
}

impl Inventory {
    fn of(&self, package: &str) -> Vec<&Found> {
        self.copies
            .iter()
            .filter(|(p, _)| p == package)
            .map(|(_, f)| f)
            .collect()
    }
}

/// Does the replacement reach this server, and through which copies? Pure.
pub fn classify(
    entry_registry: Registry,
    inventory: &Inventory,
    r: &Replacement,
) -> Result<Vec<SdkCopy>, Untouched> {
    if entry_registry != r.registry {
        return Err(Untouched::OtherRegistry {
            registry: entry_registry.to_string(),
        });
    }
    let copies: Vec<SdkCopy> = inventory
        .of(&r.package)
        .into_iter()
        .map(|f| f.copy.clone())
        .collect();
    if copies.is_empty() {
        let lines: Vec<String> = r
            .others
            .iter()
            .filter(|(_, p)| !inventory.of(p).is_empty())
            .map(|(l, _)| l.clone())
            .collect();
        return Err(if lines.is_empty() {
            Untouched::NoCopy
        } else {
            Untouched::OtherSdk { lines }
        });
    }
    if copies.iter().all(|c| c.bundled) {
        return Err(Untouched::NotReplaceable);
    }
    other_major(&copies, r.declared())?;
    Ok(copies)
}

/// Every replaceable copy is of another major line than the replacement (a copy whose
/// version does not parse counts as the same line: it is tried).
fn other_major(copies: &[SdkCopy], replacement: &str) -> Result<(), Untouched> {
    let line = |v: &str| Version::parse(v).ok().map(|v| v.major_line());
    let Some(target) = line(replacement) else {
        return Ok(());
    };
    let reachable: Vec<&SdkCopy> = copies.iter().filter(|c| !c.bundled).collect();
    if reachable
        .iter()
        .all(|c| line(&c.version).is_some_and(|l| l != target))
    {
        let mut versions: Vec<String> = reachable.iter().map(|c| c.version.clone()).collect();
        versions.dedup();
        return Err(Untouched::OtherMajor { versions });
    }
    Ok(())
}

/// The copies of the package that are not the replacement after the override: another
/// version, or (for a local build) the same version from elsewhere. Pure.
pub fn not_replaced(after: &Inventory, r: &Replacement) -> Vec<SdkCopy> {
    after
        .of(&r.package)
        .into_iter()
        .filter(|f| {
            let same_version = f.copy.version == r.declared();
            let same_source = match &r.source {
                SdkSource::Release { .. } => true,
                SdkSource::Artifact { path, .. } => {
                    let file = path.file_name().map(|n| n.to_string_lossy().into_owned());
                    f.resolved
                        .as_deref()
                        .zip(file)
                        .is_some_and(|(res, file)| res.ends_with(&file))
                }
            };
            !(same_version && same_source)
        })
        .map(|f| f.copy.clone())
        .collect()
}

/// One entry after the preparation: its manifest with the replacement, or why there is none.
#[derive(Clone, Debug)]
pub struct PreparedEntry {
    pub server: WhatIfServer,
    pub manifest: Option<Manifest>,
}

/// The disk under the cache filled while preparing: `left` entries were not prepared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskFull {
    pub left: usize,
}

/// Prepares every entry for one replacement: reads what its install holds, installs it with
/// the replacement where the replacement reaches it, and checks each copy. `say` gets one
/// line per entry. A full disk stops it: every install after would fail the same way.
pub fn prepare(
    r: &Replacement,
    entries: &[Entry],
    cache: &Path,
    say: &mut dyn FnMut(String),
) -> Result<Vec<PreparedEntry>, DiskFull> {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let p = prepare_entry(r, e, cache).map_err(|_| DiskFull {
                left: entries.len() - i,
            })?;
            Ok(say_prepared(r, e, p, say))
        })
        .collect()
}

/// Says what one entry became, one line.
fn say_prepared(
    r: &Replacement,
    e: &Entry,
    p: PreparedEntry,
    say: &mut dyn FnMut(String),
) -> PreparedEntry {
    say(match (&p.server.untouched, &p.server.after) {
        (Some(u), _) => format!("{}: untouched: {}", e.id, u.label(&r.package)),
        (None, _) if !p.server.not_replaced.is_empty() => format!(
            "{}: {} of {} copies replaced ({} not: {})",
            e.id,
            p.server.copies.len() - p.server.not_replaced.len(),
            p.server.copies.len(),
            p.server.not_replaced.len(),
            copies_text(&p.server.not_replaced)
        ),
        _ => format!(
            "{}: {} cop{} replaced ({} → {})",
            e.id,
            p.server.copies.len(),
            if p.server.copies.len() == 1 {
                "y"
            } else {
                "ies"
            },
            copies_text(&p.server.copies),
            r.version()
        ),
    });
    p
}

fn copies_text(copies: &[SdkCopy]) -> String {
    let mut v: Vec<String> = copies.iter().map(|c| c.version.clone()).collect();
    v.dedup();
    v.join(", ")
}

/// One entry prepared; an error only when the disk under the cache is full.
fn prepare_entry(r: &Replacement, e: &Entry, cache: &Path) -> Result<PreparedEntry, InstallError> {
    let mut server = WhatIfServer::named(&e.id);
    let before = match e.registry {
        Registry::Npm => npm::inventory_before(e, r, cache),
        Registry::Pypi => pypi::inventory_before(e, r, cache),
    };
    let before = match before {
        Err(err) if err.is_disk_full(cache) => return Err(err),
        b => b,
    };
    let copies = before
        .map_err(failed)
        .and_then(|inv| classify(e.registry, &inv, r));
    match copies {
        Err(u) => server.untouched = Some(u),
        Ok(c) => server.copies = c,
    }
    if server.untouched.is_some() {
        return Ok(PreparedEntry {
            server,
            manifest: None,
        });
    }
    let installed = match e.registry {
        Registry::Npm => npm::install(e, r, cache),
        Registry::Pypi => pypi::install(e, r, cache),
    };
    match installed {
        Err(err) if err.is_disk_full(cache) => Err(err),
        Err(err) => {
            server.untouched = Some(failed(err));
            Ok(PreparedEntry {
                server,
                manifest: None,
            })
        }
        Ok(installed) => Ok(with_replacement(r, e, server, installed)),
    }
}

/// An entry installed with the replacement: the copies that became it, and its manifest
/// when at least one did.
fn with_replacement(
    r: &Replacement,
    e: &Entry,
    mut server: WhatIfServer,
    (after, launch): InstalledLaunch,
) -> PreparedEntry {
    server.not_replaced = not_replaced(&after, r);
    server.replaced = after
        .of(&r.package)
        .into_iter()
        .map(|f| f.copy.clone())
        .filter(|c| !server.not_replaced.contains(c))
        .collect();
    // No copy became the replacement: running it again would measure nothing new.
    if server.replaced.is_empty() {
        server.untouched = Some(Untouched::OverrideIgnored);
        return PreparedEntry {
            server,
            manifest: None,
        };
    }
    let mut m = super::manifest_of(e, launch);
    m.name = r.server_name(e);
    server.after = Some(m.name.clone());
    PreparedEntry {
        server,
        manifest: Some(m),
    }
}

fn failed(e: InstallError) -> Untouched {
    Untouched::InstallFailed {
        message: e.to_string(),
    }
}

/// A case's stage and exit time, when it has a verdict (a server not testable or a case
/// that could not run has none: its stage says nothing of the SDK).
fn judged(c: &JudgedCase) -> (Option<Stage>, Option<f64>) {
    match c.owner() {
        None => (c.stage, c.exit_ms),
        Some(_) => (None, None),
    }
}

/// Why none of a server's cases has a verdict: its not-testable reason, else "could not run".
fn no_verdict(report: &Report, server: &str) -> String {
    report
        .results
        .iter()
        .filter(|c| c.server == server)
        .find_map(|c| {
            c.not_testable
                .as_ref()
                .map(|n| n.reason.label().to_string())
        })
        .unwrap_or_else(|| "could not run".into())
}

/// It came up before (answered the handshake), and with the replacement it never did: a case
/// failed for a reason of the server's own (it exits before the handshake: an import the
/// replacement lacks, a crash in the patch), none refused placeholder credentials. What it
/// said last. An ending without a handshake (`stdin-null`) cannot tell a crash from an exit
/// on EOF, so it neither proves nor disproves it.
fn broken(report: &Report, before: &str, after: &str) -> Option<String> {
    let of = |name: &str| -> Vec<&JudgedCase> {
        report.results.iter().filter(|c| c.server == name).collect()
    };
    let (b, a) = (of(before), of(after));
    let came_up = |cs: &[&JudgedCase]| cs.iter().any(|c| c.observation.handshake.is_some());
    if !came_up(&b) || came_up(&a) || a.iter().any(|c| c.not_testable.is_some()) {
        return None;
    }
    let c = a.iter().find(|c| {
        c.error
            .as_ref()
            .is_some_and(|e| e.kind.owner() == Owner::Server)
    })?;
    let said = c
        .stderr_tail
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty());
    Some(match (said, &c.error) {
        (Some(line), _) => line.to_string(),
        (None, Some(e)) => e.message.clone(),
        (None, None) => "it could not run".into(),
    })
}

/// Each server's endings before → after, from the report's results (the replacement's
/// servers are named by [`Replacement::server_name`]). Pure.
pub fn pair(report: &Report, r: &Replacement, prepared: &[PreparedEntry]) -> WhatIf {
    let servers = prepared
        .iter()
        .map(|p| {
            let mut s = p.server.clone();
            if let Some(after) = &s.after {
                s.endings = report
                    .results
                    .iter()
                    .filter(|b| b.server == s.server)
                    .filter_map(|b| {
                        let a = report
                            .results
                            .iter()
                            .find(|a| &a.server == after && a.scenario == b.scenario)?;
                        let ((before, before_ms), (after, after_ms)) = (judged(b), judged(a));
                        Some(EndingPair {
                            scenario: b.scenario.clone(),
                            before,
                            after,
                            before_ms,
                            after_ms,
                            machine_bound: b.is_machine_bound() || a.is_machine_bound(),
                            flaky: [b, a]
                                .iter()
                                .any(|c| c.repeat.as_ref().is_some_and(|r| r.flaky)),
                        })
                    })
                    .collect();
                if s.endings
                    .iter()
                    .all(|e| e.before.is_none() && e.after.is_none())
                {
                    s.no_verdict = Some(no_verdict(report, &s.server));
                }
                s.broken = broken(report, &s.server, after);
            }
            s
        })
        .collect();
    WhatIf {
        line: r.line.clone(),
        package: r.package.clone(),
        replacement: r.shown(),
        version: r.version().to_string(),
        servers,
    }
}

/// The launch of an entry with the replacement, and the copies its install then holds.
type InstalledLaunch = (Inventory, CachedLaunch);
