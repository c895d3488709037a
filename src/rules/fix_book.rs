//! The book's fix pages (`docs/book/src/fix.md` and one `fix/<language>.md` per language) are
//! `conformance/fixes.toml`'s, whole: what a report's fix says is what the book says. The test
//! says how to write them again (`MCP_SHUTDOWN_UPDATE_BOOK=1`), as for the rules page.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::fixes::{FixEntry, Fixes};

const GENERATED: &str = "<!-- Generated from conformance/fixes.toml and the rules' `concerns` \
                         in conformance/rules.toml: edit those, then \
                         `MCP_SHUTDOWN_UPDATE_BOOK=1 cargo test --lib fix_pages`. -->";

/// The rules a concern answers, as code spans.
fn rules_of(f: &Fixes, concern: &str) -> String {
    let c = f.concern.get(concern).expect("a known concern");
    let ids: Vec<String> = c.rules.iter().map(|r| format!("`{r}`")).collect();
    ids.join(", ")
}

fn one_paragraph(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One fix's section of its language's page.
fn section(f: &Fixes, e: &FixEntry, fence: &str) -> String {
    let mut s = format!("## {}\n\n", e.sdk.as_deref().unwrap_or(&e.id));
    for c in &e.concerns {
        let title = &f.concern.get(c).expect("a known concern").title;
        let _ = writeln!(s, "- **{title}**: {}", rules_of(f, c));
    }
    let sdks: Vec<String> = e.matches.iter().map(|m| format!("`{m}`")).collect();
    let _ = write!(
        s,
        "\nFor a server whose report names its SDK {}",
        sdks.join(" or ")
    );
    if !e.versions.is_empty() {
        let v: Vec<String> = e.versions.iter().map(|v| format!("`{v}`")).collect();
        let _ = write!(s, " at a release {}", v.join(" or "));
    }
    if e.fallback {
        s.push_str("; and for any server of this language whose SDK is not known");
    }
    let _ = writeln!(s, " (fix `{}`).\n\n{}\n", e.id, one_paragraph(&e.text));
    if let (Some(lines), Some(src)) = (&e.lines, &e.source) {
        let _ = writeln!(s, "```{fence}\n{}\n```\n", lines.trim_matches('\n'));
        let passes = match (&src.server, &src.shape) {
            (Some(server), _) => format!("the bundled server `{server}`, which passes"),
            (None, Some(shape)) => format!(
                "the `{shape}` shape of the `{}` kit, written to exit",
                src.kit.as_deref().unwrap_or_default()
            ),
            _ => "a server that passes".into(),
        };
        let _ = writeln!(
            s,
            "As in [`{}`](../../../../{}), {passes}; a test holds these lines against it.\n",
            src.file, src.file
        );
    }
    s
}

/// Every page: (path under docs/book/src, text).
pub fn pages(f: &Fixes) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut index = format!(
        "# Fix it\n\n{GENERATED}\n\nEvery report carries, for each server, a fix for every rule \
         it missed, all at once: its SDK's where the report knows it (a manifest's `[about]`), \
         else its language's where the harness recognised the runtime, else the change any \
         server makes. The lines are a server's that passes: each is held against the bundled \
         server it comes from.\n\n## By language\n\n"
    );
    for (id, lang) in f.language.iter() {
        let _ = writeln!(index, "- [{}](fix/{id}.md)", lang.name);
        let mut page = format!("# Fix it: {}\n\n{GENERATED}\n\n", lang.name);
        if let Some(rt) = lang.runtime {
            let _ = writeln!(
                page,
                "A server the harness sees running on `{rt}` whose SDK is not known gets the \
                 fix marked for any server of this language.\n"
            );
        }
        for e in f.fix.iter().filter(|e| e.language.as_deref() == Some(id)) {
            page.push_str(&section(f, e, &lang.fence));
        }
        out.push((format!("fix/{id}.md"), page.trim_end().to_string() + "\n"));
    }
    index.push_str("\n## Any server\n\n");
    for e in f.fix.iter().filter(|e| e.language.is_none()) {
        for c in &e.concerns {
            let title = &f.concern.get(c).expect("a known concern").title;
            let _ = writeln!(index, "### {title}\n\nFor {}.\n", rules_of(f, c));
        }
        let _ = writeln!(index, "{}\n", one_paragraph(&e.text));
    }
    out.insert(0, ("fix.md".into(), index.trim_end().to_string() + "\n"));
    out
}

#[test]
fn fix_pages_are_the_fixes() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/book/src");
    let update = std::env::var_os("MCP_SHUTDOWN_UPDATE_BOOK").is_some();
    let mut stale = Vec::new();
    for (path, want) in pages(Fixes::bundled()) {
        let p = dir.join(&path);
        if std::fs::read_to_string(&p).ok().as_deref() == Some(want.as_str()) {
            continue;
        }
        if update {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, want).unwrap();
        } else {
            stale.push(path);
        }
    }
    let summary = std::fs::read_to_string(dir.join("SUMMARY.md")).unwrap();
    for (id, lang) in Fixes::bundled().language.iter() {
        assert!(
            summary.contains(&format!("(fix/{id}.md)")),
            "SUMMARY.md: add `  - [{}](fix/{id}.md)` under `[Fix it](fix.md)`",
            lang.name
        );
    }
    assert!(
        stale.is_empty(),
        "the book's fix pages are not conformance/fixes.toml's: {stale:?}; write them again \
         with `MCP_SHUTDOWN_UPDATE_BOOK=1 cargo test --lib fix_pages`"
    );
}
