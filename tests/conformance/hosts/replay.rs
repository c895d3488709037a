//! A check that cannot drift: every measured host profile of `conformance/profiles.toml`
//! held against the measurement it came from (`conformance/measurements/<host>@<version>.json`,
//! what `host measure --json` wrote), and replayed by the harness against the recorder.
//!
//! From the measurement: the same triggers, the same steps to the same targets, every wait
//! within the spread its repeats showed, walking away where the host walked away. From the
//! replay: the recorder sees those steps, in that order, to those targets; the harness took
//! none sooner than its wait (a timer never fires early; how much later a loaded machine lets
//! it fire is not judged); the recorder is killed by the ladder's SIGKILL exactly when the
//! host's ladder ends in one, and left to the harness's cap where the host walked away.

use std::path::{Path, PathBuf};

use mcp_shutdown_conformance::internals::hosts::reading::{word, ActionKind};
use mcp_shutdown_conformance::internals::hosts::{analyze, emit, Measurement};
use mcp_shutdown_conformance::manifest;
use mcp_shutdown_conformance::model::Stage;

const MEASUREMENTS: &str = "conformance/measurements";

/// A step of the replay may come this much before its wait is over (the harness's stamps
/// are whole steps apart, its timer's own rounding).
const EARLY_SLACK_MS: f64 = 5.0;

/// One step of a ladder: what, to whom, and the wait after it.
#[derive(Clone, Debug, PartialEq)]
struct Step {
    act: String,
    to: String,
    wait_ms: u64,
}

/// What a measured group says its profile must be.
struct Expected {
    measurement: String,
    version: String,
    triggers: Vec<String>,
    daemon_up: bool,
    steps: Vec<(String, String)>,
    /// Per step, the spread of the wait after it (none: the harness's window or cap).
    spreads: Vec<Option<mcp_shutdown_conformance::model::Spread>>,
    abandons: bool,
}

fn stored() -> Vec<(String, Measurement)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(MEASUREMENTS)
        .expect(MEASUREMENTS)
        .flatten()
    {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let m: Measurement = serde_json::from_str(&text)
                .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            out.push((path.display().to_string(), m));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every profile each stored measurement groups into, by id.
fn expected() -> Vec<(String, Expected)> {
    let mut out = Vec::new();
    for (file, m) in stored() {
        let (groups, _) = emit::group(&m);
        for g in groups {
            let id = emit::profile_id(&m.host, &g, "quit-command");
            let mut steps: Vec<(String, String)> = g
                .shape
                .iter()
                .map(|(a, t)| {
                    let a = match a {
                        ActionKind::StdoutClosed => ActionKind::ClosePipes,
                        a => *a,
                    };
                    (a.to_string(), word(t))
                })
                .collect();
            if steps.is_empty() {
                steps.push(("nothing".into(), "process".into()));
            }
            let spreads = (0..steps.len())
                .map(|i| g.waits.get(i).map(|(_, s)| *s))
                .collect();
            out.push((
                id,
                Expected {
                    measurement: file.clone(),
                    version: m.version.clone(),
                    triggers: g.triggers.clone(),
                    daemon_up: g.daemon_up,
                    steps,
                    spreads,
                    abandons: g.walked_away.is_some(),
                },
            ));
        }
    }
    out
}

fn measured_profiles() -> Vec<toml::Value> {
    let text = std::fs::read_to_string("conformance/profiles.toml").unwrap();
    let doc: toml::Value = text.parse().unwrap();
    doc["profile"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p.get("basis").and_then(toml::Value::as_str) == Some("measured"))
        // An alias replays its target's steps: held through the target.
        .filter(|p| p.get("alias_of").is_none())
        .cloned()
        .collect()
}

fn steps_of(p: &toml::Value) -> Vec<Step> {
    p["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Step {
            act: s["do"].as_str().unwrap().to_string(),
            to: s
                .get("to")
                .and_then(toml::Value::as_str)
                .unwrap_or("process")
                .to_string(),
            wait_ms: s["wait_ms"].as_integer().unwrap() as u64,
        })
        .collect()
}

/// Where the profile `p` differs from what its measurement says, one line each.
fn drift(p: &toml::Value, e: &Expected) -> Vec<String> {
    let mut out = Vec::new();
    let measured = &p["measured"];
    if measured["version"].as_str() != Some(&e.version) {
        out.push(format!("version {} ≠ {}", measured["version"], e.version));
    }
    let triggers: Vec<&str> = measured["triggers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(toml::Value::as_str)
        .collect();
    if triggers != e.triggers {
        out.push(format!("triggers {triggers:?} ≠ measured {:?}", e.triggers));
    }
    let daemon_up = measured.get("daemon_up").and_then(toml::Value::as_bool) == Some(true);
    if daemon_up != e.daemon_up {
        out.push(format!("daemon_up {daemon_up} ≠ measured {}", e.daemon_up));
    }
    let steps = steps_of(p);
    let shape: Vec<(String, String)> = steps
        .iter()
        .map(|s| (s.act.clone(), s.to.clone()))
        .collect();
    if shape != e.steps {
        out.push(format!("steps {shape:?} ≠ measured {:?}", e.steps));
    }
    for (i, s) in steps.iter().enumerate() {
        let spread = e.spreads.get(i).copied().flatten();
        let ok = match spread {
            Some(sp) => {
                (sp.min_ms.floor() as u64) <= s.wait_ms && s.wait_ms <= sp.max_ms.ceil() as u64
            }
            None if e.abandons || s.act == "nothing" => s.wait_ms == emit::WALK_CAP_MS,
            None => s.wait_ms == emit::LAST_WINDOW_MS,
        };
        if !ok {
            out.push(format!(
                "step {} ({}) waits {} ms, outside the measured {:?}",
                i + 1,
                s.act,
                s.wait_ms,
                spread.map(|s| s.to_string())
            ));
        }
    }
    let abandons = p.get("abandons").and_then(toml::Value::as_bool) == Some(true);
    if abandons != e.abandons {
        out.push(format!(
            "abandons {abandons} ≠ measured walked away {}",
            e.abandons
        ));
    }
    out
}

/// The typed reading writes what it read: a stored measurement's every field survives.
#[test]
fn stored_measurements_read_back_as_they_were_written() {
    for (file, m) in stored() {
        let text = std::fs::read_to_string(&file).unwrap();
        let as_stored: serde_json::Value = serde_json::from_str(&text).unwrap();
        let written = serde_json::to_value(&m).unwrap();
        assert!(written == as_stored, "{file}: reads back otherwise");
    }
}

#[test]
fn every_measured_profile_is_its_stored_measurement() {
    let expected = expected();
    let mut problems = Vec::new();
    for p in measured_profiles() {
        let id = p["id"].as_str().unwrap();
        match expected.iter().find(|(x, _)| x == id) {
            Some((_, e)) => problems.extend(
                drift(&p, e)
                    .into_iter()
                    .map(|d| format!("{id} (from {}): {d}", e.measurement)),
            ),
            None => problems.push(format!("{id}: no stored measurement groups into it")),
        }
    }
    let ids: Vec<String> = measured_profiles()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    for (id, e) in &expected {
        if !ids.contains(id) {
            problems.push(format!(
                "{id}: measured in {}, not in profiles.toml",
                e.measurement
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A manifest that runs the recorder, logging to `log`.
fn recorder_manifest(dir: &Path, log: &Path) -> PathBuf {
    let bin = env!("CARGO_BIN_EXE_mcp-shutdown");
    let text = format!(
        "name = \"recorder\"\ndescription = \"logs what reaches it\"\ncommand = {bin:?}\nargs = [\"__recorder\", \"--log\", {:?}]\n",
        log.display().to_string()
    );
    let path = dir.join("recorder.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// What the recorder logged of the replay, as steps (the waits are the gaps it saw).
fn replayed(log: &Path) -> Vec<(String, String, f64)> {
    let events = analyze::parse_log(&std::fs::read_to_string(log).unwrap_or_default());
    let facts = analyze::RunFacts {
        events,
        ..Default::default()
    };
    let reading = emit::merge_pipes(&analyze::read_run(&facts));
    let mut out: Vec<(String, String, f64)> = Vec::new();
    for d in reading.deliveries {
        let act = match d.action {
            ActionKind::StdoutClosed => ActionKind::ClosePipes,
            a => a,
        };
        out.push((act.to_string(), word(&d.to), d.at_ms));
    }
    out
}

/// Where the replay of profile `p` differs from its steps, one line each.
fn replay_drift(p: &toml::Value) -> Vec<String> {
    let id = p["id"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("recorder.log");
    let manifest = recorder_manifest(dir.path(), &log);
    let m = manifest::load_file(&manifest).unwrap();
    let r = crate::support::harness().run_one(&mcp_shutdown_conformance::Case {
        manifest: m,
        scenario: format!("close:{id}").parse().unwrap(),
    });
    let mut out = Vec::new();
    if let Some(e) = &r.error {
        return vec![format!("the replay failed: {e:?}")];
    }
    let steps = steps_of(p);
    let logged: Vec<&Step> = steps
        .iter()
        .filter(|s| s.act != "nothing" && s.act != "sigkill")
        .collect();
    let seen = replayed(&log);
    let want: Vec<(String, String)> = logged
        .iter()
        .map(|s| (s.act.clone(), s.to.clone()))
        .collect();
    let got: Vec<(String, String)> = seen
        .iter()
        .map(|(a, t, _)| (a.clone(), t.clone()))
        .collect();
    if want != got {
        out.push(format!(
            "the recorder saw {got:?}, the profile sends {want:?}"
        ));
        return out;
    }
    // The waits by the harness's own clock (the recorder logs a signal when it is
    // scheduled, which a loaded machine delays): no step sooner than its wait.
    let acted: Vec<f64> = r.steps.iter().map(|s| s.at_ms).collect();
    let waits: Vec<u64> = steps.iter().map(|s| s.wait_ms).collect();
    for i in 1..acted.len().min(waits.len()) {
        let gap = acted[i] - acted[i - 1];
        if gap + EARLY_SLACK_MS < waits[i - 1] as f64 {
            out.push(format!(
                "step {} came {gap:.0} ms after step {i}, before its {} ms",
                i + 1,
                waits[i - 1]
            ));
        }
    }
    let ends_in_kill = steps.last().is_some_and(|s| s.act == "sigkill");
    let abandons = p.get("abandons").and_then(toml::Value::as_bool) == Some(true);
    let stage = r.stage;
    if ends_in_kill && stage != Some(Stage::Sigkill) {
        out.push(format!(
            "the ladder ends in a SIGKILL, the recorder ended at {stage:?}"
        ));
    }
    if abandons && stage != Some(Stage::Survived) {
        out.push(format!(
            "the host walks away, the recorder ended at {stage:?}"
        ));
    }
    out
}

#[test]
fn every_stored_measured_profile_replays_against_the_recorder_as_measured() {
    let stored: Vec<String> = expected().into_iter().map(|(id, _)| id).collect();
    let profiles: Vec<toml::Value> = measured_profiles()
        .into_iter()
        .filter(|p| stored.iter().any(|s| Some(s.as_str()) == p["id"].as_str()))
        .collect();
    let problems: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = profiles
            .iter()
            .map(|p| s.spawn(move || (p["id"].as_str().unwrap().to_string(), replay_drift(p))))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                let (id, d) = h.join().unwrap();
                d.into_iter().map(move |x| format!("{id}: {x}"))
            })
            .collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
