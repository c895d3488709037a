//! A Markdown summary fit for a PR comment or a GitHub job summary (`$GITHUB_STEP_SUMMARY`):
//! the counts, a servers × scenarios matrix, then every finding with its message.

use std::fmt::Write as _;

use super::hosts::{self, is_host_scenario};
use super::md::{escape, escape_message};
use super::present::{
    axes, cells, emoji, emoji_of, first_held, fix_heading, fixes_of, left_behind, leftovers, ms,
    outcome, runs_line,
};
use crate::model::{JudgedCase, Outcome, Report, RuleId, Status};

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
    with_sdk(report, &mut out);
    fix_section(report, &mut out);
    findings_section(report, &mut out);
    // Provenance last, and only where it fits under the comment limit.
    let mut from = String::new();
    profiles(report, &mut from);
    if out.len() + from.len() <= MAX_BYTES {
        out.push_str(&from);
    }
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

/// Per server, a row per host: what its user waits, what ended the server, whether it was
/// killed hard or left running (one narrow table per server, not a column per host).
pub(super) fn host_view(report: &Report, out: &mut String) {
    let Some(v) = hosts::view(report) else {
        return;
    };
    out.push_str("### Under each host\n\n");
    for row in &v.rows {
        let needs = row.needs.as_deref().unwrap_or("–");
        let _ = writeln!(
            out,
            "**{}** ends gently on {}.\n\n| host | user waits | ended by | killed hard | left running | ladder |\n| --- | --- | --- | --- | --- | --- |",
            escape(row.server),
            escape(needs)
        );
        for (c, cell) in v.columns.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            let wait = match (&cell.case.error, cell.wait_ms) {
                (None, Some(t)) => hosts::seconds(t),
                _ => "–".into(),
            };
            let by = match &cell.case.error {
                Some(e) => super::present::error_cell(e.kind),
                None => cell.ended_by.clone(),
            };
            let yes = |b: bool| if b { "yes" } else { "no" };
            // The host's doing (no say left to the server) is no verdict of it.
            let mark = match (cell.verdict(), cell.hosts_doing) {
                (None, Some(_)) => "➖",
                _ => emoji_of(cell.case),
            };
            let _ = writeln!(
                out,
                "| {} {} | {} | {} | {} | {} | {} |",
                mark,
                escape(&c.label),
                escape(&wait),
                escape(&by),
                yes(cell.hard),
                yes(cell.left_running),
                escape(c.source.as_deref().unwrap_or("terminal ending")),
            );
        }
        out.push('\n');
    }
    out.push_str(
        "*left running*: the server, or something it started, outlived the host. \"Ends \
         gently on\" is what the spec's own ladder (the `close` case) needed.\n\n",
    );
}

/// Per server: what held it the first time it outlived a step, and every fix for what it
/// missed, with the lines to write.
fn fix_section(report: &Report, out: &mut String) {
    let servers: Vec<&str> = axes(report)
        .0
        .into_iter()
        .filter(|s| !fixes_of(report, s).is_empty() || first_held(report, s).is_some())
        .collect();
    if servers.is_empty() {
        return;
    }
    out.push_str("### Fix\n\n");
    for server in servers {
        let fixes = fixes_of(report, server);
        let _ = writeln!(out, "#### {}\n", escape(server));
        if let Some((r, line)) = first_held(report, server) {
            let _ = writeln!(
                out,
                "**What held it** ({}, read from /proc): {}\n",
                escape(&r.scenario.to_string()),
                escape_message(&line)
            );
            if let (Some(d), true) = (&r.diagnostics, fixes.is_empty()) {
                let _ = writeln!(out, "{}\n", escape_message(&d.hint));
            }
        }
        for f in fixes {
            let _ = writeln!(
                out,
                "**{}**\n\n{}\n",
                escape(&fix_heading(f)),
                escape_message(&f.text)
            );
            if let Some(code) = &f.code {
                let fence = if code.lines.contains("```") {
                    "~~~~"
                } else {
                    "```"
                };
                let _ = writeln!(
                    out,
                    "{fence}{}\n{}\n{fence}\n\nAs in `{}`.\n",
                    code.fence, code.lines, code.source
                );
            }
        }
    }
}

/// Where each profile's ladder comes from.
fn profiles(report: &Report, out: &mut String) {
    if report.profiles.is_empty() {
        return;
    }
    out.push_str(
        "\n<details><summary>Where each client's and host's ladder comes from</summary>\n\n",
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
            None => escape(&hosts::from(p)),
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
        found.extend(unjudged(report, r, &who));
        found.extend(missed_checks(report, r, &who));
        found.extend(case_notes(r, &who));
    }
    found.sort_by_key(|(rank, _)| *rank);
    found
}

/// Why a case has no verdict: not testable, or it could not run.
fn unjudged(report: &Report, r: &JudgedCase, who: &str) -> Option<(u8, String)> {
    if let Some(n) = &r.not_testable {
        return Some((
            2,
            format!(
                "⏭️ {who} not testable: {}: {} (owner: {})",
                n.reason.label(),
                escape_message(&n.message),
                n.reason.owner()
            ),
        ));
    }
    // Said once, under the case whose error it shares.
    let e = r.error.as_ref().filter(|_| r.same_as.is_none())?;
    let status = super::present::judged(r).unwrap_or(Status::Skipped);
    let same = super::present::same_as(report, r)
        .map(|s| format!(" (the same in {}: not launched again)", escape(&s)))
        .unwrap_or_default();
    Some((
        rank(status),
        format!(
            "{} {who} could not run ({}; owner: {}): {}{same}",
            emoji(status),
            e.kind,
            e.kind.owner(),
            escape_message(&e.message)
        ),
    ))
}

/// Every missed check, and every unscored one that failed.
fn missed_checks(report: &Report, r: &JudgedCase, who: &str) -> Vec<(u8, String)> {
    let mut found = Vec::new();
    for c in &r.checks {
        if c.outcome == Outcome::NotTestable {
            continue; // said once, by `unjudged`
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
    found
}

/// A case's note, flakiness, machine-bound verdict, the processes it left behind and what its
/// launcher did.
fn case_notes(r: &JudgedCase, who: &str) -> Vec<(u8, String)> {
    let mut lines = Vec::new();
    if let Some(note) = &r.note {
        lines.push(format!("📝 {who}: {}", escape_message(note)));
    }
    if let Some(line) = runs_line(r).filter(|_| r.repeat.as_ref().is_some_and(|x| x.flaky)) {
        lines.push(format!("🎲 {who} is flaky: {}", escape_message(&line)));
    }
    if let Some(line) = super::present::machine_bound_of(r) {
        lines.push(format!("🔁 {who}: {}", escape_message(&line)));
    }
    // The leak rule's message already names them.
    let named = r
        .checks
        .iter()
        .any(|c| c.id == RuleId::ProcessNoLeakedDescendants && c.outcome == Outcome::Fail);
    for line in leftovers(r).into_iter().filter(|_| !named) {
        lines.push(format!("🧟 {who} left {}", escape_message(&line)));
    }
    // What its launcher did is the launcher's, on a line of its own.
    if let Some(line) = crate::model::launcher_line(r) {
        lines.push(format!("🚀 {who}, its launcher: {}", escape_message(&line)));
    }
    let rank = rank(r.verdict());
    lines.into_iter().map(|l| (rank, l)).collect()
}

fn rank(s: Status) -> u8 {
    match s {
        Status::Failure => 0,
        Status::Warning => 1,
        _ => 2,
    }
}

/// `census --with-sdk`'s section: the sentence, then a table of every server.
fn with_sdk(report: &Report, out: &mut String) {
    for w in &report.with_sdk {
        let _ = writeln!(
            out,
            "### {}\n\n**{}**\n",
            escape(&super::what_if::title(w)),
            escape(&super::what_if::summary(w))
        );
        out.push_str(
            "| server | SDK before | result | endings before → after |\n|---|---|---|---|\n",
        );
        for s in &w.servers {
            let cells = super::what_if::row(w, s).map(|c| escape(&c));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
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

    /// Under each host: a narrow table per server, a row per host; every ladder says where
    /// it comes from (never an empty "observed in").
    #[test]
    fn the_host_view_is_a_table_per_server() {
        use crate::model::Stage;
        use crate::test_support::{report_of, result};
        let mut rep = report_of(vec![
            result("s", "close", Stage::Sigterm, 2004.0),
            result("s", "close:vscode", Stage::Sigterm, 10003.0),
            result("s", "close:claude-desktop", Stage::Survived, 5000.0),
            result("s", "close:claude-code", Stage::Sigterm, 100.0),
        ]);
        rep.resummarize();
        let md = render(&rep);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
        assert!(
            rows.contains(
                &"| host | user waits | ended by | killed hard | left running | ladder |"
            ),
            "{md}"
        );
        for r in rows.iter().filter(|r| r.contains("vscode")) {
            assert_eq!(r.matches(" | ").count(), 5, "{r}");
        }
        assert!(!md.contains("observed in ."), "{md}");
        assert!(!md.contains("observed in \n"), "{md}");
        assert!(md.contains("measured here: "), "{md}");
    }

    #[test]
    fn empty_report() {
        let md = render(&fixture::report_for("2026-07-28", Vec::new()));
        assert!(md.contains("None: every check holds."));
        assert!(!md.contains("| server |"));
    }
}
