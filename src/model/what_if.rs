//! The ecosystem what-if (`census --with-sdk`): each published server run as installed and
//! again with one SDK replaced inside its install, paired ending by ending. Carried in the
//! report, so every format renders it from the report alone.

use serde::{Deserialize, Serialize};

use super::ids::ScenarioId;
use super::scenario::Stage;

/// One `--with-sdk` replacement over a listing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// The SDK line (kit id): `typescript`, `python`, ...
    pub line: String,
    /// The package replaced (`@modelcontextprotocol/sdk`, `mcp`).
    pub package: String,
    /// What replaced it: a release (`1.24.0`) or a local build (`local:eof-fix`).
    pub replacement: String,
    /// The version the replacement carries (a local build's `1.24.0+local.1a2b3c4d`).
    pub version: String,
    /// Every server of the listing that ran, in listing order.
    pub servers: Vec<WhatIfServer>,
}

/// One server: what its install held, what it became, and its endings before and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WhatIfServer {
    /// The server as installed (the before side's name in the report).
    pub server: String,
    /// The server with the SDK replaced, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// The copies of the package its install held (before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copies: Vec<SdkCopy>,
    /// The copies the install held after the override that are the replacement: read back
    /// from the install, the proof it took effect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<SdkCopy>,
    /// Copies still not the replacement after the override (bundled ones, most often).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_replaced: Vec<SdkCopy>,
    /// Why it was not run with the replacement (then `after` is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untouched: Option<Untouched>,
    /// Replaced and run, but no ending had a verdict on either side: why (`needs
    /// credentials`, `could not run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_verdict: Option<String>,
    /// It ran before, and with the replacement none of its endings got a verdict, for a
    /// reason of its own (not credentials): the replacement broke it. What it said (the
    /// after side's last stderr line, else its error). Its endings count as no change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken: Option<String>,
    /// Each ending both sides ran, before → after (a side without a verdict: no stage).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endings: Vec<EndingPair>,
}

/// A copy of the SDK's package inside an install.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdkCopy {
    /// Relative to the install (`node_modules/x/node_modules/@modelcontextprotocol/sdk`).
    pub path: String,
    pub version: String,
    /// Shipped inside another package's tarball (`bundleDependencies`): no override reaches it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bundled: bool,
}

/// Why a server kept its own SDK.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Untouched {
    /// The server comes from another registry than the SDK's (a PyPI server, an npm SDK).
    OtherRegistry { registry: String },
    /// No copy of the package in its install: it uses no SDK of the kits, or compiled one
    /// into its own code.
    NoCopy,
    /// It uses another SDK line's package instead.
    OtherSdk { lines: Vec<String> },
    /// Every copy it holds is out of reach of an override (bundled in a package's tarball).
    NotReplaceable,
    /// Installed with the override, no copy was the replacement (the versions found are in
    /// `not_replaced`).
    OverrideIgnored,
    /// Every copy it holds is of another major release than the replacement: a fix for one
    /// major line is measured on the servers of that line, not by a cross-major swap (whose
    /// API differences break the server before its shutdown can be seen).
    OtherMajor { versions: Vec<String> },
    /// Installing it with the replacement failed (the message says why).
    InstallFailed { message: String },
}

impl Untouched {
    /// In words, for a report's line.
    pub fn label(&self, package: &str) -> String {
        match self {
            Untouched::OtherRegistry { registry } => {
                let a = if registry.starts_with(['a', 'e', 'i', 'n', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                format!("{a} {registry} package: the SDK's registry is another")
            }
            Untouched::NoCopy => format!("no copy of {package} in its install"),
            Untouched::OtherSdk { lines } => format!("uses another SDK ({})", lines.join(", ")),
            Untouched::NotReplaceable => {
                format!("its copies of {package} are bundled, out of an override's reach")
            }
            Untouched::OverrideIgnored => {
                format!("the override replaced none of its copies of {package}")
            }
            Untouched::OtherMajor { versions } => format!(
                "holds {package} {}, another major release than the replacement",
                versions.join(", ")
            ),
            Untouched::InstallFailed { message } => {
                let first = message.lines().next().unwrap_or_default();
                format!("install with the replacement failed: {first}")
            }
        }
    }
}

/// One ending, before and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndingPair {
    pub scenario: ScenarioId,
    /// The step that ended the server (none: it could not run, or was not judged).
    pub before: Option<Stage>,
    pub after: Option<Stage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_ms: Option<f64>,
    /// The machine's load, not the server, decided a side (see `MachineBound`): a difference
    /// here is no change of the SDK's; re-run on a quieter machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine_bound: bool,
    /// Under `--repeat`, a side's runs ended at different stages: the server races itself,
    /// and one run's stage is no measure of the SDK.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
}

impl EndingPair {
    /// The stage differs, both sides were the server's own doing, and neither raced.
    pub fn changed(&self) -> bool {
        !self.machine_bound && !self.flaky && self.before != self.after
    }
}

impl WhatIfServer {
    /// A server of the listing, before anything is known of its install.
    pub fn named(server: &str) -> WhatIfServer {
        WhatIfServer {
            server: server.to_string(),
            after: None,
            copies: Vec::new(),
            replaced: Vec::new(),
            not_replaced: Vec::new(),
            untouched: None,
            no_verdict: None,
            broken: None,
            endings: Vec::new(),
        }
    }

    /// Its stage changed on at least one ending (a server the replacement broke did not
    /// change its shutdown: it no longer starts).
    pub fn changed(&self) -> bool {
        self.broken.is_none() && self.endings.iter().any(EndingPair::changed)
    }

    /// No change counted, but an ending's stage differs where the machine decided it or the
    /// runs disagree: re-run before saying either way.
    pub fn undecided(&self) -> bool {
        self.broken.is_none()
            && !self.changed()
            && self
                .endings
                .iter()
                .any(|e| (e.machine_bound || e.flaky) && e.before != e.after)
    }
}
