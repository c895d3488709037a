//! Registry listings read into launchable entries.
//!
//! A listing is what the official MCP registry serves at `GET /v0/servers`
//! (`{"servers":[{"server":{…},"_meta":{…}}],"metadata":{…}}`), a bare array of `server.json`
//! documents, or one `server.json` (schema `2025-12-11`). Every npm or PyPI package with a stdio
//! transport becomes an [`Entry`] whose argv is built without a shell; everything else becomes a
//! [`Skipped`] that names the entry, a JSON pointer and, where the text allows, a line.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What a required secret is given: servers must start with it, and nothing real leaks.
pub const PLACEHOLDER: &str = "mcp-shutdown-placeholder";

/// The package registries whose packages the census can install and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Registry {
    Npm,
    Pypi,
}

/// The launcher users run a package with (and that stays in the process tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    Npx,
    Uvx,
}

impl Runtime {
    pub fn program(self) -> &'static str {
        match self {
            Runtime::Npx => "npx",
            Runtime::Uvx => "uvx",
        }
    }
}

impl fmt::Display for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Registry::Npm => "npm",
            Registry::Pypi => "pypi",
        })
    }
}

/// One runnable package of one server in the listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Stable `[a-z0-9._-]+` name built from identifier and version (unique in the listing).
    pub id: String,
    /// Position of the server in the listing (0-based).
    pub index: usize,
    /// JSON pointer of the package this entry was built from.
    pub pointer: String,
    pub server_name: String,
    pub server_version: String,
    pub registry: Registry,
    pub identifier: String,
    pub version: String,
    pub runtime: Runtime,
    /// The resolved `runtimeArguments` alone (the install phase passes them too).
    pub runtime_args: Vec<String>,
    /// argv after the launcher: runtime arguments, `identifier@version` (npm) or
    /// `identifier==version` (PyPI), package arguments.
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// The secrets (variables, flags, environment names) that were given [`PLACEHOLDER`].
    pub placeholders: Vec<String>,
    pub description: String,
}

/// A server or package that the census cannot run, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Position of the server in the listing (0-based).
    pub index: usize,
    pub server_name: Option<String>,
    /// JSON pointer of the offending value (or of the missing one).
    pub pointer: String,
    /// 1-based line of the offending value, or of its nearest enclosing value when it is missing.
    pub line: Option<usize>,
    pub reason: String,
}

impl Skipped {
    /// `true` for a well-formed package the census does not run (docker, .NET, HTTP, …)
    /// as opposed to a malformed one.
    pub fn not_runnable(&self) -> bool {
        self.reason.starts_with(NOT_RUNNABLE)
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "entry {} ({})",
            self.index,
            self.server_name.as_deref().unwrap_or("unnamed")
        )?;
        let at = if self.pointer.is_empty() {
            "the top level"
        } else {
            &self.pointer
        };
        write!(f, " at {at}")?;
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// Everything a listing yields: what runs, and what does not with the reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Listing {
    pub entries: Vec<Entry>,
    pub skipped: Vec<Skipped>,
}

/// Values the caller supplies for `{placeholder}` variables, positional `valueHint`s and
/// environment variables by name (for example a scratch directory); they win over defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParseOptions {
    pub variables: BTreeMap<String, String>,
}

/// A listing file that cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListingError {
    #[error("{}:{line}:{column}: not valid JSON: {message}", path.display())]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}:{line}:{column}: not a registry listing: {problem}", path.display())]
    Shape {
        path: PathBuf,
        line: usize,
        column: usize,
        problem: ShapeError,
    },
}

/// Why a valid JSON document is not a listing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("`servers` must be an array of server entries, found {0}")]
    ServersNotArray(&'static str),
    #[error(
        "expected the registry's /v0/servers response ({{\"servers\": [...]}}), an array of \
         server.json documents or one server.json, found {0}"
    )]
    Unknown(String),
}

const NOT_RUNNABLE: &str = "not runnable here: ";

/// Why one package (or server) is left out. Unrunnable packages of a server that has a
/// runnable one are not worth reporting; malformed ones always are.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reject {
    Invalid { pointer: String, reason: String },
    Unrunnable { pointer: String, reason: String },
}

fn invalid(pointer: impl Into<String>, reason: impl Into<String>) -> Reject {
    Reject::Invalid {
        pointer: pointer.into(),
        reason: reason.into(),
    }
}

fn unrunnable(pointer: impl Into<String>, reason: impl fmt::Display) -> Reject {
    Reject::Unrunnable {
        pointer: pointer.into(),
        reason: format!("{NOT_RUNNABLE}{reason}"),
    }
}

/// Reads a listing with no caller-supplied variables.
#[cfg(test)]
pub fn parse_listing(path: &Path, text: &str) -> Result<Listing, ListingError> {
    parse_listing_with(path, text, &ParseOptions::default())
}

/// Reads a listing; whole-file problems are errors that name `path:line:column`, problems
/// of one server or package are [`Skipped`] entries.
pub fn parse_listing_with(
    path: &Path,
    text: &str,
    options: &ParseOptions,
) -> Result<Listing, ListingError> {
    let root: Value = serde_json::from_str(text).map_err(|e| ListingError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    let servers = servers_of(&root).map_err(|problem| {
        let (line, column) = line_column(text, locate(text, ""));
        ListingError::Shape {
            path: path.to_path_buf(),
            line,
            column,
            problem,
        }
    })?;
    let mut listing = Listing::default();
    let mut ids = BTreeSet::new();
    for (index, (pointer, server)) in servers.into_iter().enumerate() {
        let (name, result) = read_server(index, &pointer, server, options);
        let (entries, rejects) = result;
        let keep_unrunnable = entries.is_empty();
        for mut entry in entries {
            entry.id = unique_id(&mut ids, &entry.id);
            listing.entries.push(entry);
        }
        for reject in rejects {
            let (pointer, reason) = match reject {
                Reject::Invalid { pointer, reason } => (pointer, reason),
                Reject::Unrunnable { pointer, reason } if keep_unrunnable => (pointer, reason),
                Reject::Unrunnable { .. } => continue,
            };
            let line = Some(line_column(text, locate(text, &pointer)).0);
            listing.skipped.push(Skipped {
                index,
                server_name: name.clone(),
                pointer,
                line,
                reason,
            });
        }
    }
    Ok(listing)
}

/// serde_json appends " at line L column C", which the error already carries as fields.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// The server objects of a listing with their JSON pointers, whatever the accepted shape.
fn servers_of(root: &Value) -> Result<Vec<(String, &Value)>, ShapeError> {
    fn item(prefix: String, v: &Value) -> (String, &Value) {
        // A registry response wraps each server.json as {"server": …, "_meta": …}.
        match v.get("server") {
            Some(inner) if v.get("name").is_none() => (format!("{prefix}/server"), inner),
            _ => (prefix, v),
        }
    }
    match root {
        Value::Object(obj) if obj.contains_key("servers") => match &obj["servers"] {
            Value::Array(items) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, v)| item(format!("/servers/{i}"), v))
                .collect()),
            other => Err(ShapeError::ServersNotArray(kind(other))),
        },
        Value::Object(obj)
            if obj.contains_key("name")
                || obj.contains_key("packages")
                || obj.contains_key("remotes") =>
        {
            Ok(vec![(String::new(), root)])
        }
        Value::Array(items) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, v)| item(format!("/{i}"), v))
            .collect()),
        other => Err(ShapeError::Unknown(describe_top(other))),
    }
}

fn describe_top(v: &Value) -> String {
    match v {
        Value::Object(obj) if obj.is_empty() => "an empty object".into(),
        Value::Object(obj) => format!(
            "an object with keys {}",
            obj.keys()
                .take(5)
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => kind(other).to_string(),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

type ServerResult = (Vec<Entry>, Vec<Reject>);

/// One server: its name (when it has one) and its entries and rejections.
fn read_server(
    index: usize,
    pointer: &str,
    server: &Value,
    options: &ParseOptions,
) -> (Option<String>, ServerResult) {
    let Value::Object(obj) = server else {
        return (
            None,
            (
                vec![],
                vec![invalid(
                    pointer,
                    format!("a server entry must be an object, found {}", kind(server)),
                )],
            ),
        );
    };
    let name = obj.get("name").and_then(Value::as_str).map(str::to_string);
    let header = match server_header(pointer, obj) {
        Ok(h) => h,
        Err(r) => return (name, (vec![], vec![r])),
    };
    let packages = match obj.get("packages") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(p)) => p.as_slice(),
        Some(other) => {
            let r = invalid(
                format!("{pointer}/packages"),
                format!("`packages` must be an array, found {}", kind(other)),
            );
            return (name, (vec![], vec![r]));
        }
    };
    if packages.is_empty() {
        let has_remotes = obj
            .get("remotes")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        let r = if has_remotes {
            unrunnable(
                format!("{pointer}/remotes"),
                "remote-only server (it lists `remotes` and no `packages`; the suite launches \
                 stdio packages)",
            )
        } else {
            invalid(
                format!("{pointer}/packages"),
                "the server lists no `packages` to run",
            )
        };
        return (name, (vec![], vec![r]));
    }
    let mut entries = vec![];
    let mut rejects = vec![];
    for (j, package) in packages.iter().enumerate() {
        let p = format!("{pointer}/packages/{j}");
        match read_package(&p, package, options) {
            Ok(resolved) => entries.push(resolved.into_entry(index, p, &header)),
            Err(r) => rejects.push(r),
        }
    }
    (name, (entries, rejects))
}

struct Header {
    name: String,
    version: String,
    description: String,
}

fn server_header(pointer: &str, obj: &Map<String, Value>) -> Result<Header, Reject> {
    let name = required_str(pointer, obj, "name")?;
    if !valid_server_name(name) {
        return Err(invalid(
            format!("{pointer}/name"),
            format!(
                "`name` {name:?} is not a reverse-DNS server name such as \
                 `io.github.owner/server`"
            ),
        ));
    }
    let version = required_str(pointer, obj, "version")?;
    let description = optional_str(pointer, obj, "description")?.unwrap_or_default();
    Ok(Header {
        name: name.to_string(),
        version: version.to_string(),
        description: description.to_string(),
    })
}

/// The schema's pattern `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`.
fn valid_server_name(name: &str) -> bool {
    let Some((ns, rest)) = name.split_once('/') else {
        return false;
    };
    !ns.is_empty()
        && !rest.is_empty()
        && ns
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
}

fn required_str<'a>(
    pointer: &str,
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a str, Reject> {
    optional_str(pointer, obj, key)?
        .ok_or_else(|| invalid(format!("{pointer}/{key}"), format!("missing `{key}`")))
}

fn optional_str<'a>(
    pointer: &str,
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, Reject> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(invalid(
            format!("{pointer}/{key}"),
            format!("`{key}` must be a string, found {}", kind(other)),
        )),
    }
}

fn optional_bool(pointer: &str, obj: &Map<String, Value>, key: &str) -> Result<bool, Reject> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(invalid(
            format!("{pointer}/{key}"),
            format!("`{key}` must be a boolean, found {}", kind(other)),
        )),
    }
}

fn optional_array<'a>(
    pointer: &str,
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a [Value], Reject> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(invalid(
            format!("{pointer}/{key}"),
            format!("`{key}` must be an array, found {}", kind(other)),
        )),
    }
}

fn as_object<'a>(
    pointer: &str,
    v: &'a Value,
    what: &str,
) -> Result<&'a Map<String, Value>, Reject> {
    v.as_object().ok_or_else(|| {
        invalid(
            pointer,
            format!("{what} must be an object, found {}", kind(v)),
        )
    })
}

/// A package that passed every check, with its argv and environment resolved.
struct Resolved {
    registry: Registry,
    runtime: Runtime,
    identifier: String,
    version: String,
    runtime_args: Vec<String>,
    package_args: Vec<String>,
    env: BTreeMap<String, String>,
    placeholders: Vec<String>,
}

impl Resolved {
    fn into_entry(self, index: usize, pointer: String, header: &Header) -> Entry {
        let args = build_args(
            self.runtime,
            &self.runtime_args,
            &self.identifier,
            &self.version,
            &self.package_args,
        );
        Entry {
            id: entry_id(&self.identifier, &self.version),
            index,
            pointer,
            server_name: header.name.clone(),
            server_version: header.version.clone(),
            registry: self.registry,
            identifier: self.identifier,
            version: self.version,
            runtime: self.runtime,
            runtime_args: self.runtime_args,
            args,
            env: self.env,
            placeholders: self.placeholders,
            description: header.description.clone(),
        }
    }
}

/// argv after the launcher. npx gets `-y` (as every README writes it) unless the runtime
/// arguments already say it; the package spec pins the exact version in each ecosystem's
/// own syntax.
pub fn build_args(
    runtime: Runtime,
    runtime_args: &[String],
    identifier: &str,
    version: &str,
    package_args: &[String],
) -> Vec<String> {
    let mut args = vec![];
    match runtime {
        Runtime::Npx => {
            if !runtime_args.iter().any(|a| a == "-y" || a == "--yes") {
                args.push("-y".to_string());
            }
            args.extend(runtime_args.iter().cloned());
            args.push(format!("{identifier}@{version}"));
        }
        Runtime::Uvx => {
            args.extend(runtime_args.iter().cloned());
            args.push(format!("{identifier}=={version}"));
        }
    }
    args.extend(package_args.iter().cloned());
    args
}

/// A stable name for reports and file names: lowercase, `[a-z0-9._-]`, starting with an
/// alphanumeric.
pub fn entry_id(identifier: &str, version: &str) -> String {
    let raw = format!("{identifier}-{version}").to_ascii_lowercase();
    let mut id = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && (id.is_empty() || id.ends_with('-')) {
            continue;
        }
        id.push(c);
    }
    let id = id.trim_start_matches(['.', '_', '-']).trim_end_matches('-');
    if id.is_empty() {
        "package".to_string()
    } else {
        id.to_string()
    }
}

fn unique_id(taken: &mut BTreeSet<String>, id: &str) -> String {
    let mut candidate = id.to_string();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{id}-{n}");
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

fn read_package(
    pointer: &str,
    package: &Value,
    options: &ParseOptions,
) -> Result<Resolved, Reject> {
    let obj = as_object(pointer, package, "a package")?;
    let registry = registry_of(pointer, obj)?;
    let runtime = runtime_for(pointer, obj, registry)?;
    check_transport(pointer, obj)?;
    let identifier = required_str(pointer, obj, "identifier")?;
    check_identifier(pointer, registry, identifier)?;
    let version = match obj.get("version") {
        None | Some(Value::Null) => {
            return Err(invalid(
                format!("{pointer}/version"),
                "missing `version`: the census installs each package at an exact version",
            ))
        }
        Some(_) => required_str(pointer, obj, "version")?,
    };
    check_version(pointer, version)?;

    let mut placeholders = vec![];
    let mut runtime_args = vec![];
    for (i, arg) in optional_array(pointer, obj, "runtimeArguments")?
        .iter()
        .enumerate()
    {
        let p = format!("{pointer}/runtimeArguments/{i}");
        runtime_args.extend(resolve_argument(&p, arg, options, &mut placeholders)?);
    }
    let mut package_args = vec![];
    for (i, arg) in optional_array(pointer, obj, "packageArguments")?
        .iter()
        .enumerate()
    {
        let p = format!("{pointer}/packageArguments/{i}");
        package_args.extend(resolve_argument(&p, arg, options, &mut placeholders)?);
    }
    let mut env = BTreeMap::new();
    for (i, var) in optional_array(pointer, obj, "environmentVariables")?
        .iter()
        .enumerate()
    {
        let p = format!("{pointer}/environmentVariables/{i}");
        if let Some((name, value)) = resolve_env(&p, var, options, &mut placeholders)? {
            env.insert(name, value);
        }
    }
    Ok(Resolved {
        registry,
        runtime,
        identifier: identifier.to_string(),
        version: version.to_string(),
        runtime_args,
        package_args,
        env,
        placeholders,
    })
}

/// The registry a package comes from, if the census can install from it.
fn registry_of(pointer: &str, obj: &Map<String, Value>) -> Result<Registry, Reject> {
    Ok(match required_str(pointer, obj, "registryType")? {
        "npm" => Registry::Npm,
        "pypi" => Registry::Pypi,
        "oci" => {
            return Err(unrunnable(
                format!("{pointer}/registryType"),
                "registryType `oci` (a container image, run with docker)",
            ))
        }
        "nuget" => {
            return Err(unrunnable(
                format!("{pointer}/registryType"),
                "registryType `nuget` (a .NET tool, run with dnx; .NET is not available)",
            ))
        }
        "mcpb" => {
            return Err(unrunnable(
                format!("{pointer}/registryType"),
                "registryType `mcpb` (an MCP bundle that a host unpacks, not a registry package)",
            ))
        }
        other => {
            return Err(invalid(
                format!("{pointer}/registryType"),
                format!("unknown registryType `{other}` (expected npm, pypi, oci, nuget or mcpb)"),
            ))
        }
    })
}

fn runtime_for(
    pointer: &str,
    obj: &Map<String, Value>,
    registry: Registry,
) -> Result<Runtime, Reject> {
    let expected = match registry {
        Registry::Npm => Runtime::Npx,
        Registry::Pypi => Runtime::Uvx,
    };
    let Some(hint) = optional_str(pointer, obj, "runtimeHint")? else {
        return Ok(expected);
    };
    if hint == expected.program() {
        return Ok(expected);
    }
    let p = format!("{pointer}/runtimeHint");
    Err(match hint {
        "docker" => unrunnable(p, "runtimeHint `docker` (containers are not run here)"),
        "dnx" => unrunnable(p, "runtimeHint `dnx` (.NET tools are not run here)"),
        other => unrunnable(
            p,
            format!(
                "runtimeHint `{other}` for a {registry} package (the census runs {registry} \
                 packages with {})",
                expected.program()
            ),
        ),
    })
}

fn check_transport(pointer: &str, obj: &Map<String, Value>) -> Result<(), Reject> {
    let p = format!("{pointer}/transport");
    let transport = obj
        .get("transport")
        .ok_or_else(|| invalid(&p, "missing `transport`"))?;
    let transport = as_object(&p, transport, "`transport`")?;
    match required_str(&p, transport, "type")? {
        "stdio" => Ok(()),
        t @ ("streamable-http" | "sse") => Err(unrunnable(
            format!("{p}/type"),
            format!("transport `{t}` (the suite tests stdio servers)"),
        )),
        other => Err(invalid(
            format!("{p}/type"),
            format!("unknown transport type `{other}` (expected stdio, streamable-http or sse)"),
        )),
    }
}

/// Package names as the registries allow them; in particular never starting with `-`, which
/// npx or uvx would read as an option.
fn check_identifier(pointer: &str, registry: Registry, identifier: &str) -> Result<(), Reject> {
    let ok = match registry {
        Registry::Npm => {
            let bare = match identifier.strip_prefix('@') {
                Some(scoped) => match scoped.split_once('/') {
                    Some((scope, name)) if npm_part(scope) => name,
                    _ => "",
                },
                None => identifier,
            };
            npm_part(bare)
        }
        Registry::Pypi => {
            identifier
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                && identifier.starts_with(|c: char| c.is_ascii_alphanumeric())
                && identifier.ends_with(|c: char| c.is_ascii_alphanumeric())
        }
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(
            format!("{pointer}/identifier"),
            format!("`identifier` {identifier:?} is not a valid {registry} package name"),
        ))
    }
}

fn npm_part(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['.', '_', '-'])
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'))
}

/// An exact version: no ranges, tags or wildcards, which would make "install once" ambiguous.
fn check_version(pointer: &str, version: &str) -> Result<(), Reject> {
    let p = format!("{pointer}/version");
    if version.is_empty() || version == "latest" {
        return Err(invalid(
            p,
            format!("`version` {version:?} is not an exact version"),
        ));
    }
    let exact = version.starts_with(|c: char| c.is_ascii_digit())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_' | '!'))
        && !version
            .split(['.', '+', '-'])
            .any(|part| matches!(part, "x" | "X" | "*" | ""));
    if exact {
        Ok(())
    } else {
        Err(invalid(
            p,
            format!(
                "`version` {version:?} is not an exact version (ranges and tags are not installed)"
            ),
        ))
    }
}

/// The value of an input: absent, deliberately left out (an optional variable had no value),
/// or resolved.
#[derive(Debug, PartialEq, Eq)]
enum Resolution {
    Absent,
    Omit,
    Value(String),
}

/// `value` with its `{variables}` substituted, else `default`.
fn resolve_input(
    pointer: &str,
    obj: &Map<String, Value>,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Resolution, Reject> {
    if let Some(template) = optional_str(pointer, obj, "value")? {
        let variables = match obj.get("variables") {
            None | Some(Value::Null) => None,
            Some(v) => Some(as_object(
                &format!("{pointer}/variables"),
                v,
                "`variables`",
            )?),
        };
        return substitute(pointer, template, variables, options, placeholders);
    }
    Ok(match optional_str(pointer, obj, "default")? {
        Some(d) => Resolution::Value(d.to_string()),
        None => Resolution::Absent,
    })
}

/// Replaces each `{name}` with the caller's value, the variable's `value` or `default`, or the
/// placeholder for a secret. A name no variable defines is an error here (the schema would
/// leave it in place, which would hand the server a literal `{name}`).
fn substitute(
    pointer: &str,
    template: &str,
    variables: Option<&Map<String, Value>>,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Resolution, Reject> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let is_ref = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && after[name_len..].starts_with('}');
        if !is_ref {
            // Not a `{variable}` (JSON in a value, a lone brace): kept verbatim.
            out.push('{');
            rest = after;
            continue;
        }
        match variable_value(pointer, name, variables, options, placeholders)? {
            Resolution::Value(v) => out.push_str(&v),
            Resolution::Omit => return Ok(Resolution::Omit),
            Resolution::Absent => unreachable!("variable_value never returns Absent"),
        }
        rest = &after[name_len + 1..];
    }
    out.push_str(rest);
    Ok(Resolution::Value(out))
}

fn variable_value(
    pointer: &str,
    name: &str,
    variables: Option<&Map<String, Value>>,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Resolution, Reject> {
    if let Some(v) = options.variables.get(name) {
        return Ok(Resolution::Value(v.clone()));
    }
    let Some(def) = variables.and_then(|vars| vars.get(name)) else {
        return Err(invalid(
            format!("{pointer}/value"),
            format!("`{{{name}}}` is used in `value` but not defined in `variables`"),
        ));
    };
    let p = format!("{pointer}/variables/{}", escape_token(name));
    let def = as_object(&p, def, "a variable")?;
    if let Some(v) = optional_str(&p, def, "value")? {
        return Ok(Resolution::Value(v.to_string()));
    }
    if let Some(d) = optional_str(&p, def, "default")? {
        return Ok(Resolution::Value(d.to_string()));
    }
    let required = optional_bool(&p, def, "isRequired")?;
    if optional_bool(&p, def, "isSecret")? {
        if required {
            placeholders.push(format!("{{{name}}}"));
            return Ok(Resolution::Value(PLACEHOLDER.to_string()));
        }
        return Ok(Resolution::Omit);
    }
    if required {
        return Err(invalid(
            p,
            format!("required variable `{{{name}}}` has no value or default"),
        ));
    }
    Ok(Resolution::Omit)
}

/// RFC 6901: `~` and `/` in a key.
fn escape_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// One runtime or package argument as argv words (none when an optional one has no value).
fn resolve_argument(
    pointer: &str,
    arg: &Value,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Vec<String>, Reject> {
    let obj = as_object(pointer, arg, "an argument")?;
    let required = optional_bool(pointer, obj, "isRequired")?;
    let secret = optional_bool(pointer, obj, "isSecret")?;
    match required_str(pointer, obj, "type")? {
        "positional" => {
            let hint = optional_str(pointer, obj, "valueHint")?;
            match resolve_input(pointer, obj, options, placeholders)? {
                Resolution::Value(v) => Ok(vec![v]),
                Resolution::Omit if required => Err(invalid(
                    pointer,
                    "required argument left without a value by its variables",
                )),
                Resolution::Omit => Ok(vec![]),
                Resolution::Absent => {
                    if let Some(v) = hint.and_then(|h| options.variables.get(h)) {
                        return Ok(vec![v.clone()]);
                    }
                    if secret && required {
                        placeholders.push(hint.unwrap_or("positional argument").to_string());
                        return Ok(vec![PLACEHOLDER.to_string()]);
                    }
                    // As hosts show and run it: a positional without a value is its hint.
                    match hint {
                        Some(h) => Ok(vec![h.to_string()]),
                        None => Err(invalid(
                            pointer,
                            "a positional argument needs `value` or `valueHint`",
                        )),
                    }
                }
            }
        }
        "named" => {
            let name = required_str(pointer, obj, "name")?;
            if name.is_empty() || name.chars().any(char::is_whitespace) {
                return Err(invalid(
                    format!("{pointer}/name"),
                    format!("`name` {name:?} is not a command-line flag"),
                ));
            }
            match resolve_input(pointer, obj, options, placeholders)? {
                Resolution::Value(v) => Ok(named_words(name, v)),
                Resolution::Omit if required => Err(invalid(
                    pointer,
                    format!("required argument `{name}` left without a value by its variables"),
                )),
                Resolution::Omit => Ok(vec![]),
                Resolution::Absent if secret && required => {
                    placeholders.push(name.to_string());
                    Ok(named_words(name, PLACEHOLDER.to_string()))
                }
                Resolution::Absent if secret => Ok(vec![]),
                // A named argument without a value is a switch (`--stdio`, `--read-only`).
                Resolution::Absent => Ok(vec![name.to_string()]),
            }
        }
        other => Err(invalid(
            format!("{pointer}/type"),
            format!("unknown argument type `{other}` (expected positional or named)"),
        )),
    }
}

/// `--flag value` as two words, as hosts pass it; joined as `--flag=value` when the name
/// already ends in `=` or the value starts with `-` (which a parser would take for a flag).
fn named_words(name: &str, value: String) -> Vec<String> {
    if let Some(stem) = name.strip_suffix('=') {
        vec![format!("{stem}={value}")]
    } else if value.starts_with('-') {
        vec![format!("{name}={value}")]
    } else {
        vec![name.to_string(), value]
    }
}

fn resolve_env(
    pointer: &str,
    var: &Value,
    options: &ParseOptions,
    placeholders: &mut Vec<String>,
) -> Result<Option<(String, String)>, Reject> {
    let obj = as_object(pointer, var, "an environment variable")?;
    let name = required_str(pointer, obj, "name")?;
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(invalid(
            format!("{pointer}/name"),
            format!("{name:?} is not an environment variable name"),
        ));
    }
    let required = optional_bool(pointer, obj, "isRequired")?;
    let secret = optional_bool(pointer, obj, "isSecret")?;
    if let Some(v) = options.variables.get(name) {
        return Ok(Some((name.to_string(), v.clone())));
    }
    match resolve_input(pointer, obj, options, placeholders)? {
        Resolution::Value(v) => Ok(Some((name.to_string(), v))),
        Resolution::Omit if required => Err(invalid(
            pointer,
            format!("required environment variable `{name}` left without a value by its variables"),
        )),
        Resolution::Omit => Ok(None),
        Resolution::Absent if secret && required => {
            placeholders.push(name.to_string());
            Ok(Some((name.to_string(), PLACEHOLDER.to_string())))
        }
        Resolution::Absent if required => Err(invalid(
            pointer,
            format!("required environment variable `{name}` has no value or default"),
        )),
        Resolution::Absent => Ok(None),
    }
}

/// 1-based line and column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
    (line, column)
}

/// Byte offset of the value a JSON pointer names in `text` (already known to be valid JSON),
/// or of the deepest value on its path that exists. Each step borrows the value's raw text
/// from `text` (serde_json's `RawValue`), so its offset is where that text starts.
fn locate(text: &str, pointer: &str) -> usize {
    let offset = |raw: &str| raw.as_ptr() as usize - text.as_ptr() as usize;
    let Ok(mut here) = serde_json::from_str::<&RawValue>(text) else {
        return text.len() - text.trim_start().len();
    };
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let raw = here.get();
        let next = match raw.as_bytes().first() {
            Some(b'{') => serde_json::from_str::<HashMap<String, &RawValue>>(raw)
                .ok()
                .and_then(|m| m.get(&token).copied()),
            Some(b'[') => serde_json::from_str::<Vec<&RawValue>>(raw)
                .ok()
                .zip(token.parse::<usize>().ok())
                .and_then(|(items, n)| items.get(n).copied()),
            _ => None,
        };
        match next {
            Some(v) => here = v,
            None => break,
        }
    }
    offset(here.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Listing {
        parse_listing(Path::new("l.json"), text).expect("a listing")
    }

    fn one(server: &str) -> Entry {
        let l = parse(server);
        assert!(l.skipped.is_empty(), "{:?}", l.skipped);
        assert_eq!(l.entries.len(), 1);
        l.entries.into_iter().next().unwrap()
    }

    fn skip_reason(server: &str) -> Skipped {
        let l = parse(server);
        assert!(l.entries.is_empty(), "{:?}", l.entries);
        assert_eq!(l.skipped.len(), 1, "{:?}", l.skipped);
        l.skipped.into_iter().next().unwrap()
    }

    const NPM: &str = r#"{"name":"io.github.user/weather","version":"1.0.0","description":"d",
      "packages":[{"registryType":"npm","identifier":"@example/server-weather","version":"1.0.0",
      "transport":{"type":"stdio"},"runtimeHint":"npx",
      "packageArguments":[{"type":"named","name":"--units","value":"metric"}],
      "environmentVariables":[{"name":"API_KEY","isSecret":true,"isRequired":true}]}]}"#;

    #[test]
    fn one_server_json_gives_an_npx_entry_with_a_placeholder_secret() {
        let e = one(NPM);
        assert_eq!(e.id, "example-server-weather-1.0.0");
        assert_eq!(e.server_name, "io.github.user/weather");
        assert_eq!(e.runtime, Runtime::Npx);
        assert_eq!(e.pointer, "/packages/0");
        assert_eq!(
            e.args,
            ["-y", "@example/server-weather@1.0.0", "--units", "metric"]
        );
        assert_eq!(e.env["API_KEY"], PLACEHOLDER);
        assert_eq!(e.placeholders, ["API_KEY"]);
    }

    #[test]
    fn the_registry_response_and_a_bare_array_are_read_alike() {
        let response =
            format!(r#"{{"servers":[{{"server":{NPM},"_meta":{{}}}}],"metadata":{{"count":1}}}}"#);
        let l = parse(&response);
        assert_eq!(l.entries.len(), 1);
        assert_eq!(l.entries[0].pointer, "/servers/0/server/packages/0");
        let l = parse(&format!("[{NPM}, {NPM}]"));
        let ids: Vec<_> = l.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "example-server-weather-1.0.0",
                "example-server-weather-1.0.0-2"
            ]
        );
        assert_eq!(l.entries[1].pointer, "/1/packages/0");
    }

    #[test]
    fn whole_file_errors_name_file_line_and_column() {
        let err = parse_listing(Path::new("x/l.json"), "{\n  \"servers\": [,]\n}").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("x/l.json:2:"), "{msg}");
        assert!(msg.contains("not valid JSON"), "{msg}");
        assert!(!msg.contains(" at line "), "{msg}");
        let err = parse_listing(Path::new("l.json"), "\n\n  {\"items\": []}").unwrap_err();
        assert_eq!(
            err,
            ListingError::Shape {
                path: "l.json".into(),
                line: 3,
                column: 3,
                problem: ShapeError::Unknown("an object with keys `items`".into())
            }
        );
        let err = parse_listing(Path::new("l.json"), r#"{"servers": 3}"#).unwrap_err();
        assert!(
            err.to_string().contains("`servers` must be an array"),
            "{err}"
        );
        assert!(parse_listing(Path::new("l.json"), "42").is_err());
    }

    #[test]
    fn pypi_runs_with_uvx_and_pins_with_double_equals() {
        let e = one(
            r#"{"name":"io.github.x/time","version":"1","packages":[{"registryType":"pypi",
            "identifier":"mcp-server-time","version":"2026.10.19","transport":{"type":"stdio"},
            "runtimeArguments":[{"type":"named","name":"--python","value":"3.11"}],
            "packageArguments":[{"type":"named","name":"--local-timezone","default":"UTC"}]}]}"#,
        );
        assert_eq!(e.runtime, Runtime::Uvx);
        assert_eq!(e.runtime_args, ["--python", "3.11"]);
        assert_eq!(
            e.args,
            [
                "--python",
                "3.11",
                "mcp-server-time==2026.10.19",
                "--local-timezone",
                "UTC"
            ]
        );
        assert_eq!(e.description, "");
    }

    fn with_args(args: &str, env: &str) -> String {
        format!(
            r#"{{"name":"a.b/c","version":"1","packages":[{{"registryType":"npm","identifier":"p",
            "version":"1.2.3","transport":{{"type":"stdio"}},"packageArguments":{args},
            "environmentVariables":{env}}}]}}"#
        )
    }

    #[test]
    fn arguments_are_argv_words_with_variables_substituted() {
        let e = one(&with_args(
            r#"[{"type":"positional","value":"{dir}","variables":{"dir":{"default":"/tmp"}}},
                {"type":"positional","valueHint":"stdio"},
                {"type":"named","name":"--stdio"},
                {"type":"named","name":"--token","value":"Bearer {t}",
                 "variables":{"t":{"isSecret":true,"isRequired":true}}},
                {"type":"named","name":"--level=","value":"debug"},
                {"type":"named","name":"--offset","value":"-3"},
                {"type":"named","name":"--port","value":"{port}","variables":{"port":{}}},
                {"type":"named","name":"--key","isSecret":true},
                {"type":"positional","value":"; rm -rf ~ {\"a\":1}"}]"#,
            "[]",
        ));
        assert_eq!(
            e.args[2..],
            [
                "/tmp",
                "stdio",
                "--stdio",
                "--token",
                "Bearer mcp-shutdown-placeholder",
                "--level=debug",
                "--offset=-3",
                "; rm -rf ~ {\"a\":1}",
            ]
        );
        assert_eq!(e.placeholders, ["{t}"]);
    }

    #[test]
    fn caller_variables_win_over_defaults_and_fill_value_hints() {
        let text = with_args(
            r#"[{"type":"positional","value":"{dir}","variables":{"dir":{"default":"/tmp"}}},
                {"type":"positional","valueHint":"target_dir","isRequired":true}]"#,
            r#"[{"name":"ROOT","value":"{dir}/x","variables":{"dir":{"default":"/tmp"}}}]"#,
        );
        let options = ParseOptions {
            variables: [
                ("dir".to_string(), "/scratch".to_string()),
                ("target_dir".to_string(), "/work".to_string()),
            ]
            .into(),
        };
        let l = parse_listing_with(Path::new("l.json"), &text, &options).unwrap();
        assert_eq!(l.entries[0].args[2..], ["/scratch", "/work"]);
        assert_eq!(l.entries[0].env["ROOT"], "/scratch/x");
    }

    #[test]
    fn environment_defaults_secrets_and_missing_required_values() {
        let e = one(&with_args(
            "[]",
            r#"[{"name":"A","default":"1"},{"name":"B","isSecret":true,"isRequired":true},
                {"name":"C"},{"name":"D","isSecret":true},{"name":"E","value":"v"}]"#,
        ));
        assert_eq!(
            e.env,
            BTreeMap::from([
                ("A".into(), "1".into()),
                ("B".into(), PLACEHOLDER.into()),
                ("E".into(), "v".into())
            ])
        );
        let s = skip_reason(&with_args("[]", r#"[{"name":"HOST","isRequired":true}]"#));
        assert_eq!(s.pointer, "/packages/0/environmentVariables/0");
        assert!(s.reason.contains("`HOST` has no value or default"), "{s}");
    }

    #[test]
    fn an_undefined_variable_is_skipped_with_its_pointer_and_line() {
        let s = skip_reason(&with_args(
            r#"[{"type":"positional","value":"{nope}"}]"#,
            "[]",
        ));
        assert_eq!(s.pointer, "/packages/0/packageArguments/0/value");
        assert_eq!(s.line, Some(2));
        assert_eq!(s.server_name.as_deref(), Some("a.b/c"));
        assert_eq!(
            s.to_string(),
            "entry 0 (a.b/c) at /packages/0/packageArguments/0/value (line 2): `{nope}` is \
             used in `value` but not defined in `variables`"
        );
    }

    #[test]
    fn versions_must_be_exact() {
        for bad in [
            "latest", "^1.2.3", "~1.2", ">=1", "1.x", "1.*", "", "1.2 || 2",
        ] {
            let t = NPM.replace(
                r#""identifier":"@example/server-weather","version":"1.0.0""#,
                &format!(r#""identifier":"@example/server-weather","version":"{bad}""#),
            );
            let s = skip_reason(&t);
            assert!(s.reason.contains("not an exact version"), "{bad}: {s}");
        }
        for good in ["1.0.0", "2026.8.31", "0.0.1a8", "1.0.0-beta.2", "1!2.0"] {
            assert!(check_version("", good).is_ok(), "{good}");
        }
    }

    #[test]
    fn identifiers_that_look_like_options_are_rejected() {
        for bad in ["--eval=x", "@scope", "a b", "-p"] {
            assert!(check_identifier("", Registry::Npm, bad).is_err(), "{bad}");
        }
        assert!(check_identifier("", Registry::Pypi, "-x").is_err());
        assert!(check_identifier("", Registry::Npm, "@a-b/c.d_e").is_ok());
        assert!(
            check_identifier("", Registry::Pypi, "awslabs.aws-documentation-mcp-server").is_ok()
        );
    }

    #[test]
    fn unrunnable_packages_are_reported_only_when_nothing_else_runs() {
        let both = r#"{"name":"a.b/c","version":"1","packages":[
            {"registryType":"oci","identifier":"docker.io/a/b","version":"1","transport":{"type":"stdio"}},
            {"registryType":"npm","identifier":"b","version":"1.0.0","transport":{"type":"stdio"}}]}"#;
        let l = parse(both);
        assert_eq!((l.entries.len(), l.skipped.len()), (1, 0));
        let only = r#"{"name":"a.b/c","version":"1","packages":[
            {"registryType":"oci","identifier":"docker.io/a/b","version":"1","transport":{"type":"stdio"}}]}"#;
        let s = skip_reason(only);
        assert!(s.not_runnable());
        assert_eq!(s.pointer, "/packages/0/registryType");
        assert_eq!(s.line, Some(2));
    }

    #[test]
    fn id_is_a_valid_manifest_style_name() {
        assert_eq!(
            entry_id("@playwright/mcp", "0.0.83"),
            "playwright-mcp-0.0.83"
        );
        assert_eq!(entry_id("Office_Word", "1.1"), "office_word-1.1");
        assert_eq!(entry_id("@@", ""), "package");
    }

    #[test]
    fn locate_walks_objects_arrays_and_escapes() {
        let text = "{\"a\": [1, {\"b/c\": \"x\\\"}\"}, [2]],\n \"d\": {}}";
        assert_eq!(&text[locate(text, "/a/1/b~1c")..][..1], "\"");
        assert_eq!(&text[locate(text, "/a/2/0")..][..1], "2");
        assert_eq!(&text[locate(text, "/d/missing")..][..2], "{}");
        assert_eq!(locate(text, "/a/9"), locate(text, "/a"));
        assert_eq!(line_column(text, locate(text, "/d")), (2, 7));
    }

    /// Every entry of the bundled malformed listing is rejected for its own reason, and the
    /// two valid ones still run.
    #[test]
    fn the_bundled_malformed_listing() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/census/malformed.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let l = parse_listing(&path, &text).unwrap();
        assert_eq!(l.entries.len(), 2, "{:?}", l.entries);
        let expected = [
            "missing `version`",
            "not runnable here: registryType `oci`",
            "not runnable here: registryType `nuget`",
            "not runnable here: registryType `mcpb`",
            "not runnable here: transport `streamable-http`",
            "required environment variable `DATABASE_HOST` has no value or default",
            "`version` must be a string, found a number",
            "unknown registryType `cargo`",
            "`{workspace}` is used in `value` but not defined in `variables`",
            "not runnable here: remote-only server",
            "not runnable here: runtimeHint `docker`",
            "`packageArguments` must be an array, found an object",
            "`name` \"not a reverse dns name\" is not a reverse-DNS server name",
        ];
        assert_eq!(l.skipped.len(), expected.len(), "{:#?}", l.skipped);
        for (s, want) in l.skipped.iter().zip(expected) {
            assert!(s.reason.contains(want), "{s} does not say {want:?}");
            assert!(s.line.is_some_and(|n| n > 1), "{s}");
            assert!(
                s.pointer.starts_with(&format!("/servers/{}/", s.index)),
                "{s}"
            );
        }
        let named = l.skipped.iter().filter(|s| s.server_name.is_some()).count();
        assert_eq!(named, expected.len());
    }
}
