//! The official MCP conformance suite's result layout (`@modelcontextprotocol/conformance`), so
//! that tools reading its results also read ours.
//!
//! That suite writes one directory per scenario run, `server-<scenario>-<timestamp>/`, holding
//! `checks.json`: a JSON array of `ConformanceCheck` objects (`id`, `name`, `description`,
//! `status`, `timestamp`, optional `specReferences` `[{id, url}]`, `details`, `errorMessage`,
//! `logs`), pretty-printed with two spaces (its `src/runner/server.ts`, `src/types.ts`). Its
//! readers find results with the glob `**/checks.json` and count a scenario as passed when it
//! has a SUCCESS and no FAILURE.
//!
//! Ours is that layout exactly, flat: one directory per server × scenario,
//! `server-<server>+<scenario>-<timestamp>/checks.json`, where the official scenario name is
//! `<server>+<scenario>` (each part one safe path segment, so `close:java` is `close-java` and
//! the name has no colon for the baseline's `<scenario>:<check-id>` grammar; `+` never
//! occurs in a segment, so the name splits back unambiguously). The timestamp is
//! `Date.toISOString()` with `:` and `.` as `-`, the text `JSON.stringify(checks, null, 2)`
//! (integral numbers without `.0`, no trailing newline). Statuses are already the official
//! vocabulary; our rule ids are the check ids. A case that ran but cannot be judged follows
//! the official "Not testable" convention: its skipped checks are FAILUREs whose
//! `errorMessage` starts `Not testable:` and whose `details.untestable` is true. The
//! timestamp is given by the caller (this module reads no clock).

use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::model::official::scenario_name;
use crate::model::{Check, JudgedCase, Report, Status};

/// The file each scenario directory holds (the official name).
pub const CHECKS_FILE: &str = "checks.json";

/// One check as the official suite's `ConformanceCheck` interface has it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConformanceCheck {
    pub id: String,
    pub name: String,
    pub description: String,
    pub status: Status,
    pub timestamp: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spec_references: Vec<ConformanceReference>,
    pub details: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// The official `SpecReference`: a short id and the URL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConformanceReference {
    pub id: String,
    pub url: String,
}

/// Every file of the layout, as (path relative to the output directory, contents), in report
/// order. `timestamp` is an ISO 8601 UTC string (see [`iso8601`]); it names the directories
/// too (see [`dir_stamp`]).
pub fn files(report: &Report, timestamp: &str) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for r in &report.results {
        let path = case_dir(&r.server, &r.scenario.to_string(), timestamp).join(CHECKS_FILE);
        // Merged shards may repeat a case: the first wins, as in every other view.
        if files.iter().any(|(p, _)| *p == path) {
            continue;
        }
        files.push((path, stringify(&case_checks(report, r, timestamp))));
    }
    for u in &report.not_testable {
        let server = format!("{}-{}", u.line, u.version);
        let path = case_dir(&server, UNTESTED_SCENARIO, timestamp).join(CHECKS_FILE);
        files.push((path, stringify(&[untested_check(u, timestamp)])));
    }
    files
}

/// The scenario part of an `--sdk` version that yielded no server (nothing ran).
pub const UNTESTED_SCENARIO: &str = "sdk";

/// `JSON.stringify(checks, null, 2)`: two-space indentation, keys in the order the official
/// interface declares them, no trailing newline, and numbers as JavaScript writes them (an
/// integral float has no `.0`).
pub fn stringify(checks: &[ConformanceCheck]) -> String {
    let mut checks = checks.to_vec();
    for c in &mut checks {
        c.details.values_mut().for_each(js_numbers);
    }
    serde_json::to_string_pretty(&checks).expect("checks serialize")
}

/// `12.0` → `12`, recursively: JavaScript has one number type and prints no `.0`.
fn js_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
                    *v = Value::from(f as i64);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(js_numbers),
        Value::Object(o) => o.values_mut().for_each(js_numbers),
        _ => {}
    }
}

/// What `--format conformance` prints: each file of the layout and its statuses.
pub fn index(report: &Report) -> String {
    let mut out = String::new();
    for r in &report.results {
        let mut counts: Vec<(Status, usize)> = Vec::new();
        for c in case_checks(report, r, "") {
            match counts.iter_mut().find(|(s, _)| *s == c.status) {
                Some((_, n)) => *n += 1,
                None => counts.push((c.status, 1)),
            }
        }
        counts.sort_by_key(|(s, _)| s.to_string());
        let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
        let path = case_dir(&r.server, &r.scenario.to_string(), "").join(CHECKS_FILE);
        out.push_str(&format!("{}  {}\n", path.display(), counts.join(", ")));
    }
    out
}

/// `server-<server>+<scenario>-<timestamp>`, as the official runner names a result
/// directory (`server-<scenario>-<Date.toISOString() with : and . as ->`); without a
/// timestamp (the index printed to the terminal), `server-<server>+<scenario>`.
pub fn case_dir(server: &str, scenario: &str, timestamp: &str) -> PathBuf {
    let name = format!("server-{}", scenario_name(server, scenario));
    PathBuf::from(if timestamp.is_empty() {
        name
    } else {
        format!("{name}-{}", dir_stamp(timestamp))
    })
}

/// The timestamp as a directory name has it: `:` and `.` become `-`.
pub fn dir_stamp(timestamp: &str) -> String {
    timestamp.replace([':', '.'], "-")
}

/// The checks of one case. A case that could not run and has no checks still yields one
/// failing check (named after its error kind), so that readers scoring a scenario by its
/// checks count it as failed.
fn case_checks(report: &Report, r: &JudgedCase, timestamp: &str) -> Vec<ConformanceCheck> {
    if r.checks.is_empty() {
        if let Some(e) = &r.error {
            let id = format!("case-{}", e.kind);
            return vec![ConformanceCheck {
                name: pascal_case(&id),
                id,
                description: "The case could not be run".into(),
                status: Status::Failure,
                timestamp: timestamp.into(),
                spec_references: Vec::new(),
                details: case_details(report, r),
                error_message: Some(e.message.clone()),
            }];
        }
    }
    let mut checks: Vec<ConformanceCheck> = r
        .checks
        .iter()
        .map(|c| conformance_check(report, c, r, timestamp))
        .collect();
    if let Some(nt) = &r.not_testable {
        // The official convention: what could not be tested is a FAILURE that says so.
        let said = format!("Not testable: {}", nt.message);
        for (c, ours) in checks.iter_mut().zip(&r.checks) {
            if ours.status == Status::Skipped {
                c.status = Status::Failure;
                c.error_message = Some(if ours.message.starts_with("Not testable:") {
                    ours.message.clone()
                } else {
                    said.clone()
                });
                c.details.insert("untestable".into(), json!(true));
                c.details
                    .insert("untestableReason".into(), json!(nt.reason));
            }
        }
        if checks.is_empty() {
            let id = "case-not-testable".to_string();
            let mut details = case_details(report, r);
            details.insert("untestable".into(), json!(true));
            details.insert("untestableReason".into(), json!(nt.reason));
            checks.push(ConformanceCheck {
                name: pascal_case(&id),
                id,
                description: "The case ran but cannot be judged".into(),
                status: Status::Failure,
                timestamp: timestamp.into(),
                spec_references: Vec::new(),
                details,
                error_message: Some(said),
            });
        }
    }
    checks
}

/// An `--sdk` version that yielded no server: one "Not testable" FAILURE.
fn untested_check(u: &crate::model::Untested, timestamp: &str) -> ConformanceCheck {
    let id = "sdk-not-testable".to_string();
    let mut details = Map::new();
    details.insert("sdk".into(), json!(u.line));
    details.insert("sdkVersion".into(), json!(u.version));
    details.insert("untestable".into(), json!(true));
    ConformanceCheck {
        name: pascal_case(&id),
        id,
        description: "The SDK version could not be built into a server".into(),
        status: Status::Failure,
        timestamp: timestamp.into(),
        spec_references: Vec::new(),
        details,
        error_message: Some(format!("Not testable: {}", u.reason)),
    }
}

fn conformance_check(
    report: &Report,
    c: &Check,
    r: &JudgedCase,
    timestamp: &str,
) -> ConformanceCheck {
    let id = c.id.as_str();
    let rule = report.rules.get(&c.id);
    let mut details = case_details(report, r);
    details.insert("level".into(), json!(c.level));
    details.insert("outcome".into(), json!(c.outcome));
    details.insert("message".into(), json!(c.message));
    if let Some(rule) = rule {
        details.insert("basis".into(), json!(rule.basis));
    }
    ConformanceCheck {
        id: id.to_string(),
        name: pascal_case(id),
        description: rule.map_or_else(|| id.to_string(), |x| x.title.clone()),
        status: c.status,
        timestamp: timestamp.into(),
        spec_references: c
            .spec_references
            .iter()
            .map(|x| ConformanceReference {
                id: reference_id(&x.url),
                url: x.url.clone(),
            })
            .collect(),
        details,
        // The official suite explains a check that did not pass in `errorMessage`.
        error_message: c.status.is_miss().then(|| c.message.clone()),
    }
}

/// What every check of a case shares: where it ran and how the server ended.
fn case_details(report: &Report, r: &JudgedCase) -> Map<String, Value> {
    let mut d = Map::new();
    d.insert("server".into(), json!(r.server));
    d.insert("scenario".into(), json!(r.scenario.to_string()));
    d.insert("specRevision".into(), json!(report.spec.to_string()));
    d.insert("stage".into(), json!(r.stage));
    d.insert("exitMs".into(), json!(r.exit_ms));
    d.insert("exitStatus".into(), json!(r.exit_status));
    d.insert("leftovers".into(), json!(r.leftovers.len()));
    if let Some(e) = &r.error {
        d.insert(
            "error".into(),
            json!({ "kind": e.kind, "message": e.message }),
        );
    }
    if let Some(rep) = &r.repeat {
        d.insert("runs".into(), json!(rep.runs.len()));
        d.insert("flaky".into(), json!(rep.flaky));
    }
    d
}

/// `stdio-exit-on-eof` → `StdioExitOnEof`: the official names are their ids in PascalCase
/// (`server-info` → `ServerInfo`).
pub fn pascal_case(id: &str) -> String {
    id.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|f| f.to_ascii_uppercase().to_string() + cs.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A short id for a spec URL in the official style (`MCP-Lifecycle`): the page and anchor
/// after `/specification/<revision>/`, without the section (`basic/`, `server/`, ...).
/// `.../basic/transports/stdio` → `MCP-Transports-Stdio`; `.../basic/lifecycle#shutdown` →
/// `MCP-Lifecycle-Shutdown`. Other URLs keep their last path segment.
pub fn reference_id(url: &str) -> String {
    let (path, anchor) = url.split_once('#').unwrap_or((url, ""));
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let page: Vec<&str> = match parts.iter().position(|p| *p == "specification") {
        // specification / <revision> / <section> / page...
        Some(i) if parts.len() > i + 3 => parts[i + 3..].to_vec(),
        Some(i) if parts.len() > i + 2 => parts[i + 2..].to_vec(),
        _ => parts.last().copied().into_iter().collect(),
    };
    let words: Vec<String> = page
        .iter()
        .copied()
        .chain((!anchor.is_empty()).then_some(anchor))
        .map(pascal_case)
        .filter(|w| !w.is_empty())
        .collect();
    format!("MCP-{}", words.join("-"))
}

/// `2025-01-02T03:04:05.678Z`, the form JavaScript's `Date.toISOString()` writes.
pub fn iso8601(t: SystemTime) -> String {
    let ts = jiff::Timestamp::try_from(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::official::segment;
    use crate::test_support as fixture;
    use std::path::Path;
    use std::time::{Duration, UNIX_EPOCH};

    const TS: &str = "2026-07-28T12:00:00.000Z";

    fn report() -> Report {
        fixture::report_for(fixture::SPEC, fixture::results(fixture::SPEC))
    }

    #[test]
    fn one_file_per_server_and_scenario() {
        let files = files(&report(), TS);
        let paths: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(
            paths,
            [
                "server-timer+close-2026-07-28T12-00-00-000Z/checks.json",
                "server-timer+crash-2026-07-28T12-00-00-000Z/checks.json",
                "server-fixed+close-2026-07-28T12-00-00-000Z/checks.json",
                "server-fixed+crash-2026-07-28T12-00-00-000Z/checks.json",
                "server-mute+close-2026-07-28T12-00-00-000Z/checks.json",
            ]
        );
        assert_eq!(files, super::files(&report(), TS), "deterministic");
        // JSON.stringify(checks, null, 2): no trailing newline, no `.0` on integral numbers.
        for (_, text) in &files {
            assert!(text.ends_with(']'), "{text}");
            assert!(!text.contains(".0,") && !text.contains(".0\n"), "{text}");
        }
    }

    #[test]
    fn checks_keep_rule_ids_and_statuses() {
        let files = files(&report(), TS);
        let checks: Value = serde_json::from_str(&files[0].1).unwrap();
        let first = &checks[0];
        assert_eq!(first["id"], "stdio-exit-on-eof");
        assert_eq!(first["name"], "StdioExitOnEof");
        assert_eq!(first["status"], "WARNING");
        assert_eq!(first["timestamp"], TS);
        assert!(first["description"].as_str().unwrap().len() > 5);
        assert!(first["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("did not exit within 1000 ms"));
        assert_eq!(first["details"]["server"], "timer");
        assert_eq!(first["details"]["scenario"], "close");
        assert_eq!(first["details"]["specRevision"], fixture::SPEC);
        assert!(first["specReferences"][0]["id"]
            .as_str()
            .unwrap()
            .starts_with("MCP-"));
        // A passing check has no errorMessage; its message stays in details.
        assert!(checks[1].get("errorMessage").is_none());
        assert_eq!(checks[1]["status"], "SUCCESS");
        assert_eq!(
            checks[1]["details"]["message"],
            "ended before SIGKILL (sigterm)"
        );
        assert!(
            files[0].1.starts_with("[\n  {\n    \"id\""),
            "two-space pretty JSON"
        );
    }

    #[test]
    fn a_case_without_checks_still_fails() {
        let mut rep = report();
        rep.results[4].checks.clear();
        let files = files(&rep, TS);
        let checks: Value = serde_json::from_str(&files[4].1).unwrap();
        assert_eq!(checks.as_array().unwrap().len(), 1);
        assert_eq!(checks[0]["id"], "case-handshake-timeout");
        assert_eq!(checks[0]["name"], "CaseHandshakeTimeout");
        assert_eq!(checks[0]["status"], "FAILURE");
        assert_eq!(checks[0]["details"]["error"]["kind"], "handshake-timeout");
    }

    #[test]
    fn segments_are_safe_and_scenarios_distinct() {
        assert_eq!(segment("close:java"), "close-java");
        assert_eq!(segment("node-1.30.0-timer"), "node-1.30.0-timer");
        assert_eq!(segment("a/b c"), "a-b-c");
        assert_eq!(segment(".."), "_..");
        assert_eq!(segment(""), "_");
        assert_eq!(
            case_dir("x", "close:typescript", ""),
            Path::new("server-x+close-typescript")
        );
        assert_eq!(
            scenario_name("node-1.30.0-timer", "close:java"),
            "node-1.30.0-timer+close-java"
        );
        assert!(!scenario_name("a:b", "close:java").contains(':'));
        let profiles = crate::config::profiles::Profiles::bundled();
        let ids = crate::config::scenarios::all_ids(&profiles);
        let mut dirs: Vec<String> = ids.iter().map(|s| segment(&s.to_string())).collect();
        dirs.sort();
        dirs.dedup();
        assert_eq!(dirs.len(), ids.len(), "{ids:?}");
    }

    #[test]
    fn names_and_reference_ids() {
        assert_eq!(
            pascal_case("process-no-leaked-descendants"),
            "ProcessNoLeakedDescendants"
        );
        let base = "https://modelcontextprotocol.io/specification/2025-06-18";
        assert_eq!(
            reference_id(&format!("{base}/basic/lifecycle#shutdown")),
            "MCP-Lifecycle-Shutdown"
        );
        assert_eq!(
            reference_id(&format!("{base}/basic/transports#stdio")),
            "MCP-Transports-Stdio"
        );
        assert_eq!(reference_id("https://example.com/x/y-z"), "MCP-YZ");
    }

    #[test]
    fn timestamps_as_javascript_writes_them() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_210_096_789);
        assert_eq!(iso8601(t), "2024-02-29T12:34:56.789Z");
        let t = UNIX_EPOCH + Duration::from_secs(4_102_444_799);
        assert_eq!(iso8601(t), "2099-12-31T23:59:59.000Z");
        // Milliseconds are cut, not rounded, as Date keeps them.
        let t = UNIX_EPOCH + Duration::from_micros(1_999_999);
        assert_eq!(iso8601(t), "1970-01-01T00:00:01.999Z");
        assert_eq!(
            dir_stamp("2024-02-29T12:34:56.789Z"),
            "2024-02-29T12-34-56-789Z"
        );
    }

    #[test]
    fn index_lists_files_and_counts() {
        let idx = index(&report());
        let lines: Vec<&str> = idx.lines().collect();
        assert_eq!(lines.len(), 5, "{idx}");
        assert_eq!(
            lines[0],
            "server-timer+close/checks.json  2 SUCCESS, 1 WARNING"
        );
        assert!(
            lines[4].starts_with("server-mute+close/checks.json  "),
            "{idx}"
        );
    }

    #[test]
    fn not_testable_is_a_failure_that_says_so() {
        use crate::model::{NotTestable, NotTestableReason, Untested};
        let mut rep = report();
        let r = &mut rep.results[0];
        r.not_testable = Some(NotTestable {
            reason: NotTestableReason::NeedsCredentials,
            message: "needs credentials".into(),
        });
        r.checks[0].status = Status::Skipped;
        r.checks[0].message = "Not testable: needs credentials (GITHUB_TOKEN)".into();
        rep.not_testable.push(Untested {
            line: "typescript".into(),
            version: "0.1.0".into(),
            reason: "no release builds".into(),
        });
        let files = files(&rep, TS);
        let checks: Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(checks[0]["status"], "FAILURE");
        assert_eq!(
            checks[0]["errorMessage"],
            "Not testable: needs credentials (GITHUB_TOKEN)"
        );
        assert_eq!(checks[0]["details"]["untestable"], true);
        // Its passing checks stay what they were.
        assert_eq!(checks[1]["status"], "SUCCESS");
        let (path, text) = files.last().unwrap();
        assert_eq!(
            path,
            Path::new("server-typescript-0.1.0+sdk-2026-07-28T12-00-00-000Z/checks.json")
        );
        let checks: Value = serde_json::from_str(text).unwrap();
        assert_eq!(checks[0]["status"], "FAILURE");
        assert_eq!(checks[0]["errorMessage"], "Not testable: no release builds");
        assert_eq!(checks[0]["details"]["untestable"], true);
    }
}
