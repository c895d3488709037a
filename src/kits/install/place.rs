//! Where a source goes and what it is called: its directory, label, variant and the
//! variables (`{{version}}`, `{{before}}`, ...) that name it.

use super::*;

/// Where one source of one line lives, and the names it goes by.
pub(super) struct Place {
    /// `1.24.0`, or `local-1a2b3c4d`: the directory's name, by content for a local source.
    pub(super) label: String,
    /// The middle of the instances' names: the version, or `local-<name>` for a local source
    /// (what the user called it, its `git describe`, or its file name).
    pub(super) name: String,
    /// The SDK version the templates are chosen for (for a local source: what its
    /// `local.version` command printed, if anything).
    pub(super) version: Option<String>,
    /// The value of `Instance::sdk_version`.
    pub(super) sdk_version: String,
    /// For a local source: the date its `local.date` command printed.
    pub(super) date: Option<String>,
    pub(super) dir: PathBuf,
}

/// The variables every source of the line has, before any depends on the source.
pub(super) fn kit_vars(
    kit: &Kit,
    cache: &Path,
) -> Result<BTreeMap<String, String>, SourceNotTestable> {
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
pub(super) type Chosen<'k> = (Place, &'k Variant, Recipe, DirLock);

/// A published release: its directory is named by its version, its cutoff by its date.
pub(super) fn release_source<'k>(
    kit: &'k Kit,
    r: &Release,
    base: &Path,
    vars: &mut BTreeMap<String, String>,
) -> Result<Chosen<'k>, SourceNotTestable> {
    let variant = choose(kit, &r.version)?;
    let place = Place {
        label: r.version.clone(),
        name: r.version.clone(),
        version: Some(r.version.clone()),
        sdk_version: r.version.clone(),
        date: r.date.clone(),
        dir: base.join(&r.version),
    };
    let guard = lock(&base.join(format!(".{}.lock", place.label)))?;
    let cutoff = match &r.date {
        Some(d) => date::cutoff(d, kit.cutoff_margin_minutes).map_err(|e| {
            SourceNotTestable::Unsupported {
                line: kit.id.clone(),
                version: r.version.clone(),
                reason: Unsupported::BadDate(e),
            }
        })?,
        // No date from the registry (a Maven mirror): Maven, Go and Cargo pin what
        // they pin anyway; the cutoff is the day the directory was first set up.
        None => first_setup(&place.dir)?,
    };
    vars.insert("date".into(), r.date.clone().unwrap_or_default());
    vars.insert("before".into(), cutoff);
    Ok((place, variant, kit.release.clone(), guard))
}

/// A local checkout or artifact, prepared by [`local_source`], with its variant and cutoff.
pub(super) fn local_place<'k>(
    kit: &'k Kit,
    path: &Path,
    name: Option<&str>,
    base: &Path,
    vars: &mut BTreeMap<String, String>,
) -> Result<Chosen<'k>, SourceNotTestable> {
    let (place, guard) = local_source(kit, path, name, base, vars)?;
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
pub(super) fn place_vars(vars: &mut BTreeMap<String, String>, place: &Place, variant: &Variant) {
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
pub(super) fn first_setup(dir: &Path) -> Result<String, SourceNotTestable> {
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

pub(super) fn choose<'k>(kit: &'k Kit, version: &str) -> Result<&'k Variant, SourceNotTestable> {
    template::select(kit, version).map_err(|reason| SourceNotTestable::Unsupported {
        line: kit.id.clone(),
        version: version.to_string(),
        reason,
    })
}
