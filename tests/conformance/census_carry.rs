//! `census --previous`: real servers from the small listing judged on one date, then a week
//! later against a listing where one server has a new version and one is gone: the unchanged
//! server keeps its verdict, carried forward with the date it was judged; the updated one
//! runs again; the removed one is dropped and named.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::census::census_with;

#[test]
fn census_previous_carries_unchanged_servers_runs_updated_ones_and_names_removed_ones() {
    let week1 = census_with(
        "conformance/census/small.json",
        "carry-week1",
        false,
        &["--scenario", "close", "--date", "2026-11-29"],
    );
    let before = week1.report();
    assert_eq!(before["census"]["date"], "2026-11-29");
    // A week later: server-time published a new registry version, stripe left the registry.
    let mut listing: Value =
        serde_json::from_str(&fs::read_to_string("conformance/census/small.json").unwrap())
            .unwrap();
    let servers = listing["servers"].as_array_mut().unwrap();
    servers.retain(|s| s["server"]["name"] != "io.github.stripe/mcp");
    for s in servers.iter_mut() {
        if s["server"]["name"] == "io.github.modelcontextprotocol/server-time" {
            s["server"]["version"] = "2026.10.20".into();
        }
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("census-carry");
    fs::create_dir_all(&dir).unwrap();
    let week2_listing = dir.join("week2.json");
    fs::write(&week2_listing, listing.to_string()).unwrap();
    let previous = Path::new(env!("CARGO_TARGET_TMPDIR")).join("census-carry-week1/r.json");
    let week2 = census_with(
        week2_listing.to_str().unwrap(),
        "carry-week2",
        false,
        &[
            "--scenario",
            "close",
            "--date",
            "2026-12-06",
            "--previous",
            previous.to_str().unwrap(),
        ],
    );
    let err = week2.stderr();
    assert!(
        err.contains("1 carried forward, 1 new or updated to run, 1 dropped"),
        "{err}"
    );
    assert!(err.contains("dropped io.github.stripe/mcp"), "{err}");
    let after = week2.report();
    let judged = |s: &str| after["servers"][s]["judged"].clone();
    let everything = "modelcontextprotocol-server-everything-2026.8.31";
    assert_eq!(judged(everything)["date"], "2026-11-29");
    assert_eq!(judged(everything)["carried"], true);
    let time = "mcp-server-time-2026.10.19";
    assert_eq!(judged(time)["date"], "2026-12-06");
    assert_eq!(judged(time).get("carried"), None);
    assert_eq!(after["servers"][time]["package"]["version"], "2026.10.20");
    assert!(after["servers"].get("stripe-mcp-0.3.3").is_none());
    assert_eq!(after["census"]["dropped"][0], "io.github.stripe/mcp");
    // The carried cases are the previous run's, unchanged.
    let case = |r: &Value, s: &str| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["server"] == s)
            .cloned()
            .unwrap()
    };
    assert_eq!(case(&after, everything), case(&before, everything));
    assert_eq!(after["summary"]["cases"], 2);
}
