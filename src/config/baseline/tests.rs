//! `baseline`'s tests.
use super::*;
use crate::model::{Check, JudgedCase, Level, Observation, Outcome};
use crate::test_support::report_of;

fn report(statuses: &[(&str, &str, RuleId, Status)]) -> Report {
    let results = statuses
        .iter()
        .map(|(server, scenario, rule, status)| JudgedCase {
            observation: Observation::empty(server, &scenario.parse().unwrap()),
            budgets: None,
            ladder: None,
            repeat: None,
            not_testable: None,
            checks: vec![Check {
                id: *rule,
                status: *status,
                level: Level::Should,
                outcome: Outcome::Fail,
                message: String::new(),
                spec_references: Vec::new(),
            }],
        })
        .collect();
    report_of(results)
}

#[test]
fn strict_both_ways() {
    let eof = RuleId::StdioExitOnEof;
    let before = report(&[
        ("timer", "close", eof, Status::Warning),
        ("fixed", "close", eof, Status::Success),
    ]);
    let base = Baseline::from_report(&before);
    assert!(!base.compare(&before).fails());
    // The SDK fixed the gap: the entry is stale.
    let fixed = report(&[("timer", "close", eof, Status::Success)]);
    let c = base.compare(&fixed);
    assert_eq!(c.stale.len(), 1);
    assert!(c.render().contains("stale baseline: remove it"));
    // A regression elsewhere: unexpected.
    let broke = report(&[("fixed", "close", eof, Status::Warning)]);
    assert_eq!(base.compare(&broke).unexpected.len(), 1);
}

#[test]
fn toml_round_trip_and_errors_name_the_line() {
    let r = report(&[
        (
            "node-1.30.0-timer",
            "close:java",
            RuleId::StdioExitOnEof,
            Status::Warning,
        ),
        ("a", "exit", RuleId::StdioExitOnClientDeath, Status::Warning),
    ]);
    let b = Baseline::from_report(&r);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("b.toml");
    std::fs::write(&p, b.to_toml()).unwrap();
    assert_eq!(Baseline::load(&p).unwrap().entries, b.entries);
    std::fs::write(&p, "[a]\nclose = 3\n").unwrap();
    assert!(Baseline::load(&p)
        .unwrap_err()
        .to_string()
        .contains("b.toml:2"));
    std::fs::write(&p, "[a]\nclose = [\"no-such-rule\"]\n").unwrap();
    let e = Baseline::load(&p).unwrap_err().to_string();
    assert!(e.contains("b.toml:2") && e.contains("no-such-rule"), "{e}");
}

#[test]
fn a_known_flaky_check_passes_either_way() {
    use crate::model::Stage;
    use crate::test_support::result;
    let flaky = crate::rules::repeat::aggregate(vec![
        result("coin.toss", "close", Stage::Eof, 12.0),
        result("coin.toss", "close", Stage::Sigterm, 2004.0),
    ]);
    let r = report_of(vec![flaky]);
    let b = Baseline::from_report(&r);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("b.toml");
    let text = b.to_toml();
    assert!(text.contains("[\"coin.toss\".flaky]"), "{text}");
    std::fs::write(&p, &text).unwrap();
    let loaded = Baseline::load(&p).unwrap();
    assert_eq!((&loaded.entries, &loaded.flaky), (&b.entries, &b.flaky));
    let c = loaded.compare(&r);
    assert!(!c.fails(), "{}", c.render());
    assert_eq!(c.known_flaky, 1);
    // A single run of it, passing or not, is still accepted.
    let once = report_of(vec![result("coin.toss", "close", Stage::Eof, 12.0)]);
    assert!(!loaded.compare(&once).fails());
}

#[test]
fn official_yaml_round_trip_whole_scenarios_and_errors() {
    let eof = RuleId::StdioExitOnEof;
    let before = report(&[
        ("node-1.30.0-timer", "close:java", eof, Status::Warning),
        ("fixed", "close", eof, Status::Success),
    ]);
    let yaml = Baseline::from_report(&before).to_official_yaml();
    assert!(
        yaml.contains("server:\n- node-1.30.0-timer+close-java\n"),
        "{yaml}"
    );
    assert!(!yaml.ends_with("\n\n"));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("expected-failures.yaml");
    std::fs::write(&p, &yaml).unwrap();
    let b = Baseline::load(&p).unwrap();
    let java: ScenarioId = "close:java".parse().unwrap();
    assert!(b.whole["node-1.30.0-timer"].contains(&java));
    assert!(
        !b.compare(&before).fails(),
        "{}",
        b.compare(&before).render()
    );
    // Fixed: the whole-scenario entry is stale.
    let fixed = report(&[("node-1.30.0-timer", "close:java", eof, Status::Success)]);
    let c = b.compare(&fixed);
    assert_eq!(c.stale_scenarios.len(), 1, "{}", c.render());
    assert!(c.render().contains("stale baseline: remove it"));
    // Through our TOML and back, nothing is lost.
    let t = dir.path().join("b.toml");
    std::fs::write(&t, b.to_file_text(&t)).unwrap();
    let again = Baseline::load(&t).unwrap();
    assert_eq!(again.whole, b.whole);
    assert_eq!(again.to_official_yaml(), yaml);
    // Per-check entries map to ours exactly.
    std::fs::write(
        &p,
        "server:\n  - node-1.30.0-timer+close-java:stdio-exit-on-eof\nclient:\n  - initialize\n",
    )
    .unwrap();
    let per = Baseline::load(&p).unwrap();
    assert_eq!(per.entries["node-1.30.0-timer"][&java], vec![eof]);
    assert!(!per.compare(&before).fails());
    // Errors name the file and line, and the mistake.
    for (text, said) in [
        (
            "server:\n  - x+close: stdio-exit-on-eof\n",
            "remove the space after the colon",
        ),
        (
            "server:\n  - no-plus-sign\n",
            "is not `<server>+<scenario>`",
        ),
        ("server:\n  - x+nope\n", "unknown scenario `nope`"),
        ("server:\n  - x+close:no-such-rule\n", "no-such-rule"),
        (
            "server:\n  - x+close\n  - x+close:stdio-exit-on-eof\n",
            "redundant",
        ),
        ("server: 3\n", "expected-failures.yaml:1"),
    ] {
        std::fs::write(&p, text).unwrap();
        let e = Baseline::load(&p).unwrap_err().to_string();
        assert!(
            e.contains(said) && e.contains("expected-failures.yaml:"),
            "{text:?}: {e}"
        );
    }
}
