//! The fix-its (`conformance/fixes.toml`) as typed data, and the pure choice of a server's
//! fixes: for every rule it missed, its SDK's change (by the report's `sdk` and
//! `sdk_version`), else its language's (by the runtime the harness recognised), else the
//! change any server makes. A report carries them per server, so every format shows all of
//! them at once.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

use super::Catalogue;
use crate::model::{Check, Fix, FixCode, Outcome, Report, RuleId, Runtime};

/// The fix-its shipped with the suite.
pub const BUNDLED: &str = include_str!("../../conformance/fixes.toml");

/// The rules one kind of change fixes.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Concern {
    pub title: String,
    /// Its rules: those of the catalogue that name it (`concerns` in rules.toml).
    #[serde(skip)]
    pub rules: Vec<RuleId>,
}

/// A language: a page of the book, and the runtime its servers are recognised by.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Language {
    pub name: String,
    #[serde(default)]
    pub runtime: Option<Runtime>,
    pub fence: String,
}

/// Where a fix's lines come from: a server that passes.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixSource {
    /// A bundled server (`conformance/servers/<server>.toml`) whose shape is `fixed`.
    #[serde(default)]
    pub server: Option<String>,
    /// Or a kit line's shape written to exit.
    #[serde(default)]
    pub kit: Option<String>,
    #[serde(default)]
    pub shape: Option<String>,
    /// The file, relative to the repository.
    pub file: String,
}

/// One `[[fix]]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixEntry {
    pub id: String,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub sdk: Option<String>,
    /// What a report's `sdk` says of a server this fix is for (kit line ids, packages).
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Semver ranges of `sdk_version`, any of which; none: every release.
    #[serde(default)]
    pub versions: Vec<String>,
    /// Also for servers of this language whose SDK is unknown.
    #[serde(default)]
    pub fallback: bool,
    pub concerns: Vec<String>,
    pub text: String,
    #[serde(default)]
    pub lines: Option<String>,
    #[serde(default)]
    pub source: Option<FixSource>,
}

impl FixEntry {
    /// Is this the fix of SDK `sdk` at release `version` (any release when unknown)?
    fn is_for(&self, sdk: &str, version: Option<&str>) -> bool {
        if !self.matches.iter().any(|m| m == sdk) {
            return false;
        }
        if self.versions.is_empty() {
            return true;
        }
        let Some(v) = version.and_then(|v| semver::Version::parse(v).ok()) else {
            // An unknown release: the fix for every release of the line, if there is one.
            return false;
        };
        self.versions
            .iter()
            .any(|r| semver::VersionReq::parse(r).is_ok_and(|req| req.matches(&v)))
    }
}

/// The parsed file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixes {
    pub concern: Ordered<Concern>,
    pub language: Ordered<Language>,
    pub fix: Vec<FixEntry>,
}

/// A table's entries in file order (`toml` reads a document's tables in order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Ordered<T> {
    pub fn get(&self, k: &str) -> Option<&T> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Ordered<T>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// What is known of a server when its fixes are chosen.
#[derive(Clone, Copy, Debug, Default)]
pub struct Server<'a> {
    pub sdk: Option<&'a str>,
    pub sdk_version: Option<&'a str>,
    pub runtime: Option<Runtime>,
}

impl Fixes {
    /// The fixes shipped with the suite.
    pub fn bundled() -> &'static Fixes {
        static F: LazyLock<Fixes> = LazyLock::new(|| {
            let mut f: Fixes = toml::from_str(BUNDLED).expect("conformance/fixes.toml parses");
            f.give_rules(Catalogue::shared());
            f
        });
        &F
    }

    /// Gives each concern the rules of the catalogue that name it, in the catalogue's order.
    fn give_rules(&mut self, catalogue: &Catalogue) {
        for (name, concern) in self.concern.0.iter_mut() {
            concern.rules = catalogue
                .rules
                .iter()
                .filter(|r| r.concerns.contains(name))
                .map(|r| r.id)
                .collect();
        }
    }

    /// The entries for one concern of this server: its SDK's, else its language's, else
    /// any server's.
    fn for_concern(&self, concern: &str, s: Server) -> (Vec<&FixEntry>, Option<&Language>) {
        let of = |e: &&FixEntry| e.concerns.iter().any(|c| c == concern);
        let sdk: Vec<&FixEntry> = match s.sdk {
            Some(sdk) => self
                .fix
                .iter()
                .filter(of)
                .filter(|e| e.is_for(sdk, s.sdk_version))
                .collect(),
            None => Vec::new(),
        };
        if !sdk.is_empty() {
            return (sdk, None);
        }
        let language = s
            .runtime
            .and_then(|rt| self.language.iter().find(|(_, l)| l.runtime == Some(rt)));
        if let Some((id, lang)) = language {
            let fallback: Vec<&FixEntry> = self
                .fix
                .iter()
                .filter(of)
                .filter(|e| e.fallback && e.language.as_deref() == Some(id.as_str()))
                .collect();
            if !fallback.is_empty() {
                return (fallback, Some(lang));
            }
        }
        let any = self
            .fix
            .iter()
            .filter(of)
            .filter(|e| e.language.is_none() && e.sdk.is_none())
            .collect();
        (any, None)
    }

    /// Every fix for the rules a server `missed`, each once, with the missed rules it
    /// answers, in the order of the concerns in the file.
    pub fn choose(&self, missed: &[RuleId], s: Server) -> Vec<Fix> {
        let mut out: Vec<Fix> = Vec::new();
        for (name, concern) in self.concern.iter() {
            let rules: Vec<RuleId> = missed
                .iter()
                .copied()
                .filter(|r| concern.rules.contains(r))
                .collect();
            if rules.is_empty() {
                continue;
            }
            let (entries, fallback) = self.for_concern(name, s);
            for e in entries {
                match out.iter_mut().find(|f| f.id == e.id) {
                    Some(f) => {
                        for r in &rules {
                            if !f.rules.contains(r) {
                                f.rules.push(*r);
                            }
                        }
                        if !f.title.contains(&concern.title) {
                            f.title = format!("{}; {}", f.title, lower_first(&concern.title));
                        }
                    }
                    None => {
                        let mut f = self.fix_of(e, &concern.title, rules.clone());
                        // Chosen by runtime alone: the lines are that SDK's, the change any
                        // server of the language makes.
                        if let (Some(lang), Some(sdk)) = (fallback, &f.sdk) {
                            f.sdk = Some(format!(
                                "any {} server; the lines are the {sdk}'s",
                                lang.name
                            ));
                        }
                        out.push(f)
                    }
                }
            }
        }
        out
    }

    fn fix_of(&self, e: &FixEntry, title: &str, rules: Vec<RuleId>) -> Fix {
        let language = e.language.as_ref().and_then(|l| self.language.get(l));
        Fix {
            id: e.id.clone(),
            title: title.to_string(),
            sdk: e.sdk.clone(),
            language: e.language.clone(),
            rules,
            text: one_paragraph(&e.text),
            code: match (&e.lines, language) {
                (Some(lines), Some(l)) => Some(FixCode {
                    fence: l.fence.clone(),
                    lines: lines.trim_matches('\n').to_string(),
                    source: e
                        .source
                        .as_ref()
                        .map_or_else(String::new, |s| s.file.clone()),
                }),
                _ => None,
            },
        }
    }

    /// Fills every server's `fixes` from the rules its judged cases missed (cases the
    /// machine decided and cases that could not be judged are nobody's to fix).
    pub fn attach(&self, report: &mut Report) {
        let mut missed: BTreeMap<&str, Vec<RuleId>> = BTreeMap::new();
        let mut runtime: BTreeMap<&str, Runtime> = BTreeMap::new();
        for r in &report.results {
            if let Some(rt) = r.diagnostics.as_ref().and_then(|d| d.runtime) {
                runtime.entry(&r.server).or_insert(rt);
            }
            if r.is_machine_bound() || r.not_testable.is_some() {
                continue;
            }
            let m = missed.entry(&r.server).or_default();
            let missed_here = r.checks.iter().filter(|c| c.status.is_miss());
            // A leak of the server itself by its launcher is no process it started: its own
            // fix is the one for ending on EOF or a signal, not "stop what it started".
            let launchers_leak =
                |c: &&Check| c.id == RuleId::ProcessNoLeakedDescendants && r.only_launchers_left();
            for c in missed_here
                .filter(|c| c.outcome != Outcome::NotTestable)
                .filter(|c| !launchers_leak(c))
            {
                if !m.contains(&c.id) {
                    m.push(c.id);
                }
            }
        }
        let chosen: Vec<(String, Vec<Fix>)> = missed
            .iter()
            .map(|(server, rules)| {
                let info = report.servers.get(*server);
                let s = Server {
                    sdk: info.and_then(|i| i.sdk.as_deref()),
                    sdk_version: info.and_then(|i| i.sdk_version.as_deref()),
                    runtime: runtime.get(server).copied(),
                };
                (server.to_string(), self.choose(rules, s))
            })
            .collect();
        for (server, fixes) in chosen {
            report.servers.entry(server).or_default().fixes = fixes;
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

/// The file's wrapped text as one paragraph.
fn one_paragraph(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "fixes_tests.rs"]
mod tests;
