//! Tests of reading kit files: a complete kit, and errors that point at the line and field.

use super::*;

/// A kit directory named `demo` with the template files the text refers to.
fn parse_demo(text: &str) -> Result<Kit, KitError> {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("demo");
    std::fs::create_dir_all(dir.join("t")).unwrap();
    std::fs::write(dir.join("t/a.mjs"), "// {{version}}").unwrap();
    std::fs::write(dir.join("t/b.mjs"), "// b").unwrap();
    parse(&dir.join("kit.toml"), text)
}

const GOOD: &str = r#"
id = "demo"
ecosystem = "npm"
package = "demo-sdk"

[files]
"a.mjs" = "t/a.mjs"

[release]
vars = { spec = "{{version}}" }
lock = [["npm", "install", "--package-lock-only", "--before", "{{before}}"]]
lockfile = "package-lock.json"
install = [["npm", "ci"]]

[[variant]]
name = "old"
versions = ">=1.0.0, <1.3.0"
files = { "server.mjs" = "t/b.mjs" }

[[variant]]
name = "new"
versions = ">=1.3.0"

[[untestable]]
versions = "<1.0.0"
reason = "before 1.0"

[shapes.plain]
command = "node"
args = ["{{dir}}/plain.mjs"]

[shapes.slow-tool]
command = "node"
args = ["slow.mjs"]
inflight = { method = "tools/call", params = { name = "slow", arguments = {} } }
expect = { eof = "exit" }
"#;

#[test]
fn a_complete_kit_loads() {
    let k = parse_demo(GOOD).unwrap();
    assert_eq!(k.id, "demo");
    assert_eq!(k.ecosystem, Ecosystem::Npm);
    assert_eq!(k.variants.len(), 2);
    assert_eq!(k.variants[0].files["server.mjs"], "t/b.mjs");
    assert_eq!(k.shapes.len(), 2);
    let slow = k.shapes.iter().find(|s| s.name == "slow-tool").unwrap();
    let (m, p) = slow.inflight.clone().unwrap();
    assert_eq!(m, "tools/call");
    assert_eq!(p["name"], "slow");
    assert_eq!(k.cutoff_margin_minutes, 60);
    assert!(k.local.is_none());
}

fn err(text: &str) -> (Option<usize>, String) {
    match parse_demo(text).unwrap_err() {
        KitError::Parse { line, problem, .. } => (line, problem.to_string()),
        other => panic!("{other}"),
    }
}

#[test]
fn unknown_field_names_its_line() {
    let (line, msg) = err(&GOOD.replace("package = \"demo-sdk\"", "pakage = \"demo-sdk\""));
    assert_eq!(line, Some(4));
    assert!(msg.contains("pakage"), "{msg}");
}

#[test]
fn bad_range_points_at_the_value() {
    let (line, msg) = err(&GOOD.replace(">=1.3.0\"", ">=1.x\""));
    assert_eq!(line, Some(22));
    assert!(
        msg.contains("variant[1].versions") && msg.contains("1.x"),
        "{msg}"
    );
}

#[test]
fn missing_template_is_named() {
    let (line, msg) = err(&GOOD.replace("t/b.mjs", "t/nope.mjs"));
    assert_eq!(line, Some(18));
    assert!(
        msg.contains("nope.mjs") && msg.contains("does not exist"),
        "{msg}"
    );
}

#[test]
fn unknown_placeholder_is_named() {
    let (line, msg) = err(&GOOD.replace("{{dir}}/plain.mjs", "{{dri}}/plain.mjs"));
    assert_eq!(line, Some(30));
    assert!(
        msg.contains("{{dri}}") && msg.contains("shapes.plain.args"),
        "{msg}"
    );
}

#[test]
fn id_must_match_the_directory() {
    let (line, msg) = err(&GOOD.replace("id = \"demo\"", "id = \"other\""));
    assert_eq!(line, Some(2));
    assert!(msg.contains("directory name"), "{msg}");
}

#[test]
fn lock_without_lockfile_and_bad_expectations_are_rejected() {
    let (_, msg) = err(&GOOD.replace("lockfile = \"package-lock.json\"\n", ""));
    assert!(msg.contains("release.lockfile"), "{msg}");
    let (_, msg) = err(&GOOD.replace("eof = \"exit\"", "eof = \"maybe\""));
    assert!(msg.contains("expect.eof"), "{msg}");
    let (_, msg) = err(&GOOD.replace(
        "versions = \"<1.0.0\"\nreason = \"before 1.0\"",
        "versions = \"<1.0.0\"\nreason = \" \"",
    ));
    assert!(msg.contains("say why"), "{msg}");
}

#[test]
fn variant_shape_subsets_must_exist() {
    let (_, msg) = err(&GOOD.replace(
        "name = \"new\"\nversions = \">=1.3.0\"",
        "name = \"new\"\nversions = \">=1.3.0\"\nshapes = [\"plain\", \"timer\"]",
    ));
    assert!(msg.contains("no shape named \"timer\""), "{msg}");
}

#[test]
fn wrong_types_name_the_line() {
    let (line, msg) = err(&GOOD.replace("args = [\"slow.mjs\"]", "args = \"slow.mjs\""));
    assert_eq!(line, Some(34));
    assert!(msg.contains("invalid type"), "{msg}");
}
