//! Every quote of the catalogue held against the specification's own source, kept in
//! `conformance/spec/<revision>/` (its README says where from): the quote is contiguous text
//! of the page its URL names, as a reader sees it, with `…` where it skips; the URL is that
//! page's published location, and its `#anchor` a heading whose section holds the quote; a
//! revision that is the rule's basis quotes the server's own duty at the rule's level.

use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::catalogue::{Catalogue, Rule, BUNDLED};
use crate::model::{Basis, Level, Revision};

/// Where the published pages live; the source of `<revision>/<path>` is `<path>.mdx`.
const SITE: &str = "https://modelcontextprotocol.io/specification/";

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/spec")
}

/// A heading and the range of the page's text its section covers (up to the next heading of
/// the same or a higher level).
struct Section {
    slug: String,
    level: usize,
    start: usize,
    end: usize,
}

/// A page as a reader sees it: its words with single spaces, list numbers kept, and the
/// sections of its headings.
struct SpecPage {
    text: String,
    sections: Vec<Section>,
}

impl SpecPage {
    /// The text of the section `anchor` names, or the whole page.
    fn section(&self, anchor: Option<&str>) -> Option<&str> {
        match anchor {
            None => Some(&self.text),
            Some(a) => self
                .sections
                .iter()
                .find(|s| s.slug == a)
                .map(|s| &self.text[s.start..s.end]),
        }
    }
}

/// Appends `s` with every run of whitespace (also across the join) as one space.
fn push_words(out: &mut String, s: &str) {
    for ch in s.chars() {
        if ch.is_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(ch);
        }
    }
}

/// A heading's anchor as the published site makes it: lower case, words joined by `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() => Some(c),
            ' ' | '-' => Some('-'),
            _ => None,
        })
        .collect()
}

/// The page of an `.mdx` source: front matter, code blocks and markup dropped.
fn page(mdx: &str) -> SpecPage {
    let body = match mdx
        .strip_prefix("---\n")
        .and_then(|r| r.split_once("\n---\n"))
    {
        Some((_, rest)) => rest,
        None => mdx,
    };
    let mut text = String::new();
    let mut sections: Vec<Section> = Vec::new();
    let (mut heading, mut in_code) = (None::<(usize, usize, String)>, false);
    let mut lists: Vec<Option<u64>> = Vec::new();
    for event in Parser::new(body) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Start(Tag::Heading { level, .. }) => {
                push_words(&mut text, " ");
                heading = Some((level as usize, text.len(), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, start, words)) = heading.take() {
                    open_section(&mut sections, level, start, &words);
                }
                push_words(&mut text, " ");
            }
            Event::Start(Tag::List(first)) => lists.push(first),
            Event::End(TagEnd::List(_)) => {
                lists.pop();
            }
            Event::Start(Tag::Item) => {
                if let Some(Some(n)) = lists.last_mut() {
                    push_words(&mut text, &format!(" {n}. "));
                    *n += 1;
                }
            }
            Event::Text(t) | Event::Code(t) if !in_code => {
                if let Some((_, _, words)) = &mut heading {
                    words.push_str(&t);
                }
                push_words(&mut text, &t);
            }
            Event::SoftBreak | Event::HardBreak | Event::End(TagEnd::Paragraph | TagEnd::Item) => {
                push_words(&mut text, " ");
            }
            _ => {}
        }
    }
    for s in &mut sections {
        s.end = s.end.min(text.len());
    }
    SpecPage { text, sections }
}

/// A heading at `start` of the text: it ends the open sections at its level or deeper, and
/// opens its own.
fn open_section(sections: &mut Vec<Section>, level: usize, start: usize, words: &str) {
    for s in sections.iter_mut().filter(|s| s.end == usize::MAX) {
        if s.level >= level {
            s.end = start;
        }
    }
    sections.push(Section {
        slug: slug(words),
        level,
        start,
        end: usize::MAX,
    });
}

/// The source file and anchor a rule's URL names, for the revision it is judged in.
fn source_of(url: &str, rev: Revision) -> Result<(PathBuf, Option<String>), String> {
    let rest = url
        .strip_prefix(SITE)
        .ok_or_else(|| format!("{url}: not under {SITE}"))?;
    let (path, anchor) = match rest.split_once('#') {
        Some((p, a)) => (p, Some(a.to_string())),
        None => (rest, None),
    };
    let (r, page) = path
        .split_once('/')
        .ok_or_else(|| format!("{url}: no page"))?;
    if r != rev.to_string() {
        return Err(format!("{url}: names revision {r}, quoted for {rev}"));
    }
    let dir = spec_dir().join(r);
    [format!("{page}.mdx"), format!("{page}/index.mdx")]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
        .map(|p| (p, anchor))
        .ok_or_else(|| {
            format!("{url}: no such page in conformance/spec/{r} (docs/specification/{r}/{page}.mdx in the spec repository)")
        })
}

/// Where `quote` is not the page's text: its parts (split at `…`) must appear in order.
fn misquoted(quote: &str, text: &str) -> Option<String> {
    let mut from = 0;
    for part in quote.split('…').map(str::trim).filter(|p| !p.is_empty()) {
        match text[from..].find(part) {
            Some(at) => from += at + part.len(),
            None => return Some(part.to_string()),
        }
    }
    None
}

/// Every problem with one rule's quotes in one revision.
fn problems(rule: &Rule, rev: Revision) -> Vec<String> {
    let mut out = Vec::new();
    for r in rule.references_for(rev) {
        let url = r.url_for(rev);
        let (file, anchor) = match source_of(&url, rev) {
            Ok(x) => x,
            Err(e) => {
                out.push(e);
                continue;
            }
        };
        let p = page(&std::fs::read_to_string(&file).expect("a kept page reads"));
        match p.section(anchor.as_deref()) {
            None => out.push(format!(
                "{url}: no heading `#{}`",
                anchor.unwrap_or_default()
            )),
            Some(text) => {
                if let Some(part) = misquoted(&r.quote, text) {
                    out.push(format!(
                        "{url}: not in the page's text as quoted: \"{part}\""
                    ));
                }
            }
        }
    }
    if rule.basis(rev) == Basis::Spec {
        let word = match rule.level(rev) {
            Level::Must => "MUST",
            _ => "SHOULD",
        };
        let duty = [format!("server {word}"), format!("Servers {word}")];
        if !rule
            .references_for(rev)
            .any(|r| duty.iter().any(|d| r.quote.contains(d.as_str())))
        {
            out.push(format!(
                "basis `spec`, but no quote of {rev} states the server's duty (`server {word}`)"
            ));
        }
    }
    out
}

fn kept_pages(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("conformance/spec reads") {
        let p = e.expect("an entry").path();
        if p.is_dir() {
            kept_pages(&p, out);
        } else if p.extension().is_some_and(|x| x == "mdx") {
            out.push(p);
        }
    }
}

#[test]
fn every_quote_is_the_text_of_the_page_its_url_names() {
    let c = Catalogue::parse(BUNDLED).unwrap();
    let found: Vec<String> = c
        .rules
        .iter()
        .flat_map(|r| {
            c.revisions.iter().flat_map(move |rev| {
                problems(r, *rev)
                    .into_iter()
                    .map(move |p| format!("{} {rev}: {p}", r.id))
            })
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn every_kept_page_is_cited() {
    let c = Catalogue::parse(BUNDLED).unwrap();
    let cited: Vec<PathBuf> = c
        .rules
        .iter()
        .flat_map(|r| {
            c.revisions.iter().flat_map(move |rev| {
                r.references_for(*rev)
                    .filter_map(move |x| source_of(&x.url_for(*rev), *rev).ok().map(|(p, _)| p))
            })
        })
        .collect();
    let mut kept = Vec::new();
    kept_pages(&spec_dir(), &mut kept);
    assert!(!kept.is_empty());
    let uncited: Vec<&PathBuf> = kept.iter().filter(|p| !cited.contains(p)).collect();
    assert!(uncited.is_empty(), "kept but cited by no rule: {uncited:?}");
}

#[test]
fn pages_read_as_a_reader_sees_them() {
    let p = page(
        "---\ntitle: x\n---\n\n## Shutdown\n\nThe client **SHOULD** initiate\nshutdown by:\n\n1. Closing\n2. Waiting for `SIGTERM`\n\n```mermaid\nA->>B: hidden\n```\n\nescalates from\n[`SIGTERM`][sigterm]\nto `SIGKILL`.\n\n## Receiving Messages\n\nThe server **MUST NOT** write JSON-RPC _requests_ to `stdout`.\n\n[sigterm]: https://example.org\n",
    );
    assert_eq!(
        p.section(Some("shutdown")).unwrap().trim(),
        "Shutdown The client SHOULD initiate shutdown by: 1. Closing 2. Waiting for SIGTERM escalates from SIGTERM to SIGKILL."
    );
    let rx = p.section(Some("receiving-messages")).unwrap();
    assert!(rx.contains("The server MUST NOT write JSON-RPC requests to stdout."));
    assert!(!p.text.contains("hidden") && !p.text.contains("example.org"));
}

/// The checks catch what the catalogue once got wrong.
#[test]
fn joined_passages_a_wrong_page_and_a_borrowed_duty_are_caught() {
    let c = Catalogue::bundled();
    let stdout = |rev: &str| {
        let rev: Revision = rev.parse().unwrap();
        let mut r = c.rule(crate::model::RuleId::StdioStdoutOnlyMcp).clone();
        r.references.retain(|x| x.applies_to(rev));
        (r, rev)
    };
    // Two passages joined without `…`.
    let (mut r, rev) = stdout("2025-06-18");
    r.references[0].quote = r.references[0].quote.replace(" … ", " ");
    assert!(
        problems(&r, rev)[0].contains("not in the page's text"),
        "{:?}",
        problems(&r, rev)
    );
    // 2026-07-28's stdio is its own page, not a section of the transports page.
    let (mut r, rev) = stdout("2026-07-28");
    r.references[0].url = format!("{SITE}{{revision}}/basic/transports#stdio");
    assert!(
        problems(&r, rev)[0].contains("no such page"),
        "{:?}",
        problems(&r, rev)
    );
    // The client's ladder is no duty of the server's.
    let mut kill = c.rule(crate::model::RuleId::StdioNoForcedKill).clone();
    kill.basis = super::catalogue::Bases::All(Basis::Spec);
    let rev: Revision = "2025-06-18".parse().unwrap();
    assert!(problems(&kill, rev)
        .iter()
        .any(|p| p.contains("states the server's duty")));
}
