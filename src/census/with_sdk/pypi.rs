//! PyPI: the tool environment uvx builds for a server, read for its distributions; and the
//! same launch with the SDK pinned into it (`--with REQ --overrides FILE`, so the pin holds
//! even where the server's own requirement would refuse it, as npm's `overrides` does).
//! uvx keeps one cached environment per requirement set, so the replaced one sits beside
//! the server's own and the launch finds it offline.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::{Found, InstalledLaunch, Inventory, Replacement, SdkSource};
use crate::census::install::{
    fnv1a, run_once, uv_env, uvx_install_step, uvx_path, work_dir, CachedLaunch, InstallError,
    InstallStep, System,
};
use crate::census::listing::Entry;
use crate::model::SdkCopy;
use crate::os::command::{run_captured, Stderr};

/// Prints every distribution of the environment: name, version, and the URL it was
/// installed from (PEP 610 `direct_url.json`: a local wheel has one, a release none).
const INSPECT: &str = "import importlib.metadata as m, json\n\
print(json.dumps([[d.metadata['Name'], d.version, json.loads(d.read_text('direct_url.json') or 'null')] for d in m.distributions()]))";

/// PEP 503 normalisation: `Foo_Bar.baz` and `foo-bar-baz` are one project.
fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The inspection's output → the copies of `packages`. Pure.
pub(super) fn parse_dists(stdout: &str, packages: &[&str]) -> Option<Inventory> {
    let line = stdout.lines().rev().find(|l| l.starts_with('['))?;
    let list: Vec<(String, String, Value)> = serde_json::from_str(line).ok()?;
    let wanted: Vec<String> = packages.iter().map(|p| normalize(p)).collect();
    let mut inv = Inventory::default();
    for (name, version, direct) in list {
        let n = normalize(&name);
        if let Some(i) = wanted.iter().position(|w| *w == n) {
            inv.copies.push((
                packages[i].to_string(),
                Found {
                    copy: SdkCopy {
                        path: format!("site-packages/{n}"),
                        version,
                        bundled: false,
                    },
                    resolved: direct["url"].as_str().map(str::to_string),
                },
            ));
        }
    }
    Some(inv)
}

/// The requirement that pins the replacement: `mcp==1.20.0`, or `mcp @ file:///…whl`.
pub(super) fn requirement(r: &Replacement) -> String {
    match &r.source {
        SdkSource::Release { version } => format!("{}=={version}", r.package),
        SdkSource::Artifact { path, .. } => format!("{} @ file://{}", r.package, path.display()),
    }
}

fn packages(r: &Replacement) -> Vec<&str> {
    std::iter::once(r.package.as_str())
        .chain(r.others.iter().map(|(_, p)| p.as_str()))
        .collect()
}

/// The uvx options that put the replacement in, before the entry's own arguments.
fn with_args(r: &Replacement, overrides: &Path) -> Vec<String> {
    vec![
        "--overrides".into(),
        overrides.display().to_string(),
        "--with".into(),
        requirement(r),
    ]
}

/// Runs the inspection in the environment `prefix` (uvx options) selects, offline.
fn inspect(
    e: &Entry,
    r: &Replacement,
    prefix: &[String],
    cache: &Path,
) -> Result<Inventory, InstallError> {
    let mut args = prefix.to_vec();
    args.extend(e.runtime_args.iter().cloned());
    args.extend([
        "--from".to_string(),
        format!("{}=={}", e.identifier, e.version),
        "python".into(),
        "-c".into(),
        INSPECT.into(),
    ]);
    let uvx = uvx_path(cache);
    let step = InstallStep {
        program: uvx.display().to_string(),
        args,
        env: uv_env(cache, true),
        cwd: work_dir(cache),
    };
    let out = run_captured(
        uvx.as_os_str(),
        &step.args,
        &step.cwd,
        &step.env,
        Stderr::Separate,
    )
    .map_err(|source| InstallError::Spawn {
        id: e.id.clone(),
        command: step.render(),
        source: Arc::new(source),
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match parse_dists(&stdout, &packages(r)) {
        Some(inv) if out.status.success() => Ok(inv),
        _ => Err(InstallError::Failed {
            id: e.id.clone(),
            command: step.render(),
            status: out.status.to_string(),
            log: PathBuf::from("(captured)"),
            tail: String::from_utf8_lossy(&out.stderr).into_owned(),
        }),
    }
}

pub(super) fn inventory_before(
    e: &Entry,
    r: &Replacement,
    cache: &Path,
) -> Result<Inventory, InstallError> {
    inspect(e, r, &[], cache)
}

/// `$CACHE/with-sdk/<line>-<label>[-<hash>]/overrides.txt`.
fn overrides_file(r: &Replacement, cache: &Path) -> PathBuf {
    let mut group = format!("{}-{}", r.line, r.label());
    if matches!(r.source, SdkSource::Artifact { .. }) {
        group.push_str(&format!("-{:08x}", fnv1a(r.version()) as u32));
    }
    cache.join("with-sdk").join(group).join("overrides.txt")
}

/// The census's install step with the replacement pinned, online then offline. Pure.
pub(super) fn steps(
    e: &Entry,
    r: &Replacement,
    overrides: &Path,
    cache: &Path,
) -> Vec<InstallStep> {
    [false, true]
        .into_iter()
        .map(|offline| uvx_install_step(e, with_args(r, overrides), cache, offline))
        .collect()
}

pub(super) fn install(
    e: &Entry,
    r: &Replacement,
    cache: &Path,
) -> Result<InstalledLaunch, InstallError> {
    let overrides = overrides_file(r, cache);
    let dir = overrides.parent().unwrap_or(cache);
    let io = |source| InstallError::Io {
        path: overrides.clone(),
        source: Arc::new(source),
    };
    fs::create_dir_all(dir).map_err(io)?;
    fs::write(&overrides, format!("{}\n", requirement(r))).map_err(io)?;
    let steps = steps(e, r, &overrides, cache);
    let key = format!(
        "with-sdk-{}-{}-{}-{:016x}",
        r.line,
        r.label(),
        e.id,
        fnv1a(&requirement(r))
    );
    run_once(&System, cache, &e.id, &key, &steps)?;
    let prefix = with_args(r, &overrides);
    let after = inspect(e, r, &prefix, cache)?;
    let mut args = prefix;
    args.extend(e.args.iter().cloned());
    let mut env = uv_env(cache, true);
    env.extend(e.env.clone());
    Ok((
        after,
        CachedLaunch {
            program: uvx_path(cache).display().to_string(),
            args,
            env,
            cwd: work_dir(cache),
        },
    ))
}
