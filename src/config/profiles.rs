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
        }
        // An alias replays its target's steps (and waits), nothing else.
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

    #[test]
    fn a_race_names_two_adjacent_steps_in_order() {
        let head = "[[profile]]\nid = \"spec\"\nclient = \"c\"\nbasis = \"observed\"\n\
                    observed = [\"x\"]\nsteps = [{ do = \"sigterm\", wait_ms = 0 }, \
                    { do = \"close-stdin\", wait_ms = 5 }, { do = \"sigkill\", wait_ms = 5 }]\n";
        let ok = format!(
            "{head}races = [{{ between = [\"sigterm\", \"close-stdin\"], gap_ms = [0, 100] }}]\n"
        );
        let p = Profiles::parse(&ok).unwrap();
        assert_eq!(
            p.spec().unwrap().races,
            [ProfileRace {
                between: [ProfileAction::Sigterm, ProfileAction::CloseStdin],
                gap_ms: [0, 100]
            }]
        );
        for (races, want) in [
            (
                "[\"close-stdin\", \"sigterm\"], gap_ms = [0, 1]",
                "not two adjacent",
            ),
            (
                "[\"sigterm\", \"sigkill\"], gap_ms = [0, 1]",
                "not two adjacent",
            ),
            (
                "[\"sigterm\", \"close-stdin\"], gap_ms = [9, 1]",
                "not [min, max]",
            ),
        ] {
            let text = format!("{head}races = [{{ between = {races} }}]\n");
            let e = Profiles::parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{races}: {e}");
        }
        let java = p_java();
        assert_eq!(
            java.races.len(),
            1,
            "the Java SDK's destroy/stdin race is declared"
        );
    }

    fn p_java() -> Profile {
        Profiles::bundled()
            .get(&ProfileId::try_from("java".to_string()).unwrap())
            .unwrap()
            .clone()
    }

    /// `(action, target, wait_ms)` of one step, for pinning.
    type Pin = (ProfileAction, Target, u64);

    fn steps_of(p: &Profiles, id: &str) -> Vec<Pin> {
        let prof = p
            .get(&ProfileId::try_from(id.to_string()).unwrap())
            .unwrap();
        let steps = match &prof.alias_of {
            Some(a) => &p.get(a).unwrap().steps,
            None => &prof.steps,
        };
        steps.iter().map(|s| (s.action, s.to, s.wait_ms)).collect()
    }

    /// Every host profile's ladder, plumbing and source, pinned to the constants its source
    /// gives (see each profile's `source`/`observed` in profiles.toml). A change to a host's
    /// behaviour must change this test with the citation.
    #[test]
    fn host_ladders_are_pinned_to_their_sources() {
        use ProfileAction::*;
        use Target::{Children, Group, Process, Tree};
        let p = Profiles::bundled();
        let pinned: &[(&str, &[Pin])] = &[
            // mcpStdioStateHandler.ts GRACE_TIME_MS = 10_000; terminateProcess.sh kill -9 tree.
            (
                "vscode",
                &[
                    (CloseStdin, Process, 10_000),
                    (Sigterm, Process, 10_000),
                    (Sigkill, Tree, 2_000),
                ],
            ),
            // MainThreadMcp.dispose(): no $stopMcp; the extension host's exit closes the pipes.
            ("vscode-quit", &[(ClosePipes, Process, 5_000)]),
            // Measured (codex 0.171.0): the TUI leaves the server to its app-server daemon.
            ("codex", &[(Nothing, Process, 5_000)]),
            // Measured: `codex exec` SIGKILLs tens of ms after the group's SIGTERM (the 2 s
            // grace thread of process_group.rs dies with the process).
            (
                "codex-exec",
                &[
                    (Sigterm, Group, 0),
                    (CloseStdin, Process, 29),
                    (Sigkill, Process, 2_000),
                ],
            ),
            // Measured (gemini-cli 0.61.0, qwen-code 0.24.4; 3 runs per path).
            (
                "gemini-cli",
                &[(Sigterm, Process, 49), (ClosePipes, Process, 5_000)],
            ),
            (
                "gemini-cli-terminal-closed",
                &[(Sighup, Group, 122), (ClosePipes, Process, 5_000)],
            ),
            ("gemini-cli-sigkill", &[(ClosePipes, Process, 5_000)]),
            (
                "qwen-code",
                &[
                    (CloseStdin, Process, 2_009),
                    (Sigterm, Process, 23),
                    (ClosePipes, Process, 5_000),
                ],
            ),
            (
                "qwen-code-terminal-closed",
                &[
                    (Sighup, Group, 18),
                    (CloseStdin, Process, 2_017),
                    (Sigterm, Process, 39),
                    (ClosePipes, Process, 5_000),
                ],
            ),
            ("qwen-code-sigterm", &[(Nothing, Process, 5_000)]),
            // Measured: `qwen -p` exits at the end of the SDK's 2 s, before its SIGTERM.
            (
                "qwen-code-prompt",
                &[(CloseStdin, Process, 2_021), (ClosePipes, Process, 5_000)],
            ),
            // Measured (opencode 1.18.33, 3 runs per path): the SDK ladder, its first SIGTERM
            // to the server's children alone, cut short by its exit ~5.5 s after the quit on
            // the other paths.
            (
                "opencode",
                &[
                    (Sigterm, Children, 1),
                    (CloseStdin, Process, 2_143),
                    (Sigterm, Process, 2_002),
                    (Sigkill, Process, 2_000),
                ],
            ),
            (
                "opencode-ctrl-c-twice",
                &[(Sigint, Group, 239), (ClosePipes, Process, 5_000)],
            ),
            (
                "opencode-terminal-closed",
                &[
                    (Sighup, Group, 2_644),
                    (Sigterm, Children, 1),
                    (CloseStdin, Process, 2_010),
                    (Sigterm, Process, 1_507),
                    (ClosePipes, Process, 5_000),
                ],
            ),
            (
                "opencode-sigterm",
                &[
                    (Sigterm, Children, 1),
                    (CloseStdin, Process, 1_663),
                    (ClosePipes, Process, 5_000),
                ],
            ),
            ("opencode-sigkill", &[(ClosePipes, Process, 5_000)]),
            // Measured (continue-cli 1.5.47): the pipes close at its exit, nothing is sent.
            ("continue-cli", &[(ClosePipes, Process, 5_000)]),
            (
                "continue-cli-terminal-closed",
                &[(Sighup, Group, 44), (ClosePipes, Process, 5_000)],
            ),
            // Measured (copilot 1.0.102, 3 runs per path): SIGTERM to the tree by `kill`, the
            // pipes, SIGKILL ~2 ms later; signalled, its npm launcher dies and the CLI keeps it.
            (
                "copilot-cli",
                &[
                    (Sigterm, Tree, 0),
                    (ClosePipes, Process, 2),
                    (Sigkill, Process, 2_000),
                ],
            ),
            (
                "copilot-cli-terminal-closed",
                &[
                    (Sighup, Group, 78),
                    (Sigterm, Tree, 0),
                    (ClosePipes, Process, 2),
                    (Sigkill, Process, 2_000),
                ],
            ),
            ("copilot-cli-sigterm", &[(Nothing, Process, 5_000)]),
            // Measured (cline 3.0.65, 3 runs per path): its own ladder, ~255 ms then 2 s.
            (
                "cline-cli-prompt",
                &[
                    (CloseStdin, Process, 256),
                    (Sigterm, Process, 2_012),
                    (Sigkill, Process, 2_000),
                ],
            ),
            (
                "cline-cli-ctrl-c-twice",
                &[
                    (Sigint, Group, 17),
                    (Sigterm, Process, 2_006),
                    (Sigkill, Process, 2_000),
                ],
            ),
            (
                "cline-cli-terminal-closed",
                &[
                    (Sighup, Group, 38),
                    (CloseStdin, Process, 255),
                    (Sigterm, Process, 2_002),
                    (Sigkill, Process, 2_000),
                ],
            ),
            ("cline-cli-sigkill", &[(ClosePipes, Process, 5_000)]),
            // util::process::Child::kill: kill_descendant_tree + killpg SIGKILL, synchronously in Drop.
            ("zed", &[(Sigkill, Tree, 0), (CloseStdin, Process, 2_000)]),
            // smol Child, kill_on_drop: SIGKILL to the direct child.
            (
                "zed-legacy",
                &[(Sigkill, Process, 0), (CloseStdin, Process, 2_000)],
            ),
            // rmcp 0.16 graceful_shutdown: close, MAX_WAIT_ON_DROP_SECS = 3, child.kill().
            (
                "goose",
                &[(CloseStdin, Process, 3_000), (Sigkill, Process, 2_000)],
            ),
            // The runtime drops rmcp's close; the exit closes the pipes, PR_SET_PDEATHSIG SIGTERM.
            (
                "goose-quit",
                &[(ClosePipes, Process, 0), (Sigterm, Process, 5_000)],
            ),
            // typescript-sdk 1.23.0 close(): abortController.abort() = SIGTERM, nothing else.
            ("ts-legacy", &[(Sigterm, Process, 5_000)]),
            // MCPConnection.ts: the SDK 1.29.0 ladder (stdin end, 2 s, SIGTERM, 2 s, SIGKILL).
            (
                "continue",
                &[
                    (CloseStdin, Process, 2_000),
                    (Sigterm, Process, 2_000),
                    (Sigkill, Process, 2_000),
                ],
            ),
            // Measured (claude-code 2.1.332): SIGINT, ~100 ms, SIGTERM, ~400 ms, SIGKILL.
            (
                "claude-code",
                &[
                    (Sigint, Process, 102),
                    (Sigterm, Process, 401),
                    (Sigkill, Process, 2_000),
                ],
            ),
            // Measured: the kernel's SIGHUP to the foreground group first.
            (
                "claude-code-terminal-closed",
                &[
                    (Sighup, Group, 34),
                    (Sigint, Process, 101),
                    (Sigterm, Process, 402),
                    (Sigkill, Process, 2_000),
                ],
            ),
            // Measured: killed, it closes the socketpairs and sends nothing.
            ("claude-code-sigkill", &[(ClosePipes, Process, 5_000)]),
            // posit-dev/mcptools #19: closes the pipes, sends nothing.
            ("claude-desktop", &[(ClosePipes, Process, 5_000)]),
        ];
        for (id, steps) in pinned {
            assert_eq!(&steps_of(&p, id), steps, "{id}");
        }
        let hosts: Vec<&str> = p.hosts().map(|h| h.id.as_str()).collect();
        assert_eq!(hosts.len(), pinned.len(), "every host pinned: {hosts:?}");
        for h in p.hosts() {
            match h.basis {
                ProfileBasis::Source => assert!(h.source.is_some(), "{}: no source", h.id),
                ProfileBasis::Measured => {
                    let m = h.measured.as_ref().expect("measured");
                    assert!(!m.version.is_empty() && !m.triggers.is_empty(), "{}", h.id);
                }
                _ => assert!(!h.observed.is_empty(), "{}: no observation cited", h.id),
            }
        }
    }

    /// How each host launches its servers, and which walk away, as their sources say.
    #[test]
    fn host_plumbing_is_pinned_to_their_sources() {
        let p = Profiles::bundled();
        let plumbing = |id: &str| {
            p.get(&ProfileId::try_from(id.to_string()).unwrap())
                .unwrap()
                .plumbing
        };
        assert_eq!(
            plumbing("vscode").stdio,
            crate::model::StdioKind::Socketpair
        );
        assert_eq!(plumbing("codex").group, crate::model::GroupKind::Own);
        assert_eq!(plumbing("zed").group, crate::model::GroupKind::Session);
        assert_eq!(plumbing("zed").via, crate::model::Via::Shell);
        assert_eq!(plumbing("goose").group, crate::model::GroupKind::Own);
        assert!(
            !p.get(&ProfileId::try_from("claude-code".to_string()).unwrap())
                .unwrap()
                .abandons,
            "measured: Claude Code 2.1.332 never walks away from a server it quits"
        );
        for walks_away in [
            "ts-legacy",
            "codex",
            "claude-code-sigkill",
            "claude-desktop",
        ] {
            assert!(
                p.get(&ProfileId::try_from(walks_away.to_string()).unwrap())
                    .unwrap()
                    .abandons,
                "{walks_away}"
            );
        }
    }
}
