//! The MCP registry as the census's source, against a real HTTP server on loopback serving
//! the stored small listing (`conformance/census/small.json`) in the API's own pages, with a
//! deleted, a deprecated and an older entry among them: `census snapshot` pages it (and falls
//! back to `/v0`), keeps what the census runs, and reads back as a listing; a 500, a
//! truncated body (invalid JSON, or a connection cut short), a page that is not a listing and
//! a cursor loop each give one error naming the page's URL and number, and leave no file
//! behind.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

fn small() -> Value {
    let text = std::fs::read_to_string("conformance/census/small.json").unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The stored listing with the registry's `_meta`, and entries the census must not keep.
fn served() -> Vec<Value> {
    let mut servers: Vec<Value> = small()["servers"].as_array().unwrap().clone();
    for s in &mut servers {
        s["_meta"][OFFICIAL] = json!({"status": "active", "isLatest": true});
    }
    let gone = |name: &str, status: &str, latest: bool| {
        let mut e = servers[0].clone();
        e["server"]["name"] = json!(name);
        e["_meta"][OFFICIAL] = json!({"status": status, "isLatest": latest});
        e
    };
    let deleted = gone("io.github.example/deleted", "deleted", true);
    let deprecated = gone("io.github.example/deprecated", "deprecated", true);
    let mut older = servers[1].clone();
    older["server"]["version"] = json!("0.0.1");
    older["_meta"][OFFICIAL]["isLatest"] = json!(false);
    let rest = servers.split_off(1);
    let mut all = servers;
    all.extend([deleted, older, rest[0].clone(), deprecated, rest[1].clone()]);
    all
}

/// Page `n` (1-based, of three) of `case`, and its status.
fn page(case: &str, n: usize) -> (u16, String) {
    let all = served();
    let chunk = all.chunks(2).nth(n - 1).map(<[Value]>::to_vec);
    let Some(servers) = chunk else {
        return (404, String::new());
    };
    let next = match (case, n) {
        ("loop", 3) => Some("p2".to_string()),
        (_, 3) => None,
        _ => Some(format!("p{}", n + 1)),
    };
    let body = json!({"servers": servers, "metadata": {"nextCursor": next, "count": 2}});
    let body = body.to_string();
    match (case, n) {
        ("status500", 2) => (500, "internal error".into()),
        ("truncated", 2) => (200, body[..body.len() / 2].to_string()),
        ("shape", 2) => (200, r#"{"servers": {"not": "an array"}}"#.into()),
        _ => (200, body),
    }
}

fn respond(mut s: TcpStream) {
    let mut line = String::new();
    let mut r = BufReader::new(s.try_clone().unwrap());
    r.read_line(&mut line).unwrap();
    while r.read_line(&mut String::new()).unwrap_or(0) > 2 {}
    // `GET /CASE/API/servers?...&cursor=pN HTTP/1.1`
    let target = line.split(' ').nth(1).unwrap_or("");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut parts = path.trim_start_matches('/').splitn(3, '/');
    let (case, api) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let n = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("cursor=p"))
        .map_or(1, |n| n.parse().unwrap());
    let (status, body) = match (case, api) {
        ("v0only", "v0.1") => (404, String::new()),
        _ => page(case, n),
    };
    let claimed = if case == "cutshort" && n == 2 {
        body.len() * 2
    } else {
        body.len()
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {claimed}\r\nConnection: close\r\n\r\n"
    );
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body.as_bytes());
}

/// The loopback registry's base URL (one server for the whole test binary).
fn base() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                std::thread::spawn(move || respond(s));
            }
        });
        url
    })
}

fn dir(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("registry-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn snapshot(case: &str, out: &Path) -> Output {
    Command::new(BIN)
        .args(["census", "snapshot", "--registry"])
        .arg(format!("{}/{case}", base()))
        .arg("--output")
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn names(listing: &Value) -> Vec<String> {
    listing["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_snapshot_pages_the_registry_and_keeps_what_the_census_runs() {
    for (case, api) in [("ok", "v0.1"), ("v0only", "v0")] {
        let out = dir(case).join("snapshot.json");
        let o = snapshot(case, &out);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{case}: {stderr}");
        for gone in ["io.github.example/deleted", "io.github.example/deprecated"] {
            assert!(stderr.contains(&format!("dropped {gone}")), "{stderr}");
        }
        let got: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let want = small();
        assert_eq!(names(&got), names(&want), "{case}");
        for (g, w) in got["servers"]
            .as_array()
            .unwrap()
            .iter()
            .zip(want["servers"].as_array().unwrap())
        {
            assert_eq!(g["server"], w["server"], "{case}: served as stored");
        }
        let meta = &got["metadata"]["io.github.mcp-shutdown-conformance/snapshot"];
        assert_eq!(
            (meta["api"].as_str(), meta["pages"].as_u64()),
            (Some(api), Some(3))
        );
    }
}

#[test]
fn every_bad_page_is_one_clear_error_and_no_file() {
    for (case, page, says) in [
        ("status500", 2, "HTTP status 500"),
        ("truncated", 2, "not valid JSON"),
        ("cutshort", 2, "reading the body"),
        ("shape", 2, "not a registry page: `servers` is not an array"),
        ("loop", 3, "cursor loop"),
    ] {
        let out = dir(case).join("snapshot.json");
        let o = snapshot(case, &out);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{case}: {stderr}");
        let url = format!("{}/{case}/v0.1/servers?", base());
        assert!(stderr.contains(&url), "{case}: {stderr}");
        assert!(
            stderr.contains(&format!("(page {page})")),
            "{case}: {stderr}"
        );
        assert!(stderr.contains(says), "{case}: {stderr}");
        assert!(!out.exists(), "{case}: nothing half written");
        assert_eq!(std::fs::read_dir(out.parent().unwrap()).unwrap().count(), 0);
    }
}

#[test]
fn a_census_of_a_failing_registry_stops_before_any_install() {
    let o = Command::new(BIN)
        .args(["census", "--registry"])
        .arg(format!("{}/status500", base()))
        .args(["--scenario", "close"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("(page 2): HTTP status 500"), "{stderr}");
    assert!(!stderr.contains("install"), "{stderr}");
}
