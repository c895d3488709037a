//! Instantiating a kit: templates written into `<cache>/kits/<line>/<label>/`, dependencies
//! resolved once into a lockfile, installed from it, and the shapes returned as instances.
//!
//! Idempotent and safe to run concurrently: everything for one directory happens under an
//! advisory lock, and a stamp keyed on the rendered files, the steps and the lockfile says
//! when nothing needs doing (then no command runs at all).

use super::date;
use super::registry::Release;
use super::spec::{CommandTemplate, Kit, LocalRecipe, Recipe, Variant};
use super::template::{self, TemplateError, Unsupported};
use crate::config::manifest::normalize;
use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod files;
mod instances;
mod local;
mod place;
mod plan;
mod run;
#[cfg(test)]
mod tests;

use files::*;
use instances::*;
use local::*;
use place::*;
use plan::*;
use run::*;

const STAMP: &str = ".kit-stamp";

const LOCK_KEY: &str = ".kit-lock-key";

const LOG: &str = ".kit-install.log";

/// What to instantiate: a published release, or a local checkout / packed artifact (named
/// by `name` when given, else by its `git describe` or its file name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Release(Release),
    Local { path: PathBuf, name: Option<String> },
}

/// One ready-to-launch server: everything a manifest needs, with absolute paths.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Instance {
    /// `typescript-1.24.0-timer`, or `typescript-local-NAME-timer` for a local source.
    pub name: String,
    pub description: String,
    pub command: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub sdk: String,
    pub sdk_version: String,
    pub shape: String,
    /// The request the `inflight` ending should leave unanswered (method, params).
    pub inflight: Option<(String, serde_json::Value)>,
    /// What the shape is written to do (the SDK decides the rest).
    pub expect: super::spec::Expect,
    /// The template variant the version selected.
    pub variant: String,
    /// The kit's handshake budget for this line (ms), if it sets one.
    pub handshake_ms: Option<u64>,
}

/// The outcome of [`prepare`]: the instances, and whether anything had to be installed.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub instances: Vec<Instance>,
    /// False when the stamp matched and no command ran.
    pub installed: bool,
    pub seconds: f64,
    pub dir: PathBuf,
    /// Every command run and its output, appended per installation.
    pub log: PathBuf,
}

/// Why a source cannot be tested.
#[derive(Debug, thiserror::Error)]
pub enum SourceNotTestable {
    #[error("{line} {version}: not testable: {reason}")]
    Unsupported {
        line: String,
        version: String,
        #[source]
        reason: Unsupported,
    },
    #[error("{line}: needs `{program}`, which is not on PATH")]
    MissingProgram { line: String, program: String },
    #[error("{0}")]
    Step(Box<StepFailure>),
    #[error("{line} {version}: {what}")]
    Incomplete {
        line: String,
        version: String,
        #[source]
        what: Incomplete,
    },
    #[error("{line}: template {}: {context}{source}", path.display())]
    Template {
        line: String,
        path: PathBuf,
        /// Which part of the kit file (`step [...]: `, `env NAME: `, `shape NAME: `), or empty.
        context: String,
        #[source]
        source: TemplateError,
    },
    #[error("{line}: local source {}: {reason}", path.display())]
    Local {
        line: String,
        path: PathBuf,
        #[source]
        reason: LocalError,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What an installation that ran to the end did not leave behind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Incomplete {
    #[error("bootstrap `{name}` did not create {creates}")]
    Bootstrap { name: String, creates: String },
    #[error("installation finished but did not create {}", .0.display())]
    Output(PathBuf),
    #[error("the lock steps did not write {}", .0.display())]
    Lockfile(PathBuf),
}

/// Why a local checkout or artifact cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("the {0} kit has no [local] recipe")]
    NoRecipe(String),
    #[error("cannot be read: {0}")]
    Unreadable(#[source] std::io::Error),
    #[error("the {0} kit builds checkouts (directories) only")]
    DirectoriesOnly(String),
    #[error("the build left no artifact matching {pattern:?} in {}", out.display())]
    NoArtifact { pattern: String, out: PathBuf },
}

/// A step of an installation that failed: what ran, where, and the end of its output.
#[derive(Debug)]
pub struct StepFailure {
    pub line: String,
    pub version: String,
    pub command: String,
    pub dir: PathBuf,
    pub status: String,
    pub tail: String,
}

impl std::fmt::Display for StepFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: `{}` in {} failed ({}); last output:\n{}",
            self.line,
            self.version,
            self.command,
            self.dir.display(),
            self.status,
            self.tail
        )
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SourceNotTestable + '_ {
    move |source| SourceNotTestable::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Is `program` runnable: an existing path, or a name found on `PATH`? Returns its path.
fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).exists().then(|| PathBuf::from(program));
    }
    which::which(program).ok()
}

/// Instantiates `kit` at `source`: the instances of every shape its variant supports.
pub fn instantiate(
    kit: &Kit,
    source: &Source,
    cache: &Path,
) -> Result<Vec<Instance>, SourceNotTestable> {
    prepare(kit, source, cache).map(|p| p.instances)
}

/// [`instantiate`], also saying whether anything was installed and how long it took.
pub fn prepare(kit: &Kit, source: &Source, cache: &Path) -> Result<Prepared, SourceNotTestable> {
    let started = Instant::now();
    let cache = std::path::absolute(cache).map_err(io(cache))?;
    for p in &kit.requires {
        if which(p).is_none() {
            return Err(SourceNotTestable::MissingProgram {
                line: kit.id.clone(),
                program: p.clone(),
            });
        }
    }
    let base = cache.join("kits").join(&kit.id);
    let mut vars = kit_vars(kit, &cache)?;
    bootstrap(kit, &cache, &vars)?;
    let (place, variant, recipe, _guard) = match source {
        Source::Release(r) => release_source(kit, r, &base, &mut vars)?,
        Source::Local { path, name } => local_place(kit, path, name.as_deref(), &base, &mut vars)?,
    };
    place_vars(&mut vars, &place, variant);
    template::extend(&mut vars, &recipe.vars).map_err(tmpl_err(kit))?;
    template::extend(&mut vars, &variant.vars).map_err(tmpl_err(kit))?;

    let installed = install(kit, variant, &recipe, &place, &vars)?;
    let instances = instances(kit, variant, &place, &vars)?;
    Ok(Prepared {
        instances,
        installed,
        seconds: started.elapsed().as_secs_f64(),
        log: place.dir.join(LOG),
        dir: place.dir,
    })
}

/// A local checkout or artifact built into the artifact its `[local]` recipe packs, for
/// installing elsewhere (`census --with-sdk LINE=PATH` puts it into published servers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    pub artifact: PathBuf,
    /// `local-<name>`: the name given, else the checkout's `git describe` or the file's name.
    pub name: String,
    /// The version the artifact declares, with `+local.<hash>` of its content.
    pub sdk_version: String,
}

/// Builds a local source as [`prepare`] does, without instantiating any shape.
pub fn build(
    kit: &Kit,
    path: &Path,
    name: Option<&str>,
    cache: &Path,
) -> Result<Built, SourceNotTestable> {
    let cache = std::path::absolute(cache).map_err(io(cache))?;
    if let Some(p) = kit.requires.iter().find(|p| which(p).is_none()) {
        return Err(SourceNotTestable::MissingProgram {
            line: kit.id.clone(),
            program: p.clone(),
        });
    }
    let base = cache.join("kits").join(&kit.id);
    let mut vars = kit_vars(kit, &cache)?;
    bootstrap(kit, &cache, &vars)?;
    let (place, _guard) = local_source(kit, path, name, &base, &mut vars)?;
    let artifact = vars.get("artifact").map(PathBuf::from).ok_or_else(|| {
        local_err(kit, path)(LocalError::NoArtifact {
            pattern: "(the kit packs no artifact)".into(),
            out: place.dir.clone(),
        })
    })?;
    Ok(Built {
        artifact,
        name: place.name,
        sdk_version: place.sdk_version,
    })
}

/// An error in a template of the kit file itself (a `vars` value).
fn tmpl_err(kit: &Kit) -> impl Fn(TemplateError) -> SourceNotTestable + '_ {
    move |source| SourceNotTestable::Template {
        line: kit.id.clone(),
        path: kit.path.clone(),
        context: String::new(),
        source,
    }
}
