//! The history over stored census reports: a server that got worse, one that got better, one
//! unchanged and carried forward, and the week-over-week counts by SDK and launcher.

use super::*;
use crate::model::{CensusRun, Judged, PackageInfo, Pass, Stage};
use crate::test_support::{report_of, result};

/// A census on `date` of three servers: `a` exits on EOF or needs SIGTERM (`a_slow`), `b`
/// the opposite, `c` always exits on EOF, carried forward from 2026-11-29 when `carried`.
fn census(date: &str, a_slow: bool, carried: bool) -> Report {
    let stage = |slow| if slow { Stage::Sigterm } else { Stage::Eof };
    let ms = |slow| if slow { 2004.0 } else { 3.0 };
    let mut r = report_of(vec![
        result("a-1", "close", stage(a_slow), ms(a_slow)),
        result("b-1", "close", stage(!a_slow), ms(!a_slow)),
        result("c-1", "close", Stage::Eof, 3.0),
    ]);
    for (s, launcher, sdk) in [
        ("a-1", "npx", "typescript"),
        ("b-1", "uvx", "python"),
        ("c-1", "npx", "typescript"),
    ] {
        let info = r.servers.entry(s.into()).or_default();
        info.sdk = Some(sdk.into());
        info.package = Some(PackageInfo {
            name: format!("io.github.x/{}", &s[..1]),
            version: "1".into(),
            launcher: launcher.into(),
            ..PackageInfo::default()
        });
        let carried = carried && s == "c-1";
        info.judged = Some(Judged {
            pass: Pass::Full,
            date: if carried {
                "2026-11-29".into()
            } else {
                date.into()
            },
            carried,
        });
    }
    r.census = Some(CensusRun {
        date: date.into(),
        dropped: Vec::new(),
    });
    r
}

#[test]
fn each_badge_change_is_dated_and_the_week_says_what_got_better_and_worse() {
    let mut h = History::default();
    update(&mut h, &census("2026-11-29", false, false));
    update(&mut h, &census("2026-12-06", true, true));
    assert_eq!(h.runs, ["2026-11-29", "2026-12-06"]);
    let a = &h.servers["io.github.x/a"];
    assert_eq!(a.verdicts.len(), 2);
    assert_eq!(a.verdicts[1].since, "2026-12-06");
    assert_eq!(a.verdicts[1].color, "yellow");
    // Unchanged and carried forward: one verdict, from when it was judged.
    let c = &h.servers["io.github.x/c"];
    assert_eq!(c.verdicts.len(), 1);
    assert_eq!(c.verdicts[0].since, "2026-11-29");
    let lines = server_lines(&h, "io.github.x/a");
    assert!(
        lines[0].starts_with("Now: ") && lines[0].contains("since 2026-12-06"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 2);
    let w = week(&h);
    assert_eq!(
        (w.from.as_str(), w.to.as_str()),
        ("2026-11-29", "2026-12-06")
    );
    let moved: Vec<(&str, bool)> = w
        .moves
        .iter()
        .map(|m| (m.name.as_str(), m.better))
        .collect();
    assert_eq!(moved, [("io.github.x/a", false), ("io.github.x/b", true)]);
    assert_eq!(w.by_launcher, [("npx".into(), 0, 1), ("uvx".into(), 1, 0)]);
    assert_eq!(
        w.by_sdk,
        [("python".into(), 1, 0), ("typescript".into(), 0, 1)]
    );
    // The same run again changes nothing; the history round-trips through JSON.
    let before = h.clone();
    update(&mut h, &census("2026-12-06", true, true));
    assert_eq!(h, before);
    let json = serde_json::to_string(&h).unwrap();
    assert_eq!(serde_json::from_str::<History>(&json).unwrap(), h);
    let files = week_files(&h);
    let md = &files[1].1;
    assert!(md.contains("- worse `io.github.x/a`"), "{md}");
    assert!(files[0].1.contains("2026-11-29 to 2026-12-06"));
}

#[test]
fn a_stored_census_report_starts_a_history_keyed_by_registry_name_and_package() {
    let text =
        std::fs::read_to_string("docs/book/data/census-close-repeat3-2026-12-02.json").unwrap();
    let mut r: Report = serde_json::from_str(&text).unwrap();
    let mut h = History::default();
    update(&mut h, &r);
    assert!(
        h.servers.is_empty(),
        "a report without a census date is no run"
    );
    r.census = Some(CensusRun {
        date: "2026-12-02".into(),
        dropped: Vec::new(),
    });
    update(&mut h, &r);
    assert_eq!(h.servers.len(), r.servers.len());
    let cw =
        &h.servers["io.github.awslabs/cloudwatch-mcp-server (pypi awslabs.cloudwatch-mcp-server)"];
    assert_eq!((cw.launcher.as_str(), cw.verdicts.len()), ("uvx", 1));
    assert_eq!(week(&h), Week::default());
}

#[test]
fn two_packages_of_one_registry_server_keep_histories_apart_and_an_old_history_is_taken_over() {
    let mut r = census("2026-12-06", false, false);
    for (s, registry, identifier) in [("a-1", "npm", "@x/a"), ("b-1", "pypi", "x-a")] {
        let p = r.servers.get_mut(s).unwrap().package.as_mut().unwrap();
        p.name = "io.github.x/a".into();
        p.registry = registry.into();
        p.identifier = identifier.into();
    }
    let mut h = History::default();
    // Written before keys named the package: the registry name alone.
    h.servers.insert(
        "io.github.x/a".into(),
        ServerHistory {
            name: "io.github.x/a".into(),
            verdicts: vec![Verdict {
                since: "2026-11-29".into(),
                color: "green".into(),
                message: "old".into(),
                version: "0".into(),
            }],
            ..ServerHistory::default()
        },
    );
    update(&mut h, &r);
    let npm = &h.servers["io.github.x/a (npm @x/a)"];
    let pypi = &h.servers["io.github.x/a (pypi x-a)"];
    assert_eq!(
        npm.verdicts[0].message, "old",
        "the old record is the first package's"
    );
    assert_eq!(npm.verdicts.len(), 2);
    assert_eq!(pypi.verdicts.len(), 1);
    assert_eq!(
        (npm.name.as_str(), pypi.name.as_str()),
        ("io.github.x/a", "io.github.x/a")
    );
    assert!(!h.servers.contains_key("io.github.x/a"));
}
