//! `kits/<line>/kit.toml` → [`Kit`], with errors that name the file, line, column and field.
//! The format is documented in `kits/README.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::template;
use super::version::VersionReq;
use super::KitError;

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
pub type Step = Vec<String>;

/// A tool shared by every version (e.g. `uv`), created once under the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bootstrap {
    pub name: String,
    /// The file whose existence means the tool is ready.
    pub creates: String,
    pub steps: Vec<Step>,
}

/// How to install one source into its directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recipe {
    pub vars: BTreeMap<String, String>,
    /// Resolve dependencies and write the lockfile; run only when the lockfile is missing or
    /// the files it was resolved from changed.
    pub lock: Vec<Step>,
    pub lockfile: Option<String>,
    /// The template files (destinations) the lock is resolved from; a change to another file
    /// does not re-resolve. Empty: every file.
    pub lock_inputs: Vec<String>,
    /// The template files a change to which re-runs `install` (for compiled servers: their
    /// sources). Empty: every file.
    pub install_inputs: Vec<String>,
    /// Install from the lockfile into the directory.
    pub install: Vec<Step>,
    /// Paths (relative to the directory) that must exist afterwards.
    pub outputs: Vec<String>,
}

/// How to build a local checkout or take a packed artifact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalRecipe {
    /// Entry names never copied from a checkout (build output, dependencies, VCS data).
    pub exclude: Vec<String>,
    /// Run in the copy of the checkout (`{{source}}`); leaves the artifact in `{{out}}`.
    pub build: Vec<Step>,
    /// File name pattern (one `*` allowed) of the artifact in `{{out}}` after `build`, or
    /// of a file given directly as `LINE=FILE`. Empty: the checkout copy itself is used.
    pub artifact: Option<String>,
    /// Prints the SDK version of the copy (run in `{{source}}`), to pick the template.
    pub version: Option<Step>,
    /// Prints the date the checkout is of (e.g. its last commit's), RFC 3339: its
    /// dependencies are then resolved as of that date, as a release's are of its own.
    pub date: Option<Step>,
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
    pub shapes: Vec<Shape>,
}

// ---- raw TOML ---------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKit {
    id: Spanned<String>,
    #[serde(default)]
    name: String,
    ecosystem: Ecosystem,
    package: Spanned<String>,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default = "default_margin")]
    cutoff_margin_minutes: u32,
    #[serde(default)]
    lock_retry_minutes: Vec<u32>,
    handshake_ms: Option<u64>,
    exclusive: Option<Spanned<String>>,
    #[serde(default)]
    vars: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    launch_env: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    bootstrap: Vec<RawBootstrap>,
    #[serde(default)]
    files: BTreeMap<String, Spanned<String>>,
    release: RawRecipe,
    local: Option<RawLocal>,
    #[serde(default)]
    variant: Vec<RawVariant>,
    #[serde(default)]
    untestable: Vec<RawUntestable>,
    shapes: BTreeMap<String, RawShape>,
}

fn default_margin() -> u32 {
    60
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBootstrap {
    name: String,
    creates: Spanned<String>,
    steps: Spanned<Vec<Step>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRecipe {
    #[serde(default)]
    vars: BTreeMap<String, Spanned<String>>,
    lock: Option<Spanned<Vec<Step>>>,
    lockfile: Option<String>,
    lock_inputs: Option<Vec<String>>,
    install_inputs: Option<Vec<String>>,
    install: Option<Spanned<Vec<Step>>>,
    outputs: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLocal {
    #[serde(default)]
    exclude: Vec<String>,
    build: Option<Spanned<Vec<Step>>>,
    artifact: Option<Spanned<String>>,
    version: Option<Spanned<Step>>,
    date: Option<Spanned<Step>>,
    #[serde(default)]
    vars: BTreeMap<String, Spanned<String>>,
    lock: Option<Spanned<Vec<Step>>>,
    lockfile: Option<String>,
    lock_inputs: Option<Vec<String>>,
    install_inputs: Option<Vec<String>>,
    install: Option<Spanned<Vec<Step>>>,
    outputs: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    name: Spanned<String>,
    versions: Spanned<String>,
    #[serde(default)]
    files: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    vars: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    shapes: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    note: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUntestable {
    versions: Spanned<String>,
    reason: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShape {
    #[serde(default)]
    description: String,
    command: Spanned<String>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    inflight: Option<RawInflight>,
    #[serde(default)]
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInflight {
    method: String,
    params: Option<toml::Value>,
}

// ---- validation -------------------------------------------------------------------------

/// Line and column (1-based) of a byte offset.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: Option<Range<usize>>, message: String) -> KitError {
        let (line, column) = match span {
            Some(s) => {
                let (l, c) = position(self.text, s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        KitError::Parse {
            path: self.path.to_path_buf(),
            line,
            column,
            message,
        }
    }

    fn req(&self, field: &str, s: &Spanned<String>) -> Result<VersionReq, KitError> {
        VersionReq::parse(s.get_ref())
            .map_err(|e| self.err(Some(s.span()), format!("field `{field}`: {e}")))
    }

    /// Every `{{name}}` in `text` must be a built-in or a declared variable.
    fn names_known(
        &self,
        field: &str,
        span: Range<usize>,
        text: &str,
        known: &BTreeSet<String>,
    ) -> Result<(), KitError> {
        let names = template::placeholders(text)
            .map_err(|e| self.err(Some(span.clone()), format!("field `{field}`: {e}")))?;
        for n in names {
            if !template::is_builtin(&n) && !known.contains(&n) {
                return Err(self.err(
                    Some(span),
                    format!(
                        "field `{field}`: unknown placeholder {{{{{n}}}}} (built-ins: {}; or declare it in a `vars` table)",
                        template::BUILTINS.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn steps_known(
        &self,
        field: &str,
        steps: &Option<Spanned<Vec<Step>>>,
        known: &BTreeSet<String>,
    ) -> Result<Vec<Step>, KitError> {
        let Some(steps) = steps else {
            return Ok(Vec::new());
        };
        for (i, step) in steps.get_ref().iter().enumerate() {
            if step.is_empty() {
                return Err(self.err(
                    Some(steps.span()),
                    format!("field `{field}[{i}]`: a step needs at least a program"),
                ));
            }
            for a in step {
                self.names_known(&format!("{field}[{i}]"), steps.span(), a, known)?;
            }
        }
        Ok(steps.get_ref().clone())
    }

    fn files(
        &self,
        field: &str,
        dir: &Path,
        files: BTreeMap<String, Spanned<String>>,
    ) -> Result<BTreeMap<String, String>, KitError> {
        let mut out = BTreeMap::new();
        for (dst, src) in files {
            if dst.starts_with('/') || dst.split('/').any(|c| c == "..") {
                return Err(self.err(
                    Some(src.span()),
                    format!("field `{field}`: destination {dst:?} must stay inside the instance directory"),
                ));
            }
            let p = dir.join(src.get_ref());
            if !p.exists() {
                return Err(self.err(
                    Some(src.span()),
                    format!(
                        "field `{field}.\"{dst}\"`: template {} does not exist",
                        p.display()
                    ),
                ));
            }
            out.insert(dst, src.into_inner());
        }
        Ok(out)
    }
}

fn plain(map: BTreeMap<String, Spanned<String>>) -> BTreeMap<String, String> {
    map.into_iter().map(|(k, v)| (k, v.into_inner())).collect()
}

/// Parses one kit file's text. `path` names the file in errors; templates are resolved
/// relative to its directory.
pub fn parse(path: &Path, text: &str) -> Result<Kit, KitError> {
    let cx = Ctx { path, text };
    let raw: RawKit = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim();
        let msg = if msg.is_empty() { "invalid TOML" } else { msg };
        cx.err(e.span(), msg.to_string())
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

/// Every variable any table declares; a variable used where it is not defined is an error
/// at instantiation (naming it), not here.
fn declared_vars(raw: &RawKit) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = raw.vars.keys().cloned().collect();
    known.extend(raw.release.vars.keys().cloned());
    if let Some(l) = &raw.local {
        known.extend(l.vars.keys().cloned());
    }
    for v in &raw.variant {
        known.extend(v.vars.keys().cloned());
    }
    known
}

/// A `local.version` or `local.date` command: absent, or a non-empty argv.
fn local_command(
    cx: &Ctx,
    field: &str,
    c: &Option<Spanned<Step>>,
) -> Result<Option<Step>, KitError> {
    match c {
        Some(v) if v.get_ref().is_empty() => Err(cx.err(
            Some(v.span()),
            format!("field `local.{field}`: a command needs at least a program"),
        )),
        Some(v) => Ok(Some(v.get_ref().clone())),
        None => Ok(None),
    }
}

/// A shape's `expect` may name only outcomes a run can observe and compare against.
fn check_expect(cx: &Ctx, field: &str, s: &RawShape) -> Result<(), KitError> {
    for (what, val) in [("eof", &s.expect.eof), ("sigterm", &s.expect.sigterm)] {
        let allowed: &[&str] = if what == "eof" {
            &["exit", "survive"]
        } else {
            &["exit", "ignore"]
        };
        if let Some(v) = val {
            if !allowed.contains(&v.as_str()) {
                return Err(cx.err(
                    Some(s.command.span()),
                    format!("field `{field}.expect.{what}`: {v:?} is not one of {allowed:?}"),
                ));
            }
        }
    }
    Ok(())
}

// Each section of the file is checked and converted by its own method, so that `parse`
// reads as the list of sections.
impl Ctx<'_> {
    /// `id` and `package`: the fields that name the line.
    fn header(&self, raw: &RawKit, dir: &Path) -> Result<(), KitError> {
        let id = raw.id.get_ref();
        if !super::arg::valid_line(id) {
            return Err(self.err(
                Some(raw.id.span()),
                format!(
                    "field `id`: {id:?} is not a valid SDK line id (lowercase letters, digits and '-')"
                ),
            ));
        }
        if let Some(dirname) = dir.file_name().and_then(|n| n.to_str()) {
            if dirname != id {
                return Err(self.err(
                    Some(raw.id.span()),
                    format!("field `id`: {id:?} must equal the kit's directory name {dirname:?}"),
                ));
            }
        }
        if raw.package.get_ref().trim().is_empty() {
            return Err(self.err(
                Some(raw.package.span()),
                "field `package`: must not be empty".into(),
            ));
        }
        if raw.ecosystem == Ecosystem::Maven && !raw.package.get_ref().contains(':') {
            return Err(self.err(
                Some(raw.package.span()),
                "field `package`: a Maven package is `group:artifact`".into(),
            ));
        }
        Ok(())
    }

    /// Every value of a table of templates uses only known names.
    fn map_known(
        &self,
        field: &str,
        m: &BTreeMap<String, Spanned<String>>,
        known: &BTreeSet<String>,
    ) -> Result<(), KitError> {
        for (k, v) in m {
            self.names_known(&format!("{field}.{k}"), v.span(), v.get_ref(), known)?;
        }
        Ok(())
    }

    fn bootstrap(
        &self,
        raw: Vec<RawBootstrap>,
        known: &BTreeSet<String>,
    ) -> Result<Vec<Bootstrap>, KitError> {
        let mut bootstrap = Vec::new();
        for (i, b) in raw.into_iter().enumerate() {
            self.names_known(
                &format!("bootstrap[{i}].creates"),
                b.creates.span(),
                b.creates.get_ref(),
                known,
            )?;
            let steps =
                self.steps_known(&format!("bootstrap[{i}].steps"), &Some(b.steps), known)?;
            bootstrap.push(Bootstrap {
                name: b.name,
                creates: b.creates.into_inner(),
                steps,
            });
        }
        Ok(bootstrap)
    }

    fn release(&self, raw: RawRecipe, known: &BTreeSet<String>) -> Result<Recipe, KitError> {
        let release = Recipe {
            lock: self.steps_known("release.lock", &raw.lock, known)?,
            install: self.steps_known("release.install", &raw.install, known)?,
            lockfile: raw.lockfile,
            lock_inputs: raw.lock_inputs.unwrap_or_default(),
            install_inputs: raw.install_inputs.unwrap_or_default(),
            outputs: raw.outputs.unwrap_or_default(),
            vars: plain(raw.vars),
        };
        if release.install.is_empty() {
            return Err(self.err(
                None,
                "field `release.install`: at least one step is needed".into(),
            ));
        }
        if !release.lock.is_empty() && release.lockfile.is_none() {
            return Err(self.err(
                raw.lock.as_ref().map(|l| l.span()),
                "field `release.lockfile`: `release.lock` writes a lockfile; name it".into(),
            ));
        }
        Ok(release)
    }

    /// `[local]`, whose unset recipe parts are the release's.
    fn local(
        &self,
        l: RawLocal,
        release: &Recipe,
        known: &BTreeSet<String>,
    ) -> Result<LocalRecipe, KitError> {
        self.map_known("local.vars", &l.vars, known)?;
        if let Some(a) = &l.artifact {
            if a.get_ref().matches('*').count() > 1 || a.get_ref().contains('/') {
                return Err(self.err(
                    Some(a.span()),
                    "field `local.artifact`: a file name with at most one `*`".into(),
                ));
            }
        }
        let version = local_command(self, "version", &l.version)?;
        let date = local_command(self, "date", &l.date)?;
        Ok(LocalRecipe {
            exclude: l.exclude,
            build: self.steps_known("local.build", &l.build, known)?,
            artifact: l.artifact.map(Spanned::into_inner),
            version,
            date,
            recipe: Recipe {
                lock: match &l.lock {
                    Some(_) => self.steps_known("local.lock", &l.lock, known)?,
                    None => release.lock.clone(),
                },
                install: match &l.install {
                    Some(_) => self.steps_known("local.install", &l.install, known)?,
                    None => release.install.clone(),
                },
                lockfile: l.lockfile.or_else(|| release.lockfile.clone()),
                lock_inputs: l.lock_inputs.unwrap_or_else(|| release.lock_inputs.clone()),
                install_inputs: l
                    .install_inputs
                    .unwrap_or_else(|| release.install_inputs.clone()),
                outputs: l.outputs.unwrap_or_else(|| release.outputs.clone()),
                vars: plain(l.vars),
            },
        })
    }

    fn exclusive(&self, raw: Option<Spanned<String>>) -> Result<Option<String>, KitError> {
        match raw {
            Some(x) if !super::arg::valid_line(x.get_ref()) => Err(self.err(
                Some(x.span()),
                format!(
                    "field `exclusive`: {:?} is not a lock name (lowercase letters, digits, '-')",
                    x.get_ref()
                ),
            )),
            x => Ok(x.map(Spanned::into_inner)),
        }
    }

    fn shapes(
        &self,
        raw: BTreeMap<String, RawShape>,
        known: &BTreeSet<String>,
    ) -> Result<Vec<Shape>, KitError> {
        if raw.is_empty() {
            return Err(self.err(None, "field `shapes`: at least one shape is needed".into()));
        }
        raw.into_iter()
            .map(|(name, s)| self.shape(name, s, known))
            .collect()
    }

    fn shape(
        &self,
        name: String,
        s: RawShape,
        known: &BTreeSet<String>,
    ) -> Result<Shape, KitError> {
        if !super::arg::valid_line(&name) {
            return Err(self.err(
                Some(s.command.span()),
                format!("field `shapes.{name}`: not a valid shape name (lowercase letters, digits, '-')"),
            ));
        }
        let field = format!("shapes.{name}");
        if s.command.get_ref().trim().is_empty() {
            return Err(self.err(
                Some(s.command.span()),
                format!("field `{field}.command`: must not be empty"),
            ));
        }
        self.names_known(
            &format!("{field}.command"),
            s.command.span(),
            s.command.get_ref(),
            known,
        )?;
        for a in &s.args {
            self.names_known(&format!("{field}.args"), a.span(), a.get_ref(), known)?;
        }
        self.map_known(&format!("{field}.env"), &s.env, known)?;
        check_expect(self, &field, &s)?;
        Ok(Shape {
            name,
            description: s.description,
            command: s.command.into_inner(),
            args: s.args.into_iter().map(Spanned::into_inner).collect(),
            env: plain(s.env),
            inflight: s.inflight.map(|i| {
                let params = i
                    .params
                    .and_then(|p| serde_json::to_value(p).ok())
                    .unwrap_or(serde_json::Value::Null);
                (i.method, params)
            }),
            expect: s.expect,
        })
    }

    fn variants(
        &self,
        raw: Vec<RawVariant>,
        dir: &Path,
        shapes: &[Shape],
        known: &BTreeSet<String>,
    ) -> Result<Vec<Variant>, KitError> {
        let shape_names: BTreeSet<&str> = shapes.iter().map(|s| s.name.as_str()).collect();
        let mut variants = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, v) in raw.into_iter().enumerate() {
            let field = format!("variant[{i}]");
            if !seen.insert(v.name.get_ref().clone()) {
                return Err(self.err(
                    Some(v.name.span()),
                    format!(
                        "field `{field}.name`: variant {:?} is defined twice",
                        v.name.get_ref()
                    ),
                ));
            }
            let versions = self.req(&format!("{field}.versions"), &v.versions)?;
            self.map_known(&format!("{field}.vars"), &v.vars, known)?;
            let shapes_sub = self.shape_subset(&field, v.shapes, &shape_names)?;
            variants.push(Variant {
                name: v.name.into_inner(),
                versions,
                files: self.files(&format!("{field}.files"), dir, v.files)?,
                vars: plain(v.vars),
                shapes: shapes_sub,
                note: v.note,
            });
        }
        if variants.is_empty() {
            return Err(self.err(
                None,
                "field `variant`: at least one [[variant]] is needed".into(),
            ));
        }
        Ok(variants)
    }

    /// A variant's `shapes`: every name must be a shape the kit defines.
    fn shape_subset(
        &self,
        field: &str,
        raw: Option<Spanned<Vec<String>>>,
        shape_names: &BTreeSet<&str>,
    ) -> Result<Vec<String>, KitError> {
        let Some(s) = raw else {
            return Ok(Vec::new());
        };
        if let Some(bad) = s
            .get_ref()
            .iter()
            .find(|n| !shape_names.contains(n.as_str()))
        {
            return Err(self.err(
                Some(s.span()),
                format!("field `{field}.shapes`: no shape named {bad:?}"),
            ));
        }
        Ok(s.into_inner())
    }

    fn untestable(&self, raw: Vec<RawUntestable>) -> Result<Vec<Untestable>, KitError> {
        let mut untestable = Vec::new();
        for (i, u) in raw.into_iter().enumerate() {
            let versions = self.req(&format!("untestable[{i}].versions"), &u.versions)?;
            if u.reason.get_ref().trim().is_empty() {
                return Err(self.err(
                    Some(u.reason.span()),
                    format!("field `untestable[{i}].reason`: say why"),
                ));
            }
            untestable.push(Untestable {
                versions,
                reason: u.reason.into_inner(),
            });
        }
        Ok(untestable)
    }
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
                message: format!(
                    "kit id `{}` is already used by {}",
                    kit.id,
                    prev.path.display()
                ),
            });
        }
        kits.push(kit);
    }
    Ok(kits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kit directory named `demo` with the template files the text refers to.
    fn parse_demo(text: &str) -> Result<Kit, KitError> {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("demo");
        std::fs::create_dir_all(dir.join("t")).unwrap();
        std::fs::write(dir.join("t/a.mjs"), "// {{version}}").unwrap();
        std::fs::write(dir.join("t/b.mjs"), "// b").unwrap();
        parse(&dir.join("kit.toml"), text)
    }

    const GOOD: &str = r#"
id = "demo"
ecosystem = "npm"
package = "demo-sdk"

[files]
"a.mjs" = "t/a.mjs"

[release]
vars = { spec = "{{version}}" }
lock = [["npm", "install", "--package-lock-only", "--before", "{{before}}"]]
lockfile = "package-lock.json"
install = [["npm", "ci"]]

[[variant]]
name = "old"
versions = ">=1.0.0, <1.3.0"
files = { "server.mjs" = "t/b.mjs" }

[[variant]]
name = "new"
versions = ">=1.3.0"

[[untestable]]
versions = "<1.0.0"
reason = "before 1.0"

[shapes.plain]
command = "node"
args = ["{{dir}}/plain.mjs"]

[shapes.slow-tool]
command = "node"
args = ["slow.mjs"]
inflight = { method = "tools/call", params = { name = "slow", arguments = {} } }
expect = { eof = "exit" }
"#;

    #[test]
    fn a_complete_kit_loads() {
        let k = parse_demo(GOOD).unwrap();
        assert_eq!(k.id, "demo");
        assert_eq!(k.ecosystem, Ecosystem::Npm);
        assert_eq!(k.variants.len(), 2);
        assert_eq!(k.variants[0].files["server.mjs"], "t/b.mjs");
        assert_eq!(k.shapes.len(), 2);
        let slow = k.shapes.iter().find(|s| s.name == "slow-tool").unwrap();
        let (m, p) = slow.inflight.clone().unwrap();
        assert_eq!(m, "tools/call");
        assert_eq!(p["name"], "slow");
        assert_eq!(k.cutoff_margin_minutes, 60);
        assert!(k.local.is_none());
    }

    fn err(text: &str) -> (Option<usize>, String) {
        match parse_demo(text).unwrap_err() {
            KitError::Parse { line, message, .. } => (line, message),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn unknown_field_names_its_line() {
        let (line, msg) = err(&GOOD.replace("package = \"demo-sdk\"", "pakage = \"demo-sdk\""));
        assert_eq!(line, Some(4));
        assert!(msg.contains("pakage"), "{msg}");
    }

    #[test]
    fn bad_range_points_at_the_value() {
        let (line, msg) = err(&GOOD.replace(">=1.3.0\"", ">=1.x\""));
        assert_eq!(line, Some(22));
        assert!(
            msg.contains("variant[1].versions") && msg.contains("1.x"),
            "{msg}"
        );
    }

    #[test]
    fn missing_template_is_named() {
        let (line, msg) = err(&GOOD.replace("t/b.mjs", "t/nope.mjs"));
        assert_eq!(line, Some(18));
        assert!(
            msg.contains("nope.mjs") && msg.contains("does not exist"),
            "{msg}"
        );
    }

    #[test]
    fn unknown_placeholder_is_named() {
        let (line, msg) = err(&GOOD.replace("{{dir}}/plain.mjs", "{{dri}}/plain.mjs"));
        assert_eq!(line, Some(30));
        assert!(
            msg.contains("{{dri}}") && msg.contains("shapes.plain.args"),
            "{msg}"
        );
    }

    #[test]
    fn id_must_match_the_directory() {
        let (line, msg) = err(&GOOD.replace("id = \"demo\"", "id = \"other\""));
        assert_eq!(line, Some(2));
        assert!(msg.contains("directory name"), "{msg}");
    }

    #[test]
    fn lock_without_lockfile_and_bad_expectations_are_rejected() {
        let (_, msg) = err(&GOOD.replace("lockfile = \"package-lock.json\"\n", ""));
        assert!(msg.contains("release.lockfile"), "{msg}");
        let (_, msg) = err(&GOOD.replace("eof = \"exit\"", "eof = \"maybe\""));
        assert!(msg.contains("expect.eof"), "{msg}");
        let (_, msg) = err(&GOOD.replace(
            "versions = \"<1.0.0\"\nreason = \"before 1.0\"",
            "versions = \"<1.0.0\"\nreason = \" \"",
        ));
        assert!(msg.contains("say why"), "{msg}");
    }

    #[test]
    fn variant_shape_subsets_must_exist() {
        let (_, msg) = err(&GOOD.replace(
            "name = \"new\"\nversions = \">=1.3.0\"",
            "name = \"new\"\nversions = \">=1.3.0\"\nshapes = [\"plain\", \"timer\"]",
        ));
        assert!(msg.contains("no shape named \"timer\""), "{msg}");
    }

    #[test]
    fn wrong_types_name_the_line() {
        let (line, msg) = err(&GOOD.replace("args = [\"slow.mjs\"]", "args = \"slow.mjs\""));
        assert_eq!(line, Some(34));
        assert!(msg.contains("invalid type"), "{msg}");
    }
}
