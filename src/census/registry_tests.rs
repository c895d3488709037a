use super::*;
use std::collections::BTreeMap;

fn entry(name: &str, version: &str, meta: Value) -> Value {
    json!({
        "server": { "name": name, "version": version, "description": "d" },
        "_meta": { OFFICIAL: meta },
    })
}

fn active(name: &str) -> Value {
    entry(
        name,
        "1.0.0",
        json!({"status": "active", "isLatest": true, "updatedAt": "2026-12-01T00:00:00Z"}),
    )
}

fn page(servers: Vec<Value>, next: Option<&str>) -> Response {
    Response {
        status: 200,
        body: json!({"servers": servers, "metadata": {"nextCursor": next, "count": 1}}).to_string(),
    }
}

fn query() -> Query {
    Query {
        base: "http://127.0.0.1:1/".into(),
        updated_since: None,
    }
}

/// A registry of pages by URL; a URL it does not know is a 404.
fn serve(pages: BTreeMap<String, Response>) -> impl FnMut(&str) -> Result<Response, String> {
    move |url| {
        Ok(pages.get(url).cloned().unwrap_or(Response {
            status: 404,
            body: String::new(),
        }))
    }
}

fn names(s: &Snapshot) -> Vec<&str> {
    s.servers
        .iter()
        .map(|e| e["server"]["name"].as_str().unwrap())
        .collect()
}

#[test]
fn pages_are_followed_by_cursor_until_there_is_none() {
    let q = query();
    let pages = BTreeMap::from([
        (
            q.page_url("v0.1", None),
            page(vec![active("a")], Some("c/1=")),
        ),
        (
            q.page_url("v0.1", Some("c/1=")),
            page(vec![active("b")], None),
        ),
    ]);
    let s = read(&q, serve(pages)).unwrap();
    assert_eq!(names(&s), ["a", "b"]);
    assert_eq!((s.api, s.pages), ("v0.1", 2));
    assert!(q
        .page_url("v0.1", Some("c/1="))
        .ends_with("&cursor=c%2F1%3D"));
}

#[test]
fn the_older_api_is_asked_when_the_newer_answers_404() {
    let q = query();
    let pages = BTreeMap::from([(q.page_url("v0", None), page(vec![active("a")], None))]);
    let s = read(&q, serve(pages)).unwrap();
    assert_eq!((s.api, names(&s)), ("v0", vec!["a"]));
    let none = read(&q, serve(BTreeMap::new())).unwrap_err();
    assert!(matches!(
        none,
        McpRegistryError::Status {
            status: 404,
            page: 1,
            ..
        }
    ));
}

#[test]
fn snake_case_cursors_are_followed_too() {
    let p = parse_page(r#"{"servers":[],"metadata":{"next_cursor":"x"}}"#).unwrap();
    assert_eq!(p.next_cursor.as_deref(), Some("x"));
    let last = parse_page(r#"{"servers":[],"metadata":{"nextCursor":""}}"#).unwrap();
    assert_eq!(last.next_cursor, None);
}

#[test]
fn every_bad_page_is_one_error_naming_url_and_page() {
    let q = query();
    let second = q.page_url("v0.1", Some("1"));
    let with_second = |r: Response| {
        BTreeMap::from([
            (q.page_url("v0.1", None), page(vec![active("a")], Some("1"))),
            (second.clone(), r),
        ])
    };
    let status = Response {
        status: 500,
        body: "oops".into(),
    };
    let cut = Response {
        status: 200,
        body: r#"{"servers":[{"server":{"na"#.into(),
    };
    let shape = Response {
        status: 200,
        body: r#"{"servers":{}}"#.into(),
    };
    let looped = page(vec![active("b")], Some("1"));
    for (r, says) in [
        (status, "HTTP status 500"),
        (cut, "not valid JSON"),
        (shape, "not a registry page"),
        (looped, "cursor loop"),
    ] {
        let e = read(&q, serve(with_second(r))).unwrap_err().to_string();
        assert!(e.contains(&second) && e.contains("(page 2)"), "{e}");
        assert!(e.contains(says), "{e}");
    }
    let refused = read(&q, |_: &str| Err("connection refused".to_string())).unwrap_err();
    assert!(refused
        .to_string()
        .ends_with("(page 1): connection refused"));
}

#[test]
fn only_latest_active_entries_updated_since_are_kept_and_the_dropped_named() {
    let old = entry("a", "0.9.0", json!({"status": "active", "isLatest": false}));
    let deleted = entry("d", "2.0.0", json!({"status": "deleted", "isLatest": true}));
    let v0_deprecated = json!({"server": {"name": "e", "version": "1.0", "status": "deprecated"}});
    let stale = entry(
        "s",
        "1.0.0",
        json!({"status": "active", "updatedAt": "2025-01-01T00:00:00Z"}),
    );
    let served = vec![old, active("a"), deleted, v0_deprecated, stale, active("b")];
    let since = updated_since("2026-06-01").unwrap();
    let (kept, dropped) = keep(served, Some(since));
    let kept: Vec<_> = kept.iter().map(|e| e["server"]["name"].clone()).collect();
    assert_eq!(kept, [json!("a"), json!("b")]);
    let dropped: Vec<_> = dropped
        .iter()
        .map(|d| (d.name.as_str(), d.status.as_str()))
        .collect();
    assert_eq!(dropped, [("d", "deleted"), ("e", "deprecated")]);
}

#[test]
fn updated_since_takes_a_date_or_a_time() {
    let day = updated_since("2026-12-01").unwrap();
    assert_eq!(day, updated_since("2026-12-01T00:00:00Z").unwrap());
    assert!(updated_since("yesterday").is_err());
    let q = Query {
        updated_since: Some(day),
        ..query()
    };
    assert!(q
        .page_url("v0.1", None)
        .contains("&updated_since=2026-12-01T00%3A00%3A00Z"));
}

#[test]
fn a_snapshot_reads_back_as_the_same_listing() {
    let text = std::fs::read_to_string("conformance/census/small.json").unwrap();
    let listing: Value = serde_json::from_str(&text).unwrap();
    let s = Snapshot {
        query: query(),
        api: "v0.1",
        pages: 1,
        servers: listing["servers"].as_array().unwrap().clone(),
        dropped: Vec::new(),
    };
    let path = std::path::Path::new("snapshot.json");
    let back = crate::census::parse_listing(path, &s.to_listing()).unwrap();
    let direct = crate::census::parse_listing(path, &text).unwrap();
    assert_eq!(back, direct);
}
