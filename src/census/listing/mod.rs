//! Registry listings read into launchable entries.
//!
//! A listing is what the official MCP registry serves at `GET /v0/servers`
//! (`{"servers":[{"server":{…},"_meta":{…}}],"metadata":{…}}`), a bare array of `server.json`
//! documents, or one `server.json` (schema `2025-12-11`). Every npm or PyPI package with a stdio
//! transport becomes an [`Entry`] whose argv is built without a shell; everything else becomes a
//! [`Skipped`] that names the entry, a JSON pointer and, where the text allows, a line.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

mod inputs;
mod locate;
mod package;
mod server;
#[cfg(test)]
mod tests;

use inputs::*;
use locate::*;
pub use package::entry_id;
use package::*;
use server::*;

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
pub enum Launcher {
    Npx,
    Uvx,
}

impl Launcher {
    pub fn program(self) -> &'static str {
        match self {
            Launcher::Npx => "npx",
            Launcher::Uvx => "uvx",
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
    pub runtime: Launcher,
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
