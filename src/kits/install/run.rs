//! Running the plan: shared bootstrap tools, the lock steps (retried with later cutoffs),
//! the install steps, each logged, under the directory's lock.

use super::*;
use crate::os::command as os;

/// An exclusive advisory lock on a directory's lock file, held until dropped.
pub(super) type DirLock = crate::os::lock::FileLock;

/// The kit's cache-wide lock (`exclusive`), if it names one.
pub(super) fn exclusive(kit: &Kit, cache: &Path) -> Result<Option<DirLock>, SourceNotTestable> {
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

pub(super) fn lock(path: &Path) -> Result<DirLock, SourceNotTestable> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p).map_err(io(p))?;
    }
    crate::os::lock::lock_path(path).map_err(io(path))
}

/// Runs one rendered step in `dir`, appending the command and its output to `log`.
pub(super) fn run_step(
    kit: &Kit,
    label: &str,
    argv: &[String],
    dir: &Path,
    env: &[(String, String)],
    log: &Path,
) -> Result<String, SourceNotTestable> {
    let shown = argv.join(" ");
    // A relative program with a slash is relative to the step's directory.
    let program = if argv[0].contains('/') {
        normalize(&dir.join(&argv[0]))
    } else {
        PathBuf::from(&argv[0])
    };
    if which(&program.to_string_lossy()).is_none() {
        return Err(SourceNotTestable::MissingProgram {
            line: kit.id.clone(),
            program: argv[0].clone(),
        });
    }
    let failed = |status: String, tail: String| {
        SourceNotTestable::Step(Box::new(StepFailure {
            line: kit.id.clone(),
            version: label.to_string(),
            command: shown.clone(),
            dir: dir.to_path_buf(),
            status,
            tail,
        }))
    };
    let started = Instant::now();
    let out = os::run_captured(
        program.as_os_str(),
        &argv[1..],
        dir,
        env.iter().map(|(k, v)| (k, v)),
        os::Stderr::Merged,
    )
    .map_err(|e| failed(format!("could not start: {e}"), String::new()))?;
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
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        return Err(failed(out.status.to_string(), tail));
    }
    Ok(text)
}

/// Shared tools (e.g. `uv`), created once under the cache for every version and line.
pub(super) fn bootstrap(
    kit: &Kit,
    cache: &Path,
    vars: &BTreeMap<String, String>,
) -> Result<(), SourceNotTestable> {
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
            return Err(SourceNotTestable::Incomplete {
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
pub(super) fn install(
    kit: &Kit,
    variant: &Variant,
    recipe: &Recipe,
    place: &Place,
    vars: &BTreeMap<String, String>,
) -> Result<bool, SourceNotTestable> {
    let dir = &place.dir;
    fs::create_dir_all(dir).map_err(io(dir))?;
    let files = render_files(kit, variant, vars)?;
    write_templates(dir, &files)?;
    let plan = InstallPlan::new(kit, variant, recipe, dir, vars, &files)?;
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
        return Err(SourceNotTestable::Incomplete {
            line: kit.id.clone(),
            version: label.clone(),
            what: Incomplete::Output(dir.join(missing)),
        });
    }
    fs::write(&stamp, plan.stamp_key()).map_err(io(&stamp))?;
    Ok(true)
}

/// Resolves the lockfile again only when it is missing or its key (the lock inputs and
/// steps) changed: resolving is the slow, network-bound part.
pub(super) fn refresh_lock(
    kit: &Kit,
    recipe: &Recipe,
    vars: &BTreeMap<String, String>,
    label: &str,
    plan: &InstallPlan,
    dir: &Path,
    log: &Path,
) -> Result<(), SourceNotTestable> {
    let Some(lf) = &plan.lockfile else {
        return Ok(());
    };
    let key_file = dir.join(LOCK_KEY);
    let fresh =
        lf.exists() && fs::read_to_string(&key_file).is_ok_and(|k| k.trim() == plan.lock_key.hex());
    if !fresh && !plan.lock_steps.is_empty() {
        lock_with_retries(kit, recipe, vars, label, dir, &plan.env, log, lf)?;
        if !lf.exists() {
            return Err(SourceNotTestable::Incomplete {
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
#[expect(
    clippy::too_many_arguments,
    reason = "one retry loop over a lock attempt and its inputs"
)]
pub(super) fn lock_with_retries(
    kit: &Kit,
    recipe: &Recipe,
    vars: &BTreeMap<String, String>,
    label: &str,
    dir: &Path,
    env: &[(String, String)],
    log: &Path,
    lockfile: &Path,
) -> Result<(), SourceNotTestable> {
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
            Err(e @ SourceNotTestable::Step(_)) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("at least one attempt"))
}

/// Runs steps for one source with its environment, appending to its log.
pub(super) struct Runner<'a> {
    pub(super) kit: &'a Kit,
    pub(super) label: &'a str,
    pub(super) env: &'a [(String, String)],
    pub(super) log: &'a Path,
}

impl Runner<'_> {
    pub(super) fn run(
        &self,
        step: &CommandTemplate,
        vars: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<String, SourceNotTestable> {
        let argv = render_step(self.kit, step, vars, dir)?;
        run_step(self.kit, self.label, &argv, dir, self.env, self.log)
    }
}
