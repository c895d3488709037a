//! `{{name}}` placeholders in template files and in `kit.toml` strings, and the choice of a
//! variant for a version. Pure functions.

use std::collections::BTreeMap;
use std::path::Path;

use super::spec::{Kit, Variant};
use super::version::Version;

/// Placeholders every kit may use; `{{file:REL}}` (the trimmed contents of a file in the
/// instance directory, read after installation) is built in too.
pub const BUILTINS: &[&str] = &[
    "line", "package", "version", "label", "slug", "date", "before", "dir", "cache", "kit",
    "origin", "source", "out", "artifact", "variant", "shape", "name",
];

pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name) || name.starts_with("file:")
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.:/".contains(c))
}

/// The placeholder names used in `text`, in order of appearance.
pub fn placeholders(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(format!("unclosed `{{{{` in {text:?}"));
        };
        let name = after[..end].trim();
        if !valid_name(name) {
            return Err(format!("{{{{{name}}}}} is not a placeholder name"));
        }
        out.push(name.to_string());
        rest = &after[end + 2..];
    }
    Ok(out)
}

/// Replaces every `{{name}}` with its value; `{{file:REL}}` reads `dir/REL`. An unknown
/// name is an error naming it, so a typo never reaches a server's source as literal text.
pub fn render(
    text: &str,
    vars: &BTreeMap<String, String>,
    dir: Option<&Path>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err("unclosed `{{`".to_string());
        };
        let name = after[..end].trim();
        let value = if let Some(rel) = name.strip_prefix("file:") {
            let Some(dir) = dir else {
                return Err(format!(
                    "{{{{{name}}}}} is only available in shape commands"
                ));
            };
            let p = dir.join(rel);
            std::fs::read_to_string(&p)
                .map_err(|e| format!("{{{{{name}}}}}: cannot read {}: {e}", p.display()))?
                .trim()
                .to_string()
        } else {
            vars.get(name)
                .cloned()
                .ok_or_else(|| format!("unknown placeholder {{{{{name}}}}}"))?
        };
        out.push_str(&value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Adds `defs` to `vars`, each rendered with the variables defined so far (so a variable
/// may use built-ins and earlier tables).
pub fn extend(
    vars: &mut BTreeMap<String, String>,
    defs: &BTreeMap<String, String>,
) -> Result<(), String> {
    // Two passes let a variable of one table use another of the same table.
    let mut pending: Vec<(&String, &String)> = defs.iter().collect();
    for _ in 0..=defs.len() {
        let mut left = Vec::new();
        for (k, v) in pending {
            match render(v, vars, None) {
                Ok(val) => {
                    vars.insert(k.clone(), val);
                }
                Err(_) => left.push((k, v)),
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        pending = left;
    }
    let (k, v) = pending[0];
    render(v, vars, None)
        .map(|_| ())
        .map_err(|e| format!("variable `{k}`: {e}"))
}

/// Why a version has no template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsupported {
    /// Listed in `[[untestable]]`, with its reason.
    Listed(String),
    /// No variant's range contains it.
    NoVariant { ranges: Vec<String> },
    /// Not a version at all.
    BadVersion(super::version::VersionError),
}

/// The variant for `version`: `[[untestable]]` entries first, then the first variant (in
/// file order) whose range contains it.
pub fn select<'k>(kit: &'k Kit, version: &str) -> Result<&'k Variant, Unsupported> {
    let v = Version::parse(version).map_err(Unsupported::BadVersion)?;
    if let Some(u) = kit.untestable.iter().find(|u| u.versions.matches(&v)) {
        return Err(Unsupported::Listed(u.reason.clone()));
    }
    kit.variants
        .iter()
        .find(|var| var.versions.matches(&v))
        .ok_or_else(|| Unsupported::NoVariant {
            ranges: kit
                .variants
                .iter()
                .map(|var| format!("{} ({})", var.versions, var.name))
                .collect(),
        })
}

/// The files of a variant: the kit's shared files, overridden by the variant's own.
pub fn files_of(kit: &Kit, variant: &Variant) -> BTreeMap<String, String> {
    let mut files = kit.files.clone();
    files.extend(variant.files.clone());
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kits::spec::{Ecosystem, Recipe, Untestable};
    use crate::kits::version::VersionReq;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn renders_and_rejects_unknown_names() {
        let v = vars(&[("version", "1.24.0"), ("name", "ts-1.24.0-plain")]);
        assert_eq!(
            render("sdk {{version}} as {{ name }}", &v, None).unwrap(),
            "sdk 1.24.0 as ts-1.24.0-plain"
        );
        assert!(render("{{versoin}}", &v, None)
            .unwrap_err()
            .contains("{{versoin}}"));
        assert!(render("{{version", &v, None)
            .unwrap_err()
            .contains("unclosed"));
        // Single braces (JavaScript, Rust, Go, Java) pass through.
        assert_eq!(
            render("fn main() { let x = {a: 1}; }", &v, None).unwrap(),
            "fn main() { let x = {a: 1}; }"
        );
    }

    #[test]
    fn file_placeholders_read_the_instance_dir() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("cp.txt"), "/a.jar:/b.jar\n").unwrap();
        let out = render("-cp {{file:cp.txt}}", &BTreeMap::new(), Some(d.path())).unwrap();
        assert_eq!(out, "-cp /a.jar:/b.jar");
        assert!(render("{{file:cp.txt}}", &BTreeMap::new(), None).is_err());
        assert_eq!(
            placeholders("{{a}} x {{file:b.txt}}").unwrap(),
            vec!["a", "file:b.txt"]
        );
        assert!(placeholders("{{a b}}").is_err());
    }

    #[test]
    fn variables_may_use_each_other() {
        let mut v = vars(&[("version", "3.11.0")]);
        let defs = vars(&[
            ("dep", "version = \"={{version}}\""),
            ("line", "rmcp {{dep}}"),
        ]);
        extend(&mut v, &defs).unwrap();
        assert_eq!(v["line"], "rmcp version = \"=3.11.0\"");
        let bad = vars(&[("x", "{{nope}}")]);
        assert!(extend(&mut v, &bad).unwrap_err().contains("`x`"));
    }

    fn kit() -> Kit {
        let variant = |name: &str, req: &str| Variant {
            name: name.into(),
            versions: VersionReq::parse(req).unwrap(),
            files: BTreeMap::new(),
            vars: BTreeMap::new(),
            shapes: Vec::new(),
            note: String::new(),
        };
        Kit {
            id: "typescript".into(),
            name: String::new(),
            ecosystem: Ecosystem::Npm,
            package: "@modelcontextprotocol/sdk".into(),
            path: "kit.toml".into(),
            dir: ".".into(),
            requires: Vec::new(),
            cutoff_margin_minutes: 60,
            lock_retry_minutes: Vec::new(),
            handshake_ms: None,
            exclusive: None,
            vars: BTreeMap::new(),
            env: BTreeMap::new(),
            launch_env: BTreeMap::new(),
            bootstrap: Vec::new(),
            files: BTreeMap::new(),
            release: Recipe::default(),
            local: None,
            variants: vec![
                variant("low-level", ">=1.0.0, <1.3.0"),
                variant("tool", ">=1.3.0, <1.11.4"),
                variant("register-tool", ">=1.11.4, <2.0.0-0"),
            ],
            untestable: vec![Untestable {
                versions: VersionReq::parse("<1.0.0").unwrap(),
                reason: "0.x predates the 1.0 protocol".into(),
            }],
            shapes: Vec::new(),
        }
    }

    #[test]
    fn selects_by_version_range() {
        let k = kit();
        let name = |v: &str| select(&k, v).map(|var| var.name.clone());
        assert_eq!(name("1.0.0").unwrap(), "low-level");
        assert_eq!(name("1.2.0").unwrap(), "low-level");
        assert_eq!(name("1.3.0").unwrap(), "tool");
        assert_eq!(name("1.11.3").unwrap(), "tool");
        assert_eq!(name("1.11.4").unwrap(), "register-tool");
        assert_eq!(name("1.23.0-beta.0").unwrap(), "register-tool");
        assert_eq!(name("1.32.2").unwrap(), "register-tool");
        assert_eq!(
            name("0.6.1").unwrap_err(),
            Unsupported::Listed("0.x predates the 1.0 protocol".into())
        );
        match name("2.0.0").unwrap_err() {
            Unsupported::NoVariant { ranges } => {
                assert_eq!(ranges.len(), 3);
                assert!(ranges[0].contains("low-level"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(name("next"), Err(Unsupported::BadVersion(_))));
    }
}
