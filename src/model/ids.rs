//! Stable identifiers: rule, ending, scenario, profile, revision, budget and runtime names.
//! They are an API (reports, baselines, badges and command lines use them), so each is a
//! closed type here and a string only where it is parsed or serialised.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A string that names none of a closed set's members.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}` (known: {known})")]
pub struct UnknownId {
    pub what: &'static str,
    pub given: String,
    pub known: String,
}

/// Declares a closed, kebab-case identifier enum with `as_str`, `ALL`, `FromStr`,
/// `Display` and string serde.
macro_rules! closed_id {
    ($(#[$m:meta])* $name:ident, $what:literal, { $($(#[$vm:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownId;
            fn from_str(s: &str) -> Result<Self, UnknownId> {
                Self::ALL.iter().copied().find(|x| x.as_str() == s).ok_or_else(|| UnknownId {
                    what: $what,
                    given: s.to_string(),
                    known: Self::ALL.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", "),
                })
            }
        }
    };
}

closed_id!(
    /// A rule of the catalogue (`conformance/rules.toml`). Never renamed.
    RuleId, "rule", {
        StdioExitOnEof => "stdio-exit-on-eof",
        StdioExitOnClientDeath => "stdio-exit-on-client-death",
        StdioNoForcedKill => "stdio-no-forced-kill",
        StdioExitOnEofAtStart => "stdio-exit-on-eof-at-start",
        ProcessExitOnSigterm => "process-exit-on-sigterm",
        ProcessExitOnSigint => "process-exit-on-sigint",
        ProcessNoLeakedDescendants => "process-no-leaked-descendants",
        StdioStdoutOnlyMcp => "stdio-stdout-only-mcp",
        StdioInflightResponse => "stdio-inflight-response",
        ProcessExitOnHangup => "process-exit-on-hangup",
        ProcessExitOnCtrlC => "process-exit-on-ctrl-c",
        ProcessNoSignalsToAncestors => "process-no-signals-to-ancestors",
    }
);

closed_id!(
    /// A way a session ends. Client and host profiles are `close` endings with another ladder
    /// (`close:<profile>`); rules name endings, so every profile is judged as `close`.
    Ending, "ending", {
        Close => "close",
        Exit => "exit",
        Crash => "crash",
        StdinNull => "stdin-null",
        Sigterm => "sigterm",
        Sigint => "sigint",
        Inflight => "inflight",
        /// A terminal host's terminal is closed: SIGHUP to its foreground group, then EOF.
        Sighup => "sighup",
        /// Ctrl-C in a terminal host: SIGINT to its foreground group, then the host exits.
        CtrlC => "ctrl-c",
    }
);

impl Ending {
    /// The endings a run uses by default, in report order.
    pub const DEFAULTS: &'static [Ending] = &[
        Ending::Close,
        Ending::Exit,
        Ending::Crash,
        Ending::StdinNull,
        Ending::Sigterm,
        Ending::Sigint,
        Ending::Inflight,
        Ending::Sighup,
        Ending::CtrlC,
    ];
}

closed_id!(
    /// A time budget (milliseconds), as rules and manifests name it.
    BudgetName, "budget", {
        PromptMs => "prompt_ms",
        GraceMs => "grace_ms",
        ObserveMs => "observe_ms",
        HandshakeMs => "handshake_ms",
    }
);

closed_id!(
    /// A language runtime recognised from a process's executable.
    Runtime, "runtime", {
        Node => "node",
        Python => "python",
        Jvm => "jvm",
    }
);

/// The name of a client or host profile: `[a-z0-9-]+`. Profiles are data
/// (`conformance/profiles.toml`), so the set is open here and checked against the
/// catalogue of profiles when a scenario is built.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ProfileId(String);

impl ProfileId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ProfileId {
    type Error = UnknownId;
    fn try_from(s: String) -> Result<Self, UnknownId> {
        let ok = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if ok {
            Ok(Self(s))
        } else {
            Err(UnknownId {
                what: "profile",
                given: s,
                known: "names made of a-z, 0-9 and -".into(),
            })
        }
    }
}

impl From<ProfileId> for String {
    fn from(p: ProfileId) -> String {
        p.0
    }
}

impl fmt::Display for ProfileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A scenario: an ending, or the `close` ending under a profile's ladder (`close:java`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ScenarioId {
    Ending(Ending),
    Profile(ProfileId),
}

impl ScenarioId {
    /// The ending whose rules judge this scenario.
    pub fn ending(&self) -> Ending {
        match self {
            ScenarioId::Ending(e) => *e,
            ScenarioId::Profile(_) => Ending::Close,
        }
    }

    pub fn profile(&self) -> Option<&ProfileId> {
        match self {
            ScenarioId::Profile(p) => Some(p),
            ScenarioId::Ending(_) => None,
        }
    }

    /// A form safe in file names (`close:java` → `close-java`).
    pub fn file_stem(&self) -> String {
        self.to_string().replace(':', "-")
    }
}

impl From<Ending> for ScenarioId {
    fn from(e: Ending) -> Self {
        ScenarioId::Ending(e)
    }
}

impl FromStr for ScenarioId {
    type Err = UnknownId;
    fn from_str(s: &str) -> Result<Self, UnknownId> {
        match s.strip_prefix("close:") {
            Some(p) => Ok(ScenarioId::Profile(ProfileId::try_from(p.to_string())?)),
            None => s
                .parse()
                .map(ScenarioId::Ending)
                .map_err(|e: UnknownId| UnknownId {
                    what: "scenario",
                    known: format!("{}, close:<profile>", e.known),
                    ..e
                }),
        }
    }
}

impl TryFrom<String> for ScenarioId {
    type Error = UnknownId;
    fn try_from(s: String) -> Result<Self, UnknownId> {
        s.parse()
    }
}

impl From<ScenarioId> for String {
    fn from(s: ScenarioId) -> String {
        s.to_string()
    }
}

impl fmt::Display for ScenarioId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioId::Ending(e) => f.write_str(e.as_str()),
            ScenarioId::Profile(p) => write!(f, "close:{p}"),
        }
    }
}

/// A revision of the MCP specification, `YYYY-MM-DD`; ordered by date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Revision {
    year: u16,
    month: u8,
    day: u8,
}

impl Revision {
    /// The first revision whose text requires servers to exit on end-of-file.
    pub const EOF_EXIT: Revision = Revision {
        year: 2026,
        month: 7,
        day: 28,
    };
}

impl FromStr for Revision {
    type Err = UnknownId;
    fn from_str(s: &str) -> Result<Self, UnknownId> {
        let bad = || UnknownId {
            what: "spec revision",
            given: s.to_string(),
            known: "a date YYYY-MM-DD".into(),
        };
        let parts: Vec<&str> = s.split('-').collect();
        let [y, m, d] = parts.as_slice() else {
            return Err(bad());
        };
        if y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return Err(bad());
        }
        let (year, month, day) = (
            y.parse().map_err(|_| bad())?,
            m.parse().map_err(|_| bad())?,
            d.parse().map_err(|_| bad())?,
        );
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
            return Err(bad());
        }
        Ok(Revision { year, month, day })
    }
}

impl TryFrom<String> for Revision {
    type Error = UnknownId;
    fn try_from(s: String) -> Result<Self, UnknownId> {
        s.parse()
    }
}

impl From<Revision> for String {
    fn from(r: Revision) -> String {
        r.to_string()
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_strings() {
        for r in RuleId::ALL {
            assert_eq!(r.as_str().parse::<RuleId>().unwrap(), *r);
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
        for s in ["close", "stdin-null", "close:java", "close:ts-legacy"] {
            let id: ScenarioId = s.parse().unwrap();
            assert_eq!(id.to_string(), s);
            let back: ScenarioId = serde_json::from_value(serde_json::json!(s)).unwrap();
            assert_eq!(back, id);
        }
        assert_eq!(
            "close:java".parse::<ScenarioId>().unwrap().ending(),
            Ending::Close
        );
        let e = "closed".parse::<ScenarioId>().unwrap_err();
        assert!(e.to_string().contains("unknown scenario `closed`"), "{e}");
        assert!("close:Bad".parse::<ScenarioId>().is_err());
    }

    #[test]
    fn revisions_are_dates_and_order_by_date() {
        let a: Revision = "2025-06-18".parse().unwrap();
        let b: Revision = "2026-07-28".parse().unwrap();
        assert!(a < b && b == Revision::EOF_EXIT);
        assert_eq!(a.to_string(), "2025-06-18");
        for bad in ["2025-6-18", "2025-13-01", "yesterday", "2025-06-18-x", ""] {
            assert!(bad.parse::<Revision>().is_err(), "{bad}");
        }
    }

    /// Stable identifiers are an API: a rename shows up here in review.
    #[test]
    fn the_identifier_lists_are_stable() {
        let rules: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            rules,
            [
                "stdio-exit-on-eof",
                "stdio-exit-on-client-death",
                "stdio-no-forced-kill",
                "stdio-exit-on-eof-at-start",
                "process-exit-on-sigterm",
                "process-exit-on-sigint",
                "process-no-leaked-descendants",
                "stdio-stdout-only-mcp",
                "stdio-inflight-response",
                "process-exit-on-hangup",
                "process-exit-on-ctrl-c",
                "process-no-signals-to-ancestors",
            ]
        );
        let endings: Vec<&str> = Ending::ALL.iter().map(|e| e.as_str()).collect();
        assert_eq!(
            endings,
            [
                "close",
                "exit",
                "crash",
                "stdin-null",
                "sigterm",
                "sigint",
                "inflight",
                "sighup",
                "ctrl-c",
            ]
        );
        let budgets: Vec<&str> = BudgetName::ALL.iter().map(|b| b.as_str()).collect();
        assert_eq!(
            budgets,
            ["prompt_ms", "grace_ms", "observe_ms", "handshake_ms"]
        );
    }
}
