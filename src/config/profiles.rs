//! Client profiles (`conformance/profiles.toml`): how each real MCP client ends a server
//! over stdio, as data. Each profile is the scenario `close:<id>`; `close` alone is `spec`.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::model::{
    Action, BudgetName, Budgets, Plumbing, ProfileId, ScenarioId, SignalName, Step, Target,
    UnknownId,
};
pub use crate::model::{MeasuredRef, ProfileBasis, ProfileInfo, ProfileKind, SourceRef};

/// The profiles shipped with the suite.
pub const BUNDLED: &str = include_str!("../../conformance/profiles.toml");

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileAction {
    Nothing,
    CloseStdin,
    ClosePipes,
    Sigterm,
    Sigint,
    Sigkill,
    /// SIGHUP (measured: the kernel's, when a host's terminal closes).
    Sighup,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileStep {
    #[serde(rename = "do")]
    pub action: ProfileAction,
    #[serde(default)]
    pub to: Target,
    pub wait_ms: u64,
}

/// Two adjacent steps that a real client takes in either order: its own timers or threads
/// race. `between` names them in the order the profile's steps list them; `gap_ms` is the
/// range, by the client's own constants, of how long after the first the second comes.
/// The harness replays the listed order; the client-ladder tests accept both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileRace {
    pub between: [ProfileAction; 2],
    pub gap_ms: [u64; 2],
}

/// A client or host profile as written in `profiles.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: ProfileId,
    #[serde(default)]
    pub kind: ProfileKind,
    pub client: String,
    pub basis: ProfileBasis,
    pub source: Option<SourceRef>,
    #[serde(default)]
    pub observed: Vec<String>,
    /// The measurement of a `basis = "measured"` profile.
    pub measured: Option<MeasuredRef>,
    #[serde(default)]
    pub plumbing: Plumbing,
    /// Take every wait from this budget instead (only `grace_ms`).
    pub waits_from: Option<BudgetName>,
    /// The real client's last wait has no end: the harness caps it.
    #[serde(default)]
    pub unbounded: bool,
    /// After its last step the real client leaves a survivor running.
    #[serde(default)]
    pub abandons: bool,
    /// What the harness capped or could not know.
    pub cap_note: Option<String>,
    /// Another profile whose steps this one replays.
    pub alias_of: Option<ProfileId>,
    #[serde(default)]
    pub steps: Vec<ProfileStep>,
    /// Steps the real client may take in either order.
    #[serde(default)]
    pub races: Vec<ProfileRace>,
}

impl Profile {
    pub fn info(&self) -> ProfileInfo {
        ProfileInfo {
            kind: self.kind,
            client: self.client.clone(),
            basis: self.basis,
            source: self.source.clone(),
            observed: self.observed.clone(),
            measured: self.measured.clone(),
            plumbing: self.plumbing,
            cap_note: self.cap_note.clone(),
            alias_of: self.alias_of.clone(),
        }
    }

    pub fn is_host(&self) -> bool {
        self.kind == ProfileKind::Host
    }
}

impl Profile {
    /// The profile's ladder, with waits from `budgets` where the profile says so.
    pub fn ladder(&self, budgets: &Budgets) -> Vec<Step> {
        self.steps
            .iter()
            .map(|s| {
                let signal = |signal| Action::Signal { signal, to: s.to };
                let action = match s.action {
                    ProfileAction::Nothing => Action::Nothing,
                    ProfileAction::CloseStdin => Action::CloseStdin,
                    ProfileAction::ClosePipes => Action::ClosePipes,
                    ProfileAction::Sigterm => signal(SignalName::Term),
                    ProfileAction::Sigint => signal(SignalName::Int),
                    ProfileAction::Sigkill => signal(SignalName::Kill),
                    ProfileAction::Sighup => signal(SignalName::Hup),
                };
                let wait_ms = self.waits_from.map_or(s.wait_ms, |b| budgets.get(b));
                Step::new(action, wait_ms)
            })
            .collect()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    profile: Vec<Profile>,
}

/// A profiles file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProfilesError {
    #[error("profiles.toml:{line}: {message}")]
    Parse { line: usize, message: String },
    #[error("profiles.toml: profile `{0}` is defined twice")]
    Duplicate(ProfileId),
    #[error("profiles.toml: there is no `spec` profile (the ladder of `close`)")]
    NoSpec,
    #[error("profiles.toml: profile `{0}` has no steps and is no alias")]
    NoSteps(ProfileId),
    #[error(
        "profiles.toml: profile `{id}` is an alias of `{of}`, which is not a profile with steps"
    )]
    BadAlias { id: ProfileId, of: ProfileId },
    #[error(
        "profiles.toml: profile `{0}` has no `source`, `observed` or `measured` for its basis"
    )]
    NoBasis(ProfileId),
    #[error(
        "profiles.toml: profile `{id}` declares a race between {first:?} and {second:?}, \
         which are not two adjacent steps in that order"
    )]
    RaceNotAdjacent {
        id: ProfileId,
        first: ProfileAction,
        second: ProfileAction,
    },
    #[error("profiles.toml: profile `{0}` declares a race whose gap_ms is not [min, max]")]
    RaceGap(ProfileId),
}

/// Every profile of a suite, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profiles(Vec<Profile>);

impl Profiles {
    pub fn bundled() -> Self {
        Self::parse(BUNDLED).expect("the bundled profiles.toml is valid (tested)")
    }

    pub fn parse(text: &str) -> Result<Self, ProfilesError> {
        let file: ProfileFile = toml::from_str(text).map_err(|e| ProfilesError::Parse {
            line: e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            }),
            message: e.message().trim().to_string(),
        })?;
        let mut list = file.profile;
        for (i, p) in list.iter().enumerate() {
            if list[..i].iter().any(|q| q.id == p.id) {
                return Err(ProfilesError::Duplicate(p.id.clone()));
            }
            check(p)?;
        }
        resolve_aliases(&mut list)?;
        let profiles = Self(list);
        if profiles.spec().is_none() {
            return Err(ProfilesError::NoSpec);
        }
        Ok(profiles)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Profile> {
        self.0.iter()
    }

    pub fn get(&self, id: &ProfileId) -> Result<&Profile, UnknownId> {
        self.0
            .iter()
            .find(|p| &p.id == id)
            .ok_or_else(|| UnknownId {
                what: "profile",
                given: id.to_string(),
                known: self
                    .0
                    .iter()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The specification's ladder (the `close` ending).
    pub fn spec(&self) -> Option<&Profile> {
        self.0.iter().find(|p| p.id.as_str() == "spec")
    }

    /// The host profiles, in file order.
    /// What a report records about the profiles that ran these scenarios.
    pub fn infos<'a>(
        &self,
        scenarios: impl IntoIterator<Item = &'a ScenarioId>,
    ) -> BTreeMap<ProfileId, ProfileInfo> {
        scenarios
            .into_iter()
            .filter_map(|s| match s {
                ScenarioId::Profile(id) => self.get(id).ok().map(|p| (id.clone(), p.info())),
                ScenarioId::Ending(_) => None,
            })
            .collect()
    }

    pub fn hosts(&self) -> impl Iterator<Item = &Profile> {
        self.0.iter().filter(|p| p.is_host())
    }
}

/// A profile says where its ladder comes from, and each race it declares is between two
/// adjacent steps, with its gaps in order.
fn check(p: &Profile) -> Result<(), ProfilesError> {
    let documented = match p.basis {
        ProfileBasis::Source => p.source.is_some(),
        ProfileBasis::Observed => !p.observed.is_empty(),
        ProfileBasis::Measured => p.measured.is_some(),
    };
    if !documented {
        return Err(ProfilesError::NoBasis(p.id.clone()));
    }
    for r in &p.races {
        let [first, second] = r.between;
        if !p
            .steps
            .windows(2)
            .any(|w| w[0].action == first && w[1].action == second)
        {
            return Err(ProfilesError::RaceNotAdjacent {
                id: p.id.clone(),
                first,
                second,
            });
        }
        if r.gap_ms[0] > r.gap_ms[1] {
            return Err(ProfilesError::RaceGap(p.id.clone()));
        }
    }
    Ok(())
}

/// An alias replays its target's steps (and waits), nothing else; any other profile has
/// steps of its own.
fn resolve_aliases(list: &mut [Profile]) -> Result<(), ProfilesError> {
    for i in 0..list.len() {
        let Some(of) = list[i].alias_of.clone() else {
            if list[i].steps.is_empty() {
                return Err(ProfilesError::NoSteps(list[i].id.clone()));
            }
            continue;
        };
        let target = list
            .iter()
            .find(|q| q.id == of && q.alias_of.is_none() && !q.steps.is_empty())
            .ok_or_else(|| ProfilesError::BadAlias {
                id: list[i].id.clone(),
                of: of.clone(),
            })?;
        let (steps, races, waits_from) = (
            target.steps.clone(),
            target.races.clone(),
            target.waits_from,
        );
        list[i].steps = steps;
        list[i].races = races;
        list[i].waits_from = waits_from;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
