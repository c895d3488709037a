//! The ending catalogue (`conformance/endings.toml`) as typed data: each ending's driver and
//! the ladder it plans. `Ending` itself is generated from the same file by build.rs
//! (`endings_codegen`), so the catalogue has exactly one entry per variant.

use std::sync::LazyLock;

use serde::Deserialize;

use crate::model::{Action, BudgetName, Driver, Ending, ProfileId, ScenarioId};

/// The catalogue compiled into the binary: endings are a closed set, like their type.
pub const BUNDLED: &str = include_str!("../../conformance/endings.toml");

/// One `[[ending]]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndingDef {
    pub id: Ending,
    pub summary: String,
    /// How the session ends, in the book's words (its endings table).
    pub does: String,
    /// What its exit latency is measured from.
    pub measured_from: String,
    #[serde(default = "yes")]
    pub default: bool,
    pub driver: Driver,
    /// A profile whose steps are the ladder (`spec`: the specification's).
    #[serde(default)]
    pub ladder: Option<ProfileId>,
    /// The ladder, step by step, when it is no profile's.
    #[serde(default)]
    pub steps: Vec<StepDef>,
    /// The first wait counts only idle time, capped by the sum of these budgets' busy time.
    #[serde(default)]
    pub until_idle: Vec<BudgetName>,
    #[serde(default)]
    pub stdin_null: bool,
    #[serde(default)]
    pub inflight: bool,
    #[serde(default)]
    pub host_label: Option<String>,
}

fn yes() -> bool {
    true
}

/// A step of an ending's own ladder: an action and the budget its wait lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub struct StepDef {
    #[serde(flatten)]
    pub action: Action,
    pub wait: BudgetName,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndingFile {
    ending: Vec<EndingDef>,
    census: CensusDef,
}

/// `[census]`: what the census runs first.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CensusDef {
    triage: Vec<TriageDef>,
}

/// One scenario of the census's triage set, and what only it found when it was measured.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriageDef {
    pub scenario: ScenarioId,
    pub finds: String,
}

/// A catalogue that does not describe the endings it generated.
#[derive(Debug, thiserror::Error)]
pub enum EndingsError {
    #[error("endings.toml: {0}")]
    Parse(#[from] toml::de::Error),
    #[error("endings.toml: ending `{0}` is out of order or missing (the type is generated from this file: rebuild)")]
    Order(Ending),
}

/// Parses a catalogue, checked against the generated `Ending` (one entry per variant, in
/// its order).
#[cfg(test)]
pub fn parse(text: &str) -> Result<Vec<EndingDef>, EndingsError> {
    parse_file(text).map(|f| f.ending)
}

fn parse_file(text: &str) -> Result<EndingFile, EndingsError> {
    let file: EndingFile = toml::from_str(text)?;
    for (i, e) in Ending::ALL.iter().enumerate() {
        if file.ending.get(i).map(|d| d.id) != Some(*e) {
            return Err(EndingsError::Order(*e));
        }
    }
    Ok(file)
}

static CATALOGUE: LazyLock<EndingFile> =
    LazyLock::new(|| parse_file(BUNDLED).expect("the bundled endings.toml is valid (tested)"));

/// The census's triage set (`[[census.triage]]`), in the catalogue's order.
pub fn triage() -> &'static [TriageDef] {
    &CATALOGUE.census.triage
}

/// What the catalogue says of an ending.
pub fn get(e: Ending) -> &'static EndingDef {
    &CATALOGUE.ending[e as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SignalName, Target};

    #[test]
    fn the_bundled_catalogue_has_every_ending_in_order() {
        let c = parse(BUNDLED).unwrap();
        assert_eq!(c.len(), Ending::ALL.len());
        for d in &c {
            assert_eq!(d.ladder.is_some(), d.steps.is_empty(), "{}", d.id);
            assert_eq!(d.host_label.as_deref(), d.id.host_label(), "{}", d.id);
            assert_eq!(d.driver == Driver::Terminal, d.id.in_terminal(), "{}", d.id);
            assert_eq!(d.default, Ending::DEFAULTS.contains(&d.id), "{}", d.id);
        }
        assert_eq!(
            get(Ending::Sigint).steps[0],
            StepDef {
                action: Action::Signal {
                    signal: SignalName::Int,
                    to: Target::Group
                },
                wait: BudgetName::GraceMs
            }
        );
    }

    #[test]
    fn an_unknown_field_or_action_is_refused() {
        let typo = BUNDLED.replacen("stdin_null = true", "stdin_nul = true", 1);
        assert!(parse(&typo).unwrap_err().to_string().contains("stdin_nul"));
        let action = BUNDLED.replacen("\"client-kill\"", "\"client-explode\"", 1);
        assert!(parse(&action).is_err());
    }
}
