//! The documentation holds: every internal link of README.md and docs/**/*.md resolves (files
//! and `#anchors`, with mdBook's heading ids), the README stays short, the book's SUMMARY.md
//! lists every page and only pages that exist, and docs/ARCHITECTURE.md's module map and import
//! arrows are the tree's; no function grows past 60 lines; no type name means two things;
//! no code the binary runs names its build path. Reads files only: no process, no
//! mdbook.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

mod claims;
mod imports;
mod lengths;
mod names;
mod standalone;
use imports::Place;

const README_MAX_LINES: usize = 300;
const BOOK: &str = "docs/book/src";
const ARCHITECTURE: &str = "docs/ARCHITECTURE.md";

/// Book pages that other branches add. SUMMARY.md and the pages may name them before they
/// exist; once one exists the test says to take it off this list.
const PENDING: &[&str] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", rel(p)))
}

/// Every file under `dir` whose name ends with `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", rel(&d))) {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                todo.push(p);
            } else if p.to_string_lossy().ends_with(ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

fn pending(p: &Path) -> bool {
    p.parent() == Some(&root().join(BOOK))
        && p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| PENDING.contains(&n))
}

// ---------------------------------------------------------------------------------------
// Markdown: links and heading ids

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES | Options::ENABLE_STRIKETHROUGH
}

/// The text with mdBook's `{{#include PATH}}` lines replaced by the file they name.
fn expand_includes(path: &Path, text: &str) -> String {
    text.lines()
        .map(|line| {
            let t = line.trim();
            match t
                .strip_prefix("{{#include ")
                .and_then(|r| r.strip_suffix("}}"))
            {
                Some(inc) => {
                    let p = path.parent().expect("a page's directory").join(inc.trim());
                    read(&normalize(&p))
                }
                None => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// mdBook's id of a heading (`normalize_id`): lowercase letters, digits, `_` and `-` kept,
/// whitespace becomes `-`, the rest is dropped. GitHub's anchors are the same for this text.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().collect::<String>())
            } else if c.is_whitespace() {
                Some("-".to_string())
            } else {
                None
            }
        })
        .collect()
}

/// Every heading id of a Markdown text; a repeated id gets `-1`, `-2`, … as in mdBook.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut heading: Option<(String, Option<String>)> = None;
    for ev in Parser::new_ext(text, options()) {
        match ev {
            Event::Start(Tag::Heading { id, .. }) => {
                heading = Some((String::new(), id.map(|i| i.to_string())));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((h, _)) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((h, id)) = heading.take() {
                    let base = id.unwrap_or_else(|| slug(&h));
                    let n = seen.entry(base.clone()).or_insert(0);
                    out.insert(if *n == 0 {
                        base.clone()
                    } else {
                        format!("{base}-{n}")
                    });
                    *n += 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// Every link and image destination of a Markdown text, with its line.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (ev, range) in Parser::new_ext(text, options()).into_offset_iter() {
        let dest = match ev {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => dest_url,
            _ => continue,
        };
        let line = text[..range.start].matches('\n').count() + 1;
        out.push((line, dest.to_string()));
    }
    out
}

fn external(dest: &str) -> bool {
    dest.starts_with("//")
        || dest.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        })
}

/// The Markdown files whose links are checked: README.md and every .md under docs/.
fn documents() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    out.extend(files(&root().join("docs"), ".md"));
    out
}

#[test]
fn every_internal_link_resolves() {
    let mut anchors_of: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    for doc in documents() {
        // An included file's links are read from the including page too, since mdBook puts
        // them there (so docs/ARCHITECTURE.md's links must resolve from both places).
        let text = expand_includes(&doc, &read(&doc));
        for (line, dest) in links(&text) {
            if external(&dest) {
                continue;
            }
            let (path, fragment) = match dest.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (dest.as_str(), None),
            };
            let target = if path.is_empty() {
                doc.clone()
            } else {
                normalize(&doc.parent().expect("a document's directory").join(path))
            };
            let at = format!("{}:{line}: `{dest}`", rel(&doc));
            if !target.exists() {
                if !pending(&target) {
                    broken.push(format!("{at}: no such file {}", rel(&target)));
                }
                continue;
            }
            let Some(fragment) = fragment else { continue };
            if target.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let ids = anchors_of.entry(target.clone()).or_insert_with(|| {
                let t = read(&target);
                anchors(&expand_includes(&target, &t))
            });
            if !ids.contains(fragment) {
                let near: Vec<&String> = ids
                    .iter()
                    .filter(|i| i.contains(fragment) || fragment.contains(i.as_str()))
                    .collect();
                broken.push(format!(
                    "{at}: {} has no heading with id `{fragment}` (ids like it: {near:?})",
                    rel(&target)
                ));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_short() {
    let n = read(&root().join("README.md")).lines().count();
    assert!(
        n <= README_MAX_LINES,
        "README.md has {n} lines, more than {README_MAX_LINES}: move the detail into a page of {BOOK} and link it"
    );
}

#[test]
fn ci_runs_the_readmes_test_command() {
    // README: "cargo test … (CI runs exactly this: .ci/run)". Every cargo command .ci/run
    // runs is one of the README's two commands.
    let readme = read(&root().join("README.md"));
    let block = code_block_in(&readme, "The two commands", "README.md");
    let commands: Vec<&str> = block
        .iter()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .collect();
    let ci = read(&root().join(".ci/run"));
    for line in ci
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo "))
    {
        assert!(
            commands.contains(&line),
            ".ci/run runs `{line}`, which is not one of README.md's two commands {commands:?}: \
             CI runs the README's test command, nothing else"
        );
    }
}

#[test]
fn the_book_is_configured() {
    let path = root().join("docs/book/book.toml");
    let config: toml::Value = toml::from_str(&read(&path)).expect("docs/book/book.toml is TOML");
    let book = &config["book"];
    assert!(
        book.get("title")
            .and_then(|t| t.as_str())
            .is_some_and(|t| !t.is_empty()),
        "docs/book/book.toml: `[book] title` is missing"
    );
    assert_eq!(
        book.get("src").and_then(|s| s.as_str()),
        Some("src"),
        "docs/book/book.toml: `[book] src` must be \"src\" ({BOOK} is where the pages are)"
    );
}

#[test]
fn summary_lists_every_page_and_only_pages() {
    let book = root().join(BOOK);
    let summary = book.join("SUMMARY.md");
    let listed: BTreeSet<PathBuf> = links(&read(&summary))
        .into_iter()
        .filter(|(_, d)| !external(d))
        .map(|(_, d)| normalize(&book.join(d.split('#').next().unwrap_or_default())))
        .collect();
    let mut problems = Vec::new();
    for p in &listed {
        if !p.is_file() && !pending(p) {
            problems.push(format!("SUMMARY.md lists {}, which does not exist", rel(p)));
        }
    }
    for p in files(&book, ".md") {
        if p != summary && !listed.contains(&p) {
            problems.push(format!(
                "{} is not listed in {BOOK}/SUMMARY.md: add `- [Title]({})`",
                rel(&p),
                rel(&p).trim_start_matches(&format!("{BOOK}/"))
            ));
        }
    }
    for name in PENDING {
        let p = book.join(name);
        if p.exists() {
            problems.push(format!(
                "{} exists now: take \"{name}\" off PENDING in tests/docs.rs",
                rel(&p)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------
// docs/ARCHITECTURE.md against the tree

/// The lines of the first code block under the heading `## {title}` of ARCHITECTURE.md.
fn code_block(text: &str, title: &str) -> Vec<String> {
    code_block_in(text, title, ARCHITECTURE)
}

/// The lines of the first code block under the heading `## {title}` of a document.
fn code_block_in(text: &str, title: &str, doc: &str) -> Vec<String> {
    let mut in_section = false;
    let mut in_code = false;
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut in_heading = false;
    for ev in Parser::new_ext(text, options()) {
        match ev {
            Event::Start(Tag::Heading {
                level: HeadingLevel::H2,
                ..
            }) => {
                if !out.is_empty() {
                    break;
                }
                in_heading = true;
                heading.clear();
            }
            Event::End(TagEnd::Heading(HeadingLevel::H2)) => {
                in_heading = false;
                in_section = heading.trim() == title;
            }
            Event::Start(Tag::CodeBlock(_)) if in_section => in_code = true,
            Event::End(TagEnd::CodeBlock) if in_code => break,
            Event::Text(t) | Event::Code(t) => {
                if in_heading {
                    heading.push_str(&t);
                } else if in_code {
                    out.extend(t.lines().map(str::to_string));
                }
            }
            _ => {}
        }
    }
    assert!(!out.is_empty(), "{doc}: no code block under `## {title}`");
    out
}

/// A file's module as the import list names it: its directory under src/, or its stem for a
/// file at the top (`error`, `lib`).
fn module_of(file: &Path) -> String {
    let r = file
        .strip_prefix(root().join("src"))
        .expect("a file under src/");
    let mut parts = r.components();
    let first = parts
        .next()
        .expect("a path")
        .as_os_str()
        .to_string_lossy()
        .to_string();
    if parts.next().is_some() {
        first
    } else {
        first.trim_end_matches(".rs").to_string()
    }
}

/// The files whose imports count: src/ without test support, test-only modules and main.rs.
fn counted_files() -> Vec<(PathBuf, Place)> {
    let src = root().join("src");
    let all = files(&src, ".rs");
    let tests = imports::test_modules(&src, &all);
    all.into_iter()
        .map(|f| {
            let place = Place::of(&src, &f);
            (f, place)
        })
        .filter(|(f, place)| {
            !imports::TEST_ONLY.contains(&rel(f).as_str())
                && !tests.contains(&place.module)
                && module_of(f) != "main"
        })
        .collect()
}

/// What the tree does: each module's imports, with one file that shows each arrow.
fn tree_imports() -> BTreeMap<String, BTreeMap<String, String>> {
    let top = Place::of(&root().join("src"), &root().join("src/lib.rs")).children;
    let mut actual: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (f, place) in counted_files() {
        let r = rel(&f);
        let module = module_of(&f);
        let entry = actual.entry(module.clone()).or_default();
        for p in imports::paths_in(&place, &read(&f)) {
            let Some(dep) = p.first().filter(|d| top.contains(*d) && **d != module) else {
                continue;
            };
            entry.entry(dep.clone()).or_insert_with(|| r.clone());
        }
    }
    actual
}

/// The line range (exclusive of the fences) of the first code block after `## {title}`.
fn block_range(lines: &[&str], title: &str) -> (usize, usize) {
    let heading = format!("## {title}");
    let h = lines
        .iter()
        .position(|l| l.trim_end() == heading)
        .unwrap_or_else(|| panic!("{ARCHITECTURE}: no `{heading}`"));
    let open = h + lines[h..]
        .iter()
        .position(|l| l.starts_with("```"))
        .unwrap_or_else(|| panic!("{ARCHITECTURE}: no code block under `{heading}`"));
    let close = open
        + 1
        + lines[open + 1..]
            .iter()
            .position(|l| l.starts_with("```"))
            .unwrap_or_else(|| {
                panic!("{ARCHITECTURE}: the code block under `{heading}` is not closed")
            });
    (open + 1, close)
}

/// A new file's words in the map: the first line of its `//!` documentation.
fn first_doc_line(file: &Path) -> String {
    read(file)
        .lines()
        .find_map(|l| l.trim().strip_prefix("//!").map(str::trim))
        .filter(|l| !l.is_empty())
        .unwrap_or("(say what it is for)")
        .to_string()
}

/// ARCHITECTURE.md with its module map and import list made the tree's: lines of files
/// that are gone removed, a line for each new file (its first `//!` line, to be reworded)
/// after its directory's last line, and the import list written from the imports.
fn updated_architecture(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = block_range(&lines, "Module map");
    // Entries: a line naming a file and its indented continuation lines.
    let mut entries: Vec<(Option<String>, Vec<String>)> = Vec::new();
    for l in &lines[a..b] {
        match l
            .split_whitespace()
            .next()
            .filter(|p| p.starts_with("src/"))
        {
            Some(path) => entries.push((Some(path.to_string()), vec![l.to_string()])),
            None if l.starts_with(char::is_whitespace) && !l.trim().is_empty() => {
                match entries.last_mut() {
                    Some(e) => e.1.push(l.to_string()),
                    None => entries.push((None, vec![l.to_string()])),
                }
            }
            None => entries.push((None, vec![l.to_string()])),
        }
    }
    entries.retain(|(p, _)| p.as_ref().is_none_or(|p| root().join(p).exists()));
    let named: BTreeSet<String> = entries.iter().filter_map(|(p, _)| p.clone()).collect();
    for f in files(&root().join("src"), ".rs") {
        let r = rel(&f);
        if named.contains(&r) {
            continue;
        }
        let dir = r.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let line = format!("{r:<29} {}", first_doc_line(&f));
        let at = entries
            .iter()
            .rposition(|(p, _)| {
                p.as_ref()
                    .is_some_and(|p| p.rsplit_once('/').map_or("", |(d, _)| d) == dir)
            })
            .map(|i| i + 1);
        match at {
            Some(i) => entries.insert(i, (Some(r), vec![line])),
            None => {
                entries.push((None, vec![String::new()]));
                entries.push((Some(r), vec![line]));
            }
        }
    }
    let map: Vec<String> = entries.into_iter().flat_map(|(_, l)| l).collect();
    // The import list: the stated order kept, new modules at the end.
    let (c, d) = block_range(&lines, "Imports");
    let actual = tree_imports();
    let mut order: Vec<String> = lines[c..d]
        .iter()
        .filter_map(|l| l.split_once('→').map(|(m, _)| m.trim().to_string()))
        .filter(|m| actual.contains_key(m))
        .collect();
    order.extend(
        actual
            .keys()
            .filter(|m| !order.contains(m))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let width = order.iter().map(String::len).max().unwrap_or(0);
    let imports: Vec<String> = order
        .iter()
        .map(|m| {
            let deps: Vec<&str> = actual[m].keys().map(String::as_str).collect();
            let deps = if deps.is_empty() {
                "nothing".to_string()
            } else {
                deps.join(", ")
            };
            format!("{m:<width$} → {deps}")
        })
        .collect();
    let mut out: Vec<String> = lines[..a].iter().map(|l| l.to_string()).collect();
    out.extend(map);
    out.extend(lines[b..c].iter().map(|l| l.to_string()));
    out.extend(imports);
    out.extend(lines[d..].iter().map(|l| l.to_string()));
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// With `MCP_SHUTDOWN_UPDATE_DOCS` set, writes the module map and import list from the tree
/// (as `MCP_SHUTDOWN_UPDATE_BOOK` does for the rules page) and says so; otherwise false.
fn update_architecture() -> bool {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if std::env::var_os("MCP_SHUTDOWN_UPDATE_DOCS").is_none() {
        return false;
    }
    let imports = tree_imports();
    if imports
        .keys()
        .any(|m| cycle_from(m, &imports, &mut vec![m.clone()]).is_some())
    {
        return false; // an import cycle is fixed in the code, never written down
    }
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = root().join(ARCHITECTURE);
    let text = read(&path);
    let new = updated_architecture(&text);
    if new != text {
        fs::write(&path, new).expect("write docs/ARCHITECTURE.md");
        eprintln!(
            "{ARCHITECTURE}: module map and imports written from the tree; word the new lines"
        );
    }
    true
}

const UPDATE: &str = "or write them all with `MCP_SHUTDOWN_UPDATE_DOCS=1 cargo test --test docs` \
                      (then put the new lines' words right)";

#[test]
fn writing_the_map_again_changes_nothing_more() {
    let once = updated_architecture(&read(&root().join(ARCHITECTURE)));
    assert_eq!(updated_architecture(&once), once);
}

#[test]
fn the_module_map_names_every_file_and_only_files() {
    let text = read(&root().join(ARCHITECTURE));
    let mut named = BTreeSet::new();
    let mut problems = Vec::new();
    for line in code_block(&text, "Module map") {
        let Some(path) = line
            .split_whitespace()
            .next()
            .filter(|p| p.starts_with("src/"))
        else {
            continue;
        };
        if !root().join(path).exists() {
            problems.push(format!(
                "{ARCHITECTURE}, module map: {path} does not exist: remove its line `{}`",
                line.trim_end()
            ));
        }
        named.insert(path.to_string());
    }
    for f in files(&root().join("src"), ".rs") {
        let r = rel(&f);
        if !named.contains(&r) {
            problems.push(format!(
                "{ARCHITECTURE}, module map: add a line for {r} (`{r:<29} what it is for`), in its module's block"
            ));
        }
    }
    if !problems.is_empty() && update_architecture() {
        return;
    }
    assert!(problems.is_empty(), "{}\n{UPDATE}", problems.join("\n"));
}

/// A path of imports from `path`'s last module back to its first, if there is one.
fn cycle_from(
    start: &str,
    graph: &BTreeMap<String, BTreeMap<String, String>>,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    let last = path.last().cloned().unwrap_or_default();
    for dep in graph.get(&last).into_iter().flat_map(|d| d.keys()) {
        if dep == start {
            let mut cycle = path.clone();
            cycle.push(dep.clone());
            return Some(cycle);
        }
        if path.contains(dep) {
            continue;
        }
        path.push(dep.clone());
        if let Some(c) = cycle_from(start, graph, path) {
            return Some(c);
        }
        path.pop();
    }
    None
}

#[test]
fn the_import_arrows_are_the_trees() {
    let text = read(&root().join(ARCHITECTURE));
    // What the doc states: `module → a, b` (or `→ nothing`).
    let mut stated: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in code_block(&text, "Imports") {
        let Some((module, deps)) = line.split_once('→') else {
            continue;
        };
        let deps = deps.trim();
        let deps: BTreeSet<String> = if deps == "nothing" {
            BTreeSet::new()
        } else {
            deps.split(',')
                .map(|d| d.trim().to_string())
                .filter(|d| !d.is_empty())
                .collect()
        };
        stated.insert(module.trim().to_string(), deps);
    }
    let actual = tree_imports();
    let line = |m: &str, deps: &mut dyn Iterator<Item = &String>| {
        let d: Vec<&String> = deps.collect();
        if d.is_empty() {
            format!("{m} → nothing")
        } else {
            format!(
                "{m} → {}",
                d.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            )
        }
    };
    let mut problems = Vec::new();
    for (m, deps) in &actual {
        let want = line(m, &mut deps.keys());
        match stated.get(m) {
            None => problems.push(format!("{ARCHITECTURE}, imports: add the line `{want}`")),
            Some(s) => {
                let extra: Vec<String> = deps
                    .iter()
                    .filter(|(d, _)| !s.contains(*d))
                    .map(|(d, f)| format!("{f} uses crate::{d}, which is not stated"))
                    .collect();
                let missing: Vec<String> = s
                    .iter()
                    .filter(|d| !deps.contains_key(*d))
                    .map(|d| format!("no file of src/{m} uses crate::{d}"))
                    .collect();
                if !extra.is_empty() || !missing.is_empty() {
                    let have = line(m, &mut s.iter());
                    let why: Vec<String> = extra.into_iter().chain(missing).collect();
                    problems.push(format!(
                        "{ARCHITECTURE}, imports: write `{want}` instead of `{have}` ({})",
                        why.join("; ")
                    ));
                }
            }
        }
    }
    for m in actual.keys() {
        if let Some(cycle) = cycle_from(m, &actual, &mut vec![m.clone()]) {
            problems.push(format!(
                "src/: {} imports back: no module may import a module that imports it",
                cycle.join(" → ")
            ));
            break;
        }
    }
    for m in stated.keys() {
        if !actual.contains_key(m) {
            problems.push(format!(
                "{ARCHITECTURE}, imports: remove the line for `{m}`: src/ has no such module"
            ));
        }
    }
    if !problems.is_empty() && update_architecture() {
        return;
    }
    assert!(problems.is_empty(), "{}\n{UPDATE}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_imports_and_nothing_else() {
    let src = r##"
use crate::model::{Ending, Stage};
use crate::{config::manifest, rules::{self, repeat}};
use super::sibling::Thing;
// crate::harness is only named in a comment
/* crate::os in a block comment */
const S: &str = "crate::render in a string {";
const R: &str = r#"crate::cli in a raw string"#;
const C: char = '{';
fn f<'a>(x: &'a str) -> &'a str { crate::supervisor::run(x) }
fn g() -> String { format!("{}", crate::mcp::name()) }
#[cfg(test)]
mod tests {
    use crate::test_support::fixture;
}
#[cfg(test)]
use crate::kits::Kit;
"##;
    let place = Place {
        module: vec!["hosts".into(), "emit".into()],
        children: BTreeSet::new(),
    };
    let firsts: BTreeSet<String> = imports::paths_in(&place, src)
        .into_iter()
        .map(|p| p[0].clone())
        .collect();
    let want: BTreeSet<String> = ["model", "config", "rules", "supervisor", "mcp", "hosts"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(firsts, want);
    let siblings = imports::sibling_imports(&place, &imports::paths_in(&place, src));
    assert_eq!(siblings.keys().collect::<Vec<_>>(), ["sibling"]);
    assert_eq!(
        slug("Under each host: `--hosts`"),
        "under-each-host---hosts"
    );
    assert_eq!(
        slug("For SDK maintainers: any SDK version, `--sdk`"),
        "for-sdk-maintainers-any-sdk-version---sdk"
    );
    let ids = anchors("# A\n\n## B b\n\n## B b\n");
    assert!(ids.contains("b-b") && ids.contains("b-b-1") && ids.contains("a"));
}

#[test]
fn no_file_imports_back_inside_its_folder() {
    // folder → file → the files of the same folder it imports (with a path that shows it).
    let mut folders: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for (f, place) in counted_files() {
        let stem = f.file_stem().unwrap_or_default().to_string_lossy();
        if matches!(stem.as_ref(), "mod" | "lib") || place.module.len() < 2 {
            continue; // a folder's root declares its files; it is not one of them
        }
        let folder = place.module[..place.module.len() - 1].join("/");
        let siblings = imports::sibling_imports(&place, &imports::paths_in(&place, &read(&f)));
        folders
            .entry(folder)
            .or_default()
            .insert(place.module.last().cloned().unwrap_or_default(), siblings);
    }
    let mut problems = Vec::new();
    for (folder, graph) in &folders {
        for file in graph.keys() {
            if let Some(cycle) = cycle_from(file, graph, &mut vec![file.clone()]) {
                let shown: Vec<String> = cycle
                    .windows(2)
                    .map(|w| format!("{} uses {}", w[0], graph[&w[0]][&w[1]]))
                    .collect();
                problems.push(format!(
                    "src/{folder}: {} imports back ({}): move what both need into one of them, \
                     or into a file neither imports from",
                    cycle.join(" → "),
                    shown.join("; ")
                ));
                break;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
