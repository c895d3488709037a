//! The client profiles of `conformance/profiles.toml` measured against the real SDK clients.
//!
//! Each fixture under `fixtures/clients/<sdk>-<version>/` is a tiny program that connects to
//! a server with its SDK's own stdio client transport and closes it the SDK's way. Here it
//! runs against the recorder (`mcp-shutdown __recorder`, a server that ignores EOF and every
//! catchable signal and logs what reaches it, its process group and its whole tree), whose
//! log the analyser of `host measure` (`hosts::analyze`) turns into the ladder the client
//! followed ([`run`]). That ladder must be the one of the profile named in the
//! fixture's `client.toml`: the same actions to the same targets, in the profile's order or
//! in one its declared `races` allow, and no wait shorter than the profile's (the waits are
//! the clients' own timers, which never fire early; how much later they fire depends on the
//! machine's load, so it is not judged).
//!
//! `profiles.toml` is read as plain TOML on purpose: the crate's own profile types are not
//! what is under test, the file is.

use std::path::{Path, PathBuf};

use mcp_shutdown_conformance::internals::hosts::reading::word;
use mcp_shutdown_conformance::internals::setup;
use mcp_shutdown_conformance::manifest;
use rstest::rstest;

mod pure;
mod run;

/// A client's timer never fires early, so each action comes at least the sum of the
/// profile's waits before it after close start, less this much: the client stamps "close
/// start" just before it calls close(). There is no upper bound: a loaded machine can delay any step by
/// any amount, so a longer gap says nothing about the client (tests judge behaviour, not
/// machine speed); what is judged is which actions come, to which targets, in which of the
/// orders the profile allows, whether close() returns, and that no timer fired early.
const EARLY_SLACK_MS: f64 = 5.0;

/// Profiles that no fixture here can measure, and why.
const UNMEASURED: &[(&str, &str)] = &[
    ("spec", "the specification's ladder, not a client"),
    (
        "csharp",
        "the C# SDK needs .NET and NuGet, which this machine cannot reach",
    ),
];

#[derive(Debug, thiserror::Error)]
enum LadderError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid TOML: {source}")]
    Toml {
        path: String,
        #[source]
        source: toml::de::Error,
    },
    #[error("{path}: {what}")]
    Shape { path: String, what: String },
}

/// One action of a ladder and how long after the previous action (or close start) it came.
#[derive(Clone, Debug, PartialEq)]
struct Action {
    act: String,
    to: String,
    gap_ms: f64,
}

/// Two adjacent actions of a profile (`first` listed before `second`) that the client may
/// take in either order; the later comes at least `min_ms` after the earlier.
#[derive(Clone, Debug, PartialEq)]
struct Race {
    first: String,
    second: String,
    min_ms: f64,
}

/// What a client does to the server, as actions; `unbounded`: close() never returns while
/// the server lives; `races`: the profile's declared races (none in a measurement).
#[derive(Clone, Debug, PartialEq)]
struct Ladder {
    actions: Vec<Action>,
    unbounded: bool,
    races: Vec<Race>,
}

fn shape(path: &Path, what: impl Into<String>) -> LadderError {
    LadderError::Shape {
        path: path.display().to_string(),
        what: what.into(),
    }
}

fn read_toml(path: &Path) -> Result<toml::Value, LadderError> {
    let text = std::fs::read_to_string(path).map_err(|e| LadderError::Read {
        path: path.display().to_string(),
        source: e,
    })?;
    text.parse::<toml::Value>().map_err(|e| LadderError::Toml {
        path: path.display().to_string(),
        source: e,
    })
}

/// The profile `id` of a parsed profiles.toml, as a ladder: each step's action starts when
/// the waits of all steps before it have run out; `nothing` contributes its wait only.
fn profile_ladder(doc: &toml::Value, id: &str, path: &Path) -> Result<Ladder, LadderError> {
    let profiles = doc
        .get("profile")
        .and_then(toml::Value::as_array)
        .ok_or_else(|| shape(path, "no [[profile]] tables"))?;
    let profile = profiles
        .iter()
        .find(|p| p.get("id").and_then(toml::Value::as_str) == Some(id))
        .ok_or_else(|| shape(path, format!("no profile with id `{id}`")))?;
    let steps = profile
        .get("steps")
        .and_then(toml::Value::as_array)
        .ok_or_else(|| shape(path, format!("profile `{id}` has no steps")))?;
    let mut actions = Vec::new();
    let (mut start, mut last) = (0.0, 0.0);
    for step in steps {
        let act = step
            .get("do")
            .and_then(toml::Value::as_str)
            .ok_or_else(|| shape(path, format!("profile `{id}`: a step has no `do`")))?;
        let to = step
            .get("to")
            .and_then(toml::Value::as_str)
            .unwrap_or("process");
        let wait = step
            .get("wait_ms")
            .and_then(toml::Value::as_integer)
            .ok_or_else(|| shape(path, format!("profile `{id}`: a step has no `wait_ms`")))?;
        if act != "nothing" {
            actions.push(Action {
                act: act.to_string(),
                to: to.to_string(),
                gap_ms: start - last,
            });
            last = start;
        }
        start += wait as f64;
    }
    let unbounded = profile
        .get("unbounded")
        .and_then(toml::Value::as_bool)
        .unwrap_or(false);
    let mut races = Vec::new();
    for r in profile
        .get("races")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
    {
        let bad = || {
            shape(
                path,
                format!(
                    "profile `{id}`: a race is not {{ between = [a, b], gap_ms = [min, max] }}"
                ),
            )
        };
        let between = strings(r.get("between"));
        let gap: Vec<i64> = r
            .get("gap_ms")
            .and_then(toml::Value::as_array)
            .map(|a| a.iter().filter_map(toml::Value::as_integer).collect())
            .unwrap_or_default();
        let ([first, second], [min, max]) = (between.as_slice(), gap.as_slice()) else {
            return Err(bad());
        };
        if min > max
            || !actions
                .windows(2)
                .any(|w| &w[0].act == first && &w[1].act == second)
        {
            return Err(bad());
        }
        races.push(Race {
            first: first.clone(),
            second: second.clone(),
            min_ms: *min as f64,
        });
    }
    Ok(Ladder {
        actions,
        unbounded,
        races,
    })
}

/// The ladder of one client's run, as the analyser read it.
fn measured_ladder(o: &run::Observed) -> Ladder {
    let mut actions = Vec::new();
    let mut last = 0.0;
    for d in &o.reading.deliveries {
        actions.push(Action {
            act: d.action.to_string(),
            to: word(&d.to),
            // Deliveries at once are put in a fixed order: never a negative gap.
            gap_ms: (d.at_ms - last).max(0.0),
        });
        last = d.at_ms;
    }
    Ladder {
        actions,
        unbounded: o.unbounded,
        races: Vec::new(),
    }
}

/// Every order of its actions the profile allows, each action with the least gap before
/// it: the listed order, and each declared race swapped or not. In either order the first
/// of a race comes when the race starts, the second at least the race's `min_ms` later.
fn allowed_orders(profile: &Ladder) -> Vec<Vec<Action>> {
    let mut orders = vec![profile.actions.clone()];
    for race in &profile.races {
        let Some(i) = profile
            .actions
            .windows(2)
            .position(|w| w[0].act == race.first && w[1].act == race.second)
        else {
            continue;
        };
        for order in &mut orders {
            order[i + 1].gap_ms = race.min_ms;
        }
        let swapped: Vec<Vec<Action>> = orders
            .iter()
            .map(|o| {
                let mut o = o.clone();
                let (a, b) = (o[i].clone(), o[i + 1].clone());
                o[i] = Action {
                    gap_ms: a.gap_ms,
                    ..b
                };
                o[i + 1] = Action {
                    gap_ms: race.min_ms,
                    ..a
                };
                o
            })
            .collect();
        orders.extend(swapped);
    }
    orders
}

/// Every way `measured` differs from `profile`; empty when they agree.
fn drift(profile: &Ladder, measured: &Ladder) -> Vec<String> {
    let mut out = Vec::new();
    let names = |l: &[Action]| -> Vec<(String, String)> {
        l.iter().map(|a| (a.act.clone(), a.to.clone())).collect()
    };
    let orders = allowed_orders(profile);
    match orders.iter().find(|o| names(o) == names(&measured.actions)) {
        None => out.push(format!(
            "actions differ: profile {:?}, measured {:?}",
            orders.iter().map(|o| names(o)).collect::<Vec<_>>(),
            names(&measured.actions)
        )),
        Some(order) => {
            // Counted from close start: the server sees an action a little after the client
            // takes it, so the gap between two sightings can be shorter than the client's
            // timer by the first one's delivery; the sum of the timers up to an action is
            // still a bound that no sighting of it can come before.
            let (mut least, mut at) = (0.0, 0.0);
            for (i, (p, m)) in order.iter().zip(&measured.actions).enumerate() {
                least += p.gap_ms;
                at += m.gap_ms;
                if at < least - EARLY_SLACK_MS {
                    out.push(format!(
                        "step {} ({}): came {at:.0} ms after close start, before the \
                         client's own {least:.0} ms of timers could have run out",
                        i + 1,
                        p.act,
                    ));
                }
            }
        }
    }
    if profile.unbounded != measured.unbounded {
        out.push(format!(
            "unbounded: profile {}, measured {} (close() {} while the server was alive)",
            profile.unbounded,
            measured.unbounded,
            if measured.unbounded {
                "never returned"
            } else {
                "returned"
            }
        ));
    }
    out
}

/// `close-stdin → 2000 ms → sigterm (group) → ...`, the first gap counted from close start.
fn render(l: &Ladder) -> String {
    let mut parts = Vec::new();
    for a in &l.actions {
        parts.push(format!("{:.0} ms", a.gap_ms));
        let to = if a.to == "process" {
            String::new()
        } else {
            format!(" ({})", a.to)
        };
        parts.push(format!("{}{to}", a.act));
    }
    let mut text = format!("close start → {}", parts.join(" → "));
    if l.unbounded {
        text.push_str(" → waits forever");
    }
    for r in &l.races {
        text.push_str(&format!(
            "; {} and {} in either order, ≥ {:.0} ms apart",
            r.first, r.second, r.min_ms
        ));
    }
    text
}

// ---- the fixtures -------------------------------------------------------------------

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `conformance/profiles.toml`, or the file named by `CLIENT_LADDER_PROFILES`, so that a
/// changed profile can be checked against the real clients before it replaces the original.
fn profiles_path() -> PathBuf {
    std::env::var_os("CLIENT_LADDER_PROFILES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("conformance/profiles.toml"))
}

fn strings(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

struct Client {
    profile: String,
    /// argv before the server command.
    command: Vec<String>,
    setup: manifest::Setup,
}

fn client(name: &str) -> Result<Client, LadderError> {
    let dir = root().join("fixtures/clients").join(name);
    let path = dir.join("client.toml");
    let doc = read_toml(&path)?;
    let profile = doc
        .get("profile")
        .and_then(toml::Value::as_str)
        .ok_or_else(|| shape(&path, "no `profile`"))?
        .to_string();
    let s = doc
        .get("setup")
        .ok_or_else(|| shape(&path, "no [setup] table"))?;
    let command = strings(s.get("command"));
    if command.is_empty() {
        return Err(shape(&path, "[setup] has no command"));
    }
    Ok(Client {
        profile,
        command: strings(doc.get("command")),
        setup: manifest::Setup {
            command,
            cwd: dir,
            inputs: strings(s.get("inputs")),
            outputs: strings(s.get("outputs")),
            requires: strings(s.get("requires")),
        },
    })
}

/// Every client fixture: the directories of `fixtures/clients` with a `client.toml`, the same
/// set the rstest cases of [`real_client_follows_its_profile`] are made from.
fn client_fixtures() -> Vec<String> {
    let dir = root().join("fixtures/clients");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .filter(|e| e.path().join("client.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    found
}

#[rstest]
fn real_client_follows_its_profile(#[files("fixtures/clients/*/client.toml")] toml: PathBuf) {
    let name = toml
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .expect("fixtures/clients/<name>/client.toml");
    let name = name.as_str();
    let c = client(name).unwrap_or_else(|e| panic!("{e}"));
    if let Some(missing) = c.setup.requires.iter().find(|p| !setup::on_path(p)) {
        return crate::skip::missing(
            &format!("client_ladders::real_client_follows_its_profile({name})"),
            missing,
            "not on PATH",
        );
    }
    setup::ensure(&c.setup).unwrap_or_else(|e| panic!("{name}: {e}"));
    let profiles_path = profiles_path();
    let doc = read_toml(&profiles_path).unwrap_or_else(|e| panic!("{e}"));
    let dir = root().join("fixtures/clients").join(name);
    let observed = run::measure(&dir, &c.command)
        .unwrap_or_else(|e| panic!("{name}: the measurement failed: {e}"));
    let measured = measured_ladder(&observed);
    let row = format!("{:?}", observed.reading.deliveries);
    let profile = profile_ladder(&doc, &c.profile, &profiles_path).unwrap_or_else(|e| {
        panic!(
            "{name}: {e}\n  measured: {}\n  measurement: {row}",
            render(&measured)
        )
    });
    let diffs = drift(&profile, &measured);
    assert!(
        diffs.is_empty(),
        "{name}: the real client drifts from profile `{}` in {}:\n  profile:  {}\n  measured: {}\n  \
         - {}\n  measurement: {row}",
        c.profile,
        profiles_path.display(),
        render(&profile),
        render(&measured),
        diffs.join("\n  - "),
    );
}

#[test]
fn every_profile_is_measured_or_explained() {
    let path = profiles_path();
    let doc = read_toml(&path).unwrap_or_else(|e| panic!("{e}"));
    let fixtures = client_fixtures();
    assert!(
        !fixtures.is_empty(),
        "no client fixture in fixtures/clients"
    );
    let measured: Vec<String> = fixtures
        .iter()
        .map(|n| client(n).unwrap_or_else(|e| panic!("{e}")).profile)
        .collect();
    let unexplained: Vec<&str> = doc["profile"]
        .as_array()
        .expect("[[profile]] tables")
        .iter()
        // Hosts are applications (VS Code, Codex, Zed, Claude) that cannot be installed and
        // driven here: their ladders are pinned to the constants of their source (or the
        // reports they were observed in) by the unit tests of `config::profiles`.
        .filter(|p| p.get("kind").and_then(toml::Value::as_str) != Some("host"))
        .filter_map(|p| p.get("id").and_then(toml::Value::as_str))
        .filter(|id| !measured.iter().any(|m| m == id))
        .filter(|id| !UNMEASURED.iter().any(|(u, _)| u == id))
        .collect();
    assert!(
        unexplained.is_empty(),
        "profiles no client fixture measures: {unexplained:?}"
    );
}
