//! What the docs claim about the tree: every path they name in backticks exists, and the
//! book's layout names every source folder.

use std::collections::BTreeSet;

use pulldown_cmark::{Event, Parser};

use super::{files, read, rel, root, ARCHITECTURE, BOOK};

/// The folders and root files a path in the docs can start with.
const TOP: &[&str] = &[
    "src/",
    "tests/",
    "scripts/",
    "fixtures/",
    "conformance/",
    "docs/",
    "packaging/",
    "kits/",
    ".github/",
    ".ci/",
    "build.rs",
];

/// The repository path an inline code span names, if it names one: `src/os/tree.rs`,
/// `fixtures/hostile/` (a placeholder, a glob or a command is not a path).
fn named_path(code: &str) -> Option<&str> {
    let p = code.split([':', '#']).next()?.trim_end_matches('/');
    let under_top = TOP.iter().any(|t| format!("{p}/").starts_with(t));
    let placeholder =
        p.contains(['*', '<', '>', '{', '}', ' ', '$', '…', '|']) || p.contains("...");
    // A server's own source (`src/server/stdio.ts`) is not this tree's.
    let foreign = p.starts_with("src/") && p.rsplit_once('.').is_some_and(|(_, ext)| ext != "rs");
    (under_top && !placeholder && !foreign).then_some(p)
}

#[test]
fn every_path_the_docs_name_exists() {
    let mut docs = vec![root().join(ARCHITECTURE), root().join("README.md")];
    docs.extend(files(&root().join(BOOK), ".md"));
    let mut problems = BTreeSet::new();
    for doc in &docs {
        for event in Parser::new(&read(doc)) {
            let Event::Code(code) = event else { continue };
            if let Some(p) = named_path(&code) {
                if !root().join(p).exists() {
                    problems.insert(format!(
                        "{}: `{code}` names {p}, which does not exist",
                        rel(doc)
                    ));
                }
            }
        }
    }
    let problems: Vec<String> = problems.into_iter().collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_books_layout_names_every_source_folder() {
    let page = root().join(BOOK).join("architecture.md");
    let layout = super::code_block_in(&read(&page), "Layout", "docs/book/src/architecture.md");
    let named: BTreeSet<&str> = layout
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("src")).expect("src/") {
        let entry = entry.expect("a src/ entry");
        if entry.path().is_dir() {
            let folder = format!("src/{}/", entry.file_name().to_string_lossy());
            if !named.contains(folder.as_str()) {
                missing.push(format!(
                    "docs/book/src/architecture.md, ## Layout: add a line for {folder} (what it is for)"
                ));
            }
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn a_path_is_told_from_a_placeholder() {
    assert_eq!(named_path("src/os/tree.rs"), Some("src/os/tree.rs"));
    assert_eq!(named_path("fixtures/hostile/"), Some("fixtures/hostile"));
    assert_eq!(
        named_path("src/rules/judge.rs:120"),
        Some("src/rules/judge.rs")
    );
    assert_eq!(named_path("fixtures/<sdk>-<version>/"), None);
    assert_eq!(named_path("conformance/*.toml"), None);
    assert_eq!(named_path("mcp-shutdown check"), None);
    assert_eq!(named_path("src/server/stdio.ts"), None);
}

/// Past this a file does more than one job: split it by job (or move its tests into a
/// `tests.rs` of their own).
const MAX_FILE_LINES: usize = 600;

#[test]
fn no_source_file_is_over_600_lines() {
    let long: Vec<String> = files(&root().join("src"), ".rs")
        .iter()
        .map(|f| (rel(f), read(f).lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("{f}: {n} lines (at most {MAX_FILE_LINES}): split it by job"))
        .collect();
    assert!(long.is_empty(), "{}", long.join("\n"));
}
