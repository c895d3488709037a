//! Server manifests: one TOML file per server under test, validated into typed values whose
//! errors name the file, line and field.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::budgets::BudgetOverrides;

/// A server under test, ready to launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Where it was read from (`None` for an ad-hoc `check` command).
    pub path: Option<PathBuf>,
    pub name: String,
    pub description: String,
    pub launch: Launch,
    pub about: About,
    pub setup: Option<Setup>,
    pub budgets: BudgetOverrides,
    pub protocol: Protocol,
    /// The request the `inflight` scenario leaves unanswered when it closes stdin.
    pub inflight: InflightRequest,
}

/// A request sent just before stdin is closed (default: `ping`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InflightRequest {
    pub method: String,
    pub params: Option<serde_json::Value>,
}

impl Default for InflightRequest {
    fn default() -> Self {
        Self {
            method: "ping".into(),
            params: None,
        }
    }
}

/// `inflight = { method, params }`, as a manifest or a kit's shape writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInflight {
    method: String,
    params: Option<toml::Value>,
}

impl From<RawInflight> for InflightRequest {
    fn from(i: RawInflight) -> Self {
        InflightRequest {
            method: i.method,
            params: i.params.and_then(|p| serde_json::to_value(p).ok()),
        }
    }
}

/// How to start the server: everything the process layer needs, already resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    /// A program name looked up on `PATH`, or an absolute path.
    pub command: String,
    pub args: Vec<String>,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// Added to the harness's own environment.
    pub env: BTreeMap<String, String>,
}

/// Metadata for matrix views; free-form.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct About {
    pub sdk: Option<String>,
    pub sdk_version: Option<String>,
    pub shape: Option<String>,
}

/// A command run once before the first launch, cached on the contents of `inputs`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    pub command: Vec<String>,
    /// Absolute directory the command runs in; the cache stamp and lock live there too.
    pub cwd: PathBuf,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub requires: Vec<String>,
}

/// Which handshake the server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// Try `initialize`; if the server rejects it, confirm it serves without it.
    #[default]
    Auto,
    /// Revisions up to 2025-11-25: `initialize` must succeed.
    Initialize,
    /// 2026-07-28 (SEP-2575): no `initialize`; one request answered is enough.
    Stateless,
}

/// A manifest that could not be loaded: file, line, column and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ManifestError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    command: Spanned<String>,
    #[serde(default)]
    args: Vec<String>,
    cwd: Option<Spanned<String>>,
    env: Option<Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    about: About,
    setup: Option<RawSetup>,
    #[serde(default)]
    budgets: BudgetOverrides,
    #[serde(default)]
    protocol: Protocol,
    inflight: Option<RawInflight>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetup {
    command: Spanned<Vec<String>>,
    cwd: Option<Spanned<String>>,
    #[serde(default)]
    inputs: Vec<String>,
    #[serde(default)]
    outputs: Vec<String>,
    #[serde(default)]
    requires: Vec<String>,
}

/// Line and column (1-based) of a byte offset.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

fn err_at(
    path: &Path,
    text: &str,
    span: Option<std::ops::Range<usize>>,
    msg: String,
) -> ManifestError {
    let (line, column) = match span {
        Some(s) => {
            let (l, c) = position(text, s.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    ManifestError {
        path: path.to_path_buf(),
        line,
        column,
        message: msg,
    }
}

/// A server name (`[a-z0-9._-]+`) made of any text (a command, a handshake's `serverInfo`
/// name): lowercased, every other character a `-`; `None` when nothing is left.
pub fn as_name(text: &str) -> Option<String> {
    let name: String = text
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if valid_name(&c.to_string()) || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = name
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string();
    valid_name(&name).then_some(name)
}

pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' || c == '_'
        })
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
}

/// Where a manifest's text came from, for error positions.
struct ManifestText<'a> {
    path: &'a Path,
    text: &'a str,
}

impl ManifestText<'_> {
    fn err(&self, span: Option<std::ops::Range<usize>>, msg: String) -> ManifestError {
        err_at(self.path, self.text, span, msg)
    }

    /// The directory relative paths are resolved against: the manifest's own.
    fn base(&self) -> PathBuf {
        let base = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf())
    }

    /// `field` resolved against `base`; it must be an existing directory.
    fn dir(
        &self,
        base: &Path,
        value: &Spanned<String>,
        field: &str,
    ) -> Result<PathBuf, ManifestError> {
        let p = normalize(&base.join(value.get_ref()));
        if p.is_dir() {
            Ok(p)
        } else {
            Err(self.err(
                Some(value.span()),
                format!("field `{field}`: directory {} does not exist", p.display()),
            ))
        }
    }
}

fn parse_raw(src: &ManifestText) -> Result<RawManifest, ManifestError> {
    let raw: RawManifest = toml::from_str(src.text).map_err(|e| {
        // toml's message already names the field ("unknown field `comand`, expected ...");
        // a few syntax errors (a key with no value at the end) come without one.
        let msg = e.message().trim();
        let msg = if msg.is_empty() {
            "invalid TOML: expected a value here"
        } else {
            msg
        };
        src.err(e.span(), msg.to_string())
    })?;
    // toml hands a datetime to serde as a one-entry table with a private key.
    if let Some(env) = &raw.env {
        if env
            .get_ref()
            .keys()
            .any(|k| k.starts_with("$__toml_private"))
        {
            return Err(src.err(
                Some(env.span()),
                "field `env`: invalid type: datetime, expected a table of strings".into(),
            ));
        }
    }
    if !valid_name(raw.name.get_ref()) {
        return Err(src.err(
            Some(raw.name.span()),
            format!(
                "field `name`: {:?} is not a valid server name (use lowercase letters, digits, '.', '-', '_')",
                raw.name.get_ref()
            ),
        ));
    }
    if raw.command.get_ref().trim().is_empty() {
        return Err(src.err(
            Some(raw.command.span()),
            "field `command`: must not be empty".into(),
        ));
    }
    Ok(raw)
}

fn setup(src: &ManifestText, base: &Path, cwd: &Path, s: RawSetup) -> Result<Setup, ManifestError> {
    if s.command.get_ref().is_empty() {
        return Err(src.err(
            Some(s.command.span()),
            "field `setup.command`: must not be empty".into(),
        ));
    }
    let scwd = match &s.cwd {
        Some(c) => src.dir(base, c, "setup.cwd")?,
        None => cwd.to_path_buf(),
    };
    Ok(Setup {
        command: s.command.into_inner(),
        cwd: scwd,
        inputs: s.inputs,
        outputs: s.outputs,
        requires: s.requires,
    })
}

/// Parses one manifest's text; `path` is used for messages and to resolve relative paths.
pub fn parse(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
    let src = ManifestText { path, text };
    let raw = parse_raw(&src)?;
    let base = src.base();
    let cwd = match &raw.cwd {
        Some(c) => src.dir(&base, c, "cwd")?,
        None => base.clone(),
    };
    let command = resolve_command(raw.command.get_ref(), &cwd);
    let setup = raw.setup.map(|s| setup(&src, &base, &cwd, s)).transpose()?;
    Ok(Manifest {
        path: Some(path.to_path_buf()),
        name: raw.name.into_inner(),
        description: raw.description,
        launch: Launch {
            command,
            args: raw.args,
            cwd,
            env: raw.env.map(Spanned::into_inner).unwrap_or_default(),
        },
        about: raw.about,
        setup,
        budgets: raw.budgets,
        protocol: raw.protocol,
        inflight: raw.inflight.map(InflightRequest::from).unwrap_or_default(),
    })
}

/// A command with a slash is relative to the server's cwd (not the harness's); a bare name
/// is looked up on `PATH` at launch.
fn resolve_command(command: &str, cwd: &Path) -> String {
    if command.contains('/') && !command.starts_with('/') {
        normalize(&cwd.join(command)).to_string_lossy().into_owned()
    } else {
        command.to_string()
    }
}

/// Removes `.` and `..` components without touching the file system.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Loads one manifest file.
pub fn load_file(path: &Path) -> Result<Manifest, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
        path: path.to_path_buf(),
        line: None,
        column: None,
        message: format!("cannot read manifest: {e}"),
    })?;
    parse(path, &text)
}

/// Loads a manifest file, or every `*.toml` in a directory (a suite), sorted by file name.
pub fn load(path: &Path) -> Result<Vec<Manifest>, ManifestError> {
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| ManifestError {
                path: path.to_path_buf(),
                line: None,
                column: None,
                message: format!("cannot read directory: {e}"),
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        files.iter().map(|f| load_file(f)).collect()
    } else {
        load_file(path).map(|m| vec![m])
    }
}

/// Loads several files/directories and rejects duplicate server names.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Manifest>, ManifestError> {
    let mut out: Vec<Manifest> = Vec::new();
    for p in paths {
        for m in load(p)? {
            if let Some(prev) = out.iter().find(|o| o.name == m.name) {
                return Err(ManifestError {
                    path: m.path.clone().unwrap_or_default(),
                    line: None,
                    column: None,
                    message: format!(
                        "server name `{}` is already used by {}",
                        m.name,
                        prev.path.as_deref().unwrap_or(Path::new("?")).display()
                    ),
                });
            }
            out.push(m);
        }
    }
    Ok(out)
}

/// A manifest for an ad-hoc command (`mcp-shutdown check -- CMD ARGS...`), run from `cwd`.
pub fn adhoc(command: &str, args: &[String], cwd: &Path) -> Manifest {
    let base = Path::new(command)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Behind a launcher (`npx -y pkg`), what it starts names the server better than it.
    let name = crate::model::identity::launched_name(command, args)
        .and_then(|n| as_name(&n))
        .or_else(|| as_name(&base));
    Manifest {
        path: None,
        name: name.unwrap_or_else(|| "server".into()),
        description: format!("ad-hoc: {command} {}", args.join(" ")),
        launch: Launch {
            command: resolve_command(command, cwd),
            args: args.to_vec(),
            cwd: cwd.to_path_buf(),
            env: BTreeMap::new(),
        },
        about: About::default(),
        setup: None,
        budgets: BudgetOverrides::default(),
        protocol: Protocol::Auto,
        inflight: InflightRequest::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Manifest, ManifestError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.toml");
        parse(&p, text)
    }

    #[test]
    fn minimal_manifest_resolves_paths() {
        let m = parse_str("name = \"a\"\ncommand = \"./bin/srv\"\n").unwrap();
        assert_eq!(m.name, "a");
        assert!(m.launch.command.ends_with("/bin/srv"));
        assert!(Path::new(&m.launch.command).is_absolute());
        assert_eq!(m.protocol, Protocol::Auto);
    }

    #[test]
    fn unknown_field_names_line_and_field() {
        let e = parse_str("name = \"a\"\ncomand = \"node\"\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("comand"), "{}", e.message);
    }

    #[test]
    fn missing_field_is_named() {
        let e = parse_str("name = \"a\"\n").unwrap_err();
        assert!(
            e.message.contains("missing field `command`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn wrong_type_names_line() {
        let e = parse_str("name = \"a\"\ncommand = \"x\"\nargs = \"not-a-list\"\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("invalid type"), "{}", e.message);
    }

    #[test]
    fn bad_name_and_missing_cwd_point_at_the_value() {
        let e = parse_str("name = \"Bad Name\"\ncommand = \"x\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (Some(1), Some(8)));
        let e = parse_str("name = \"a\"\ncommand = \"x\"\ncwd = \"no/such/dir\"\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("field `cwd`"), "{}", e.message);
    }

    #[test]
    fn unknown_budget_is_rejected() {
        let e = parse_str("name = \"a\"\ncommand = \"x\"\n[budgets]\ngrace = 3\n").unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("grace"), "{}", e.message);
    }

    #[test]
    fn adhoc_names_are_valid() {
        let m = adhoc("/usr/bin/My Server", &[], Path::new("/tmp"));
        assert!(valid_name(&m.name), "{}", m.name);
    }
}
