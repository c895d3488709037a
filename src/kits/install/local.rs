//! Local checkouts and artifacts: copied (the original is never written), built, named by
//! their content, their version and date read from them.

use super::*;

/// Prepares a local checkout or artifact: copies it (never touching the original), builds
/// it the way the SDK's CONTRIBUTING says, and finds its version. Returns the place and
/// the lock held on it.
pub(super) fn local_source(
    kit: &Kit,
    path: &Path,
    name: Option<&str>,
    base: &Path,
    vars: &mut BTreeMap<String, String>,
) -> Result<(Place, DirLock), SourceNotTestable> {
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
    let (name, sdk_version) = local_names(&copy, name, version.as_deref());
    Ok((
        Place {
            name: format!("local-{name}"),
            label: copy.label,
            version,
            sdk_version,
            date,
            dir: copy.dir,
        },
        guard,
    ))
}

/// A local source's name (the user's, else [`default_name`], else its hash) and its SDK
/// version (its own version, if it says one, marked as this local build).
fn local_names(copy: &LocalCopy, name: Option<&str>, version: Option<&str>) -> (String, String) {
    let hash = &copy.hash[..8];
    let sdk_version = match version {
        // Build metadata the version already carries (`+kit.local`) gives way to ours.
        Some(v) => format!("{}+local.{hash}", v.split('+').next().unwrap_or(v)),
        None => format!("local.{hash}"),
    };
    let name = name
        .map(str::to_string)
        .or_else(|| default_name(&copy.origin, copy.is_dir))
        .unwrap_or_else(|| hash.to_string());
    (name, sdk_version)
}

/// What a local source is called when the user gave no name: its checkout's `git describe`
/// (the nearest tag, how many commits past it and the commit, `-dirty` when edited), else
/// its file's or directory's name; made fit for a server name.
pub(super) fn default_name(origin: &Path, is_dir: bool) -> Option<String> {
    let described = is_dir.then(|| describe(origin)).flatten();
    let raw = described.or_else(|| {
        let file = origin.file_name()?.to_string_lossy().into_owned();
        if is_dir {
            return Some(file);
        }
        // `x-1.0.0.tgz`, `x-1.0.0.tar.gz`, `x-1.0.0-py3-none-any.whl`: without the extension.
        let stem = [".tar.gz", ".tgz", ".whl", ".jar", ".crate", ".zip"]
            .iter()
            .find_map(|ext| file.strip_suffix(ext))
            .unwrap_or(&file);
        Some(stem.to_string())
    })?;
    let name: String = raw
        .trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `git describe --tags --always --dirty` of a checkout, without writing to it (no
/// opportunistic index refresh); `None` when it is no git checkout.
fn describe(dir: &Path) -> Option<String> {
    let args = ["describe", "--tags", "--always", "--dirty"].map(String::from);
    let out = crate::os::command::run_captured(
        "git".as_ref(),
        &args,
        dir,
        [("GIT_OPTIONAL_LOCKS", "0")],
        crate::os::command::Stderr::Separate,
    )
    .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// An error about a local source, naming it as the user gave it (not canonicalised).
pub(super) fn local_err<'a>(
    kit: &'a Kit,
    path: &'a Path,
) -> impl Fn(LocalError) -> SourceNotTestable + 'a {
    move |reason| SourceNotTestable::Local {
        line: kit.id.clone(),
        path: path.to_path_buf(),
        reason,
    }
}

/// Where a local source is copied, built and installed: named by its content, so an
/// edited checkout gets a directory of its own.
pub(super) struct LocalCopy {
    /// The user's checkout or file, canonical.
    pub(super) origin: PathBuf,
    pub(super) is_dir: bool,
    pub(super) hash: String,
    pub(super) label: String,
    pub(super) dir: PathBuf,
    /// The copy of a checkout, where the build runs.
    pub(super) src: PathBuf,
    /// Build output, or the copy of a file given directly.
    pub(super) out: PathBuf,
}

impl LocalCopy {
    pub(super) fn new(
        local: &LocalRecipe,
        path: &Path,
        base: &Path,
        local_err: &impl Fn(LocalError) -> SourceNotTestable,
    ) -> Result<Self, SourceNotTestable> {
        let origin = fs::canonicalize(path).map_err(|e| local_err(LocalError::Unreadable(e)))?;
        let is_dir = origin.is_dir();
        let hash = content_hash(&origin, if is_dir { &local.exclude } else { &[] })
            .map_err(|e| local_err(LocalError::Unreadable(e)))?;
        let label = format!("local-{}", &hash[..8]);
        // A build that ends in an artifact is built in one copy per checkout, kept between
        // edits: its dependencies and earlier outputs are reused, and only what changed is
        // rebuilt. Without one (the copy itself is what the instances use: a Go `replace`,
        // a Cargo `path`), each content has its own copy.
        let src = if local.artifact.is_some() {
            let key = Fnv::new().add(origin.as_os_str().as_encoded_bytes()).hex();
            base.join(format!("build-{}", &key[..8]))
        } else {
            base.join(format!("{label}.src"))
        };
        Ok(LocalCopy {
            dir: base.join(&label),
            src,
            out: base.join(format!("{label}.out")),
            origin,
            is_dir,
            hash,
            label,
        })
    }
}

/// Copies and builds the source, unless a build of the same content is there already.
pub(super) fn build_local(
    local: &LocalRecipe,
    copy: &LocalCopy,
    vars: &BTreeMap<String, String>,
    run: &Runner,
) -> Result<(), SourceNotTestable> {
    let built = copy.out.join(".kit-built");
    if fs::read_to_string(&built).is_ok_and(|h| h.trim() == copy.hash) {
        return Ok(());
    }
    let _shared = exclusive(run.kit, Path::new(&vars["cache"]))?;
    if copy.out.exists() {
        fs::remove_dir_all(&copy.out).map_err(io(&copy.out))?;
    }
    fs::create_dir_all(&copy.out).map_err(io(&copy.out))?;
    if copy.is_dir && local.artifact.is_some() {
        // One build copy per checkout, used by one build at a time.
        let _building = lock(&copy.src.with_extension("lock"))?;
        let changed = sync_tree(&copy.origin, &copy.src, &local.exclude).map_err(io(&copy.src))?;
        let note = format!("sync {}: {changed} file(s) changed\n", copy.src.display());
        let _ = OpenOptions::new()
            .create(true)
            .append(true)
            .open(run.log)
            .and_then(|mut f| f.write_all(note.as_bytes()));
        for step in &local.build {
            run.run(step, vars, &copy.src)?;
        }
    } else if copy.is_dir {
        // Start from a clean copy: a half-built one from an interrupted run is not reused.
        if copy.src.exists() {
            fs::remove_dir_all(&copy.src).map_err(io(&copy.src))?;
        }
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
pub(super) fn local_artifact(
    kit: &Kit,
    local: &LocalRecipe,
    copy: &LocalCopy,
    local_err: &impl Fn(LocalError) -> SourceNotTestable,
) -> Result<Option<PathBuf>, SourceNotTestable> {
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
pub(super) fn last_line(text: &str, accept: impl Fn(&str) -> bool) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| accept(l))
        .map(str::to_string)
}
