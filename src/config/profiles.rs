//! Client profiles (`conformance/profiles.toml`): how each real MCP client ends a server
//! over stdio, as data. Each profile is the scenario `close:<id>`; `close` alone is `spec`.

use serde::Deserialize;

use crate::model::{Action, BudgetName, Budgets, ProfileId, SignalName, Step, Target, UnknownId};

/// The profiles shipped with the suite.
pub const BUNDLED: &str = include_str!("../../conformance/profiles.toml");

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileAction {
    Nothing,
    CloseStdin,
    Sigterm,
    Sigint,
    Sigkill,
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

/// A client profile as written in `profiles.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: ProfileId,
    pub client: String,
    /// Take every wait from this budget instead (only `grace_ms`).
    pub waits_from: Option<BudgetName>,
    /// The real client's last wait has no end: the harness caps it.
    #[serde(default)]
    pub unbounded: bool,
    pub steps: Vec<ProfileStep>,
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
                    ProfileAction::Sigterm => signal(SignalName::Term),
                    ProfileAction::Sigint => signal(SignalName::Int),
                    ProfileAction::Sigkill => signal(SignalName::Kill),
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
        for (i, p) in file.profile.iter().enumerate() {
            if file.profile[..i].iter().any(|q| q.id == p.id) {
                return Err(ProfilesError::Duplicate(p.id.clone()));
            }
        }
        let profiles = Self(file.profile);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_profiles_parse_and_name_the_line_of_an_error() {
        let p = Profiles::bundled();
        assert!(p.iter().count() >= 7);
        let e = Profiles::parse(
            "[[profile]]\nid = \"x\"\nclient = \"c\"\nsteps = [{ do = \"wave\", wait_ms = 1 }]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("profiles.toml:4") && e.contains("wave"), "{e}");
    }
}
