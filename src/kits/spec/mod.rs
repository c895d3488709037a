//! `kits/<line>/kit.toml` → [`Kit`], with errors that name the file, line, column and field.
//! The format is documented in `kits/README.md`.

use super::template;
use super::template::TemplateError;
use super::version::{VersionError, VersionReq};
use super::KitError;
use crate::config::manifest::{InflightRequest, RawInflight};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

mod check;
mod raw;
#[cfg(test)]
mod tests;

use check::*;
use raw::*;

/// What is wrong with a kit file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecProblem {
    /// Not TOML, or not the shape serde expects (toml's own message).
    #[error("{0}")]
    Toml(String),
    #[error("kit id `{id}` is already used by {}", other.display())]
    DuplicateId { id: String, other: PathBuf },
    #[error("field `{field}`: {problem}")]
    Field {
        field: String,
        problem: FieldProblem,
    },
}

/// What is wrong with one field of a kit file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldProblem {
    #[error("{0}")]
    Version(VersionError),
    #[error("{0}")]
    Template(TemplateError),
    #[error(
        "unknown placeholder {{{{{0}}}}} (built-ins: {builtins}; or declare it in a `vars` table)",
        builtins = template::BUILTINS.join(", ")
    )]
    UnknownPlaceholder(String),
    #[error("a step needs at least a program")]
    NoProgram,
    #[error("a command needs at least a program")]
    CommandNoProgram,
    #[error("destination {0:?} must stay inside the instance directory")]
    OutsideDir(String),
    #[error("template {} does not exist", .0.display())]
    NoTemplate(PathBuf),
    #[error("{value:?} is not one of {allowed:?}")]
    NotOneOf {
        value: String,
        allowed: &'static [&'static str],
    },
    #[error("{0:?} is not a valid SDK line id (lowercase letters, digits and '-')")]
    BadId(String),
    #[error("{id:?} must equal the kit's directory name {dir:?}")]
    IdNotDir { id: String, dir: String },
    #[error("must not be empty")]
    Empty,
    #[error("a Maven package is `group:artifact`")]
    MavenPackage,
    #[error("at least one step is needed")]
    NoSteps,
    #[error("`release.lock` writes a lockfile; name it")]
    NoLockfile,
    #[error("a file name with at most one `*`")]
    BadArtifact,
    #[error("{0:?} is not a lock name (lowercase letters, digits, '-')")]
    BadLockName(String),
    #[error("at least one shape is needed")]
    NoShapes,
    #[error("not a valid shape name (lowercase letters, digits, '-')")]
    BadShapeName,
    #[error("variant {0:?} is defined twice")]
    VariantTwice(String),
    #[error("at least one [[variant]] is needed")]
    NoVariants,
    #[error("no shape named {0:?}")]
    NoSuchShape(String),
    #[error("say why")]
    SayWhy,
}

/// A problem with the field named `field`.
fn field_err(field: impl Into<String>, problem: FieldProblem) -> SpecProblem {
    SpecProblem::Field {
        field: field.into(),
        problem,
    }
}

/// Where an SDK line's releases are published; decides how versions are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    Npm,
    Pypi,
    Crates,
    Go,
    Maven,
}

impl Ecosystem {
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Npm => "npm",
            Ecosystem::Pypi => "pypi",
            Ecosystem::Crates => "crates",
            Ecosystem::Go => "go",
            Ecosystem::Maven => "maven",
        }
    }
}

/// One command: program and arguments, each a template (`{{dir}}`, `{{version}}`, ...).
pub type CommandTemplate = Vec<String>;

/// A tool shared by every version (e.g. `uv`), created once under the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bootstrap {
    pub name: String,
    /// The file whose existence means the tool is ready.
    pub creates: String,
    pub steps: Vec<CommandTemplate>,
}

/// How to install one source into its directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recipe {
    pub vars: BTreeMap<String, String>,
    /// Resolve dependencies and write the lockfile; run only when the lockfile is missing or
    /// the files it was resolved from changed.
    pub lock: Vec<CommandTemplate>,
    pub lockfile: Option<String>,
    /// The template files (destinations) the lock is resolved from; a change to another file
    /// does not re-resolve. Empty: every file.
    pub lock_inputs: Vec<String>,
    /// The template files a change to which re-runs `install` (for compiled servers: their
    /// sources). Empty: every file.
    pub install_inputs: Vec<String>,
    /// Install from the lockfile into the directory.
    pub install: Vec<CommandTemplate>,
    /// Paths (relative to the directory) that must exist afterwards.
    pub outputs: Vec<String>,
}

/// How to build a local checkout or take a packed artifact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalRecipe {
    /// Entry names never copied from a checkout (build output, dependencies, VCS data).
    pub exclude: Vec<String>,
    /// Run in the copy of the checkout (`{{source}}`); leaves the artifact in `{{out}}`.
    pub build: Vec<CommandTemplate>,
    /// File name pattern (one `*` allowed) of the artifact in `{{out}}` after `build`, or
    /// of a file given directly as `LINE=FILE`. Empty: the checkout copy itself is used.
    pub artifact: Option<String>,
    /// Prints the SDK version of the copy (run in `{{source}}`), to pick the template.
    pub version: Option<CommandTemplate>,
    /// Prints the date the checkout is of (e.g. its last commit's), RFC 3339: its
    /// dependencies are then resolved as of that date, as a release's are of its own.
    pub date: Option<CommandTemplate>,
    /// Lock, install and outputs; unset parts fall back to `[release]`.
    pub recipe: Recipe,
}

/// A set of templates for one range of versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    pub name: String,
    pub versions: VersionReq,
    /// Destination (relative to the instance directory) → source (relative to the kit dir).
    pub files: BTreeMap<String, String>,
    pub vars: BTreeMap<String, String>,
    /// Shapes this variant can build; empty means all.
    pub shapes: Vec<String>,
    pub note: String,
}

/// What a server author on these releases of the SDK should know about how it ends a
/// session, and the fix that works on them: data for hints that know the SDK and release
/// (`rules::explain` words findings; a server's detected SDK and version pick these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    pub versions: VersionReq,
    /// The endings it is about (`close`, `exit`, ...); empty: every ending.
    pub endings: Vec<String>,
    pub text: String,
}

impl Kit {
    /// The hints for one release of this SDK under one ending, in file order.
    pub fn hints_for<'k>(&'k self, version: &str, ending: &str) -> Vec<&'k Hint> {
        let Ok(v) = super::Version::parse(version.split('+').next().unwrap_or(version)) else {
            return Vec::new();
        };
        self.hints
            .iter()
            .filter(|h| h.versions.matches(&v))
            .filter(|h| h.endings.is_empty() || h.endings.iter().any(|e| e == ending))
            .collect()
    }
}

/// Versions no template supports, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Untestable {
    pub versions: VersionReq,
    pub reason: String,
}

/// What a shape is written to do, where the shape (not the SDK) decides it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `exit` or `survive` after stdin reaches EOF with no signal.
    pub eof: Option<String>,
    /// `exit` or `ignore` on SIGTERM.
    pub sigterm: Option<String>,
    /// A process it started is still running after it exited.
    #[serde(default)]
    pub leaves_child: bool,
}

/// One server shape: how to launch it once installed.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub name: String,
    pub description: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// The request the `inflight` ending leaves unanswered.
    pub inflight: Option<(String, serde_json::Value)>,
    pub expect: Expect,
}

/// A loaded `kit.toml`.
#[derive(Clone, Debug, PartialEq)]
pub struct Kit {
    pub id: String,
    pub name: String,
    pub ecosystem: Ecosystem,
    /// Registry name: npm/PyPI/crates name, Go module path, or Maven `group:artifact`.
    pub package: String,
    /// The `kit.toml` file and its directory (templates are relative to it).
    pub path: PathBuf,
    pub dir: PathBuf,
    pub requires: Vec<String>,
    /// Minutes added to a release's registry time to get `{{before}}`, the cutoff for
    /// resolving its dependencies.
    pub cutoff_margin_minutes: u32,
    /// When locking fails, retry with the cutoff moved this many minutes later, in turn.
    pub lock_retry_minutes: Vec<u32>,
    /// A handshake budget for this line's servers (e.g. a JVM's start-up), in ms.
    pub handshake_ms: Option<u64>,
    /// The name of a cache-wide lock held while this kit locks, installs or builds: for a
    /// shared cache its tool cannot share concurrently (Maven 3.8's local repository).
    pub exclusive: Option<String>,
    pub vars: BTreeMap<String, String>,
    /// Environment of every install step.
    pub env: BTreeMap<String, String>,
    /// Environment added to every instance.
    pub launch_env: BTreeMap<String, String>,
    pub bootstrap: Vec<Bootstrap>,
    /// Files every variant gets (a variant's own file of the same name wins).
    pub files: BTreeMap<String, String>,
    pub release: Recipe,
    pub local: Option<LocalRecipe>,
    pub variants: Vec<Variant>,
    pub untestable: Vec<Untestable>,
    /// Release-specific hints (`[[hint]]`), in file order.
    pub hints: Vec<Hint>,
    pub shapes: Vec<Shape>,
}

/// Parses one kit file's text. `path` names the file in errors; templates are resolved
/// relative to its directory.
pub fn parse(path: &Path, text: &str) -> Result<Kit, KitError> {
    let cx = Ctx { path, text };
    let raw: RawKit = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim();
        let msg = if msg.is_empty() { "invalid TOML" } else { msg };
        cx.err(e.span(), SpecProblem::Toml(msg.to_string()))
    })?;
    let dir = kit_dir(path);
    // This order decides which error a file with several is reported with: keep it.
    cx.header(&raw, &dir)?;
    let known = declared_vars(&raw);
    cx.map_known("vars", &raw.vars, &known)?;
    cx.map_known("env", &raw.env, &known)?;
    cx.map_known("launch_env", &raw.launch_env, &known)?;
    cx.map_known("release.vars", &raw.release.vars, &known)?;
    let bootstrap = cx.bootstrap(raw.bootstrap, &known)?;
    let release = cx.release(raw.release, &known)?;
    let local = match raw.local {
        None => None,
        Some(l) => Some(cx.local(l, &release, &known)?),
    };
    let exclusive = cx.exclusive(raw.exclusive)?;
    let shapes = cx.shapes(raw.shapes, &known)?;
    let files = cx.files("files", &dir, raw.files)?;
    let variants = cx.variants(raw.variant, &dir, &shapes, &known)?;
    let untestable = cx.untestable(raw.untestable)?;
    let hints = cx.hints(raw.hint)?;
    Ok(Kit {
        id: raw.id.into_inner(),
        name: raw.name,
        ecosystem: raw.ecosystem,
        package: raw.package.into_inner(),
        path: path.to_path_buf(),
        dir,
        requires: raw.requires,
        cutoff_margin_minutes: raw.cutoff_margin_minutes,
        lock_retry_minutes: raw.lock_retry_minutes,
        handshake_ms: raw.handshake_ms,
        exclusive,
        vars: plain(raw.vars),
        env: plain(raw.env),
        launch_env: plain(raw.launch_env),
        bootstrap,
        files,
        release,
        local,
        variants,
        untestable,
        hints,
        shapes,
    })
}

/// The kit's directory, absolute: templates are relative to it and its name is the id.
fn kit_dir(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Loads one `kit.toml`.
pub fn load_file(path: &Path) -> Result<Kit, KitError> {
    let text = std::fs::read_to_string(path).map_err(|e| KitError::Read {
        path: path.to_path_buf(),
        source: e,
    })?;
    parse(path, &text)
}

/// Loads `dir/*/kit.toml`, sorted by directory name; duplicate ids are an error.
pub fn load_kits(dir: &Path) -> Result<Vec<Kit>, KitError> {
    let entries = std::fs::read_dir(dir).map_err(|e| KitError::Read {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path().join("kit.toml")))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut kits: Vec<Kit> = Vec::new();
    for f in files {
        let kit = load_file(&f)?;
        if let Some(prev) = kits.iter().find(|k| k.id == kit.id) {
            return Err(KitError::Parse {
                path: f.clone(),
                line: None,
                column: None,
                problem: Box::new(SpecProblem::DuplicateId {
                    id: kit.id.clone(),
                    other: prev.path.clone(),
                }),
            });
        }
        kits.push(kit);
    }
    Ok(kits)
}
