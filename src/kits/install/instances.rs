//! The installed directory as ready-to-launch instances, one per shape, and an instance as
//! a server manifest.

use super::*;

impl Instance {
    /// The instance as a server manifest (the format of `conformance/servers/*.toml`), for
    /// writing a suite of instances to disk.
    pub fn manifest_toml(&self) -> String {
        use serde::Serialize;
        #[derive(Serialize)]
        struct AboutTable<'a> {
            sdk: &'a str,
            sdk_version: &'a str,
            shape: &'a str,
        }
        #[derive(Serialize)]
        struct InflightTable<'a> {
            method: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            params: Option<&'a serde_json::Value>,
        }
        #[derive(Serialize)]
        struct BudgetsTable {
            handshake_ms: u64,
        }
        #[derive(Serialize)]
        struct ManifestFile<'a> {
            name: &'a str,
            description: &'a str,
            command: &'a str,
            args: &'a [String],
            cwd: String,
            env: &'a BTreeMap<String, String>,
            about: AboutTable<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            inflight: Option<InflightTable<'a>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            budgets: Option<BudgetsTable>,
        }
        let m = ManifestFile {
            name: &self.name,
            description: &self.description,
            command: &self.command,
            args: &self.args,
            cwd: self.cwd.display().to_string(),
            env: &self.env,
            about: AboutTable {
                sdk: &self.sdk,
                sdk_version: &self.sdk_version,
                shape: &self.shape,
            },
            inflight: self
                .inflight
                .as_ref()
                .map(|(method, params)| InflightTable {
                    method,
                    params: (!params.is_null()).then_some(params),
                }),
            budgets: self
                .handshake_ms
                .map(|handshake_ms| BudgetsTable { handshake_ms }),
        };
        // Every field is a string, a list or table of strings, or a JSON object without
        // nulls (TOML has none): serialisation cannot fail.
        toml::to_string(&m).unwrap_or_default()
    }
}

pub(super) fn instances(
    kit: &Kit,
    variant: &Variant,
    place: &Place,
    vars: &BTreeMap<String, String>,
) -> Result<Vec<Instance>, SourceNotTestable> {
    let dir = &place.dir;
    let mut out = Vec::new();
    for shape in &kit.shapes {
        if !variant.shapes.is_empty() && !variant.shapes.contains(&shape.name) {
            continue;
        }
        let name = format!("{}-{}-{}", kit.id, place.name, shape.name);
        let mut v = vars.clone();
        v.insert("shape".into(), shape.name.clone());
        v.insert("name".into(), name.clone());
        let render = |s: &str| {
            template::render(s, &v, Some(dir)).map_err(|source| SourceNotTestable::Template {
                line: kit.id.clone(),
                path: kit.path.clone(),
                context: format!("shape {}: ", shape.name),
                source,
            })
        };
        let command = absolute(render(&shape.command)?, dir);
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

/// A shape's command made absolute, so the instance runs the toolchain it was installed with:
/// a path relative to the instance's directory, or a program found on `PATH`.
fn absolute(command: String, dir: &Path) -> String {
    if command.contains('/') {
        normalize(&dir.join(&command)).display().to_string()
    } else {
        which(&command).map_or(command, |p| p.display().to_string())
    }
}
