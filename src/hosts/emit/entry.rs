//! A measured `[[profile]]` entry as a typed value, and its TOML: serialised by
//! `toml_edit`, laid out as `profiles.toml` is written (`measured` and `plumbing` inline,
//! one step a line). The fields are in the order the file's entries list them.

use serde::{Serialize, Serializer};

use super::{PathLadder, LAST_WINDOW_MS, WALK_CAP_MS};
use crate::hosts::reading::{ActionKind, TRIGGER_TO_FIRST};
use crate::model::{Plumbing, ProfileBasis, ProfileKind, Spread, Target};

#[derive(Serialize)]
struct EntryFile {
    profile: Vec<ProfileEntry>,
}

/// One `[[profile]]` entry of a measured host.
#[derive(Serialize)]
pub struct ProfileEntry {
    pub id: String,
    pub kind: ProfileKind,
    pub client: String,
    pub basis: ProfileBasis,
    pub measured: MeasuredEntry,
    pub plumbing: Plumbing,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub abandons: bool,
    pub cap_note: String,
    pub steps: Vec<StepEntry>,
}

/// `measured = { ... }`: what `MeasuredRef` reads back, its waits in the ladder's order.
#[derive(Serialize)]
pub struct MeasuredEntry {
    pub package: String,
    pub version: String,
    pub date: String,
    pub triggers: Vec<String>,
    pub repeats: usize,
    pub reproduces: bool,
    pub waits: Waits,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daemon: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub daemon_up: bool,
}

/// Every wait's spread by name: the trigger to the first step, each gap, a walk.
pub struct Waits(Vec<(String, Spread)>);

impl Serialize for Waits {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl Waits {
    pub fn of(g: &PathLadder) -> Waits {
        let first = g.first.map(|s| (TRIGGER_TO_FIRST.to_string(), s));
        let gaps = g.waits.iter().map(|(gap, s)| (gap.to_string(), *s));
        let walk = g
            .walk
            .map(|(action, s)| (format!("{action} walk (first → server)"), s));
        Waits(first.into_iter().chain(gaps).chain(walk).collect())
    }
}

/// One step: what, to whom (the server alone unless said), and the wait after it.
#[derive(Serialize)]
pub struct StepEntry {
    #[serde(rename = "do")]
    act: StepAct,
    #[serde(skip_serializing_if = "is_process")]
    to: Target,
    wait_ms: u64,
}

fn is_process(t: &Target) -> bool {
    *t == Target::Process
}

/// A step's `do`: an action, or `nothing` (a host that sends nothing: the cap's wait).
#[derive(Clone, Copy)]
enum StepAct {
    Nothing,
    Act(ActionKind),
}

impl Serialize for StepAct {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StepAct::Nothing => s.serialize_str("nothing"),
            StepAct::Act(a) => a.serialize(s),
        }
    }
}

/// `steps`: the shape with the median waits; after the last step, the harness's window,
/// or the cap where the host walks away.
pub fn steps(g: &PathLadder) -> Vec<StepEntry> {
    let mut steps: Vec<StepEntry> = Vec::new();
    for (i, (action, to)) in g.shape.iter().enumerate() {
        let wait_ms = match g.waits.get(i) {
            Some((_, s)) => s.median_ms.round().max(0.0) as u64,
            None if g.walked_away.is_some() => WALK_CAP_MS,
            None => LAST_WINDOW_MS,
        };
        // The other end of stdout gone (stdin closed before): a close-pipes step.
        let action = match action {
            ActionKind::StdoutClosed => ActionKind::ClosePipes,
            a => *a,
        };
        steps.push(StepEntry {
            act: StepAct::Act(action),
            to: *to,
            wait_ms,
        });
    }
    if steps.is_empty() {
        steps.push(StepEntry {
            act: StepAct::Nothing,
            to: Target::Process,
            wait_ms: WALK_CAP_MS,
        });
    }
    steps
}

/// The entries as `[[profile]]` tables, each after a blank line.
pub fn write(profile: Vec<ProfileEntry>) -> String {
    if profile.is_empty() {
        return String::new();
    }
    let mut doc = toml_edit::ser::to_document(&EntryFile { profile })
        .expect("every field of an entry is a TOML value");
    let entries = doc.get_mut("profile").expect("the entries");
    let mut tables = std::mem::take(entries)
        .into_array_of_tables()
        .expect("a list of tables");
    for t in tables.iter_mut() {
        t.decor_mut().set_prefix("\n");
        if let Some(steps) = t.get_mut("steps").and_then(|s| s.as_array_mut()) {
            one_a_line(steps);
        }
    }
    doc.insert("profile", toml_edit::Item::ArrayOfTables(tables));
    doc.to_string()
}

/// `[` and `]` on lines of their own, one item a line between them, indented by two.
fn one_a_line(items: &mut toml_edit::Array) {
    for item in items.iter_mut() {
        item.decor_mut().set_prefix("\n  ");
    }
    items.set_trailing_comma(true);
    items.set_trailing("\n");
}
