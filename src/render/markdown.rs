//! A Markdown summary fit for a PR comment or a GitHub job summary (`$GITHUB_STEP_SUMMARY`):
//! the counts, a servers × scenarios matrix, then every finding with its message.

use std::fmt::Write as _;

use super::{axes, cells, ms, verdict};
use crate::observation::CaseResult;
use crate::report::Report;
use crate::rules::{Outcome, Status};

/// The mark of a status, as shown in cells and findings.
pub fn emoji(s: Status) -> &'static str {
    match s {
        Status::Success => "✅",
        Status::Failure => "❌",
        Status::Warning => "⚠️",
        Status::Info => "ℹ️",
        Status::Skipped => "⏭️",
    }
}

/// Escapes text so Markdown shows it literally on one line (also inside table cells).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for ch in s.chars() {
        if ch.is_whitespace() || ch.is_control() {
            if !space {
                out.push(' ');
            }
            space = true;
            continue;
        }
        space = false;
        if "\\`*_[]<>|~&".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out.trim().to_string()
}

/// A case's matrix cell: its verdict mark, then the stage and latency, or the error kind.
pub fn cell(r: &CaseResult) -> String {
    let what = match (&r.error, r.stage, r.exit_ms) {
        (Some(e), _, _) => e.kind.to_string(),
        (None, Some(stage), Some(t)) => format!("{stage} {}", ms(t)),
        (None, Some(stage), None) => stage.to_string(),
        (None, None, _) => "?".into(),
    };
    let leftovers = if r.leftovers.is_empty() {
        String::new()
    } else {
        format!(" · {} left behind", r.leftovers.len())
    };
    format!("{} {}{leftovers}", emoji(verdict(r)), escape(&what))
}

/// Renders the report as Markdown.
pub fn render(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::new();
    let _ = writeln!(out, "## MCP shutdown conformance · spec {}\n", escape(&report.spec));
    let _ = writeln!(
        out,
        "**{} cases** · ✅ {} success · ❌ {} failure (MUST) · ⚠️ {} warning (SHOULD) · ℹ️ {} info · ⏭️ {} skipped · 💥 {} could not run\n",
        s.cases, s.success, s.failure, s.warning, s.info, s.skipped, s.errors
    );
    let (servers, scenarios) = axes(report);
    let cells = cells(report);
    if !servers.is_empty() {
        out.push_str("| server |");
        for sc in &scenarios {
            let _ = write!(out, " {} |", escape(sc));
        }
        out.push_str("\n| --- |");
        for _ in &scenarios {
            out.push_str(" --- |");
        }
        out.push('\n');
        for sv in &servers {
            let _ = write!(out, "| {} |", escape(sv));
            for sc in &scenarios {
                let c = cells.get(&(*sv, *sc)).map_or_else(|| "–".to_string(), |r| cell(r));
                let _ = write!(out, " {c} |");
            }
            out.push('\n');
        }
        out.push('\n');
    }
    let b = &report.budgets;
    let _ = writeln!(
        out,
        "Cells: the step that ended the server and how long after the trigger it exited. Budgets: prompt {} · grace {} · observe {}. {} {} on {} {}.\n",
        ms(b.prompt_ms as f64),
        ms(b.grace_ms as f64),
        ms(b.observe_ms as f64),
        escape(&report.tool.name),
        escape(&report.tool.version),
        escape(&report.host.os),
        escape(&report.host.kernel),
    );
    let found = findings(report);
    out.push_str("### Findings\n\n");
    if found.is_empty() {
        out.push_str("None: every check holds.\n");
    }
    for (_, line) in found {
        let _ = writeln!(out, "- {line}");
    }
    out
}

/// Every check that is not a success (MUSTs first, then SHOULDs, then unscored), each case that
/// could not run, and each process left behind.
fn findings(report: &Report) -> Vec<(u8, String)> {
    let mut found: Vec<(u8, String)> = Vec::new();
    for r in &report.results {
        let who = format!("**{}** · {}", escape(&r.server), escape(&r.scenario));
        if let Some(e) = &r.error {
            found.push((
                rank(verdict(r)),
                format!("{} {who} could not run ({}): {}", emoji(verdict(r)), e.kind, escape(&e.message)),
            ));
        }
        for c in &r.checks {
            if c.outcome == Outcome::NotTestable {
                continue; // said once, above
            }
            let line = |note: &str| {
                format!(
                    "{} {who} · {} ({}{note}): {}",
                    emoji(c.status),
                    escape(&c.id),
                    c.level,
                    escape(&c.message)
                )
            };
            match c.status {
                Status::Failure | Status::Warning => found.push((rank(c.status), line(""))),
                Status::Info if c.outcome == Outcome::Fail => {
                    found.push((rank(c.status), line(&format!(", not scored in {}", escape(&report.spec)))))
                }
                _ => {}
            }
        }
        for l in &r.leftovers {
            found.push((
                rank(verdict(r)),
                format!(
                    "🧟 {who} left pid {} {} running (started by {}); the harness killed it",
                    l.pid,
                    escape(&l.cmdline),
                    escape(l.started_by_cmdline.as_deref().unwrap_or("?"))
                ),
            ));
        }
    }
    found.sort_by_key(|(rank, _)| *rank);
    found
}

fn rank(s: Status) -> u8 {
    match s {
        Status::Failure => 0,
        Status::Warning => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use super::*;

    #[test]
    fn header_counts_and_matrix() {
        let md = render(&fixture::report());
        assert!(md.starts_with("## MCP shutdown conformance · spec 2026-07-28\n"));
        assert!(md.contains("**5 cases** · ✅ 4 success · ❌ 0 failure (MUST) · ⚠️ 4 warning (SHOULD)"));
        assert!(md.contains("💥 1 could not run"));
        let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(
            table,
            [
                "| server | close | crash |",
                "| --- | --- | --- |",
                "| timer | ⚠️ sigterm 2004 ms | ⚠️ survived · 1 left behind |",
                "| fixed | ✅ eof 12 ms | ✅ eof 15 ms |",
                "| mute | ⚠️ handshake-timeout | – |",
            ]
        );
    }

    #[test]
    fn findings_list_non_successes_with_messages() {
        let md = render(&fixture::report());
        let items: Vec<&str> = md.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(items.len(), 4, "{items:#?}");
        assert!(items[0].starts_with("- ⚠️ **timer** · close · stdio-exit-on-eof (SHOULD): did not exit within 1000 ms"));
        assert!(items.iter().any(|l| l.contains("**mute** · close could not run (handshake-timeout): no answer to \\`initialize\\`")));
        assert!(items.iter().any(|l| l.contains("stdio-exit-on-client-death (SHOULD): orphaned")));
        assert!(items.iter().any(|l| l.starts_with("- 🧟 **timer** · crash left pid 4242 node timer.js running")));
        assert!(!md.contains("**fixed**"));
    }

    #[test]
    fn unscored_findings_come_last() {
        let md = render(&fixture::report_for("2025-06-18", fixture::results("2025-06-18")));
        assert!(md.contains("- ℹ️ **timer** · close · stdio-exit-on-eof (INFO, not scored in 2025-06-18): did not exit"));
        assert!(md.contains("| timer | ✅ sigterm 2004 ms |"));
    }

    #[test]
    fn hostile_text_cannot_break_the_table() {
        let md = render(&fixture::hostile());
        assert!(md.contains("| t\\<i\\>m\\&r \"x\" 'y' | ⚠️ sigterm 2004 ms |"));
        assert!(!md.contains("<b>") && !md.contains('\u{1b}'));
        for l in md.lines().filter(|l| l.starts_with("| t")) {
            assert_eq!(l.matches(" |").count() - l.matches("\\|").count(), 3, "{l}");
        }
    }

    #[test]
    fn empty_report() {
        let md = render(&fixture::report_for("2026-07-28", Vec::new()));
        assert!(md.contains("None: every check holds."));
        assert!(!md.contains("| server |"));
    }
}
