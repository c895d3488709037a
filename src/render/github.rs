//! GitHub Actions workflow commands: one `::error` (a MUST missed) or `::warning` (a SHOULD
//! missed) annotation per server and missed rule, naming the endings that missed it, what
//! held the server and the fix; and one `::error` per server that could not be run at all.
//! One per rule, not per case: GitHub shows at most ten annotations of each kind per step.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::present::{first_held, fixes_of};
use crate::model::{Outcome, Owner, Report, RuleId, Status};

/// Where the annotations point: a file of the repository and, if known, a line of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: Option<u32>,
}

impl std::str::FromStr for Location {
    type Err = String;

    /// `FILE` or `FILE:LINE`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (file, line) = match s.rsplit_once(':') {
            Some((f, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
                let n = l
                    .parse()
                    .map_err(|_| format!("`{l}` is not a line number"))?;
                (f, Some(n))
            }
            _ => (s, None),
        };
        if file.is_empty() {
            return Err("expected FILE or FILE:LINE".into());
        }
        Ok(Location {
            file: file.to_string(),
            line,
        })
    }
}

/// A workflow command's message: `%`, CR and LF escaped.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(kind: &str, at: Option<&Location>, title: &str, message: &str) -> String {
    let mut props = Vec::new();
    if let Some(at) = at {
        props.push(format!("file={}", property(&at.file)));
        if let Some(l) = at.line {
            props.push(format!("line={l}"));
        }
    }
    props.push(format!("title={}", property(title)));
    format!("::{kind} {}::{}\n", props.join(","), data(message))
}

/// What one server missed of one rule: the worst status, the endings and a message.
struct Missed<'a> {
    worst: Status,
    endings: Vec<String>,
    message: &'a str,
}

/// The annotations for a report, each pointing at `at` when given.
pub fn render(report: &Report, at: Option<&Location>) -> String {
    let mut missed: BTreeMap<(&str, RuleId), Missed> = BTreeMap::new();
    let mut cannot_run: BTreeMap<&str, &str> = BTreeMap::new();
    for r in &report.results {
        if let Some(e) = r.error.as_ref().filter(|e| e.kind.owner() == Owner::Usage) {
            cannot_run.entry(&r.server).or_insert(&e.message);
        }
        for c in &r.checks {
            if !c.status.is_miss() || c.outcome == Outcome::NotTestable {
                continue;
            }
            let m = missed.entry((&r.server, c.id)).or_insert(Missed {
                worst: c.status,
                endings: Vec::new(),
                message: &c.message,
            });
            if c.status == Status::Failure && m.worst != Status::Failure {
                m.worst = Status::Failure;
                m.message = &c.message;
            }
            m.endings.push(r.scenario.to_string());
        }
    }
    let mut out = String::new();
    for (server, message) in cannot_run {
        let title = format!("mcp-shutdown: {server} could not be run");
        out.push_str(&command("error", at, &title, message));
    }
    for ((server, rule), m) in &missed {
        let kind = if m.worst == Status::Failure {
            "error"
        } else {
            "warning"
        };
        let level = if kind == "error" { "MUST" } else { "SHOULD" };
        let title = format!("mcp-shutdown: {server}: {rule} ({level})");
        let message = message(report, server, *rule, m);
        out.push_str(&command(kind, at, &title, &message));
    }
    out
}

/// What an annotation says of one missed rule: the rule, the endings, the worst run's
/// message, what held the server, and the fixes that answer this rule (the runtime's hint
/// where the report carries none).
fn message(report: &Report, server: &str, rule: RuleId, m: &Missed) -> String {
    let what = report
        .rules
        .get(&rule)
        .map_or_else(|| rule.to_string(), |i| i.title.clone());
    let mut message = format!(
        "{what}: missed under {}.\n{}",
        m.endings.join(", "),
        m.message
    );
    let fixes: Vec<_> = fixes_of(report, server)
        .iter()
        .filter(|f| f.rules.contains(&rule))
        .collect();
    if let Some((r, line)) = first_held(report, server) {
        let _ = write!(message, "\nHeld by: {line}");
        if let (Some(d), true) = (&r.diagnostics, fixes.is_empty()) {
            let _ = write!(message, "\nFix: {}", d.hint);
        }
    }
    for f in fixes {
        let _ = write!(message, "\nFix: {}", f.text);
        if let Some(code) = &f.code {
            let _ = write!(message, "\nAs in {}:\n{}", code.source, code.lines);
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_escapes_follow_the_runner() {
        let at: Location = ".github/workflows/ci.yml:12".parse().unwrap();
        assert_eq!(at.line, Some(12));
        assert_eq!(at.file, ".github/workflows/ci.yml");
        let bare: Location = "my-server.toml".parse().unwrap();
        assert_eq!(bare.line, None);
        assert!("".parse::<Location>().is_err());
        assert_eq!(
            command("warning", Some(&at), "a: b, c", "50%\nnext"),
            "::warning file=.github/workflows/ci.yml,line=12,title=a%3A b%2C c::50%25%0Anext\n"
        );
    }

    #[test]
    fn one_annotation_per_server_and_missed_rule_with_the_fix() {
        let report = crate::test_support::report();
        let out = render(&report, None);
        assert!(!out.is_empty());
        for line in out.lines() {
            assert!(
                line.starts_with("::error title=") || line.starts_with("::warning title="),
                "{line}"
            );
        }
        let mut seen: Vec<(String, String)> = out
            .lines()
            .map(|l| {
                let title = l.split("::").nth(1).unwrap();
                (l[..9].to_string(), title.to_string())
            })
            .collect();
        let n = seen.len();
        seen.dedup();
        assert_eq!(seen.len(), n, "one per server and rule: {out}");
    }
}
