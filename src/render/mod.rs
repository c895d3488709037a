//! Reports people read and publish: pure renderers from a [`Report`] alone (the JSON report is
//! the source every format derives from, and carries the rule wording and ladders it needs).
//! Nothing here runs a process or reads a clock, so the same report always renders to the
//! same bytes.
//!
//! - [`text`]: the terminal matrix; [`junit`]: JUnit XML; [`markdown`]: a PR comment or job
//!   summary; [`html`]: one self-contained page with timelines; [`badge`]: per-server badges;
//! - [`merge`]: joins shards; [`diff`]: what changed between two reports, and the pruned view;
//! - [`conformance`]: the official MCP conformance suite's `checks.json` layout (a directory);
//! - [`history`]: SDK versions side by side, and those not testable;
//! - [`findings`]: a census report's findings, as the book publishes them;
//! - [`github`]: GitHub Actions annotations; [`sarif`]: SARIF 2.1.0 for code scanning; [`changes`]: what got better or worse since a
//!   saved report (`--diff-against`, `check --watch`);
//! - [`present`]: the wording every format shares.

pub mod badge;
pub mod book;
pub mod census;
pub mod census_history;
pub mod changes;
pub mod conformance;
pub mod diff;
pub mod findings;
pub mod github;
pub mod history;
pub mod hosts;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod md;
pub mod merge;
pub mod present;
pub mod sarif;
pub mod site;
pub mod text;
pub mod what_if;

use crate::model::Report;

/// The formats a whole report renders to (badges are per server: see [`badge`]). Their names
/// on the command line are the variants' in lowercase (clap's `ValueEnum`, strum's parsing).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    clap::ValueEnum,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
#[value(rename_all = "lowercase")]
pub enum Format {
    /// The terminal matrix.
    Text,
    /// The JSON report (schema_version 1).
    Json,
    /// JUnit XML.
    Junit,
    /// A Markdown summary.
    Markdown,
    /// One self-contained HTML page.
    Html,
    /// The official MCP conformance suite's layout, `server-<server>+<scenario>-<time>/checks.json`
    /// under a directory (`run --output DIR`, `report render --output DIR`); printed, the list
    /// of those files and their statuses.
    Conformance,
    /// GitHub Actions workflow commands: an `::error` or `::warning` annotation per server and
    /// missed rule, with the fix (`report render --at FILE:LINE` points them at a file).
    Github,
    /// SARIF 2.1.0 for GitHub code scanning: a result per server and missed rule, with the
    /// fix (`report render --at FILE:LINE` points them at a file).
    Sarif,
    /// The findings of a census report, as the book's census page publishes them: what it
    /// can defend, in a Markdown paragraph (machine-bound cases apart, as "re-run").
    Findings,
}

impl Format {
    pub const ALL: &'static [Format] = <Format as strum::VariantArray>::VARIANTS;

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The usual file extension of the format.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Json => "json",
            Format::Junit => "xml",
            Format::Markdown => "md",
            Format::Html => "html",
            // A directory: no file extension asks for it.
            Format::Conformance => "",
            // Workflow commands are printed for the runner, never written to a file.
            Format::Github => "",
            Format::Sarif => "sarif",
            // Markdown too, but `.md` asks for the Markdown report.
            Format::Findings => "",
        }
    }

    /// The format a file name asks for, by its extension (text when unknown; never the
    /// directory-shaped conformance layout).
    pub fn for_path(path: &std::path::Path) -> Format {
        Format::by_extension(path).unwrap_or(Format::Text)
    }

    /// The format whose extension the file name has, if any.
    pub fn by_extension(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension().and_then(|e| e.to_str())?;
        Format::ALL
            .iter()
            .copied()
            .find(|f| !f.extension().is_empty() && f.extension() == ext)
    }
}

/// Renders a whole report in one format, ending with a newline.
pub fn render(report: &Report, format: Format) -> String {
    let mut out = match format {
        Format::Text => text::render(report),
        Format::Json => report.to_json(),
        Format::Junit => junit::render(report),
        Format::Markdown => markdown::render(report),
        Format::Html => html::render(report),
        Format::Conformance => conformance::index(report),
        Format::Github => github::render(report, None),
        Format::Sarif => sarif::render(report, None),
        Format::Findings => findings::render(report),
    };
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Revision, Status};
    use crate::test_support as fixture;

    #[test]
    fn scenarios_follow_the_suite_order() {
        let mut rep = fixture::report();
        rep.results.reverse();
        let (servers, scenarios) = present::axes(&rep);
        assert_eq!(servers, ["mute", "fixed", "timer"]);
        let names: Vec<String> = scenarios.iter().map(|s| s.to_string()).collect();
        assert_eq!(names, ["close", "crash"]);
    }

    #[test]
    fn every_format_renders() {
        let rep = fixture::report();
        // A saved report renders as the run did: every format reads the report alone.
        let saved: Report = serde_json::from_str(&rep.to_json()).unwrap();
        for f in Format::ALL {
            let out = render(&rep, *f);
            assert!(out.contains("timer"), "{f:?}");
            assert!(out.ends_with('\n'), "{f:?}");
            assert_eq!(out, render(&saved, *f), "{f:?} of the saved report");
        }
        assert_eq!(render(&rep, Format::Json), rep.to_json() + "\n");
        assert_eq!(
            Format::for_path(std::path::Path::new("a/r.xml")),
            Format::Junit
        );
        assert_eq!("html".parse::<Format>(), Ok(Format::Html));
    }

    #[test]
    fn verdicts_and_actuals() {
        let rep = fixture::report();
        let v: Vec<Status> = rep.results.iter().map(|r| r.verdict()).collect();
        assert_eq!(
            v,
            [
                Status::Warning,
                Status::Warning,
                Status::Success,
                Status::Success,
                Status::Failure
            ]
        );
        assert_eq!(
            present::actual(&rep.results[0]),
            "stage sigterm, exited 2004 ms after the trigger, killed by SIGTERM"
        );
        assert!(present::actual(&rep.results[4]).starts_with("could not run: no answer"));
    }

    /// The same cases judged by the current catalogue (whatever rules it has by now) render
    /// to well-formed output with one timeline per result.
    #[test]
    fn judged_reports_render() {
        let budgets = crate::model::Budgets::default();
        let catalogue = crate::rules::Catalogue::bundled();
        let profiles = crate::config::profiles::Profiles::bundled();
        let mut rep = fixture::report();
        let rev: Revision = rep.spec;
        for r in &mut rep.results {
            let s = crate::config::scenarios::build(&r.scenario, &budgets, &profiles).unwrap();
            r.checks = catalogue.judge(&r.observation, &s, &budgets, rev);
        }
        rep.resummarize();
        fixture::well_formed(&render(&rep, Format::Junit)).unwrap();
        let html = render(&rep, Format::Html);
        assert_eq!(html.matches("<svg").count(), rep.results.len());
        let md = render(&rep, Format::Markdown);
        assert!(md.contains("| timer |"));
        for b in badge::badges_in(&rep, badge::Scope::All) {
            fixture::well_formed(&b.svg()).unwrap();
        }
    }
}
