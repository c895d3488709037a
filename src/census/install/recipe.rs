//! The recipe as data: the cache layout, the launchers' environments, the install steps of
//! an entry and of uv, and the offline launch.

use super::*;

/// The cache layout.
pub(in crate::census) fn npm_cache(cache: &Path) -> PathBuf {
    cache.join("npm")
}

pub(super) fn uv_venv(cache: &Path) -> PathBuf {
    cache.join("uv")
}

pub(in crate::census) fn uvx_path(cache: &Path) -> PathBuf {
    uv_venv(cache).join("bin").join("uvx")
}

pub(in crate::census) fn work_dir(cache: &Path) -> PathBuf {
    cache.join("work")
}

/// The environment every npx step and launch gets. The npm cache is the shared one; the
/// notifier, funding and audit requests are switched off because they touch the network and
/// print to the terminal.
pub(in crate::census) fn npm_env(cache: &Path, offline: bool) -> BTreeMap<String, String> {
    let mut env = BTreeMap::from([
        (
            "npm_config_cache".to_string(),
            npm_cache(cache).display().to_string(),
        ),
        ("npm_config_update_notifier".into(), "false".into()),
        ("npm_config_fund".into(), "false".into()),
        ("npm_config_audit".into(), "false".into()),
        ("NO_UPDATE_NOTIFIER".into(), "1".into()),
    ]);
    // `offline` makes npm answer from the cache or fail with ENOTCACHED, never fetch.
    env.insert("npm_config_offline".into(), offline.to_string());
    env
}

/// The environment every uvx step and launch gets: uv's cache and an empty tool dir under
/// `$CACHE`, no user or project `uv.toml`, and never a Python download (none can be fetched
/// here; uv uses the interpreters it finds).
pub(in crate::census) fn uv_env(cache: &Path, offline: bool) -> BTreeMap<String, String> {
    let mut env = BTreeMap::from([
        (
            "UV_CACHE_DIR".to_string(),
            cache.join("uv-cache").display().to_string(),
        ),
        (
            "UV_TOOL_DIR".to_string(),
            cache.join("uv-tools").display().to_string(),
        ),
        ("UV_NO_CONFIG".into(), "1".into()),
        ("UV_PYTHON_DOWNLOADS".into(), "never".into()),
        ("UV_NO_PROGRESS".into(), "1".into()),
    ]);
    if offline {
        env.insert("UV_OFFLINE".into(), "1".into());
    }
    env
}

/// The uvx step that installs a PyPI entry into its tool environment (`before`: uvx's own
/// options ahead of the entry's, e.g. a pinned replacement).
pub(in crate::census) fn uvx_install_step(
    entry: &Entry,
    before: Vec<String>,
    cache: &Path,
    offline: bool,
) -> InstallStep {
    let mut args = before;
    args.extend(entry.runtime_args.iter().cloned());
    args.push("--from".into());
    args.push(format!("{}=={}", entry.identifier, entry.version));
    args.extend(["python".to_string(), "-c".to_string(), String::new()]);
    let mut env = uv_env(cache, offline);
    // Bytecode compiled once at install: a launch then imports .pyc files instead of
    // compiling every module again (PYTHONDONTWRITEBYTECODE is common in CI and would make
    // that happen on every start).
    env.insert("UV_COMPILE_BYTECODE".into(), "1".into());
    InstallStep {
        program: uvx_path(cache).display().to_string(),
        args,
        env,
        cwd: work_dir(cache),
    }
}

/// The online install step of an entry and the offline check that follows it.
pub fn install_steps(entry: &Entry, cache: &Path) -> [InstallStep; 2] {
    let spec_args = |offline: bool| -> InstallStep {
        match entry.runtime {
            Launcher::Npx => {
                let mut args = vec!["--yes".to_string()];
                args.extend(entry.runtime_args.iter().cloned());
                args.push(format!("--package={}@{}", entry.identifier, entry.version));
                args.extend(["--".to_string(), "true".to_string()]);
                let mut env = npm_env(cache, offline);
                // Lifecycle scripts (postinstall downloads and builds) print into the install
                // log instead of npm's own debug log, so a failure's tail says what failed.
                env.insert("npm_config_foreground_scripts".into(), "true".into());
                InstallStep {
                    program: "npx".into(),
                    args,
                    env,
                    cwd: work_dir(cache),
                }
            }
            Launcher::Uvx => uvx_install_step(entry, Vec::new(), cache, offline),
        }
    };
    [spec_args(false), spec_args(true)]
}

/// The offline launch of an entry from the cache.
pub fn launch(entry: &Entry, cache: &Path) -> CachedLaunch {
    let (program, mut env) = match entry.runtime {
        Launcher::Npx => ("npx".to_string(), npm_env(cache, true)),
        Launcher::Uvx => (uvx_path(cache).display().to_string(), uv_env(cache, true)),
    };
    // The server's own variables go last: they are what its README asks for.
    env.extend(entry.env.clone());
    CachedLaunch {
        program,
        args: entry.args.clone(),
        env,
        cwd: work_dir(cache),
    }
}

/// The steps that put the pinned uv into `$CACHE/uv`: a venv of the system Python and uv from
/// PyPI at [`UV_VERSION`].
pub(super) fn uv_steps(cache: &Path) -> Vec<InstallStep> {
    let venv = uv_venv(cache);
    vec![
        InstallStep {
            program: "python3".into(),
            args: vec![
                "-m".into(),
                "venv".into(),
                "--clear".into(),
                venv.display().to_string(),
            ],
            env: BTreeMap::new(),
            cwd: cache.to_path_buf(),
        },
        InstallStep {
            program: venv.join("bin").join("python").display().to_string(),
            args: vec![
                "-m".into(),
                "pip".into(),
                "install".into(),
                "--disable-pip-version-check".into(),
                "--no-input".into(),
                format!("uv=={UV_VERSION}"),
            ],
            env: BTreeMap::from([("PIP_NO_INPUT".to_string(), "1".to_string())]),
            cwd: cache.to_path_buf(),
        },
    ]
}
