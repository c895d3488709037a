//! The rendered steps and environment of one installation, and the stamp and lock keys that
//! say whether it is up to date.

use super::*;
use std::hash::Hasher;

/// A 64-bit FNV-1a hash (the `fnv` crate) of a sequence of byte strings: stable across Rust
/// releases (unlike `DefaultHasher`), enough for stamps. A copyable value, so one key can
/// extend another.
#[derive(Clone, Copy)]
pub(super) struct Fnv(u64);

impl Fnv {
    pub(super) fn new() -> Self {
        Fnv(fnv::FnvHasher::default().finish())
    }
    pub(super) fn add(self, bytes: &[u8]) -> Self {
        let mut h = fnv::FnvHasher::with_key(self.0);
        h.write(bytes);
        // A separator, so that ("ab","c") and ("a","bc") differ.
        h.write(&[0xff]);
        Fnv(h.finish())
    }
    pub(super) fn hex(self) -> String {
        format!("{:016x}", self.0)
    }
}

pub(super) fn render_step(
    kit: &Kit,
    step: &CommandTemplate,
    vars: &BTreeMap<String, String>,
    dir: &Path,
) -> Result<Vec<String>, SourceNotTestable> {
    step.iter()
        .map(|a| {
            template::render(a, vars, Some(dir)).map_err(|source| SourceNotTestable::Template {
                line: kit.id.clone(),
                path: kit.path.clone(),
                context: format!("step {step:?}: "),
                source,
            })
        })
        .collect()
}

pub(super) fn env_of(
    kit: &Kit,
    vars: &BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, SourceNotTestable> {
    kit.env
        .iter()
        .map(|(k, v)| {
            template::render(v, vars, None)
                .map(|v| (k.clone(), v))
                .map_err(|source| SourceNotTestable::Template {
                    line: kit.id.clone(),
                    path: kit.path.clone(),
                    context: format!("env {k}: "),
                    source,
                })
        })
        .collect()
}

/// The rendered steps and environment of one installation, and the keys that say whether
/// its lockfile and its installation are up to date.
pub(super) struct InstallPlan {
    pub(super) lock_steps: Vec<Vec<String>>,
    pub(super) install_steps: Vec<Vec<String>>,
    pub(super) env: Vec<(String, String)>,
    /// The lock inputs and lock steps: what the lockfile was resolved from.
    pub(super) lock_key: Fnv,
    /// The install inputs; the stamp adds the rest.
    pub(super) install_files: Fnv,
    pub(super) lockfile: Option<PathBuf>,
}

impl InstallPlan {
    pub(super) fn new(
        kit: &Kit,
        variant: &Variant,
        recipe: &Recipe,
        dir: &Path,
        vars: &BTreeMap<String, String>,
        files: &[(PathBuf, Vec<u8>)],
    ) -> Result<Self, SourceNotTestable> {
        let lock_steps = render_steps(kit, &recipe.lock, vars, dir)?;
        let install_steps = render_steps(kit, &recipe.install, vars, dir)?;
        let env = env_of(kit, vars)?;
        let mut lock_key = files_key(kit, variant, files, &recipe.lock_inputs);
        for s in &lock_steps {
            lock_key = lock_key.add(s.join("\u{1f}").as_bytes());
        }
        Ok(InstallPlan {
            lockfile: recipe.lockfile.as_ref().map(|l| dir.join(l)),
            install_files: files_key(kit, variant, files, &recipe.install_inputs),
            lock_steps,
            install_steps,
            env,
            lock_key,
        })
    }

    /// Reads the lockfile afresh on each call: the lock steps may just have rewritten it.
    pub(super) fn stamp_key(&self) -> String {
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
pub(super) fn files_key(
    kit: &Kit,
    variant: &Variant,
    files: &[(PathBuf, Vec<u8>)],
    only: &[String],
) -> Fnv {
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

pub(super) fn render_steps(
    kit: &Kit,
    steps: &[CommandTemplate],
    vars: &BTreeMap<String, String>,
    dir: &Path,
) -> Result<Vec<Vec<String>>, SourceNotTestable> {
    steps
        .iter()
        .map(|s| render_step(kit, s, vars, dir))
        .collect()
}
