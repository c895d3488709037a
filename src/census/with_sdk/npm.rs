//! npm: the install as it is (the npx directory the census launch runs from), read for its
//! copies of each SDK package; and a project of its own per server and replacement, with the
//! install's lockfile and an `overrides` entry for the SDK, installed and read back.
//!
//! ```text
//! $CACHE/with-sdk/<line>-<label>/<entry>/package.json       dependencies + overrides
//! $CACHE/with-sdk/<line>-<label>/<entry>/package-lock.json  the npx install's, then npm's
//! $CACHE/with-sdk/<line>-<label>/<entry>/node_modules/      the server, the SDK replaced
//! ```
//!
//! The launch is the census's own (`npx -y ID@VER`, offline) from that project: npx runs a
//! package the project already holds at the version asked for without installing it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use super::{Found, InstalledLaunch, Inventory, Replacement, SdkSource};
use crate::census::install::{
    fnv1a, npm_cache, npm_env, run_once, CachedLaunch, InstallError, InstallStep, System,
};
use crate::census::listing::Entry;
use crate::model::SdkCopy;

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + '_ {
    move |e| InstallError::Io {
        path: path.to_path_buf(),
        source: Arc::new(e),
    }
}

/// The npx directory the census installed `ID@VER` into (`_npx/<hash>`), found by the spec
/// its `package.json` records rather than by recomputing npm's hash.
pub(super) fn npx_dir(e: &Entry, cache: &Path) -> Result<PathBuf, InstallError> {
    let root = npm_cache(cache).join("_npx");
    let spec = format!("{}@{}", e.identifier, e.version);
    let dirs = fs::read_dir(&root).map_err(io_err(&root))?;
    for d in dirs.flatten() {
        let pj = d.path().join("package.json");
        let Ok(text) = fs::read_to_string(&pj) else {
            continue;
        };
        let v: Value = serde_json::from_str(&text).unwrap_or_default();
        if v["_npx"]["packages"] == json!([spec]) {
            return Ok(d.path());
        }
    }
    Err(InstallError::Io {
        path: root,
        source: Arc::new(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no npx install of {spec}"),
        )),
    })
}

/// The packages of the SDK lines to look for: the replacement's and the others'.
fn packages(r: &Replacement) -> Vec<&str> {
    std::iter::once(r.package.as_str())
        .chain(r.others.iter().map(|(_, p)| p.as_str()))
        .collect()
}

pub(super) fn inventory_before(
    e: &Entry,
    r: &Replacement,
    cache: &Path,
) -> Result<Inventory, InstallError> {
    let dir = npx_dir(e, cache)?;
    scan(&dir, &packages(r)).map_err(io_err(&dir))
}

/// Every copy of `packages` under `root/node_modules`, at any depth, with its version read
/// from its own `package.json`; the hidden lockfile says where each came from and whether it
/// was bundled in another package's tarball.
pub(super) fn scan(root: &Path, packages: &[&str]) -> std::io::Result<Inventory> {
    let lock: Value = fs::read_to_string(root.join("node_modules/.package-lock.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mut inv = Inventory::default();
    let mut stack = vec![PathBuf::from("node_modules")];
    while let Some(rel) = stack.pop() {
        let Ok(dir) = fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for d in dir.flatten() {
            let name = d.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !d.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let pkgs = if name.starts_with('@') {
                fs::read_dir(d.path())?
                    .flatten()
                    .map(|s| format!("{name}/{}", s.file_name().to_string_lossy()))
                    .collect()
            } else {
                vec![name]
            };
            for p in pkgs {
                let at = rel.join(&p);
                if packages.contains(&p.as_str()) {
                    if let Some(found) = read_copy(root, &at, &lock) {
                        inv.copies.push((p.clone(), found));
                    }
                }
                stack.push(at.join("node_modules"));
            }
        }
    }
    inv.copies.sort_by(|a, b| a.1.copy.path.cmp(&b.1.copy.path));
    Ok(inv)
}

fn read_copy(root: &Path, at: &Path, lock: &Value) -> Option<Found> {
    let pj: Value =
        serde_json::from_str(&fs::read_to_string(root.join(at).join("package.json")).ok()?).ok()?;
    let path = at.to_string_lossy().into_owned();
    let entry = &lock["packages"][&path];
    Some(Found {
        copy: SdkCopy {
            version: pj["version"].as_str()?.to_string(),
            bundled: entry["inBundle"].as_bool().unwrap_or(false),
            path,
        },
        resolved: entry["resolved"].as_str().map(str::to_string),
    })
}

/// What npm installs the replacement from: a release's version, or the artifact's file.
pub(super) fn spec(r: &Replacement) -> String {
    match &r.source {
        SdkSource::Release { version } => version.clone(),
        SdkSource::Artifact { path, .. } => format!("file:{}", path.display()),
    }
}

/// The project's `package.json`: the server at its exact version, the SDK overridden
/// everywhere in the tree (a top-level `overrides` key applies at any depth). Pure.
pub(super) fn project_json(e: &Entry, r: &Replacement) -> String {
    let v = json!({
        "name": "mcp-shutdown-with-sdk",
        "private": true,
        "dependencies": { &e.identifier: &e.version },
        "overrides": { &r.package: spec(r) },
    });
    serde_json::to_string_pretty(&v).expect("json") + "\n"
}

/// `$CACHE/with-sdk/<line>-<label>/<entry>`: a local build's label is its name, so its
/// content hash keeps two builds of one name apart.
pub(super) fn project_dir(e: &Entry, r: &Replacement, cache: &Path) -> PathBuf {
    let mut group = format!("{}-{}", r.line, r.label());
    if matches!(r.source, SdkSource::Artifact { .. }) {
        group.push_str(&format!("-{:08x}", fnv1a(r.version()) as u32));
    }
    cache.join("with-sdk").join(group).join(&e.id)
}

/// `npm install` in the project (lifecycle scripts in the log, as the census installs),
/// then the launch's own `npx` offline as proof that it needs no network.
pub(super) fn steps(e: &Entry, dir: &Path, cache: &Path) -> Vec<InstallStep> {
    let mut online = npm_env(cache, false);
    online.insert("npm_config_foreground_scripts".into(), "true".into());
    let mut proof_args = vec!["--yes".to_string()];
    proof_args.extend(e.runtime_args.iter().cloned());
    proof_args.push(format!("--package={}@{}", e.identifier, e.version));
    proof_args.extend(["--".into(), "true".into()]);
    vec![
        InstallStep {
            program: "npm".into(),
            args: vec!["install".into()],
            env: online,
            cwd: dir.to_path_buf(),
        },
        InstallStep {
            program: "npx".into(),
            args: proof_args,
            env: npm_env(cache, true),
            cwd: dir.to_path_buf(),
        },
    ]
}

pub(super) fn install(
    e: &Entry,
    r: &Replacement,
    cache: &Path,
) -> Result<InstalledLaunch, InstallError> {
    let dir = project_dir(e, r, cache);
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let pj = project_json(e, r);
    let pj_path = dir.join("package.json");
    if fs::read_to_string(&pj_path).ok().as_deref() != Some(pj.as_str()) {
        fs::write(&pj_path, &pj).map_err(io_err(&pj_path))?;
    }
    // The install's own lockfile: only the overridden package may move.
    let lock = dir.join("package-lock.json");
    if !lock.exists() {
        let theirs = npx_dir(e, cache)?.join("package-lock.json");
        if theirs.exists() {
            fs::copy(&theirs, &lock).map_err(io_err(&lock))?;
        }
    }
    let steps = steps(e, &dir, cache);
    let key = format!(
        "with-sdk-{}-{}-{}-{:016x}",
        r.line,
        r.label(),
        e.id,
        fnv1a(&format!("{pj}\n{}", dir.display()))
    );
    run_once(&System, cache, &e.id, &key, &steps)?;
    let after = scan(&dir, &packages(r)).map_err(io_err(&dir))?;
    let mut env: BTreeMap<String, String> = npm_env(cache, true);
    env.extend(e.env.clone());
    Ok((
        after,
        CachedLaunch {
            program: "npx".into(),
            args: e.args.clone(),
            env,
            cwd: dir,
        },
    ))
}
