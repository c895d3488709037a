//! `{{name}}` placeholders in template files and in `kit.toml` strings, rendered with
//! minijinja, and the choice of a variant for a version. Pure functions, except that
//! `{{ file("REL") }}` reads a file of the instance directory.
//!
//! Only `{{ ... }}` is template syntax: block and comment tags are moved to delimiters no
//! source file contains, so the `{%` and `{#` of shell, Jinja or Rust sources in a kit pass
//! through as text, as single braces always do. Nothing is escaped and a trailing newline
//! is kept: a rendered file is its template with the values put in, byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};

use super::spec::{Kit, Variant};
use super::version::{Version, VersionError};

/// Placeholders every kit may use; the function `{{ file("REL") }}` (the trimmed contents of
/// a file in the instance directory, read after installation) is built in too.
pub const BUILTINS: &[&str] = &[
    "line", "package", "version", "label", "slug", "date", "before", "dir", "cache", "kit",
    "origin", "source", "out", "artifact", "variant", "shape", "name",
];

/// The function that reads a file of the instance directory.
const FILE: &str = "file";

pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name) || name == FILE
}

/// Why a template does not render.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("{0}")]
    Syntax(String),
    #[error("unknown placeholder {{{{{0}}}}}")]
    Unknown(String),
    #[error("{{{{ file(...) }}}} is only available in shape commands")]
    FileOutsideShape,
    #[error("{0}")]
    Render(String),
    #[error("variable `{name}`: {source}")]
    Variable {
        name: String,
        #[source]
        source: Box<TemplateError>,
    },
}

/// Values are inserted as they are, and only `{{ }}` is syntax.
static SYNTAX: LazyLock<SyntaxConfig> = LazyLock::new(|| {
    SyntaxConfig::builder()
        .block_delimiters("\u{1}{%", "%}\u{1}")
        .comment_delimiters("\u{1}{#", "#}\u{1}")
        .keep_trailing_newline(true)
        .build()
        .expect("distinct start markers")
});

fn environment(dir: Option<&Path>) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(SYNTAX.clone());
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    if let Some(dir) = dir {
        let dir: PathBuf = dir.to_path_buf();
        env.add_function(FILE, move |rel: String| {
            let p = dir.join(&rel);
            std::fs::read_to_string(&p)
                .map(|t| t.trim().to_string())
                .map_err(|e| {
                    minijinja::Error::new(
                        minijinja::ErrorKind::InvalidOperation,
                        format!("file({rel:?}): cannot read {}: {e}", p.display()),
                    )
                })
        });
    }
    env
}

/// A minijinja error in one line: its message and where, without the debug source dump.
fn message(e: &minijinja::Error) -> String {
    let mut m = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        m.push_str(&format!(": {c}"));
        cause = c.source();
    }
    m
}

/// The names a template uses (variables and `file`), sorted.
pub fn placeholders(text: &str) -> Result<Vec<String>, TemplateError> {
    let env = environment(None);
    let t = env
        .template_from_str(text)
        .map_err(|e| TemplateError::Syntax(message(&e)))?;
    let names: BTreeSet<String> = t.undeclared_variables(false).into_iter().collect();
    Ok(names.into_iter().collect())
}

/// Replaces every `{{name}}` with its value; `{{ file("REL") }}` reads `dir/REL`. An unknown
/// name is an error naming it, so a typo never reaches a server's source as literal text.
pub fn render(
    text: &str,
    vars: &BTreeMap<String, String>,
    dir: Option<&Path>,
) -> Result<String, TemplateError> {
    // Most template files (sources without placeholders) need no engine at all.
    if !text.contains("{{") {
        return Ok(text.to_string());
    }
    for name in placeholders(text)? {
        if name == FILE && dir.is_none() {
            return Err(TemplateError::FileOutsideShape);
        }
        if name != FILE && !vars.contains_key(&name) {
            return Err(TemplateError::Unknown(name));
        }
    }
    let env = environment(dir);
    env.render_str(text, vars)
        .map_err(|e| TemplateError::Render(message(&e)))
}

/// Adds `defs` to `vars`, each rendered with the variables defined so far (so a variable
/// may use built-ins and earlier tables).
pub fn extend(
    vars: &mut BTreeMap<String, String>,
    defs: &BTreeMap<String, String>,
) -> Result<(), TemplateError> {
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
        .map_err(|e| TemplateError::Variable {
            name: k.clone(),
            source: Box::new(e),
        })
}

/// Why a version has no template.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    /// Listed in `[[untestable]]`, with its reason.
    #[error("{0}")]
    Listed(String),
    /// No variant's range contains it.
    #[error("no template supports this version (templates cover {})", ranges.join("; "))]
    NoVariant { ranges: Vec<String> },
    /// Not a version at all.
    #[error("{0}")]
    BadVersion(VersionError),
    /// The registry's release date is not a date.
    #[error("release date: {0}")]
    BadDate(super::date::DateError),
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
            .to_string()
            .contains("{{versoin}}"));
        assert!(render("{{version", &v, None).is_err());
        // Single braces (JavaScript, Rust, Go, Java) pass through, and so do the block and
        // comment tags of other template languages.
        for text in [
            "fn main() { let x = {a: 1}; }",
            "echo ${#list[@]} {% raw %} {#- c -#}\n",
        ] {
            assert_eq!(render(text, &v, None).unwrap(), text);
        }
        // Byte for byte: the trailing newline stays, nothing is escaped.
        let html = vars(&[("version", "<1 & \"2\">")]);
        assert_eq!(
            render("v={{version}}\n\n", &html, None).unwrap(),
            "v=<1 & \"2\">\n\n"
        );
    }

    #[test]
    fn file_placeholders_read_the_instance_dir() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("cp.txt"), "/a.jar:/b.jar\n").unwrap();
        let out = render(
            "-cp {{ file(\"cp.txt\") }}",
            &BTreeMap::new(),
            Some(d.path()),
        )
        .unwrap();
        assert_eq!(out, "-cp /a.jar:/b.jar");
        assert_eq!(
            render("{{ file(\"cp.txt\") }}", &BTreeMap::new(), None),
            Err(TemplateError::FileOutsideShape)
        );
        let e = render("{{ file(\"no.txt\") }}", &BTreeMap::new(), Some(d.path())).unwrap_err();
        assert!(e.to_string().contains("no.txt"), "{e}");
        assert_eq!(
            placeholders("{{a}} x {{ file(\"b.txt\") }}").unwrap(),
            vec!["a", "file"]
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
        assert!(extend(&mut v, &bad)
            .unwrap_err()
            .to_string()
            .contains("`x`"));
    }

    /// Every bundled template file renders byte for byte as the text with each `{{name}}`
    /// replaced: the engine adds, drops and escapes nothing.
    #[test]
    fn bundled_templates_render_byte_for_byte() {
        fn walk(p: &Path, out: &mut Vec<PathBuf>) {
            if p.is_dir() {
                for e in std::fs::read_dir(p).unwrap() {
                    walk(&e.unwrap().path(), out);
                }
            } else {
                out.push(p.to_path_buf());
            }
        }
        let mut files = Vec::new();
        walk(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("kits"),
            &mut files,
        );
        let mut checked = 0;
        for f in files
            .iter()
            .filter(|f| f.extension().is_none_or(|e| e != "toml" && e != "md"))
        {
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            let names = placeholders(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let vars: BTreeMap<String, String> = names
                .iter()
                .map(|n| (n.clone(), format!("<{n}>")))
                .collect();
            let mut expected = text.clone();
            for n in &names {
                expected = expected.replace(&format!("{{{{{n}}}}}"), &format!("<{n}>"));
                expected = expected.replace(&format!("{{{{ {n} }}}}"), &format!("<{n}>"));
            }
            let got = render(&text, &vars, None).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert_eq!(got, expected, "{}", f.display());
            checked += 1;
        }
        assert!(checked > 20, "{checked}");
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
            hints: Vec::new(),
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
