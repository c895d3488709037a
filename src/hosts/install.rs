//! Installing a host release from npm into the shared cache, pinned, once:
//! `<user cache>/hosts/<package>@<version>/`. A finished install is a directory with a
//! `.installed` stamp; a second identical measurement finds it and installs nothing.

use std::path::{Path, PathBuf};

use super::HostError;
use crate::os::command as os;

/// The registry's view of a package: its versions, oldest first, and their dates.
#[derive(Clone, Debug, Default)]
pub struct Releases {
    pub newest: String,
    /// (version, ISO date), in publication order.
    pub dated: Vec<(String, String)>,
}

/// `npm` with `args` in `dir`, its output captured (in a group the interrupt kills).
fn npm_in(dir: &Path, args: &[String], stderr: os::Stderr) -> std::io::Result<os::Captured> {
    os::run_captured(
        std::ffi::OsStr::new("npm"),
        args,
        dir,
        [("NO_UPDATE_NOTIFIER", "1")],
        stderr,
    )
}

/// The package's releases (`kits::npm_view`), pre-releases left out, in
/// publication order.
pub fn releases(package: &str) -> Result<Releases, HostError> {
    let view = crate::kits::npm_view(package)
        .map_err(|e| HostError::Registry(format!("npm view {package}: {e}")))?;
    let newest = view
        .latest
        .filter(|v| !v.is_empty())
        .ok_or_else(|| HostError::Registry(format!("npm has no package {package}")))?;
    let mut dated: Vec<(String, String)> = view
        .releases
        .into_iter()
        .filter(|r| !r.version.contains('-'))
        .map(|r| (r.version, r.date.unwrap_or_default()))
        .collect();
    dated.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(Releases { newest, dated })
}

pub fn install_dir(cache: &Path, package: &str, version: &str) -> PathBuf {
    cache.join("hosts").join(format!("{package}@{version}"))
}

/// Installs (or finds) `package@version`; returns the binary and whether it installed.
pub fn ensure(
    cache: &Path,
    package: &str,
    bin: &str,
    version: &str,
) -> Result<(PathBuf, bool), HostError> {
    let dir = install_dir(cache, package, version);
    let exe = dir.join("node_modules/.bin").join(bin);
    if dir.join(".installed").is_file() && exe.exists() {
        return Ok((exe, false));
    }
    // One install of a release at a time, machine-wide: parallel measurements (tests) of
    // the same host share its `.partial` directory. The second finds the first's.
    let parent = dir.parent().unwrap_or(cache);
    std::fs::create_dir_all(parent).map_err(|e| HostError::io(parent, e))?;
    // Beside it by its whole name (`with_extension` would cut `@2.1.332` at its last dot).
    let beside = |suffix: &str| {
        let mut name = dir.file_name().unwrap_or_default().to_os_string();
        name.push(suffix);
        parent.join(name)
    };
    let lock_path = beside(".lock");
    let _lock = crate::os::lock::lock_path(&lock_path).map_err(|e| HostError::io(&lock_path, e))?;
    if dir.join(".installed").is_file() && exe.exists() {
        return Ok((exe, false));
    }
    let tmp = beside(".partial");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| HostError::io(&tmp, e))?;
    let spec = format!("{package}@{version}");
    npm_install(parent, &tmp, &spec, package)?;
    // An interrupted install is not finished: no stamp, the next run redoes it.
    if crate::os::interrupt::requested() {
        return Err(HostError::Install(spec, "interrupted".into()));
    }
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| HostError::io(parent, e))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| HostError::io(&dir, e))?;
    std::fs::write(dir.join(".installed"), &spec).map_err(|e| HostError::io(&dir, e))?;
    if !exe.exists() {
        return Err(HostError::Install(
            spec,
            format!("no {bin} in node_modules/.bin"),
        ));
    }
    Ok((exe, true))
}

/// `npm install` of `spec` into `tmp`, and the install scripts npm held back.
fn npm_install(parent: &Path, tmp: &Path, spec: &str, package: &str) -> Result<(), HostError> {
    let args: Vec<String> = [
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--foreground-scripts",
        "--prefix",
    ]
    .iter()
    .map(|a| a.to_string())
    .chain([tmp.display().to_string(), spec.to_string()])
    .collect();
    let out = npm_in(parent, &args, os::Stderr::Merged)
        .map_err(|e| HostError::Install(spec.to_string(), e.to_string()))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout);
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(HostError::Install(spec.to_string(), last.to_string()));
    }
    // npm may hold back install scripts: packages that link their native binary there
    // (Claude Code's install.cjs) are finished by running them once.
    let pkg_dir = tmp.join("node_modules").join(package);
    if pkg_dir.join("install.cjs").is_file() {
        let _ = os::run_captured(
            std::ffi::OsStr::new("node"),
            &["install.cjs".to_string()],
            &pkg_dir,
            std::iter::empty::<(&str, &str)>(),
            os::Stderr::Merged,
        );
    }
    Ok(())
}
