//! The TOML of a `kit.toml` as written, with spans: what serde reads before anything is
//! checked.

use super::*;

// ---- raw TOML ---------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKit {
    pub(super) id: Spanned<String>,
    #[serde(default)]
    pub(super) name: String,
    pub(super) ecosystem: Ecosystem,
    pub(super) package: Spanned<String>,
    #[serde(default)]
    pub(super) requires: Vec<String>,
    #[serde(default = "default_margin")]
    pub(super) cutoff_margin_minutes: u32,
    #[serde(default)]
    pub(super) lock_retry_minutes: Vec<u32>,
    pub(super) handshake_ms: Option<u64>,
    pub(super) exclusive: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) vars: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) env: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) launch_env: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) bootstrap: Vec<RawBootstrap>,
    #[serde(default)]
    pub(super) files: BTreeMap<String, Spanned<String>>,
    pub(super) release: RawRecipe,
    pub(super) local: Option<RawLocal>,
    #[serde(default)]
    pub(super) variant: Vec<RawVariant>,
    #[serde(default)]
    pub(super) untestable: Vec<RawUntestable>,
    #[serde(default)]
    pub(super) hint: Vec<RawHint>,
    pub(super) shapes: BTreeMap<String, RawShape>,
}

pub(super) fn default_margin() -> u32 {
    60
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBootstrap {
    pub(super) name: String,
    pub(super) creates: Spanned<String>,
    pub(super) steps: Spanned<Vec<CommandTemplate>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRecipe {
    #[serde(default)]
    pub(super) vars: BTreeMap<String, Spanned<String>>,
    pub(super) lock: Option<Spanned<Vec<CommandTemplate>>>,
    pub(super) lockfile: Option<String>,
    pub(super) lock_inputs: Option<Vec<String>>,
    pub(super) install_inputs: Option<Vec<String>>,
    pub(super) install: Option<Spanned<Vec<CommandTemplate>>>,
    pub(super) outputs: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLocal {
    #[serde(default)]
    pub(super) exclude: Vec<String>,
    pub(super) build: Option<Spanned<Vec<CommandTemplate>>>,
    pub(super) artifact: Option<Spanned<String>>,
    pub(super) version: Option<Spanned<CommandTemplate>>,
    pub(super) date: Option<Spanned<CommandTemplate>>,
    #[serde(default)]
    pub(super) vars: BTreeMap<String, Spanned<String>>,
    pub(super) lock: Option<Spanned<Vec<CommandTemplate>>>,
    pub(super) lockfile: Option<String>,
    pub(super) lock_inputs: Option<Vec<String>>,
    pub(super) install_inputs: Option<Vec<String>>,
    pub(super) install: Option<Spanned<Vec<CommandTemplate>>>,
    pub(super) outputs: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVariant {
    pub(super) name: Spanned<String>,
    pub(super) versions: Spanned<String>,
    #[serde(default)]
    pub(super) files: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) vars: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) shapes: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub(super) note: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHint {
    pub(super) versions: Spanned<String>,
    #[serde(default)]
    pub(super) endings: Vec<String>,
    pub(super) text: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUntestable {
    pub(super) versions: Spanned<String>,
    pub(super) reason: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawShape {
    #[serde(default)]
    pub(super) description: String,
    pub(super) command: Spanned<String>,
    #[serde(default)]
    pub(super) args: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) env: BTreeMap<String, Spanned<String>>,
    pub(super) inflight: Option<RawInflight>,
    #[serde(default)]
    pub(super) expect: Expect,
}

pub(super) fn plain(map: BTreeMap<String, Spanned<String>>) -> BTreeMap<String, String> {
    map.into_iter().map(|(k, v)| (k, v.into_inner())).collect()
}

/// Every variable any table declares; a variable used where it is not defined is an error
/// at instantiation (naming it), not here.
pub(super) fn declared_vars(raw: &RawKit) -> BTreeSet<String> {
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
