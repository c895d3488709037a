//! The rule catalogue (`conformance/rules.toml`) as typed data: every rule keyed by its
//! [`RuleId`], its level and basis per spec revision, the endings it covers, the spec text
//! it quotes, and its wording (a message per finding, the badge's label). A rule says only
//! what its revision says: `basis = "spec"` for a revision needs a quote of that revision and
//! a MUST or SHOULD, and a MUST is only ever the spec's.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;
use strum::VariantNames;

use super::judge::Finding;
use super::template;

use crate::model::{
    Basis, BudgetName, Ending, Level, Quote, Revision, RuleId, RuleInfo, UnknownId,
};

/// The catalogue shipped with the suite.
pub const BUNDLED: &str = include_str!("../../conformance/rules.toml");

/// Spec text a rule quotes, identical in the listed revisions.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub revisions: Vec<Revision>,
    /// `{revision}` is replaced by the judged revision.
    pub url: String,
    pub quote: String,
}

impl Reference {
    pub fn applies_to(&self, rev: Revision) -> bool {
        self.revisions.contains(&rev)
    }

    /// The URL for one revision.
    pub fn url_for(&self, rev: Revision) -> String {
        self.url.replace("{revision}", &rev.to_string())
    }
}

/// A rule's basis: one for every revision, or one per revision (a duty a revision added).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Bases {
    All(Basis),
    PerRevision(BTreeMap<Revision, Basis>),
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: RuleId,
    pub title: String,
    /// The kinds of change that fix it: `[concern.<id>]` of `conformance/fixes.toml`.
    pub concerns: Vec<String>,
    /// The endings whose cases this rule judges (profiles are `close`): a list, or "every".
    #[serde(deserialize_with = "endings")]
    pub scenarios: Vec<Ending>,
    /// The budget the rule's timing is judged against, if any.
    pub budget: Option<BudgetName>,
    pub basis: Bases,
    pub rationale: String,
    pub levels: BTreeMap<Revision, Level>,
    /// A rule about something that happens only in a broken case (a server attacking the
    /// processes above it): its judge sees the cases that could not run (they are not
    /// testable for every other rule), and its check is reported only where it was missed,
    /// so that every other case does not carry a line that says nothing.
    #[serde(default)]
    pub only_when_missed: bool,
    /// Whether a run under a real host (`check --real-host`) can judge it: a host reads the
    /// server's stdout and sends its own requests, so what only the harness's own client
    /// sees is not judged there.
    #[serde(default = "seen")]
    pub under_real_host: bool,
    /// The check's message for each finding its judge gives, by the finding's name: a
    /// template of the finding's fields (see [`super::template`]).
    #[serde(default)]
    pub messages: BTreeMap<String, String>,
    /// What a badge says when this rule is missed: the first label whose `when` holds.
    #[serde(default)]
    pub badge: Vec<BadgeLabel>,
    #[serde(default)]
    pub references: Vec<Reference>,
}

fn seen() -> bool {
    true
}

/// A badge's label for a missed rule, when the case matches.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BadgeLabel {
    /// An expression of the case's `stage` and `stdout`; none: always.
    #[serde(default)]
    pub when: Option<String>,
    /// Lower says more: a badge names the lowest-ranked of a server's misses.
    pub rank: u8,
    pub label: String,
}

/// The wording every rule's messages share.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wording {
    /// A case that could not be judged (every rule's `not_testable` finding).
    pub not_testable: String,
    /// `{{ waiting }}` in a finding with an end: the time spent waiting for a CPU, when noticeable.
    pub waiting: String,
    /// `{{ ending }}` in a finding with an end: how the case ended, by stage (`none`: it never ran).
    pub ending: BTreeMap<String, String>,
}

impl Rule {
    pub fn level(&self, rev: Revision) -> Level {
        self.levels.get(&rev).copied().unwrap_or(Level::Info)
    }

    /// Whether `rev` states this rule (spec) or the suite checks it as practice.
    pub fn basis(&self, rev: Revision) -> Basis {
        match &self.basis {
            Bases::All(b) => *b,
            Bases::PerRevision(m) => m.get(&rev).copied().unwrap_or(Basis::Practice),
        }
    }

    pub fn references_for(&self, rev: Revision) -> impl Iterator<Item = &Reference> {
        self.references.iter().filter(move |r| r.applies_to(rev))
    }

    /// What a report needs to render this rule for `rev` without the catalogue.
    pub fn info(&self, rev: Revision) -> RuleInfo {
        RuleInfo {
            title: self.title.clone(),
            basis: self.basis(rev),
            budget: self.budget,
            quotes: self
                .references_for(rev)
                .map(|r| Quote {
                    url: r.url_for(rev),
                    quote: r.quote.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub revisions: Vec<Revision>,
    pub default_revision: Revision,
    pub wording: Wording,
    #[serde(rename = "rule")]
    pub rules: Vec<Rule>,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("rules.toml:{line}: {message}")]
    Parse { line: usize, message: String },
    #[error("rules.toml: rule `{rule}` has no level for revision {revision}")]
    MissingLevel { rule: RuleId, revision: Revision },
    #[error("rules.toml: rule `{0}` is defined twice")]
    Duplicate(RuleId),
    #[error("rules.toml: rule `{0}` is judged by the suite but missing from the catalogue")]
    Missing(RuleId),
    #[error("rules.toml: the default revision {0} is not among the revisions")]
    DefaultRevision(Revision),
    #[error("rules.toml: rule `{rule}` in {revision}: {problem}")]
    Basis {
        rule: RuleId,
        revision: Revision,
        problem: &'static str,
    },
    #[error("rules.toml: rule `{rule}`, {place}: {problem}")]
    Wording {
        rule: RuleId,
        place: String,
        problem: String,
    },
    #[error("rules.toml: [wording] {place}: {problem}")]
    SharedWording { place: String, problem: String },
    #[error("{0}")]
    UnknownRevision(UnknownId),
}

/// What is wrong with a rule's messages, and where: they word findings that exist, once per
/// rule (but for `not_testable`, worded once for all), in valid templates.
/// `scenarios`: a list of endings, or "every" (every ending, in its order).
fn endings<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Ending>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Endings {
        Every(String),
        Some(Vec<String>),
    }
    match Endings::deserialize(d)? {
        Endings::Every(s) if s == "every" => Ok(Ending::ALL.to_vec()),
        Endings::Every(s) => Err(serde::de::Error::custom(format!(
            "scenarios = {s:?}: a list of endings, or \"every\""
        ))),
        Endings::Some(list) => list
            .iter()
            .map(|s| s.parse().map_err(serde::de::Error::custom))
            .collect(),
    }
}

fn messages_problem(r: &Rule) -> Option<(String, String)> {
    r.messages.iter().find_map(|(name, template)| {
        let problem = if name == "not_testable" {
            "worded once for every rule, in [wording]".to_string()
        } else if !Finding::VARIANTS.contains(&name.as_str()) {
            let known = Finding::VARIANTS.join(", ");
            format!("no finding is called `{name}` (known: {known})")
        } else {
            template::template_problem(template)?
        };
        Some((format!("messages.{name}"), problem))
    })
}

/// What is wrong with a rule's badge labels, and where: valid `when`s, and only the last
/// label without one, so that every miss has a label.
fn badge_problem(r: &Rule) -> Option<(String, String)> {
    if r.badge.is_empty() {
        let problem = "no label: write `badge = [{ rank = …, label = \"…\" }]`";
        return Some(("badge".into(), problem.into()));
    }
    r.badge.iter().enumerate().find_map(|(i, b)| {
        let last = i + 1 == r.badge.len();
        let problem = match (&b.when, last) {
            (Some(_), true) => {
                "the last badge label has no `when`, so that every miss has a label".into()
            }
            (None, false) => "only the last badge label goes without a `when`".into(),
            (None, true) => return None,
            (Some(w), false) => {
                let p = template::expression_problem(w)?;
                return Some((format!("badge[{i}].when"), p));
            }
        };
        Some((format!("badge[{i}]"), problem))
    })
}

fn shared_wording_problem(w: &Wording) -> Option<(String, String)> {
    let templates = [("not_testable", &w.not_testable), ("waiting", &w.waiting)];
    let endings = w.ending.iter().map(|(k, v)| (k.as_str(), v));
    for (place, template) in templates.into_iter().chain(endings) {
        if let Some(p) = template::template_problem(template) {
            return Some((place.to_string(), p));
        }
    }
    template::ENDING_KEYS
        .iter()
        .find(|k| !w.ending.contains_key(**k))
        .map(|k| (format!("ending.{k}"), "missing".to_string()))
}

/// What is wrong with a rule's level and basis in one revision, if anything: the spec as the
/// basis needs a duty (MUST or SHOULD) and a quote of that revision; a MUST needs the spec.
fn basis_problem(r: &Rule, rev: Revision) -> Option<&'static str> {
    let (basis, level) = (r.basis(rev), r.level(rev));
    match (basis, level) {
        (Basis::Spec, Level::Info) => {
            Some("basis `spec` with level `info`: a revision that states the rule scores it")
        }
        (Basis::Spec, _) if r.references_for(rev).next().is_none() => {
            Some("basis `spec` without a quote of this revision")
        }
        (Basis::Practice, Level::Must) => {
            Some("level `must` on a rule of practice: only the spec says MUST")
        }
        _ => None,
    }
}

static SHARED: LazyLock<Catalogue> = LazyLock::new(Catalogue::bundled);

impl Catalogue {
    pub fn bundled() -> Self {
        Self::parse(BUNDLED).expect("the bundled rules.toml is valid (tested)")
    }

    /// The bundled catalogue, parsed once (what renderers word a report's rules with).
    pub fn shared() -> &'static Self {
        &SHARED
    }

    pub fn parse(text: &str) -> Result<Self, CatalogueError> {
        let c: Catalogue = toml::from_str(text).map_err(|e| CatalogueError::Parse {
            line: e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            }),
            message: e.message().trim().to_string(),
        })?;
        if !c.revisions.contains(&c.default_revision) {
            return Err(CatalogueError::DefaultRevision(c.default_revision));
        }
        if let Some((place, problem)) = shared_wording_problem(&c.wording) {
            return Err(CatalogueError::SharedWording { place, problem });
        }
        for (i, r) in c.rules.iter().enumerate() {
            if c.rules[..i].iter().any(|q| q.id == r.id) {
                return Err(CatalogueError::Duplicate(r.id));
            }
            if let Some(rev) = c.revisions.iter().find(|v| !r.levels.contains_key(v)) {
                return Err(CatalogueError::MissingLevel {
                    rule: r.id,
                    revision: *rev,
                });
            }
            if let Some((place, problem)) = messages_problem(r).or_else(|| badge_problem(r)) {
                return Err(CatalogueError::Wording {
                    rule: r.id,
                    place,
                    problem,
                });
            }
            for rev in &c.revisions {
                if let Some(problem) = basis_problem(r, *rev) {
                    return Err(CatalogueError::Basis {
                        rule: r.id,
                        revision: *rev,
                        problem,
                    });
                }
            }
        }
        if let Some(id) = RuleId::ALL
            .iter()
            .find(|id| !c.rules.iter().any(|r| r.id == **id))
        {
            return Err(CatalogueError::Missing(*id));
        }
        Ok(c)
    }

    /// The revision named on the command line, if the catalogue knows it.
    pub fn revision(&self, given: &str) -> Result<Revision, CatalogueError> {
        let unknown = || UnknownId {
            what: "spec revision",
            given: given.to_string(),
            known: self
                .revisions
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        };
        match given.parse::<Revision>() {
            Ok(r) if self.revisions.contains(&r) => Ok(r),
            _ => Err(CatalogueError::UnknownRevision(unknown())),
        }
    }

    pub fn rule(&self, id: RuleId) -> &Rule {
        self.rules
            .iter()
            .find(|r| r.id == id)
            .expect("every rule id is in the catalogue (checked when parsed)")
    }

    /// The rules that judge cases of `ending`, in catalogue order.
    pub fn rules_for(&self, ending: Ending) -> impl Iterator<Item = &Rule> {
        self.rules
            .iter()
            .filter(move |r| r.scenarios.contains(&ending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_catalogue_is_valid_and_complete() {
        let c = Catalogue::parse(BUNDLED).unwrap();
        assert!(c.revisions.contains(&c.default_revision));
        for r in &c.rules {
            assert!(r.references.iter().all(|x| x.url.starts_with("https://")));
            assert!(!r.scenarios.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn an_unknown_rule_or_ending_names_the_line() {
        let text = BUNDLED.replacen(
            "id = \"stdio-exit-on-eof\"",
            "id = \"stdio-exit-on-eofx\"",
            1,
        );
        let e = Catalogue::parse(&text).unwrap_err().to_string();
        assert!(
            e.starts_with("rules.toml:") && e.contains("stdio-exit-on-eofx"),
            "{e}"
        );
        let text = BUNDLED.replacen(
            "scenarios = [\"close\", \"inflight\"]",
            "scenarios = [\"clsoe\"]",
            1,
        );
        let e = Catalogue::parse(&text).unwrap_err().to_string();
        assert!(e.contains("clsoe"), "{e}");
    }

    #[test]
    fn a_basis_says_only_what_its_revision_says() {
        let c = Catalogue::bundled();
        let (old, new): (Revision, Revision) =
            ("2025-06-18".parse().unwrap(), "2026-07-28".parse().unwrap());
        let eof = c.rule(RuleId::StdioExitOnEof);
        assert_eq!(
            (eof.basis(old), eof.level(old)),
            (Basis::Practice, Level::Info)
        );
        assert_eq!(
            (eof.basis(new), eof.level(new)),
            (Basis::Spec, Level::Should)
        );
        // The client's ladder puts no duty on the server in any revision.
        let kill = c.rule(RuleId::StdioNoForcedKill);
        assert!(c
            .revisions
            .iter()
            .all(|r| kill.basis(*r) == Basis::Practice));
        assert_eq!(kill.info(old).basis, Basis::Practice);
        // A spec basis needs a duty, a MUST needs the spec.
        let text = BUNDLED.replacen(
            "basis = { \"2024-11-05\" = \"practice\"",
            "basis = { \"2024-11-05\" = \"spec\"",
            1,
        );
        let e = Catalogue::parse(&text).unwrap_err().to_string();
        assert!(
            e.contains("stdio-exit-on-eof` in 2024-11-05: basis `spec` with level `info`"),
            "{e}"
        );
        let text = BUNDLED.replacen(
            "levels = { \"2024-11-05\" = \"should\"",
            "levels = { \"2024-11-05\" = \"must\"",
            1,
        );
        let e = Catalogue::parse(&text).unwrap_err().to_string();
        assert!(
            e.contains("stdio-no-forced-kill` in 2024-11-05: level `must` on a rule of practice"),
            "{e}"
        );
    }

    #[test]
    fn wording_is_checked_where_it_is_written() {
        let e = |from: &str, to: &str| {
            assert!(BUNDLED.contains(from), "{from}");
            Catalogue::parse(&BUNDLED.replacen(from, to, 1))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e("never_closes_stdin = ", "never_closes_stdn = "),
            format!(
                "rules.toml: rule `stdio-exit-on-eof`, messages.never_closes_stdn: no finding is called `never_closes_stdn` (known: {})",
                Finding::VARIANTS.join(", ")
            )
        );
        assert!(e(
            "after stdin closed{{ waiting }}",
            "after stdin closed{{ waiting "
        )
        .starts_with("rules.toml: rule `stdio-exit-on-eof`, messages.prompt: syntax error"));
        assert_eq!(
            e(
                "  { rank = 3, label = \"ignores stdin EOF\" },",
                "  { when = \"true\", rank = 3, label = \"ignores stdin EOF\" },"
            ),
            "rules.toml: rule `stdio-exit-on-eof`, badge[1]: the last badge label has no `when`, so that every miss has a label"
        );
        assert!(e("{ when = \"stage == 'eof'\"", "{ when = \"stage ==\"")
            .starts_with("rules.toml: rule `stdio-exit-on-eof`, badge[0].when: syntax error"));
        assert_eq!(
            e("[rule.messages]\nprompt = ", "[rule.messages]\nnot_testable = \"x\"\nprompt = "),
            "rules.toml: rule `stdio-exit-on-eof`, messages.not_testable: worded once for every rule, in [wording]"
        );
        assert_eq!(
            e("sigkill = \"only SIGKILL", "sigkil = \"only SIGKILL"),
            "rules.toml: [wording] ending.sigkill: missing"
        );
    }

    #[test]
    fn revisions_are_checked() {
        let c = Catalogue::bundled();
        assert!(c.revision("2025-06-18").is_ok());
        let e = c.revision("1999-01-01").unwrap_err().to_string();
        assert!(e.contains("unknown spec revision `1999-01-01`"), "{e}");
    }
}
