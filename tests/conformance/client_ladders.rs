//! The client profiles of `conformance/profiles.toml` measured against the real SDK clients.
//!
//! Each fixture under `fixtures/clients/<sdk>-<version>/` is a tiny program that connects to
//! a server with its SDK's own stdio client transport and closes it the SDK's way. Here it
//! runs against the recorder (`fixtures/recorder/recorder.py`, a server that ignores EOF and
//! every catchable signal and logs what reaches it, its process group and its whole tree),
//! through `scripts/measure-client-ladders.py`, which turns the recorder's log into the
//! ladder the client followed. That ladder must be the one of the profile named in the
//! fixture's `client.toml`: the same actions in the same order, to the same targets, each
//! wait within a ratio of the profile's wait (the waits are the clients' own timers, so
//! nothing here depends on how fast the machine is).
//!
//! `profiles.toml` is read as plain TOML on purpose: the crate's own profile types are not
//! what is under test, the file is.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_shutdown_conformance::internals::setup;
use mcp_shutdown_conformance::manifest;
use rstest::rstest;
use serde_json::Value;

/// A wait is in tolerance when within this share of the profile's wait...
const TOLERANCE_RATIO: f64 = 0.25;
/// ...or within this many milliseconds, whichever is larger: start-up of a runtime's timer
/// or a signal's delivery adds a few ms to every wait, and a 0 ms wait has no ratio.
const TOLERANCE_FLOOR_MS: f64 = 500.0;

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
    #[error("measuring {client}: {what}")]
    Measure { client: String, what: String },
}

/// One action of a ladder and how long after the previous action (or close start) it came.
#[derive(Clone, Debug, PartialEq)]
struct Action {
    act: String,
    to: String,
    gap_ms: f64,
}

/// What a client does to the server, as actions; `unbounded`: close() never returns while
/// the server lives.
#[derive(Clone, Debug, PartialEq)]
struct Ladder {
    actions: Vec<Action>,
    unbounded: bool,
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
    Ok(Ladder { actions, unbounded })
}

/// The ladder of one client row of the measuring script's JSON.
fn measured_ladder(row: &Value) -> Result<Ladder, String> {
    if let Some(e) = row.get("error").and_then(Value::as_str) {
        return Err(e.to_string());
    }
    let steps = row
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("no steps in the measurement")?;
    let mut actions = Vec::new();
    let mut last = 0.0;
    for s in steps {
        let act = s
            .get("do")
            .and_then(Value::as_str)
            .ok_or("a step has no do")?;
        let at = s
            .get("at_ms")
            .and_then(Value::as_f64)
            .ok_or("a step has no at_ms")?;
        if act == "nothing" {
            continue;
        }
        let to = s.get("to").and_then(Value::as_str).unwrap_or("process");
        actions.push(Action {
            act: act.to_string(),
            to: to.to_string(),
            gap_ms: (at - last).max(0.0),
        });
        last = at;
    }
    let unbounded = row
        .get("unbounded")
        .and_then(Value::as_bool)
        .ok_or("no unbounded flag")?;
    Ok(Ladder { actions, unbounded })
}

/// The largest difference from a profile's wait that is still the same wait.
fn allowed_ms(profile_gap: f64) -> f64 {
    (profile_gap * TOLERANCE_RATIO).max(TOLERANCE_FLOOR_MS)
}

/// Every way `measured` differs from `profile`; empty when they agree.
fn drift(profile: &Ladder, measured: &Ladder) -> Vec<String> {
    let mut out = Vec::new();
    let names = |l: &Ladder| -> Vec<(String, String)> {
        l.actions
            .iter()
            .map(|a| (a.act.clone(), a.to.clone()))
            .collect()
    };
    if names(profile) != names(measured) {
        out.push(format!(
            "actions differ: profile {:?}, measured {:?}",
            names(profile),
            names(measured)
        ));
    } else {
        for (i, (p, m)) in profile.actions.iter().zip(&measured.actions).enumerate() {
            if (m.gap_ms - p.gap_ms).abs() > allowed_ms(p.gap_ms) {
                out.push(format!(
                    "step {} ({}): came {:.0} ms after the one before, the profile says {:.0} ms \
                     (allowed ±{:.0} ms)",
                    i + 1,
                    p.act,
                    m.gap_ms,
                    p.gap_ms,
                    allowed_ms(p.gap_ms)
                ));
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
        setup: manifest::Setup {
            command,
            cwd: dir,
            inputs: strings(s.get("inputs")),
            outputs: strings(s.get("outputs")),
            requires: strings(s.get("requires")),
        },
    })
}

/// Runs the measuring script on one client (already set up) and returns its JSON row.
fn measure(name: &str) -> Result<Value, LadderError> {
    let err = |what: String| LadderError::Measure {
        client: name.to_string(),
        what,
    };
    let script = root().join("scripts/measure-client-ladders.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["--no-setup", "--json", "-", name])
        .current_dir(root())
        .output()
        .map_err(|e| err(format!("cannot run python3 {}: {e}", script.display())))?;
    if !out.status.success() {
        return Err(err(format!(
            "{} exited with {}: {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let doc: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| err(format!("{} printed no JSON: {e}", script.display())))?;
    doc["clients"]
        .as_array()
        .and_then(|rows| rows.first())
        .cloned()
        .ok_or_else(|| err("no result row".to_string()))
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
    let row = measure(name).unwrap_or_else(|e| panic!("{e}"));
    let measured = measured_ladder(&row)
        .unwrap_or_else(|e| panic!("{name}: the measurement failed: {e}\n{row:#}"));
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

// ---- the pure parts ---------------------------------------------------------------------

fn act(act: &str, to: &str, gap_ms: f64) -> Action {
    Action {
        act: act.into(),
        to: to.into(),
        gap_ms,
    }
}

const PROFILES: &str = r#"
[[profile]]
id = "python"
steps = [
  { do = "close-stdin", wait_ms = 2000 },
  { do = "sigterm", to = "group", wait_ms = 2000 },
  { do = "sigkill", to = "group", wait_ms = 2000 },
]

[[profile]]
id = "java"
unbounded = true
steps = [
  { do = "nothing", wait_ms = 100 },
  { do = "sigterm", wait_ms = 5000 },
]
"#;

#[test]
fn profiles_become_gaps_between_actions() {
    let doc: toml::Value = PROFILES.parse().unwrap();
    let p = Path::new("profiles.toml");
    assert_eq!(
        profile_ladder(&doc, "python", p).unwrap(),
        Ladder {
            actions: vec![
                act("close-stdin", "process", 0.0),
                act("sigterm", "group", 2000.0),
                act("sigkill", "group", 2000.0)
            ],
            unbounded: false
        }
    );
    // A leading `nothing` only delays the first action.
    assert_eq!(
        profile_ladder(&doc, "java", p).unwrap(),
        Ladder {
            actions: vec![act("sigterm", "process", 100.0)],
            unbounded: true
        }
    );
    let e = profile_ladder(&doc, "go", p).unwrap_err().to_string();
    assert!(
        e.contains("no profile with id `go`") && e.contains("profiles.toml"),
        "{e}"
    );
}

#[test]
fn measurements_become_gaps_between_actions() {
    let row = serde_json::json!({
        "steps": [
            {"do": "nothing", "to": "process", "at_ms": 0.0},
            {"do": "sigterm", "to": "process", "at_ms": 140.0},
            {"do": "close-stdin", "to": "process", "at_ms": 139.8},
        ],
        "unbounded": false,
    });
    assert_eq!(
        measured_ladder(&row).unwrap(),
        Ladder {
            actions: vec![
                act("sigterm", "process", 140.0),
                // reordered as one instant by the script: never a negative gap
                act("close-stdin", "process", 0.0)
            ],
            unbounded: false
        }
    );
    let failed = serde_json::json!({"error": "no close start within 90 s"});
    assert_eq!(
        measured_ladder(&failed).unwrap_err(),
        "no close start within 90 s"
    );
}

#[test]
fn waits_within_a_ratio_of_the_profile_agree() {
    let doc: toml::Value = PROFILES.parse().unwrap();
    let profile = profile_ladder(&doc, "python", Path::new("p")).unwrap();
    let mut m = profile.clone();
    m.actions[0].gap_ms = 3.0;
    m.actions[1].gap_ms = 2010.0;
    m.actions[2].gap_ms = 2490.0; // +24.5 %
    assert!(drift(&profile, &m).is_empty(), "{:?}", drift(&profile, &m));
    m.actions[2].gap_ms = 2600.0; // +30 %
    let d = drift(&profile, &m);
    assert!(d.len() == 1 && d[0].contains("step 3 (sigkill)"), "{d:?}");
    assert_eq!(allowed_ms(0.0), 500.0);
    assert_eq!(allowed_ms(10_000.0), 2500.0);
}

#[test]
fn other_actions_targets_or_an_end_are_drift() {
    let doc: toml::Value = PROFILES.parse().unwrap();
    let profile = profile_ladder(&doc, "python", Path::new("p")).unwrap();
    let mut to_process = profile.clone();
    to_process.actions[1].to = "process".into();
    assert!(drift(&profile, &to_process)[0].starts_with("actions differ"));
    let mut no_kill = profile.clone();
    no_kill.actions.pop();
    assert!(drift(&profile, &no_kill)[0].starts_with("actions differ"));
    let mut forever = profile.clone();
    forever.unbounded = true;
    assert!(drift(&profile, &forever)[0].starts_with("unbounded: profile false"));
}

#[test]
fn ladders_render_on_one_line() {
    let l = Ladder {
        actions: vec![
            act("close-stdin", "process", 0.4),
            act("sigterm", "group", 2001.6),
        ],
        unbounded: true,
    };
    assert_eq!(
        render(&l),
        "close start → 0 ms → close-stdin → 2002 ms → sigterm (group) → waits forever"
    );
}
