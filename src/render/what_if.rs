//! The ecosystem what-if (`census --with-sdk`) in words: one sentence ("merging this changes
//! N of M servers: …"), then each server: changed (its endings before → after), unchanged
//! (replaced, same stages), or untouched and why; copies an override could not reach.

use std::fmt::Write as _;

use super::present::ms;
use crate::model::{EndingPair, Report, Stage, WhatIf, WhatIfServer};

fn stage(s: Option<Stage>, t: Option<f64>) -> String {
    match (s, t) {
        (Some(s), Some(t)) => format!("{s} {}", ms(t)),
        (Some(s), None) => s.to_string(),
        (None, _) => "no verdict".into(),
    }
}

fn pair(e: &EndingPair) -> String {
    format!(
        "{}: {} → {}{}",
        e.scenario,
        stage(e.before, e.before_ms),
        stage(e.after, e.after_ms),
        match (e.machine_bound, e.flaky) {
            (true, _) => " (machine-bound: re-run)",
            (_, true) => " (flaky: its runs differ)",
            _ => "",
        }
    )
}

/// The stage changes of a server, `close: sigterm → eof; exit: …` (stages only).
fn changes(s: &WhatIfServer) -> String {
    s.endings
        .iter()
        .filter(|e| e.changed())
        .map(|e| {
            let name = |x: Option<Stage>| x.map_or("no verdict".into(), |x| x.to_string());
            format!("{}: {} → {}", e.scenario, name(e.before), name(e.after))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// "merging this changes N of M servers: A (close: sigterm → eof), …" and what the rest are.
pub fn summary(w: &WhatIf) -> String {
    let changed: Vec<&WhatIfServer> = w.servers.iter().filter(|s| s.changed()).collect();
    let mut out = format!(
        "merging this changes {} of {} servers",
        changed.len(),
        w.servers.len()
    );
    if !changed.is_empty() {
        let list: Vec<String> = changed
            .iter()
            .map(|s| format!("{} ({})", s.server, changes(s)))
            .collect();
        let _ = write!(out, ": {}", list.join(", "));
    }
    let count = |f: &dyn Fn(&WhatIfServer) -> bool| w.servers.iter().filter(|s| f(s)).count();
    let undecided = count(&|s| s.undecided());
    let same = count(&|s| {
        s.after.is_some()
            && s.no_verdict.is_none()
            && s.broken.is_none()
            && !s.changed()
            && !s.undecided()
    });
    let no_verdict = count(&|s| s.no_verdict.is_some());
    let untouched = count(&|s| s.untouched.is_some());
    let broken = count(&|s| s.broken.is_some());
    let _ = write!(out, "; {same} replaced with the same stages");
    if broken > 0 {
        let _ = write!(
            out,
            ", {broken} broken by it (they ran before and no longer start with it)"
        );
    }
    if undecided > 0 {
        let _ = write!(
            out,
            ", {undecided} undecided (a stage differs where the machine decided it or its runs disagree: re-run)"
        );
    }
    if no_verdict > 0 {
        let _ = write!(out, ", {no_verdict} without a verdict on either side");
    }
    let _ = write!(out, ", {untouched} untouched");
    out
}

fn head(w: &WhatIf) -> String {
    let version = if w.version == w.replacement {
        String::new()
    } else {
        format!(", {}", w.version)
    };
    format!(
        "{} {}{version} in place of each install's {}",
        w.line, w.replacement, w.package
    )
}

fn before_versions(s: &WhatIfServer) -> String {
    let mut v: Vec<&str> = s.copies.iter().map(|c| c.version.as_str()).collect();
    v.dedup();
    v.join(", ")
}

/// The endings of a server that kept its stages: each one when they are few.
fn same(s: &WhatIfServer) -> String {
    match s.endings.len() {
        0 => "no ending ran on both sides".into(),
        1..=3 => s.endings.iter().map(pair).collect::<Vec<_>>().join("; "),
        n => format!("the same stage on all {n} endings"),
    }
}

/// One line per server (and per changed ending), and per copy not replaced.
fn server_lines(w: &WhatIf, s: &WhatIfServer) -> Vec<String> {
    // `server (1.32.2 → 1.33.0)`: what a replaced server held and what it got.
    let moved = format!("{} ({} → {})", s.server, before_versions(s), w.version);
    let mut lines = Vec::new();
    if let Some(u) = &s.untouched {
        lines.push(format!("untouched  {}: {}", s.server, u.label(&w.package)));
    } else if let Some(said) = &s.broken {
        lines.push(format!(
            "broken     {moved}: ran before; with it, it no longer starts: {said}"
        ));
    } else if s.changed() {
        lines.push(format!("changed    {moved}"));
        for e in s
            .endings
            .iter()
            .filter(|e| e.changed() || e.machine_bound || e.flaky)
        {
            lines.push(format!("           {}", pair(e)));
        }
    } else if s.undecided() {
        let differ: Vec<String> = s
            .endings
            .iter()
            .filter(|e| e.before != e.after)
            .map(pair)
            .collect();
        lines.push(format!("undecided  {moved}: {}", differ.join("; ")));
    } else if let Some(why) = &s.no_verdict {
        lines.push(format!("no verdict {moved}: {why}, on both sides"));
    } else {
        lines.push(format!("unchanged  {moved}: {}", same(s)));
    }
    for c in &s.not_replaced {
        let how = if c.bundled { ", bundled" } else { "" };
        lines.push(format!(
            "           not replaced: {} ({}{how})",
            c.path, c.version
        ));
    }
    lines
}

/// The terminal section.
pub fn text(report: &Report, out: &mut String) {
    for w in &report.with_sdk {
        let _ = writeln!(out, "\nWITH SDK {}: {}", head(w), summary(w));
        for s in &w.servers {
            for l in server_lines(w, s) {
                let _ = writeln!(out, "  {l}");
            }
        }
    }
}

/// The Markdown table's cells of one server, unescaped: server, SDK before, result, the
/// endings that differ (or the unchanged ones). `render::markdown` escapes and writes them.
pub fn row(w: &WhatIf, s: &WhatIfServer) -> [String; 4] {
    let differ = |keep: &dyn Fn(&EndingPair) -> bool| -> String {
        let v: Vec<String> = s.endings.iter().filter(|e| keep(e)).map(pair).collect();
        v.join("; ")
    };
    let (mut result, endings) = match (&s.untouched, &s.no_verdict) {
        (Some(u), _) => (format!("untouched: {}", u.label(&w.package)), String::new()),
        (None, Some(why)) => (format!("no verdict: {why}"), String::new()),
        _ if s.broken.is_some() => (
            "broken: ran before, no longer starts".into(),
            s.broken.clone().unwrap_or_default(),
        ),
        _ if s.undecided() => ("undecided: re-run".into(), differ(&|e| e.before != e.after)),
        _ if s.changed() => ("changed".into(), differ(&EndingPair::changed)),
        _ => ("unchanged".into(), same(s)),
    };
    if !s.not_replaced.is_empty() {
        let _ = write!(result, " ({} cop(ies) not replaced)", s.not_replaced.len());
    }
    [s.server.clone(), before_versions(s), result, endings]
}

/// The Markdown section's heading: `With <line> <replacement> in place of ...`.
pub fn title(w: &WhatIf) -> String {
    format!("With {}", head(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SdkCopy, Untouched};

    fn server(name: &str, before: Stage, after: Stage) -> WhatIfServer {
        WhatIfServer {
            server: name.into(),
            after: Some(format!("{name}.with-typescript-1.24.0")),
            copies: vec![SdkCopy {
                path: "node_modules/@modelcontextprotocol/sdk".into(),
                version: "1.32.2".into(),
                bundled: false,
            }],
            replaced: vec![],
            not_replaced: vec![],
            untouched: None,
            no_verdict: None,
            broken: None,
            endings: vec![EndingPair {
                scenario: "close".parse().unwrap(),
                before: Some(before),
                after: Some(after),
                before_ms: Some(2100.0),
                after_ms: Some(40.0),
                machine_bound: false,
                flaky: false,
            }],
        }
    }

    fn what_if() -> WhatIf {
        let mut gitlab = server("gitlab", Stage::Sigterm, Stage::Eof);
        let mut bound = gitlab.endings[0].clone();
        bound.scenario = "inflight".parse().unwrap();
        bound.machine_bound = true;
        gitlab.endings.push(bound);
        let mut time = server("time", Stage::Eof, Stage::Eof);
        time.after = None;
        time.copies.clear();
        time.endings.clear();
        time.untouched = Some(Untouched::OtherRegistry {
            registry: "pypi".into(),
        });
        WhatIf {
            line: "typescript".into(),
            package: "@modelcontextprotocol/sdk".into(),
            replacement: "1.24.0".into(),
            version: "1.24.0".into(),
            servers: vec![gitlab, server("everything", Stage::Eof, Stage::Eof), time],
        }
    }

    #[test]
    fn a_race_or_the_machine_is_no_change() {
        let mut e = server("x", Stage::Sigterm, Stage::Eof).endings[0].clone();
        assert!(e.changed());
        e.flaky = true;
        assert!(!e.changed());
        assert!(pair(&e).ends_with("(flaky: its runs differ)"));
        e.flaky = false;
        e.machine_bound = true;
        assert!(!e.changed());
        let mut s = server("x", Stage::Sigterm, Stage::Eof);
        s.endings[0].flaky = true;
        assert!(s.undecided() && !s.changed());
        let w = WhatIf {
            servers: vec![s],
            ..what_if()
        };
        assert!(
            summary(&w).contains("0 of 1 servers; 0 replaced with the same stages, 1 undecided")
        );
    }

    #[test]
    fn a_server_the_replacement_broke_is_said_so_and_not_counted_as_changed() {
        let mut s = server("git", Stage::Eof, Stage::Eof);
        s.endings[0].after = None;
        s.broken = Some("ImportError: cannot import name 'MCPServer'".into());
        let w = WhatIf {
            servers: vec![s],
            ..what_if()
        };
        assert_eq!(
            summary(&w),
            "merging this changes 0 of 1 servers; 0 replaced with the same stages, 1 broken \
             by it (they ran before and no longer start with it), 0 untouched"
        );
        assert_eq!(
            server_lines(&w, &w.servers[0]),
            [
                "broken     git (1.32.2 → 1.24.0): ran before; with it, it no longer starts: \
              ImportError: cannot import name 'MCPServer'"
            ]
        );
        assert_eq!(
            row(&w, &w.servers[0])[2],
            "broken: ran before, no longer starts"
        );
    }

    #[test]
    fn one_sentence_says_how_many_change_and_how() {
        assert_eq!(
            summary(&what_if()),
            "merging this changes 1 of 3 servers: gitlab (close: sigterm → eof); \
             1 replaced with the same stages, 1 untouched"
        );
    }

    #[test]
    fn every_server_has_its_line() {
        let mut report = crate::test_support::report();
        report.with_sdk.push(what_if());
        let mut t = String::new();
        text(&report, &mut t);
        assert!(t.contains("WITH SDK typescript 1.24.0 in place of each install's @modelcontextprotocol/sdk: merging this changes 1 of 3"), "{t}");
        assert!(t.contains("changed    gitlab (1.32.2 → 1.24.0)\n             close: sigterm 2100 ms → eof 40 ms\n             inflight: sigterm 2100 ms → eof 40 ms (machine-bound: re-run)"), "{t}");
        assert!(
            t.contains("unchanged  everything (1.32.2 → 1.24.0): close: eof"),
            "{t}"
        );
        assert!(t.contains("untouched  time: a pypi package"), "{t}");
        let w = what_if();
        let rows: Vec<[String; 4]> = w.servers.iter().map(|s| row(&w, s)).collect();
        assert_eq!(rows[0][..3], ["gitlab", "1.32.2", "changed"]);
        assert!(rows[0][3].starts_with("close: sigterm"), "{:?}", rows[0]);
        assert_eq!(
            rows[2][2],
            "untouched: a pypi package: the SDK's registry is another"
        );
    }
}
