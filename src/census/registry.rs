//! The official MCP registry as a census source: its API's pages read into one listing.
//!
//! [`read`] pages `BASE/v0.1/servers` (or `BASE/v0` where `v0.1` is not served) through
//! `metadata.nextCursor`, keeps the latest version of each active server and names the
//! deleted and deprecated ones it drops; the HTTP request itself is a function it is given,
//! so the paging is decided here and tested without a network ([`http_get`] is the real one).
//! A [`Snapshot`] is written as a listing (the `/v0/servers` shape) that the census reads back
//! offline, so a run is reproducible.

use std::collections::{BTreeSet, HashMap};

use jiff::Timestamp;
use serde_json::{json, Map, Value};

/// Where the registry puts its own facts about an entry (status, dates, latest).
pub const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";
/// Where a snapshot says what it was read from.
pub const SNAPSHOT_META: &str = "io.github.mcp-shutdown-conformance/snapshot";
/// The API versions tried, newest first: a registry that answers 404 to the first page of
/// one is asked the next.
pub const API_VERSIONS: [&str; 2] = ["v0.1", "v0"];
/// Entries per page asked for (the registry's maximum is 100).
const LIMIT: u32 = 100;

/// An answer to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

/// Why the registry could not be read; each names the page's URL and its 1-based number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpRegistryError {
    #[error("registry {url} (page {page}): HTTP status {status}")]
    Status {
        url: String,
        page: usize,
        status: u16,
    },
    #[error("registry {url} (page {page}): {message}")]
    Transport {
        url: String,
        page: usize,
        message: String,
    },
    #[error("registry {url} (page {page}): not valid JSON (truncated or corrupt body): {message}")]
    Json {
        url: String,
        page: usize,
        message: String,
    },
    #[error("registry {url} (page {page}): not a registry page: {problem}")]
    Shape {
        url: String,
        page: usize,
        problem: String,
    },
    #[error(
        "registry {url} (page {page}): cursor loop: next cursor {cursor:?} was already followed"
    )]
    CursorLoop {
        url: String,
        page: usize,
        cursor: String,
    },
    #[error("--updated-since {0}: expected a date (2026-12-01) or an RFC 3339 time")]
    Date(String),
}

/// One page of `GET /servers`: its entries as served, and the cursor of the next page.
#[derive(Clone, Debug, PartialEq)]
pub struct ServersPage {
    pub servers: Vec<Value>,
    pub next_cursor: Option<String>,
}

/// A page body read; the problem is said without the URL (the caller knows it).
pub fn parse_page(body: &str) -> Result<ServersPage, PageProblem> {
    let v: Value = serde_json::from_str(body).map_err(|e| PageProblem::Json(e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| PageProblem::Shape("expected an object with `servers`".into()))?;
    let servers = match obj.get("servers") {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return Err(PageProblem::Shape("`servers` is not an array".into())),
    };
    let meta = obj.get("metadata");
    let cursor = ["nextCursor", "next_cursor"]
        .iter()
        .find_map(|k| meta.and_then(|m| m.get(*k)));
    let next_cursor = match cursor {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::String(_) | Value::Null) | None => None,
        Some(_) => {
            return Err(PageProblem::Shape(
                "`metadata.nextCursor` is not a string".into(),
            ))
        }
    };
    Ok(ServersPage {
        servers,
        next_cursor,
    })
}

/// What is wrong with one page body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageProblem {
    Json(String),
    Shape(String),
}

/// `--updated-since`: a date (midnight UTC) or an RFC 3339 time.
pub fn updated_since(arg: &str) -> Result<Timestamp, McpRegistryError> {
    arg.parse::<Timestamp>()
        .or_else(|_| {
            let date: jiff::civil::Date = arg.parse()?;
            date.to_zoned_datetime(jiff::tz::TimeZone::UTC)
                .map(|z| z.timestamp())
        })
        .map_err(|_| McpRegistryError::Date(arg.to_string()))
}

/// What to read: the registry's base URL, and only servers updated since a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub base: String,
    pub updated_since: Option<Timestamp>,
}

impl Query {
    /// The URL of one page of `api` (`v0.1`, `v0`).
    pub fn page_url(&self, api: &str, cursor: Option<&str>) -> String {
        let mut url = format!(
            "{}/{api}/servers?version=latest&limit={LIMIT}",
            self.base.trim_end_matches('/')
        );
        if let Some(t) = self.updated_since {
            url.push_str(&format!("&updated_since={}", encode(&t.to_string())));
        }
        if let Some(c) = cursor {
            url.push_str(&format!("&cursor={}", encode(c)));
        }
        url
    }
}

/// Percent-encodes all but RFC 3986's unreserved characters (a cursor is opaque).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An entry left out because the registry marks it so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    pub name: String,
    pub version: String,
    pub status: String,
}

/// Everything read from a registry: the kept entries as served, in the registry's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub query: Query,
    pub api: &'static str,
    pub pages: usize,
    pub servers: Vec<Value>,
    pub dropped: Vec<Dropped>,
}

impl Snapshot {
    /// The snapshot as a listing the census reads (`{"servers": [...], "metadata": {...}}`).
    pub fn to_listing(&self) -> String {
        let mut source = Map::new();
        source.insert("registry".into(), self.query.base.clone().into());
        source.insert("api".into(), self.api.into());
        source.insert("pages".into(), self.pages.into());
        if let Some(t) = self.query.updated_since {
            source.insert("updatedSince".into(), t.to_string().into());
        }
        let doc = json!({
            "servers": self.servers,
            "metadata": { "count": self.servers.len(), SNAPSHOT_META: source },
        });
        let mut text = serde_json::to_string_pretty(&doc).expect("JSON values serialize");
        text.push('\n');
        text
    }
}

/// Reads every page of the registry through `get`, following the cursor until there is none.
pub fn read(
    query: &Query,
    mut get: impl FnMut(&str) -> Result<Response, String>,
) -> Result<Snapshot, McpRegistryError> {
    let (api, mut url, mut response) = first_page(query, &mut get)?;
    let mut seen = BTreeSet::new();
    let mut served = Vec::new();
    let mut page = 1;
    loop {
        let p = page_of(&url, page, response)?;
        served.extend(p.servers);
        let Some(cursor) = p.next_cursor else { break };
        if !seen.insert(cursor.clone()) {
            return Err(McpRegistryError::CursorLoop { url, page, cursor });
        }
        page += 1;
        url = query.page_url(api, Some(&cursor));
        response = get(&url).map_err(|message| McpRegistryError::Transport {
            url: url.clone(),
            page,
            message,
        })?;
    }
    let (servers, dropped) = keep(served, query.updated_since);
    Ok(Snapshot {
        query: query.clone(),
        api,
        pages: page,
        servers,
        dropped,
    })
}

/// The first page, from the newest API version that does not answer 404.
fn first_page(
    query: &Query,
    get: &mut impl FnMut(&str) -> Result<Response, String>,
) -> Result<(&'static str, String, Response), McpRegistryError> {
    let mut last = None;
    for api in API_VERSIONS {
        let url = query.page_url(api, None);
        let r = get(&url).map_err(|message| McpRegistryError::Transport {
            url: url.clone(),
            page: 1,
            message,
        })?;
        if r.status != 404 {
            return Ok((api, url, r));
        }
        last = Some(url);
    }
    Err(McpRegistryError::Status {
        url: last.unwrap_or_default(),
        page: 1,
        status: 404,
    })
}

/// One response as a page, or the error that names it.
fn page_of(url: &str, page: usize, r: Response) -> Result<ServersPage, McpRegistryError> {
    if !(200..300).contains(&r.status) {
        return Err(McpRegistryError::Status {
            url: url.into(),
            page,
            status: r.status,
        });
    }
    parse_page(&r.body).map_err(|p| match p {
        PageProblem::Json(message) => McpRegistryError::Json {
            url: url.into(),
            page,
            message,
        },
        PageProblem::Shape(problem) => McpRegistryError::Shape {
            url: url.into(),
            page,
            problem,
        },
    })
}

/// The registry's facts about an entry (`_meta`), or nothing.
fn official(entry: &Value) -> Option<&Value> {
    entry.get("_meta").and_then(|m| m.get(OFFICIAL))
}

fn text<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a str> {
    v.and_then(|v| v.get(key)).and_then(Value::as_str)
}

/// The latest version of each active server updated since `since`, in first-seen order;
/// deleted and deprecated ones are returned apart (older versions and entries older than
/// `since` are what the query asked the registry not to send, so they go silently).
fn keep(served: Vec<Value>, since: Option<Timestamp>) -> (Vec<Value>, Vec<Dropped>) {
    let mut kept: Vec<Value> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut dropped = Vec::new();
    for entry in served {
        let meta = official(&entry);
        let server = entry.get("server").unwrap_or(&entry);
        let name = text(Some(server), "name").unwrap_or("").to_string();
        // The v0 API said the status inside the server; v0.1 says it in `_meta`.
        let status = text(meta, "status").or_else(|| text(Some(server), "status"));
        if let Some(s @ ("deleted" | "deprecated")) = status {
            dropped.push(Dropped {
                version: text(Some(server), "version").unwrap_or("").to_string(),
                status: s.to_string(),
                name,
            });
            continue;
        }
        if meta.and_then(|m| m.get("isLatest")) == Some(&Value::Bool(false)) {
            continue;
        }
        let updated = text(meta, "updatedAt").and_then(|t| t.parse::<Timestamp>().ok());
        if matches!((since, updated), (Some(s), Some(u)) if u < s) {
            continue;
        }
        match at.get(&name) {
            Some(&i) => kept[i] = entry,
            None => {
                at.insert(name, kept.len());
                kept.push(entry);
            }
        }
    }
    (kept, dropped)
}

/// One GET: the status and body of any answer, or why there was none (refused, cut short).
pub fn http_get(url: &str) -> Result<Response, String> {
    // The system's CA store, as for npm, pip and cargo (a TLS-intercepting proxy works).
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(60)))
        .user_agent("mcp-shutdown-conformance census")
        .build()
        .into();
    let mut r = agent.get(url).call().map_err(|e| e.to_string())?;
    let status = r.status().as_u16();
    let body = r
        .body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| format!("reading the body: {e}"))?;
    Ok(Response { status, body })
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
