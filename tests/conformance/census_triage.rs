//! `--triage` on real servers (the bundled SDK fixtures, under the census's scenarios: the
//! default endings and every host profile): a server that ignores end of input gets the full
//! set; one that exits cleanly stops at the triage set, and its report, badge and page say
//! so.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const GOOD: &str = "node-1.32.2-fixed";
const BAD: &str = "node-1.32.2-timer";

fn cases_of<'a>(report: &'a Value, server: &str) -> Vec<&'a str> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["server"] == server)
        .map(|r| r["scenario"].as_str().unwrap())
        .collect()
}

#[test]
fn census_triage_gives_the_full_set_only_to_the_server_it_found_something_in() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("census-triage");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let report_path = dir.join("r.json");
    let out = Command::new(BIN)
        .args([
            "run",
            "--hosts",
            "--triage",
            "--format",
            "json",
            "--no-baseline",
        ])
        .args(["--manifest", &format!("conformance/servers/{GOOD}.toml")])
        .args(["--manifest", &format!("conformance/servers/{BAD}.toml")])
        .arg("--output")
        .arg(&report_path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 1: the timer server misses rules; 2 when the machine's load decided a case as well.
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{:?}\n{stderr}",
        out.status
    );
    let report: Value = serde_json::from_slice(&fs::read(&report_path).unwrap()).unwrap();
    let pass = |s: &str| report["servers"][s]["judged"]["pass"].as_str().unwrap();
    assert_eq!(pass(BAD), "full");
    // A triage case the machine's load decided found "something": worth the full set.
    let bound = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["server"] == GOOD && !r["machine_bound"].is_null());
    if bound {
        assert_eq!(pass(GOOD), "full");
        eprintln!("{GOOD}: a triage case was machine-bound, so it ran the full set");
        return;
    }
    assert!(stderr.contains("1 found something"), "{stderr}");
    assert_eq!(pass(GOOD), "triage");
    // The good server ran exactly the triage set; the bad one that and everything else.
    let triage: Vec<String> =
        toml::from_str::<toml::Table>(&fs::read_to_string("conformance/endings.toml").unwrap())
            .unwrap()["census"]["triage"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["scenario"].as_str().unwrap().to_string())
            .collect();
    let mut good = cases_of(&report, GOOD);
    good.sort();
    let mut want: Vec<&str> = triage.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(good, want);
    let bad = cases_of(&report, BAD);
    assert!(bad.len() > 4 * triage.len(), "{bad:?}");
    assert!(triage.iter().all(|t| bad.contains(&t.as_str())), "{bad:?}");
    assert!(
        bad.contains(&"close:vscode") && bad.contains(&"inflight"),
        "{bad:?}"
    );
    // The site says which pass judged each server: the badge and the leaderboard.
    let site = dir.join("site");
    let rendered = Command::new(BIN)
        .args(["report", "site", "--from"])
        .arg(&report_path)
        .arg("--output")
        .arg(&site)
        .output()
        .unwrap();
    assert!(rendered.status.success(), "{rendered:?}");
    let badge = fs::read_to_string(site.join(format!("badges/{GOOD}.json"))).unwrap();
    assert!(
        badge.contains("(triage)") && badge.contains("green"),
        "{badge}"
    );
    let bad_badge = fs::read_to_string(site.join(format!("badges/{BAD}.json"))).unwrap();
    assert!(!bad_badge.contains("triage"), "{bad_badge}");
    let md = fs::read_to_string(site.join("leaderboard.md")).unwrap();
    assert!(md.contains("SUCCESS · triage only"), "{md}");
    let page = fs::read_to_string(site.join(format!("servers/{GOOD}.html"))).unwrap();
    assert!(page.contains("by the triage set only"), "{page}");
}
