//! A Markdown summary fit for a PR comment or a GitHub job summary (`$GITHUB_STEP_SUMMARY`):
//! the counts, a servers × scenarios matrix, then every finding with its message.

use std::fmt::Write as _;

use super::hosts::{self, is_host_scenario};
use super::present::{
    axes, cells, emoji, emoji_of, left_behind, leftovers, ms, outcome, runs_line,
};
use crate::model::{JudgedCase, Outcome, Report, RuleId, Status};

/// Escapes text so Markdown shows it literally on one line (also inside table cells).
pub fn escape(s: &str) -> String {
    escape_inline(s).trim().to_string()
}

fn escape_inline(s: &str) -> String {
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
    out
}

/// Like [`escape`], but the message's balanced `code spans` stay code (outside tables only).
pub fn escape_message(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escape(s);
    }
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i % 2 == 0 || p.trim().is_empty() {
            out.push_str(&escape_inline(p));
        } else {
            let code: String = p
                .chars()
                .map(|c| {
                    if c.is_whitespace() || c.is_control() {
                        ' '
                    } else {
                        c
                    }
                })
                .collect();
            let _ = write!(out, "`{code}`");
        }
    }
    out.trim().to_string()
}

/// Findings stop before the output reaches this many bytes (a GitHub comment holds 65,536
/// characters; a job summary 1 MiB).
pub const MAX_BYTES: usize = 60_000;

/// A case's matrix cell: its verdict mark, then the stage and latency, or the error kind.
pub fn cell(r: &JudgedCase) -> String {
    format!("{} {}{}", emoji_of(r), escape(&outcome(r)), left_behind(r))
}

/// Renders the report as Markdown.
pub fn render(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## MCP shutdown conformance · spec {}\n",
        escape(&report.spec.to_string())
    );
    let _ = writeln!(
        out,
        "**{} cases** · ✅ {} success · ❌ {} failure (MUST) · ⚠️ {} warning (SHOULD) · ℹ️ {} info · ⏭️ {} skipped · 💥 {} could not run{}\n",
        s.cases, s.success, s.failure, s.warning, s.info, s.skipped, s.errors,
        // Counts and owner names only: nothing to escape.
        super::text::no_verdict_counts(s).replacen("; ", " · ", 1)
    );
    matrix(report, &mut out);
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
    host_view(report, &mut out);
    super::history::markdown(report, &mut out);
    profiles(report, &mut out);
    findings_section(report, &mut out);
    out
}

/// Server × ending: one cell per case (the host profiles have their own view).
fn matrix(report: &Report, out: &mut String) {
    let (servers, mut scenarios) = axes(report);
    scenarios.retain(|s| !is_host_scenario(report, s));
    if servers.is_empty() || scenarios.is_empty() {
        return;
    }
    let cells = cells(report);
    out.push_str("| server |");
    for sc in &scenarios {
        let _ = write!(out, " {} |", escape(&sc.to_string()));
    }
    out.push_str("\n| --- |");
    for _ in &scenarios {
        out.push_str(" --- |");
    }
    out.push('\n');
    for sv in &servers {
        let _ = write!(out, "| {} |", escape(sv));
        for sc in &scenarios {
            let c = cells
                .get(&(*sv, *sc))
                .map_or_else(|| "–".to_string(), |r| cell(r));
            let _ = write!(out, " {c} |");
        }
        out.push('\n');
    }
    out.push('\n');
}

/// Every finding as a line, folded when there are many and cut at [`MAX_BYTES`].
fn findings_section(report: &Report, out: &mut String) {
    let found = findings(report);
    out.push_str("### Findings\n\n");
    if found.is_empty() {
        out.push_str("None: every check holds.\n");
        return;
    }
    let folded = found.len() > 20;
    if folded {
        let _ = writeln!(
            out,
            "<details><summary>{} findings</summary>\n",
            found.len()
        );
    }
    let tail = if folded { "\n</details>\n" } else { "" };
    let total = found.len();
    for (i, (_, line)) in found.into_iter().enumerate() {
        let more = format!("- … and {} more: see the JSON or HTML report\n", total - i);
        if out.len() + line.len() + 3 + more.len() + tail.len() > MAX_BYTES {
            out.push_str(&more);
            break;
        }
        let _ = writeln!(out, "- {line}");
    }
    out.push_str(tail);
}

/// Server × host: what each host's user waits and what ended the server.
fn host_view(report: &Report, out: &mut String) {
    let Some(v) = hosts::view(report) else {
        return;
    };
    out.push_str("### Under each host\n\n| server | ends gently on |");
    for c in &v.columns {
        let _ = write!(out, " {} |", escape(&c.label));
    }
    out.push_str("\n| --- | --- |");
    for _ in &v.columns {
        out.push_str(" --- |");
    }
    out.push('\n');
    for row in &v.rows {
        let needs = row.needs.as_deref().unwrap_or("–");
        let _ = write!(out, "| {} | {} |", escape(row.server), escape(needs));
        for cell in &row.cells {
            let c = cell.as_ref().map_or_else(
                || "–".to_string(),
                // The host's doing (no say left to the server) is no verdict of it.
                |c| {
                    let mark = match (c.verdict(), c.hosts_doing) {
                        (None, Some(_)) => "➖",
                        _ => emoji_of(c.case),
                    };
                    format!("{mark} {}", escape(&c.short()))
                },
            );
            let _ = write!(out, " {c} |");
        }
        out.push('\n');
    }
    out.push_str(
        "\nCells: how long the host's user waited for the server to go, and what ended it; \
         *left running*: it outlived the host.\n\n",
    );
}

/// Where each profile's ladder comes from.
fn profiles(report: &Report, out: &mut String) {
    if report.profiles.is_empty() {
        return;
    }
    out.push_str(
        "<details><summary>Where each client's and host's ladder comes from</summary>\n\n",
    );
    for (id, p) in &report.profiles {
        let from = match &p.source {
            Some(s) => format!(
                "`{}` {} at {}",
                escape(&s.repository),
                s.paths
                    .iter()
                    .map(|x| format!("`{}`", escape(x)))
                    .collect::<Vec<_>>()
                    .join(", "),
                escape(&s.reference)
            ),
            None => format!("observed in {}", p.observed.join(", ")),
        };
        let _ = writeln!(
            out,
            "- **{}**: {}. {from}.",
            escape(id.as_str()),
            escape(&p.client)
        );
        if let Some(n) = &p.cap_note {
            let _ = writeln!(out, "  {}", escape(n));
        }
    }
    out.push_str("\n</details>\n\n");
}

/// Every check that is not a success (MUSTs first, then SHOULDs, then unscored), each case that
/// could not run, and each process left behind.
fn findings(report: &Report) -> Vec<(u8, String)> {
    let mut found: Vec<(u8, String)> = Vec::new();
    for r in &report.results {
        let who = format!(
            "**{}** · {}",
            escape(&r.server),
            escape(&r.scenario.to_string())
        );
        if let Some(n) = &r.not_testable {
            found.push((
                2,
                format!(
                    "⏭️ {who} not testable: {}: {} (owner: {})",
                    n.reason.label(),
                    escape_message(&n.message),
                    n.reason.owner()
                ),
            ));
        } else if let Some(e) = &r.error {
            let status = super::present::judged(r).unwrap_or(Status::Skipped);
            found.push((
                rank(status),
                format!(
                    "{} {who} could not run ({}; owner: {}): {}",
                    emoji(status),
                    e.kind,
                    e.kind.owner(),
                    escape_message(&e.message)
                ),
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
                    c.id,
                    c.level,
                    escape_message(&c.message)
                )
            };
            match c.status {
                s if s.is_miss() => found.push((rank(c.status), line(""))),
                Status::Info if c.outcome == Outcome::Fail => found.push((
                    rank(c.status),
                    line(&format!(", not scored in {}", report.spec)),
                )),
                _ => {}
            }
        }
        if let Some(note) = &r.note {
            found.push((
                rank(r.verdict()),
                format!("📝 {who}: {}", escape_message(note)),
            ));
        }
        if let Some(line) = runs_line(r).filter(|_| r.repeat.as_ref().is_some_and(|x| x.flaky)) {
            found.push((
                rank(r.verdict()),
                format!("🎲 {who} is flaky: {}", escape_message(&line)),
            ));
        }
        if let Some(line) = super::present::machine_bound_of(r) {
            found.push((
                rank(r.verdict()),
                format!("🔁 {who}: {}", escape_message(&line)),
            ));
        }
        // The leak rule's message already names them.
        let named = r
            .checks
            .iter()
            .any(|c| c.id == RuleId::ProcessNoLeakedDescendants && c.outcome == Outcome::Fail);
        for line in leftovers(r).into_iter().filter(|_| !named) {
            found.push((
                rank(r.verdict()),
                format!("🧟 {who} left {}", escape_message(&line)),
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
    use super::*;
    use crate::test_support as fixture;

    #[test]
    fn header_counts_and_matrix() {
        let md = render(&fixture::report());
        assert!(md.starts_with("## MCP shutdown conformance · spec 2026-07-28\n"));
        assert!(md.contains(
            "**5 cases** · ✅ 9 success · ❌ 1 failure (MUST) · ⚠️ 4 warning (SHOULD) · ℹ️ 0 info · ⏭️ 1 skipped · 💥 1 could not run · no verdict: 1 server\n"
        ));
        let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(
            table,
            [
                "| server | close | crash |",
                "| --- | --- | --- |",
                "| timer | ⚠️ sigterm 2004 ms | ⚠️ survived · 1 left behind |",
                "| fixed | ✅ eof 12 ms | ✅ eof 15 ms |",
                "| mute | ❌ handshake-timeout | – |",
            ]
        );
    }

    #[test]
    fn findings_list_non_successes_with_messages() {
        let md = render(&fixture::report());
        let items: Vec<&str> = md.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(items.len(), 4, "{items:#?}");
        // MUSTs first: the server that never answered fails the stdout MUST as not testable.
        assert!(items[0].starts_with("- ❌ **mute** · close could not run (handshake-timeout; owner: server): no answer to `initialize` within"));
        assert!(items[1].starts_with(
            "- ⚠️ **timer** · close · stdio-exit-on-eof (SHOULD): did not exit within 1000 ms"
        ));
        assert!(items
            .iter()
            .any(|l| l.contains("stdio-exit-on-client-death (SHOULD): orphaned")));
        assert!(items.iter().any(|l| l.starts_with("- 🧟 **timer** · crash left pid 4242 `node timer.js` (started by `node client.js`) was still running")), "{items:#?}");
        assert!(!md.contains("**fixed**"));
    }

    #[test]
    fn unscored_findings_come_last() {
        let md = render(&fixture::report_for(
            "2025-06-18",
            fixture::results("2025-06-18"),
        ));
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
    fn notes_are_findings() {
        let mut rep = fixture::report();
        rep.results[0].note = Some("would wait forever".into());
        assert!(render(&rep).contains("- 📝 **timer** · close: would wait forever\n"));
    }

    #[test]
    fn code_spans_survive_and_markup_does_not() {
        assert_eq!(
            escape_message("ran `a|b <c>` then *x*"),
            "ran `a|b <c>` then \\*x\\*"
        );
        assert_eq!(escape_message("odd ` tick <b>"), "odd \\` tick \\<b\\>");
        assert_eq!(escape("a\n|b"), "a \\|b");
    }

    #[test]
    fn long_reports_fold_and_stay_under_the_comment_limit() {
        let mut rep = fixture::report();
        let timer = rep.results[0].clone();
        for i in 0..400 {
            let mut r = timer.clone();
            r.server = format!("timer-{i}");
            rep.results.push(r);
        }
        let md = render(&rep);
        assert!(md.len() <= MAX_BYTES, "{}", md.len());
        assert!(md.contains("findings</summary>"));
        assert!(md.contains("more: see the JSON or HTML report\n"));
        assert!(md.trim_end().ends_with("</details>"));
    }

    #[test]
    fn empty_report() {
        let md = render(&fixture::report_for("2026-07-28", Vec::new()));
        assert!(md.contains("None: every check holds."));
        assert!(!md.contains("| server |"));
    }
}
