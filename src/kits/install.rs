//! Instantiating a kit: templates written into `<cache>/kits/<line>/<label>/`, dependencies
//! resolved once into a lockfile, installed from it, and the shapes returned as instances.
//!
//! Idempotent and safe to run concurrently: everything for one directory happens under an
//! advisory lock, and a stamp keyed on the rendered files, the steps and the lockfile says
//! when nothing needs doing (then no command runs at all).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::date;
use super::registry::Release;
use super::spec::{Kit, LocalRecipe, Recipe, Step, Variant};
use super::template::{self, TemplateError, Unsupported};
use crate::config::manifest::normalize;

const STAMP: &str = ".kit-stamp";
const LOCK_KEY: &str = ".kit-lock-key";
const LOG: &str = ".kit-install.log";

/// What to instantiate: a published release, or a local checkout / packed artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Release(Release),
    Local(PathBuf),
}

/// One ready-to-launch server: everything a manifest needs, with absolute paths.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Instance {
    /// `typescript-1.24.0-timer`, or `typescript-local-1a2b3c4d-timer` for a local source.
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

impl Instance {
    /// The instance as a server manifest (the format of `conformance/servers/*.toml`), for
    /// writing a suite of instances to disk.
    pub fn manifest_toml(&self) -> String {
        use serde::Serialize;
        #[derive(Serialize)]
        struct About<'a> {
            sdk: &'a str,
            sdk_version: &'a str,
            shape: &'a str,
        }
        #[derive(Serialize)]
        struct Inflight<'a> {
            method: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            params: Option<&'a serde_json::Value>,
        }
        #[derive(Serialize)]
        struct Budgets {
            handshake_ms: u64,
        }
        #[derive(Serialize)]
        struct Manifest<'a> {
            name: &'a str,
            description: &'a str,
            command: &'a str,
            args: &'a [String],
            cwd: String,
            env: &'a BTreeMap<String, String>,
            about: About<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            inflight: Option<Inflight<'a>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            budgets: Option<Budgets>,
        }
        let m = Manifest {
            name: &self.name,
            description: &self.description,
            command: &self.command,
            args: &self.args,
            cwd: self.cwd.display().to_string(),
            env: &self.env,
            about: About {
                sdk: &self.sdk,
                sdk_version: &self.sdk_version,
                shape: &self.shape,
            },
            inflight: self.inflight.as_ref().map(|(method, params)| Inflight {
                method,
                params: (!params.is_null()).then_some(params),
            }),
            budgets: self
                .handshake_ms
                .map(|handshake_ms| Budgets { handshake_ms }),
        };
        // Every field is a string, a list or table of strings, or a JSON object without
        // nulls (TOML has none): serialisation cannot fail.
        toml::to_string(&m).unwrap_or_default()
    }
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
pub enum NotTestable {
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

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> NotTestable + '_ {
    move |source| NotTestable::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// 64-bit FNV-1a: stable across Rust releases (unlike `DefaultHasher`), enough for stamps.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn add(mut self, bytes: &[u8]) -> Self {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
        // A separator, so that ("ab","c") and ("a","bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        self
    }
    fn hex(self) -> String {
        format!("{:016x}", self.0)
    }
}

/// An exclusive advisory lock on `path`, held until dropped. flock locks belong to the open
/// file description, so threads of one process exclude each other as processes do.
struct DirLock(#[allow(dead_code)] nix::fcntl::Flock<File>);

/// The kit's cache-wide lock (`exclusive`), if it names one.
fn exclusive(kit: &Kit, cache: &Path) -> Result<Option<DirLock>, NotTestable> {
    kit.exclusive
        .as_ref()
        .map(|name| {
            lock(
                &cache
                    .join("kits")
                    .join(".locks")
                    .join(format!("{name}.lock")),
            )
        })
        .transpose()
}

fn lock(path: &Path) -> Result<DirLock, NotTestable> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p).map_err(io(p))?;
    }
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io(path))?;
    let locked =
        nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, e)| {
            NotTestable::Io {
                path: path.to_path_buf(),
                source: e.into(),
            }
        })?;
    Ok(DirLock(locked))
}

/// Is `program` runnable: an existing path, or a name found on `PATH`? Returns its path.
fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).exists().then(|| PathBuf::from(program));
    }
    which::which(program).ok()
}

/// Where one source of one line lives, and the names it goes by.
struct Place {
    /// `1.24.0`, or `local-1a2b3c4d`.
    label: String,
    /// The SDK version the templates are chosen for (for a local source: what its
    /// `local.version` command printed, if anything).
    version: Option<String>,
    /// The value of `Instance::sdk_version`.
    sdk_version: String,
    /// For a local source: the date its `local.date` command printed.
    date: Option<String>,
    dir: PathBuf,
}

/// Instantiates `kit` at `source`: the instances of every shape its variant supports.
pub fn instantiate(kit: &Kit, source: &Source, cache: &Path) -> Result<Vec<Instance>, NotTestable> {
    prepare(kit, source, cache).map(|p| p.instances)
}

/// [`instantiate`], also saying whether anything was installed and how long it took.
pub fn prepare(kit: &Kit, source: &Source, cache: &Path) -> Result<Prepared, NotTestable> {
    let started = Instant::now();
    let cache = std::path::absolute(cache).map_err(io(cache))?;
    for p in &kit.requires {
        if which(p).is_none() {
            return Err(NotTestable::MissingProgram {
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
        Source::Local(path) => local_place(kit, path, &base, &mut vars)?,
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

/// An error in a template of the kit file itself (a `vars` value).
fn tmpl_err(kit: &Kit) -> impl Fn(TemplateError) -> NotTestable + '_ {
    move |source| NotTestable::Template {
        line: kit.id.clone(),
        path: kit.path.clone(),
        context: String::new(),
        source,
    }
}

/// The variables every source of the line has, before any depends on the source.
fn kit_vars(kit: &Kit, cache: &Path) -> Result<BTreeMap<String, String>, NotTestable> {
    let mut vars = BTreeMap::new();
    vars.insert("line".into(), kit.id.clone());
    vars.insert("package".into(), kit.package.clone());
    vars.insert("cache".into(), cache.display().to_string());
    vars.insert("kit".into(), kit.dir.display().to_string());
    // Kit-level variables may use only the names above (documented in kits/README.md).
    template::extend(&mut vars, &kit.vars).map_err(tmpl_err(kit))?;
    Ok(vars)
}

/// A source's place, its variant, the recipe that installs it and the lock held on it.
type Chosen<'k> = (Place, &'k Variant, Recipe, DirLock);

/// A published release: its directory is named by its version, its cutoff by its date.
fn release_source<'k>(
    kit: &'k Kit,
    r: &Release,
    base: &Path,
    vars: &mut BTreeMap<String, String>,
) -> Result<Chosen<'k>, NotTestable> {
    let variant = choose(kit, &r.version)?;
    let place = Place {
        label: r.version.clone(),
        version: Some(r.version.clone()),
        sdk_version: r.version.clone(),
        date: r.date.clone(),
        dir: base.join(&r.version),
    };
    let guard = lock(&base.join(format!(".{}.lock", place.label)))?;
    let cutoff = match &r.date {
        Some(d) => {
            date::cutoff(d, kit.cutoff_margin_minutes).map_err(|e| NotTestable::Unsupported {
                line: kit.id.clone(),
                version: r.version.clone(),
                reason: Unsupported::BadDate(e),
            })?
        }
        // No date from the registry (a Maven mirror): Maven, Go and Cargo pin what
        // they pin anyway; the cutoff is the day the directory was first set up.
        None => first_setup(&place.dir)?,
    };
    vars.insert("date".into(), r.date.clone().unwrap_or_default());
    vars.insert("before".into(), cutoff);
    Ok((place, variant, kit.release.clone(), guard))
}

/// A local checkout or artifact, prepared by [`local_source`], with its variant and cutoff.
fn local_place<'k>(
    kit: &'k Kit,
    path: &Path,
    base: &Path,
    vars: &mut BTreeMap<String, String>,
) -> Result<Chosen<'k>, NotTestable> {
    let (place, guard) = local_source(kit, path, base, vars)?;
    let variant = match &place.version {
        Some(v) => choose(kit, v)?,
        // Nothing says which version the checkout is: the newest templates.
        None => kit.variants.last().expect("a kit has at least one variant"),
    };
    // Resolved as of the checkout's own date when it has one (its last commit), else
    // as of the day it was first built here: stable either way, so a second
    // instantiation finds its lockfile fresh.
    let cutoff = match place
        .date
        .as_deref()
        .and_then(|d| date::cutoff(d, kit.cutoff_margin_minutes).ok())
    {
        Some(c) => c,
        None => first_setup(&place.dir)?,
    };
    vars.insert("date".into(), place.date.clone().unwrap_or_default());
    vars.insert("before".into(), cutoff);
    let recipe = kit
        .local
        .as_ref()
        .map(|l| l.recipe.clone())
        .unwrap_or_default();
    Ok((place, variant, recipe, guard))
}

/// The variables that name the place and variant, whatever the source.
fn place_vars(vars: &mut BTreeMap<String, String>, place: &Place, variant: &Variant) {
    vars.insert(
        "version".into(),
        place.version.clone().unwrap_or_else(|| place.label.clone()),
    );
    vars.insert("label".into(), place.label.clone());
    // The label as an identifier (`3.11.0` → `3_11_0`), for names that allow no dots.
    let slug: String = place
        .label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    vars.insert("slug".into(), slug);
    vars.insert("dir".into(), place.dir.display().to_string());
    vars.insert("variant".into(), variant.name.clone());
}

/// The time a directory was first set up (recorded in it), or now for a new one.
fn first_setup(dir: &Path) -> Result<String, NotTestable> {
    let f = dir.join(".kit-before");
    if let Ok(t) = fs::read_to_string(&f) {
        if date::parse(t.trim()).is_ok() {
            return Ok(t.trim().to_string());
        }
    }
    let now = date::format(date::now());
    fs::create_dir_all(dir).map_err(io(dir))?;
    fs::write(&f, &now).map_err(io(&f))?;
    Ok(now)
}

fn choose<'k>(kit: &'k Kit, version: &str) -> Result<&'k Variant, NotTestable> {
    template::select(kit, version).map_err(|reason| NotTestable::Unsupported {
        line: kit.id.clone(),
        version: version.to_string(),
        reason,
    })
}

/// The rendered template files of a variant: relative path → contents.
fn render_files(
    kit: &Kit,
    variant: &Variant,
    vars: &BTreeMap<String, String>,
) -> Result<Vec<(PathBuf, Vec<u8>)>, NotTestable> {
    let mut out = Vec::new();
    for (dst, src) in template::files_of(kit, variant) {
        let src_path = kit.dir.join(&src);
        let mut sources = Vec::new();
        walk(&src_path, Path::new(""), &[], &mut sources).map_err(io(&src_path))?;
        for rel in sources {
            let from = join_rel(&src_path, &rel);
            let bytes = fs::read(&from).map_err(io(&from))?;
            let bytes = match String::from_utf8(bytes) {
                Ok(text) => template::render(&text, vars, None)
                    .map_err(|source| NotTestable::Template {
                        line: kit.id.clone(),
                        path: from.clone(),
                        context: String::new(),
                        source,
                    })?
                    .into_bytes(),
                // Binary files are copied as they are.
                Err(e) => e.into_bytes(),
            };
            // A directory mapped to "." lands at the top of the instance directory.
            let dst = if dst == "." {
                PathBuf::new()
            } else {
                PathBuf::from(&dst)
            };
            out.push((join_rel(&dst, &rel), bytes));
        }
    }
    Ok(out)
}

/// `base/rel`, where an empty `rel` is `base` itself (`Path::join("")` would add a
/// trailing slash, which makes a file path fail with ENOTDIR).
fn join_rel(base: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(rel)
    }
}

/// Files under `root` (or `root` itself when it is a file, as an empty relative path),
/// sorted, skipping entries named in `exclude` at any depth.
fn walk(
    root: &Path,
    rel: &Path,
    exclude: &[String],
    out: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let here = join_rel(root, rel);
    let meta = fs::symlink_metadata(&here)?;
    if !meta.is_dir() {
        out.push(rel.to_path_buf());
        return Ok(());
    }
    let mut names: Vec<_> = fs::read_dir(&here)?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| !exclude.iter().any(|x| n.to_str() == Some(x.as_str())))
        .collect();
    names.sort();
    for n in names {
        walk(root, &rel.join(n), exclude, out)?;
    }
    Ok(())
}

fn render_step(
    kit: &Kit,
    step: &Step,
    vars: &BTreeMap<String, String>,
    dir: &Path,
) -> Result<Vec<String>, NotTestable> {
    step.iter()
        .map(|a| {
            template::render(a, vars, Some(dir)).map_err(|source| NotTestable::Template {
                line: kit.id.clone(),
                path: kit.path.clone(),
                context: format!("step {step:?}: "),
                source,
            })
        })
        .collect()
}

fn env_of(
    kit: &Kit,
    vars: &BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, NotTestable> {
    kit.env
        .iter()
        .map(|(k, v)| {
            template::render(v, vars, None)
                .map(|v| (k.clone(), v))
                .map_err(|source| NotTestable::Template {
                    line: kit.id.clone(),
                    path: kit.path.clone(),
                    context: format!("env {k}: "),
                    source,
                })
        })
        .collect()
}

/// Runs one rendered step in `dir`, appending the command and its output to `log`.
fn run_step(
    kit: &Kit,
    label: &str,
    argv: &[String],
    dir: &Path,
    env: &[(String, String)],
    log: &Path,
) -> Result<String, NotTestable> {
    let shown = argv.join(" ");
    // A relative program with a slash is relative to the step's directory.
    let program = if argv[0].contains('/') {
        normalize(&dir.join(&argv[0]))
    } else {
        PathBuf::from(&argv[0])
    };
    if which(&program.to_string_lossy()).is_none() {
        return Err(NotTestable::MissingProgram {
            line: kit.id.clone(),
            program: argv[0].clone(),
        });
    }
    let started = Instant::now();
    // An OsString (not a Path): duct would prefix a bare name given as a Path with "./".
    let mut cmd = duct::cmd(program.into_os_string(), &argv[1..]).dir(dir);
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let out = cmd
        .stdin_null()
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked()
        .run()
        .map_err(|e| {
            NotTestable::Step(Box::new(StepFailure {
                line: kit.id.clone(),
                version: label.to_string(),
                command: shown.clone(),
                dir: dir.to_path_buf(),
                status: format!("could not start: {e}"),
                tail: String::new(),
            }))
        })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(log) {
        let _ = writeln!(
            f,
            "$ (cd {} && {shown})\n{text}[{} in {:.1} s]",
            dir.display(),
            out.status,
            started.elapsed().as_secs_f64()
        );
    }
    if !out.status.success() {
        let lines: Vec<&str> = text.lines().collect();
        return Err(NotTestable::Step(Box::new(StepFailure {
            line: kit.id.clone(),
            version: label.to_string(),
            command: shown,
            dir: dir.to_path_buf(),
            status: out.status.to_string(),
            tail: lines[lines.len().saturating_sub(30)..].join("\n"),
        })));
    }
    Ok(text)
}

/// Shared tools (e.g. `uv`), created once under the cache for every version and line.
fn bootstrap(kit: &Kit, cache: &Path, vars: &BTreeMap<String, String>) -> Result<(), NotTestable> {
    if kit.bootstrap.is_empty() {
        return Ok(());
    }
    let tools = cache.join("kits").join(".tools");
    fs::create_dir_all(&tools).map_err(io(&tools))?;
    let env = env_of(kit, vars)?;
    for b in &kit.bootstrap {
        let creates = template::render(&b.creates, vars, None).map_err(tmpl_err(kit))?;
        let _guard = lock(&tools.join(format!(".{}.lock", b.name)))?;
        if Path::new(&creates).exists() {
            continue;
        }
        let log = tools.join(format!("{}.log", b.name));
        for step in &b.steps {
            let argv = render_step(kit, step, vars, &tools)?;
            run_step(kit, &b.name, &argv, &tools, &env, &log)?;
        }
        if !Path::new(&creates).exists() {
            return Err(NotTestable::Incomplete {
                line: kit.id.clone(),
                version: b.name.clone(),
                what: Incomplete::Bootstrap {
                    name: b.name.clone(),
                    creates,
                },
            });
        }
    }
    Ok(())
}

/// Writes the templates, locks and installs unless the stamp says it is all done already.
/// Returns whether anything ran.
fn install(
    kit: &Kit,
    variant: &Variant,
    recipe: &Recipe,
    place: &Place,
    vars: &BTreeMap<String, String>,
) -> Result<bool, NotTestable> {
    let dir = &place.dir;
    fs::create_dir_all(dir).map_err(io(dir))?;
    let files = render_files(kit, variant, vars)?;
    write_templates(dir, &files)?;
    let plan = Plan::new(kit, variant, recipe, dir, vars, &files)?;
    let outputs_ok = || recipe.outputs.iter().all(|o| dir.join(o).exists());
    let stamp = dir.join(STAMP);
    if fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == plan.stamp_key()) && outputs_ok() {
        return Ok(false);
    }

    // A failed or interrupted installation must not look done.
    let _ = fs::remove_file(&stamp);
    let _shared = exclusive(kit, Path::new(&vars["cache"]))?;
    let log = dir.join(LOG);
    let label = &place.label;
    refresh_lock(kit, recipe, vars, label, &plan, dir, &log)?;
    for argv in &plan.install_steps {
        run_step(kit, label, argv, dir, &plan.env, &log)?;
    }
    if let Some(missing) = recipe.outputs.iter().find(|o| !dir.join(o).exists()) {
        return Err(NotTestable::Incomplete {
            line: kit.id.clone(),
            version: label.clone(),
            what: Incomplete::Output(dir.join(missing)),
        });
    }
    fs::write(&stamp, plan.stamp_key()).map_err(io(&stamp))?;
    Ok(true)
}

/// The templates are written every time (only where they changed): an edited shape
/// reaches an installed directory even when nothing needs reinstalling.
fn write_templates(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), NotTestable> {
    for (rel, bytes) in files {
        let p = dir.join(rel);
        if fs::read(&p).is_ok_and(|old| &old == bytes) {
            continue;
        }
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).map_err(io(parent))?;
        }
        fs::write(&p, bytes).map_err(io(&p))?;
    }
    Ok(())
}

/// The rendered steps and environment of one installation, and the keys that say whether
/// its lockfile and its installation are up to date.
struct Plan {
    lock_steps: Vec<Vec<String>>,
    install_steps: Vec<Vec<String>>,
    env: Vec<(String, String)>,
    /// The lock inputs and lock steps: what the lockfile was resolved from.
    lock_key: Fnv,
    /// The install inputs; the stamp adds the rest.
    install_files: Fnv,
    lockfile: Option<PathBuf>,
}

impl Plan {
    fn new(
        kit: &Kit,
        variant: &Variant,
        recipe: &Recipe,
        dir: &Path,
        vars: &BTreeMap<String, String>,
        files: &[(PathBuf, Vec<u8>)],
    ) -> Result<Self, NotTestable> {
        let lock_steps = render_steps(kit, &recipe.lock, vars, dir)?;
        let install_steps = render_steps(kit, &recipe.install, vars, dir)?;
        let env = env_of(kit, vars)?;
        let mut lock_key = files_key(kit, variant, files, &recipe.lock_inputs);
        for s in &lock_steps {
            lock_key = lock_key.add(s.join("\u{1f}").as_bytes());
        }
        Ok(Plan {
            lockfile: recipe.lockfile.as_ref().map(|l| dir.join(l)),
            install_files: files_key(kit, variant, files, &recipe.install_inputs),
            lock_steps,
            install_steps,
            env,
            lock_key,
        })
    }

    /// Reads the lockfile afresh on each call: the lock steps may just have rewritten it.
    fn stamp_key(&self) -> String {
        let mut k = self.install_files.add(self.lock_key.hex().as_bytes());
        if let Some(l) = &self.lockfile {
            k = k.add(&fs::read(l).unwrap_or_default());
        }
        for s in &self.install_steps {
            k = k.add(s.join("\u{1f}").as_bytes());
        }
        for (name, val) in &self.env {
            k = k.add(name.as_bytes()).add(val.as_bytes());
        }
        k.hex()
    }
}

/// The hash of the rendered files named in `only` (every file when it is empty).
fn files_key(kit: &Kit, variant: &Variant, files: &[(PathBuf, Vec<u8>)], only: &[String]) -> Fnv {
    let mut k = Fnv::new()
        .add(kit.id.as_bytes())
        .add(variant.name.as_bytes());
    for (rel, bytes) in files {
        let name = rel.to_string_lossy();
        if only.is_empty() || only.iter().any(|o| *o == name) {
            k = k.add(rel.as_os_str().as_encoded_bytes()).add(bytes);
        }
    }
    k
}

fn render_steps(
    kit: &Kit,
    steps: &[Step],
    vars: &BTreeMap<String, String>,
    dir: &Path,
) -> Result<Vec<Vec<String>>, NotTestable> {
    steps
        .iter()
        .map(|s| render_step(kit, s, vars, dir))
        .collect()
}

/// Resolves the lockfile again only when it is missing or its key (the lock inputs and
/// steps) changed: resolving is the slow, network-bound part.
fn refresh_lock(
    kit: &Kit,
    recipe: &Recipe,
    vars: &BTreeMap<String, String>,
    label: &str,
    plan: &Plan,
    dir: &Path,
    log: &Path,
) -> Result<(), NotTestable> {
    let Some(lf) = &plan.lockfile else {
        return Ok(());
    };
    let key_file = dir.join(LOCK_KEY);
    let fresh =
        lf.exists() && fs::read_to_string(&key_file).is_ok_and(|k| k.trim() == plan.lock_key.hex());
    if !fresh && !plan.lock_steps.is_empty() {
        lock_with_retries(kit, recipe, vars, label, dir, &plan.env, log, lf)?;
        if !lf.exists() {
            return Err(NotTestable::Incomplete {
                line: kit.id.clone(),
                version: label.to_string(),
                what: Incomplete::Lockfile(lf.clone()),
            });
        }
        fs::write(&key_file, plan.lock_key.hex()).map_err(io(&key_file))?;
    }
    Ok(())
}

/// Runs the lock steps; when they fail and the kit allows it, again with later cutoffs
/// (`lock_retry_minutes` added to `{{before}}`): a release whose own dependencies were
/// uploaded after it (a publish race) resolves at the earliest cutoff that admits them. The
/// cutoff that worked is in the install log.
#[allow(clippy::too_many_arguments)]
fn lock_with_retries(
    kit: &Kit,
    recipe: &Recipe,
    vars: &BTreeMap<String, String>,
    label: &str,
    dir: &Path,
    env: &[(String, String)],
    log: &Path,
    lockfile: &Path,
) -> Result<(), NotTestable> {
    let base = vars.get("before").and_then(|b| date::parse(b).ok());
    let mut delays = vec![0u32];
    if base.is_some() {
        delays.extend(&kit.lock_retry_minutes);
    }
    let mut last = None;
    for (i, extra) in delays.iter().enumerate() {
        let mut v = vars.clone();
        if let Some(b) = base {
            v.insert("before".into(), date::format(date::later(b, *extra)));
        }
        if i > 0 {
            if let Ok(mut f) = OpenOptions::new().append(true).open(log) {
                let _ = writeln!(f, "# lock failed; retrying with the cutoff {}", v["before"]);
            }
        }
        let _ = fs::remove_file(lockfile);
        let attempt = recipe.lock.iter().try_for_each(|s| {
            run_step(kit, label, &render_step(kit, s, &v, dir)?, dir, env, log).map(|_| ())
        });
        match attempt {
            Ok(()) => return Ok(()),
            Err(e @ NotTestable::Step(_)) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("at least one attempt"))
}

fn instances(
    kit: &Kit,
    variant: &Variant,
    place: &Place,
    vars: &BTreeMap<String, String>,
) -> Result<Vec<Instance>, NotTestable> {
    let dir = &place.dir;
    let mut out = Vec::new();
    for shape in &kit.shapes {
        if !variant.shapes.is_empty() && !variant.shapes.contains(&shape.name) {
            continue;
        }
        let name = format!("{}-{}-{}", kit.id, place.label, shape.name);
        let mut v = vars.clone();
        v.insert("shape".into(), shape.name.clone());
        v.insert("name".into(), name.clone());
        let render = |s: &str| {
            template::render(s, &v, Some(dir)).map_err(|source| NotTestable::Template {
                line: kit.id.clone(),
                path: kit.path.clone(),
                context: format!("shape {}: ", shape.name),
                source,
            })
        };
        let command = render(&shape.command)?;
        // Absolute, so the instance runs the toolchain it was installed with.
        let command = if command.contains('/') {
            normalize(&dir.join(&command)).display().to_string()
        } else {
            which(&command).map_or(command, |p| p.display().to_string())
        };
        let args = shape
            .args
            .iter()
            .map(|a| render(a))
            .collect::<Result<_, _>>()?;
        let mut env = BTreeMap::new();
        for (k, val) in kit.launch_env.iter().chain(&shape.env) {
            env.insert(k.clone(), render(val)?);
        }
        let what = if kit.name.is_empty() {
            &kit.id
        } else {
            &kit.name
        };
        out.push(Instance {
            description: format!(
                "{what} {} ({} templates): {}",
                place.sdk_version, variant.name, shape.description
            ),
            name,
            command,
            args,
            cwd: dir.clone(),
            env,
            sdk: kit.id.clone(),
            sdk_version: place.sdk_version.clone(),
            shape: shape.name.clone(),
            inflight: shape.inflight.clone(),
            expect: shape.expect.clone(),
            variant: variant.name.clone(),
            handshake_ms: kit.handshake_ms,
        });
    }
    Ok(out)
}

// ---- local sources ------------------------------------------------------------------------

/// Content hash of a checkout (file names and contents, excluded names skipped) or of an
/// artifact file.
fn content_hash(path: &Path, exclude: &[String]) -> std::io::Result<String> {
    let mut files = Vec::new();
    walk(path, Path::new(""), exclude, &mut files)?;
    let mut h = Fnv::new();
    for rel in files {
        let p = join_rel(path, &rel);
        let meta = fs::symlink_metadata(&p)?;
        h = h.add(rel.as_os_str().as_encoded_bytes());
        if meta.file_type().is_symlink() {
            h = h.add(fs::read_link(&p)?.as_os_str().as_encoded_bytes());
        } else {
            h = h.add(&fs::read(&p)?);
        }
    }
    Ok(h.hex())
}

/// Copies a checkout, skipping excluded names; symlinks are copied as links.
fn copy_tree(from: &Path, to: &Path, exclude: &[String]) -> std::io::Result<()> {
    let mut files = Vec::new();
    walk(from, Path::new(""), exclude, &mut files)?;
    for rel in files {
        let (src, dst) = (join_rel(from, &rel), join_rel(to, &rel));
        if let Some(p) = dst.parent() {
            fs::create_dir_all(p)?;
        }
        let meta = fs::symlink_metadata(&src)?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// The one file in `dir` matching `pattern` (a name with at most one `*`); the newest when
/// several do.
fn find_artifact(dir: &Path, pattern: &str) -> Option<PathBuf> {
    let (pre, post) = pattern.split_once('*').unwrap_or((pattern, ""));
    let exact = !pattern.contains('*');
    fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if exact {
                n == pattern
            } else {
                n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post)
            }
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
}

/// Prepares a local checkout or artifact: copies it (never touching the original), builds
/// it the way the SDK's CONTRIBUTING says, and finds its version. Returns the place and
/// the lock held on it.
fn local_source(
    kit: &Kit,
    path: &Path,
    base: &Path,
    vars: &mut BTreeMap<String, String>,
) -> Result<(Place, DirLock), NotTestable> {
    let local_err = local_err(kit, path);
    let Some(local) = &kit.local else {
        return Err(local_err(LocalError::NoRecipe(kit.id.clone())));
    };
    let copy = LocalCopy::new(local, path, base, &local_err)?;
    let guard = lock(&base.join(format!(".{}.lock", copy.label)))?;
    // The user's own checkout or file: read (e.g. `git describe`), never written.
    vars.insert("origin".into(), copy.origin.display().to_string());
    vars.insert("label".into(), copy.label.clone());
    vars.insert("source".into(), copy.src.display().to_string());
    vars.insert("out".into(), copy.out.display().to_string());
    let env = env_of(kit, vars)?;
    fs::create_dir_all(&copy.dir).map_err(io(&copy.dir))?;
    let log = copy.dir.join(LOG);
    let run = Runner {
        kit,
        label: &copy.label,
        env: &env,
        log: &log,
    };
    build_local(local, &copy, vars, &run)?;
    if let Some(artifact) = local_artifact(kit, local, &copy, &local_err)? {
        vars.insert("artifact".into(), artifact.display().to_string());
    }
    let work = if copy.is_dir { &copy.src } else { &copy.out };
    let version = match &local.version {
        None => None,
        Some(step) => last_line(&run.run(step, vars, work)?, |l| !l.is_empty()),
    };
    let date = match &local.date {
        None => None,
        Some(step) => last_line(&run.run(step, vars, work)?, |l| date::parse(l).is_ok()),
    };
    let hash = &copy.hash[..8];
    let sdk_version = match &version {
        // Build metadata the version already carries (`+kit.local`) gives way to ours.
        Some(v) => format!("{}+local.{hash}", v.split('+').next().unwrap_or(v)),
        None => format!("local.{hash}"),
    };
    Ok((
        Place {
            label: copy.label,
            version,
            sdk_version,
            date,
            dir: copy.dir,
        },
        guard,
    ))
}

/// An error about a local source, naming it as the user gave it (not canonicalised).
fn local_err<'a>(kit: &'a Kit, path: &'a Path) -> impl Fn(LocalError) -> NotTestable + 'a {
    move |reason| NotTestable::Local {
        line: kit.id.clone(),
        path: path.to_path_buf(),
        reason,
    }
}

/// Where a local source is copied, built and installed: named by its content, so an
/// edited checkout gets a directory of its own.
struct LocalCopy {
    /// The user's checkout or file, canonical.
    origin: PathBuf,
    is_dir: bool,
    hash: String,
    label: String,
    dir: PathBuf,
    /// The copy of a checkout, where the build runs.
    src: PathBuf,
    /// Build output, or the copy of a file given directly.
    out: PathBuf,
}

impl LocalCopy {
    fn new(
        local: &LocalRecipe,
        path: &Path,
        base: &Path,
        local_err: &impl Fn(LocalError) -> NotTestable,
    ) -> Result<Self, NotTestable> {
        let origin = fs::canonicalize(path).map_err(|e| local_err(LocalError::Unreadable(e)))?;
        let is_dir = origin.is_dir();
        let hash = content_hash(&origin, if is_dir { &local.exclude } else { &[] })
            .map_err(|e| local_err(LocalError::Unreadable(e)))?;
        let label = format!("local-{}", &hash[..8]);
        Ok(LocalCopy {
            dir: base.join(&label),
            src: base.join(format!("{label}.src")),
            out: base.join(format!("{label}.out")),
            origin,
            is_dir,
            hash,
            label,
        })
    }
}

/// Runs steps for one source with its environment, appending to its log.
struct Runner<'a> {
    kit: &'a Kit,
    label: &'a str,
    env: &'a [(String, String)],
    log: &'a Path,
}

impl Runner<'_> {
    fn run(
        &self,
        step: &Step,
        vars: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<String, NotTestable> {
        let argv = render_step(self.kit, step, vars, dir)?;
        run_step(self.kit, self.label, &argv, dir, self.env, self.log)
    }
}

/// Copies and builds the source, unless a build of the same content is there already.
fn build_local(
    local: &LocalRecipe,
    copy: &LocalCopy,
    vars: &BTreeMap<String, String>,
    run: &Runner,
) -> Result<(), NotTestable> {
    let built = copy.out.join(".kit-built");
    if fs::read_to_string(&built).is_ok_and(|h| h.trim() == copy.hash) {
        return Ok(());
    }
    let _shared = exclusive(run.kit, Path::new(&vars["cache"]))?;
    // Start from a clean copy: a half-built one from an interrupted run is not reused.
    for d in [&copy.src, &copy.out] {
        if d.exists() {
            fs::remove_dir_all(d).map_err(io(d))?;
        }
    }
    fs::create_dir_all(&copy.out).map_err(io(&copy.out))?;
    if copy.is_dir {
        copy_tree(&copy.origin, &copy.src, &local.exclude).map_err(io(&copy.src))?;
        for step in &local.build {
            run.run(step, vars, &copy.src)?;
        }
    } else {
        let name = copy.origin.file_name().unwrap_or_default();
        fs::copy(&copy.origin, copy.out.join(name)).map_err(io(&copy.out))?;
    }
    fs::write(&built, &copy.hash).map_err(io(&built))?;
    Ok(())
}

/// The artifact `{{artifact}}` names, when the recipe takes one; without one, only a
/// checkout can be used (as the copy itself).
fn local_artifact(
    kit: &Kit,
    local: &LocalRecipe,
    copy: &LocalCopy,
    local_err: &impl Fn(LocalError) -> NotTestable,
) -> Result<Option<PathBuf>, NotTestable> {
    let Some(pattern) = &local.artifact else {
        if !copy.is_dir {
            return Err(local_err(LocalError::DirectoriesOnly(kit.id.clone())));
        }
        return Ok(None);
    };
    let pattern = if copy.is_dir {
        pattern.clone()
    } else {
        // A file given directly is the artifact, whatever its name.
        copy.origin
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    let artifact = find_artifact(&copy.out, &pattern).ok_or_else(|| {
        local_err(LocalError::NoArtifact {
            pattern: pattern.clone(),
            out: copy.out.clone(),
        })
    })?;
    Ok(Some(artifact))
}

/// The last line of a command's output that `accept`s: tools print notices before it.
fn last_line(text: &str, accept: impl Fn(&str) -> bool) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| accept(l))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kits::spec;

    /// A kit whose "install" is a shell script: exercises stamps, locks and local copies
    /// without any registry.
    fn demo_kit(root: &Path) -> Kit {
        let dir = root.join("demo");
        fs::create_dir_all(dir.join("t")).unwrap();
        fs::write(
            dir.join("t/server.sh"),
            "#!/bin/sh\n# {{line}} {{label}} {{variant}}\nexec sleep 600\n",
        )
        .unwrap();
        fs::write(
            dir.join("t/deps.in"),
            "sdk=={{spec}}\n# before {{before}}\n",
        )
        .unwrap();
        let text = r#"
id = "demo"
name = "Demo SDK"
ecosystem = "npm"
package = "demo"
requires = ["sh"]

[files]
"server.sh" = "t/server.sh"
"deps.in" = "t/deps.in"

[release]
vars = { spec = "{{version}}" }
lock = [["sh", "-c", "cp deps.in deps.lock; echo locked >> ../count-lock"]]
lockfile = "deps.lock"
install = [["sh", "-c", "echo installed >> ../count-install; touch installed"]]
outputs = ["installed"]

[local]
exclude = ["junk"]
build = [["sh", "-c", "cat VERSION > {{out}}/demo-$(cat VERSION).pkg"]]
artifact = "demo-*.pkg"
version = ["cat", "VERSION"]
date = ["sh", "-c", "cat DATE 2>/dev/null || true"]
vars = { spec = "file:{{artifact}}" }

[[variant]]
name = "one"
versions = ">=1.0.0, <2.0.0"

[[untestable]]
versions = "<1.0.0"
reason = "0.x is too old"

[shapes.plain]
description = "sleeps"
command = "sh"
args = ["{{dir}}/server.sh"]
env = { WHO = "{{name}}" }

[shapes.slow-tool]
command = "./server.sh"
inflight = { method = "tools/call", params = { name = "slow" } }
"#;
        fs::write(dir.join("kit.toml"), text).unwrap();
        spec::load_file(&dir.join("kit.toml")).unwrap()
    }

    fn rel(v: &str) -> Source {
        Source::Release(Release {
            version: v.into(),
            date: Some("2025-01-01T00:00:00Z".into()),
            yanked: false,
        })
    }

    fn count(p: &Path) -> usize {
        fs::read_to_string(p)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    #[test]
    fn second_instantiation_installs_nothing() {
        let root = tempfile::tempdir().unwrap();
        let kit = demo_kit(root.path());
        let cache = root.path().join("cache");
        let first = prepare(&kit, &rel("1.2.0"), &cache).unwrap();
        assert!(first.installed);
        let second = prepare(&kit, &rel("1.2.0"), &cache).unwrap();
        assert!(!second.installed);
        let base = cache.join("kits/demo");
        assert_eq!(count(&base.join("count-install")), 1);
        assert_eq!(count(&base.join("count-lock")), 1);
        let i = &second.instances[0];
        assert_eq!(i.name, "demo-1.2.0-plain");
        assert_eq!(i.sdk_version, "1.2.0");
        assert_eq!(
            i.args,
            vec![base.join("1.2.0/server.sh").display().to_string()]
        );
        assert_eq!(i.env["WHO"], "demo-1.2.0-plain");
        assert!(Path::new(&i.command).is_absolute());
        let slow = &second.instances[1];
        assert_eq!(
            slow.command,
            base.join("1.2.0/server.sh").display().to_string()
        );
        assert_eq!(slow.inflight.as_ref().unwrap().0, "tools/call");
        let text = fs::read_to_string(base.join("1.2.0/server.sh")).unwrap();
        assert!(text.contains("# demo 1.2.0 one"), "{text}");
        // The lock was resolved with the cutoff: the release date plus the margin.
        assert_eq!(
            fs::read_to_string(base.join("1.2.0/deps.lock")).unwrap(),
            "sdk==1.2.0\n# before 2025-01-01T01:00:00Z\n"
        );
    }

    #[test]
    fn instances_render_as_manifests() {
        let root = tempfile::tempdir().unwrap();
        let mut kit = demo_kit(root.path());
        kit.handshake_ms = Some(30_000);
        let p = prepare(&kit, &rel("1.2.0"), &root.path().join("cache")).unwrap();
        let slow = p.instances.iter().find(|i| i.shape == "slow-tool").unwrap();
        let text = slow.manifest_toml();
        let v: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(v["name"].as_str(), Some("demo-1.2.0-slow-tool"));
        assert_eq!(v["about"]["sdk_version"].as_str(), Some("1.2.0"));
        assert_eq!(v["inflight"]["method"].as_str(), Some("tools/call"));
        assert_eq!(v["inflight"]["params"]["name"].as_str(), Some("slow"));
        assert_eq!(v["budgets"]["handshake_ms"].as_integer(), Some(30_000));
        assert!(Path::new(v["cwd"].as_str().unwrap()).is_absolute());
        let plain = p.instances.iter().find(|i| i.shape == "plain").unwrap();
        let v: toml::Value = toml::from_str(&plain.manifest_toml()).unwrap();
        assert!(v.get("inflight").is_none());
        assert_eq!(v["env"]["WHO"].as_str(), Some("demo-1.2.0-plain"));
    }

    #[test]
    fn a_lost_output_or_an_edited_lockfile_reinstalls_without_relocking() {
        let root = tempfile::tempdir().unwrap();
        let kit = demo_kit(root.path());
        let cache = root.path().join("cache");
        prepare(&kit, &rel("1.2.0"), &cache).unwrap();
        let dir = cache.join("kits/demo/1.2.0");
        fs::remove_file(dir.join("installed")).unwrap();
        assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
        fs::write(dir.join("deps.lock"), "sdk==1.2.0 # pinned by hand\n").unwrap();
        assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
        let base = cache.join("kits/demo");
        assert_eq!(count(&base.join("count-install")), 3);
        assert_eq!(count(&base.join("count-lock")), 1);
    }

    #[test]
    fn an_edited_template_outside_the_inputs_is_written_but_nothing_reinstalls() {
        let root = tempfile::tempdir().unwrap();
        let mut kit = demo_kit(root.path());
        kit.release.lock_inputs = vec!["deps.in".into()];
        kit.release.install_inputs = vec!["deps.in".into()];
        let cache = root.path().join("cache");
        assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
        fs::write(kit.dir.join("t/server.sh"), "#!/bin/sh\n# edited\n").unwrap();
        assert!(!prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
        let dir = cache.join("kits/demo/1.2.0");
        assert_eq!(
            fs::read_to_string(dir.join("server.sh")).unwrap(),
            "#!/bin/sh\n# edited\n"
        );
        fs::write(kit.dir.join("t/deps.in"), "sdk=={{spec}} extra\n").unwrap();
        assert!(prepare(&kit, &rel("1.2.0"), &cache).unwrap().installed);
        let base = cache.join("kits/demo");
        assert_eq!(count(&base.join("count-install")), 2);
        assert_eq!(count(&base.join("count-lock")), 2);
    }

    #[test]
    fn concurrent_instantiations_install_once() {
        let root = tempfile::tempdir().unwrap();
        let kit = demo_kit(root.path());
        let cache = root.path().join("cache");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (kit, cache) = (kit.clone(), cache.clone());
                std::thread::spawn(move || prepare(&kit, &rel("1.3.0"), &cache).unwrap().installed)
            })
            .collect();
        let installed: usize = threads
            .into_iter()
            .map(|t| usize::from(t.join().unwrap()))
            .sum();
        assert_eq!(installed, 1);
        assert_eq!(count(&cache.join("kits/demo/count-install")), 1);
    }

    #[test]
    fn an_exclusive_kit_installs_one_version_at_a_time() {
        let root = tempfile::tempdir().unwrap();
        let mut kit = demo_kit(root.path());
        kit.exclusive = Some("shared-repo".into());
        kit.release.install = vec![vec![
            "sh".into(),
            "-c".into(),
            "echo start >> ../trace; sleep 0.3; echo end >> ../trace; touch installed".into(),
        ]];
        let cache = root.path().join("cache");
        let threads: Vec<_> = ["1.2.0", "1.3.0", "1.4.0"]
            .into_iter()
            .map(|v| {
                let (kit, cache) = (kit.clone(), cache.clone());
                std::thread::spawn(move || prepare(&kit, &rel(v), &cache).unwrap())
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let trace = fs::read_to_string(cache.join("kits/demo/trace")).unwrap();
        assert_eq!(trace, "start\nend\n".repeat(3), "installs overlapped");
    }

    #[test]
    fn a_failing_lock_is_retried_with_later_cutoffs() {
        let root = tempfile::tempdir().unwrap();
        let mut kit = demo_kit(root.path());
        // Resolves only once the cutoff admits something published on 2 January.
        kit.release.lock = vec![vec![
            "sh".into(),
            "-c".into(),
            "test '{{before}}' \\> 2025-01-02 && cp deps.in deps.lock".into(),
        ]];
        let e = prepare(&kit, &rel("1.2.0"), &root.path().join("a")).unwrap_err();
        assert!(e.to_string().contains("test '2025-01-01T01:00:00Z'"), "{e}");
        kit.lock_retry_minutes = vec![60, 1440];
        let p = prepare(&kit, &rel("1.2.0"), &root.path().join("b")).unwrap();
        let log = fs::read_to_string(&p.log).unwrap();
        assert!(
            log.contains("retrying with the cutoff 2025-01-01T02:00:00Z"),
            "{log}"
        );
        assert!(
            log.contains("retrying with the cutoff 2025-01-02T01:00:00Z"),
            "{log}"
        );
        assert!(p.dir.join("deps.lock").exists());
    }

    #[test]
    fn unsupported_versions_say_why() {
        let root = tempfile::tempdir().unwrap();
        let kit = demo_kit(root.path());
        let e = prepare(&kit, &rel("0.9.0"), root.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("0.x is too old"), "{e}");
        let e = prepare(&kit, &rel("2.0.0"), root.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no template supports") && e.contains(">=1.0.0, <2.0.0 (one)"),
            "{e}"
        );
    }

    #[test]
    fn failing_steps_report_their_output() {
        let root = tempfile::tempdir().unwrap();
        let mut kit = demo_kit(root.path());
        kit.release.install = vec![vec!["sh".into(), "-c".into(), "echo boom; exit 3".into()]];
        let e = prepare(&kit, &rel("1.2.0"), &root.path().join("c"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("boom") && e.contains("exit status: 3"), "{e}");
        kit.requires = vec!["no-such-program-xyz".into()];
        let e = prepare(&kit, &rel("1.2.0"), &root.path().join("c"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`no-such-program-xyz`"), "{e}");
    }

    #[test]
    fn local_checkouts_are_copied_built_and_named_by_hash() {
        let root = tempfile::tempdir().unwrap();
        let kit = demo_kit(root.path());
        let cache = root.path().join("cache");
        let checkout = root.path().join("checkout");
        fs::create_dir_all(checkout.join("junk")).unwrap();
        fs::write(checkout.join("VERSION"), "1.5.0\n").unwrap();
        fs::write(checkout.join("DATE"), "2025-06-01T12:00:00+02:00\n").unwrap();
        fs::write(checkout.join("junk/big"), "x").unwrap();
        let before = content_hash(&checkout, &[]).unwrap();
        let p = prepare(&kit, &Source::Local(checkout.clone()), &cache).unwrap();
        assert!(p.installed);
        let i = &p.instances[0];
        assert!(
            i.name.starts_with("demo-local-") && i.name.ends_with("-plain"),
            "{}",
            i.name
        );
        assert!(
            i.sdk_version.starts_with("1.5.0+local."),
            "{}",
            i.sdk_version
        );
        let label = i
            .name
            .trim_start_matches("demo-")
            .trim_end_matches("-plain");
        let lock =
            fs::read_to_string(cache.join("kits/demo").join(label).join("deps.lock")).unwrap();
        assert!(
            lock.starts_with("sdk==file:") && lock.contains("demo-1.5.0.pkg"),
            "{lock}"
        );
        // The checkout itself is untouched; excluded entries are not copied.
        assert_eq!(content_hash(&checkout, &[]).unwrap(), before);
        assert!(!cache
            .join("kits/demo")
            .join(format!("{label}.src/junk"))
            .exists());
        // Same content: nothing rebuilt. Changed content: a new label.
        assert!(
            !prepare(&kit, &Source::Local(checkout.clone()), &cache)
                .unwrap()
                .installed
        );
        fs::write(checkout.join("VERSION"), "1.6.0\n").unwrap();
        let q = prepare(&kit, &Source::Local(checkout.clone()), &cache).unwrap();
        assert_ne!(q.instances[0].name, i.name);
        assert!(q.instances[0].sdk_version.starts_with("1.6.0+local."));
    }

    #[test]
    fn local_artifacts_are_used_as_they_are() {
        let root = tempfile::tempdir().unwrap();
        let mut kit = demo_kit(root.path());
        kit.local.as_mut().unwrap().version = None;
        let art = root.path().join("demo-9.pkg");
        fs::write(&art, "artifact").unwrap();
        let p = prepare(&kit, &Source::Local(art), &root.path().join("c")).unwrap();
        assert!(p.instances[0].sdk_version.starts_with("local."));
        let e = prepare(
            &kit,
            &Source::Local(root.path().join("nope")),
            &root.path().join("c"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cannot be read"), "{e}");
    }
}
