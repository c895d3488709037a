//! The book's rules page (`docs/book/src/rules.md`) is the catalogue's: between its
//! introduction and its history ("What changed"), every rule's section is generated from
//! `conformance/rules.toml`, so that a new rule documents itself. The test says how to write
//! it again (`MCP_SHUTDOWN_UPDATE_BOOK=1`), as insta does for snapshots.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::catalogue::{Catalogue, Rule};
use crate::model::{Basis, Ending, Revision};

const PAGE: &str = "docs/book/src/rules.md";
const HISTORY: &str = "## What changed";

/// A value's name as the catalogue writes it (`should`, `practice`).
fn word(v: impl serde::Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn section(c: &Catalogue, r: &Rule) -> String {
    let mut s = format!("## `{}`\n\n**{}**. Endings: ", r.id, r.title);
    let endings: Vec<String> = r.scenarios.iter().map(|e| format!("`{e}`")).collect();
    s.push_str(&endings.join(", "));
    if let Some(b) = r.budget {
        let _ = write!(s, "; budget `{b}`");
    }
    s.push('.');
    if r.only_when_missed {
        s.push_str(" *Reported only where missed.*");
    }
    s.push_str("\n\n| revision | level | basis |\n|---|---|---|\n");
    for rev in &c.revisions {
        let (level, basis) = (word(r.level(*rev)), word(r.basis(*rev)));
        let _ = writeln!(s, "| {rev} | {level} | {basis} |");
    }
    let rationale: Vec<&str> = r.rationale.lines().map(str::trim).collect();
    let _ = writeln!(s, "\n{}\n", rationale.join(" ").trim());
    for x in &r.references {
        let revs: Vec<String> = x.revisions.iter().map(Revision::to_string).collect();
        let kind = match x.revisions.first().map(|v| r.basis(*v)) {
            Some(Basis::Spec) => "requirement",
            _ => "context",
        };
        let url = match x.revisions.as_slice() {
            [one] => x.url_for(*one),
            _ => format!("`{}`", x.url),
        };
        let _ = writeln!(
            s,
            "> {}\n\n— {} ({kind}): {url}\n",
            x.quote,
            revs.join(", ")
        );
    }
    s
}

/// The endings a rule judges, as the glance table says them.
fn endings(r: &Rule) -> String {
    if r.scenarios == Ending::ALL {
        return "every ending".into();
    }
    let mut e: Vec<String> = r.scenarios.iter().map(|e| e.to_string()).collect();
    if r.scenarios.contains(&Ending::Close) {
        e.push("close:* (host profiles)".into());
    }
    e.join(", ")
}

/// The "At a glance" table: every rule, what it checks, its endings and its level per
/// revision, revisions that agree on every rule's level sharing a column.
pub fn glance(c: &Catalogue) -> String {
    let levels = |rev: Revision| -> Vec<String> {
        c.rules
            .iter()
            .map(|r| word(r.level(rev)).to_uppercase())
            .collect()
    };
    let mut columns: Vec<(Revision, Revision)> = Vec::new();
    for rev in &c.revisions {
        match columns.last_mut() {
            Some((_, last)) if levels(*last) == levels(*rev) => *last = *rev,
            _ => columns.push((*rev, *rev)),
        }
    }
    let mut s = String::from("| rule | what it checks | endings |");
    for (a, b) in &columns {
        if a == b {
            let _ = write!(s, " {a} |");
        } else {
            let _ = write!(s, " {a} … {b} |");
        }
    }
    let _ = write!(s, "\n|---|---|---|{}\n", "---|".repeat(columns.len()));
    for r in &c.rules {
        let practice = matches!(
            r.basis(*c.revisions.last().expect("a revision")),
            Basis::Practice
        );
        let _ = write!(
            s,
            "| `{}` | {}{} | {} |",
            r.id,
            r.title,
            if practice { " (practice)" } else { "" },
            endings(r)
        );
        for (a, _) in &columns {
            let _ = write!(s, " {} |", word(r.level(*a)).to_uppercase());
        }
        s.push('\n');
    }
    s
}

/// Every rule's section, in catalogue order.
pub fn sections(c: &Catalogue) -> String {
    c.rules.iter().map(|r| section(c, r)).collect()
}

#[test]
fn the_rules_glance_is_the_catalogue() {
    crate::test_support::generated_block(PAGE, "rules-glance", &glance(&Catalogue::bundled()));
}

#[test]
fn the_rules_page_is_the_catalogue() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(PAGE);
    let page = std::fs::read_to_string(&path).expect("the book's rules page");
    let start = page.find("\n## `").map_or(page.len(), |i| i + 1);
    let end = page.find(HISTORY).unwrap_or(page.len()).max(start);
    let want = sections(&Catalogue::bundled());
    if page[start..end] == want {
        return;
    }
    if std::env::var_os("MCP_SHUTDOWN_UPDATE_BOOK").is_some() {
        let text = format!("{}{want}{}", &page[..start], &page[end..]);
        std::fs::write(&path, text).expect("write the book's rules page");
        return;
    }
    let (have, want) = (page[start..end].lines(), want.lines());
    let first = have.zip(want).find(|(h, w)| h != w);
    panic!(
        "{PAGE} does not say what conformance/rules.toml says (first difference: {first:?}): \
         write it again with `MCP_SHUTDOWN_UPDATE_BOOK=1 cargo test --lib rules_page`"
    );
}
