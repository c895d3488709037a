use std::path::{Path, PathBuf};

use super::*;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn toml_file(path: &Path) -> toml::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Is every line of `lines` (but the `// …`/`# …` ones) a line of `file`, in order, leading
/// and trailing blanks aside?
fn missing_line<'a>(lines: &'a str, file: &str) -> Option<&'a str> {
    let mut have = file.lines().map(str::trim);
    lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "// …" && *l != "# …")
        .find(|want| !have.any(|h| h == *want))
}

#[test]
fn every_rule_has_a_fix_for_any_server() {
    let f = Fixes::bundled();
    for rule in &Catalogue::shared().rules {
        let r = &rule.id;
        assert!(
            !rule.concerns.is_empty(),
            "{r}: names no concern: write `concerns = [...]` in its [[rule]] of rules.toml"
        );
        for c in &rule.concerns {
            assert!(
                f.concern.get(c).is_some(),
                "{r}: `concerns` in rules.toml names {c}, which is no [concern.*] of fixes.toml"
            );
        }
        let fixes = f.choose(&[*r], Server::default());
        assert!(!fixes.is_empty(), "{r}: no fix for a server of unknown SDK");
    }
    for e in &f.fix {
        for c in &e.concerns {
            assert!(f.concern.get(c).is_some(), "{}: unknown concern {c}", e.id);
        }
        if let Some(l) = &e.language {
            assert!(
                f.language.get(l).is_some(),
                "{}: unknown language {l}",
                e.id
            );
        }
        assert_eq!(
            e.lines.is_some(),
            e.source.is_some(),
            "{}: lines need their source",
            e.id
        );
        assert!(
            e.lines.is_none() || e.language.is_some(),
            "{}: lines need a language",
            e.id
        );
        for v in &e.versions {
            semver::VersionReq::parse(v).unwrap_or_else(|err| panic!("{}: {v}: {err}", e.id));
        }
    }
}

/// A fix's lines are those of a server that passes: a bundled `fixed` server, or a kit's
/// shape written to exit; a hint can never drift from code that passes.
#[test]
fn every_fix_is_code_that_passes() {
    for e in &Fixes::bundled().fix {
        let (Some(lines), Some(src)) = (&e.lines, &e.source) else {
            continue;
        };
        match (&src.server, &src.kit, &src.shape) {
            (Some(server), None, None) => {
                let m = repo().join(format!("conformance/servers/{server}.toml"));
                let m = toml_file(&m);
                assert_eq!(
                    m["about"]["shape"].as_str(),
                    Some("fixed"),
                    "{}: {server}",
                    e.id
                );
                let cwd = m["cwd"].as_str().unwrap().trim_start_matches("../../");
                assert!(
                    src.file.starts_with(&format!("{cwd}/")),
                    "{}: {} is not {server}'s",
                    e.id,
                    src.file
                );
            }
            (None, Some(kit), Some(shape)) => {
                let k = toml_file(&repo().join(format!("kits/{kit}/kit.toml")));
                let expect = &k["shapes"][shape.as_str()]["expect"];
                let exits = ["eof", "sigterm"]
                    .iter()
                    .any(|w| expect.get(w).and_then(|v| v.as_str()) == Some("exit"));
                assert!(
                    exits,
                    "{}: kit {kit}'s shape {shape} is not written to exit",
                    e.id
                );
                let stem = Path::new(&src.file)
                    .file_stem()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('_', "-");
                assert_eq!(
                    &stem, shape,
                    "{}: {} is not the shape {shape}",
                    e.id, src.file
                );
            }
            _ => panic!(
                "{}: a source is a `server`, or a `kit` and its `shape`",
                e.id
            ),
        }
        let text = std::fs::read_to_string(repo().join(&src.file))
            .unwrap_or_else(|err| panic!("{}: {}: {err}", e.id, src.file));
        if let Some(line) = missing_line(lines, &text) {
            panic!("{}: `{line}` is not (in this order) in {}", e.id, src.file);
        }
    }
}

/// Every SDK line (kits/) and every bundled `fixed` server's SDK gets its own fix, not the
/// one for any server.
#[test]
fn every_sdk_has_its_fix() {
    let f = Fixes::bundled();
    let eof = [RuleId::StdioExitOnEof];
    let mut kits: Vec<String> = std::fs::read_dir(repo().join("kits"))
        .unwrap()
        .filter_map(|d| {
            let p = d.ok()?.path().join("kit.toml");
            p.exists()
                .then(|| toml_file(&p)["id"].as_str().unwrap().to_string())
        })
        .collect();
    kits.sort();
    for kit in &kits {
        let any = f
            .fix
            .iter()
            .any(|e| e.matches.contains(kit) && e.concerns.iter().any(|c| c == "eof"));
        assert!(any, "kit line {kit}: no [[fix]] matches it");
    }
    for d in std::fs::read_dir(repo().join("conformance/servers")).unwrap() {
        let m = toml_file(&d.unwrap().path());
        if m["about"]["shape"].as_str() != Some("fixed") {
            continue;
        }
        let s = Server {
            sdk: m["about"]["sdk"].as_str(),
            sdk_version: m["about"]["sdk_version"].as_str(),
            runtime: None,
        };
        let fixes = f.choose(&eof, s);
        assert!(
            fixes.iter().all(|x| x.sdk.is_some()),
            "{}: {fixes:?}",
            m["name"]
        );
    }
}

#[test]
fn fixes_follow_sdk_release_and_runtime() {
    let f = Fixes::bundled();
    let ids = |missed: &[RuleId],
               sdk: Option<&str>,
               v: Option<&str>,
               rt: Option<Runtime>|
     -> Vec<String> {
        let s = Server {
            sdk,
            sdk_version: v,
            runtime: rt,
        };
        f.choose(missed, s).into_iter().map(|x| x.id).collect()
    };
    let eof = [RuleId::StdioExitOnEof];
    assert_eq!(
        ids(&eof, Some("typescript"), Some("1.32.2"), None),
        ["typescript-v1"]
    );
    assert_eq!(
        ids(&eof, Some("typescript"), Some("2.4.0"), None),
        ["typescript-v2"]
    );
    assert_eq!(
        ids(
            &eof,
            Some("@modelcontextprotocol/server"),
            Some("2.0.0"),
            None
        ),
        ["typescript-v2.0"]
    );
    assert_eq!(
        ids(&eof, Some("mcp"), Some("1.7.1"), None),
        ["python-mcp-1.6"]
    );
    assert_eq!(
        ids(&eof, None, None, Some(Runtime::Python)),
        ["python-mcp-1"]
    );
    assert_eq!(
        ids(&eof, Some("some-sdk"), None, Some(Runtime::Node)),
        ["typescript-v1"]
    );
    assert_eq!(ids(&eof, None, None, None), ["any-eof"]);
    let term = [RuleId::ProcessExitOnSigterm];
    assert_eq!(
        ids(&term, Some("rmcp"), Some("3.11.0"), None),
        ["rust-rmcp", "rust-rmcp-stdio-pipes"]
    );
    assert_eq!(ids(&term, Some("rmcp"), Some("3.5.0"), None), ["rust-rmcp"]);
    // One fix per change, naming every rule it answers; every change at once.
    let all = [
        RuleId::StdioExitOnEof,
        RuleId::ProcessExitOnSigterm,
        RuleId::ProcessNoLeakedDescendants,
    ];
    let fixes = f.choose(
        &all,
        Server {
            sdk: Some("go"),
            ..Server::default()
        },
    );
    let got: Vec<(&str, usize)> = fixes
        .iter()
        .map(|x| (x.id.as_str(), x.rules.len()))
        .collect();
    assert_eq!(got, [("go", 2), ("any-children", 1)]);
    assert_eq!(
        fixes[0].title,
        "Exit when stdin ends; exit on SIGTERM and SIGINT"
    );
    assert!(fixes[0]
        .code
        .as_ref()
        .is_some_and(|c| c.fence == "go" && c.lines.contains("os.Exit(0)")));
}

fn left(pid: i32, by: i32) -> crate::model::Leftover {
    crate::model::Leftover {
        pid,
        cmdline: format!("p{pid}"),
        started_by: Some(by),
        started_by_cmdline: None,
    }
}

/// `npm exec` (1) left `sh -c` (2) and the server (3): its launchers' doing, for which
/// "stop what it started" is no fix; a process the server started (4) is the server's own.
#[test]
fn a_server_its_launchers_left_is_told_apart_from_what_it_started() {
    use crate::model::{Ending, Observation, ScenarioId};
    let mut o = Observation::empty("s", &ScenarioId::Ending(Ending::Close));
    o.server_process = Some(crate::model::ServerProcess {
        pid: 3,
        launchers: vec!["npm exec".into(), "sh -c".into()],
        ..Default::default()
    });
    o.leftovers = vec![left(2, 1), left(3, 2)];
    assert!(o.only_launchers_left());
    o.leftovers.push(left(4, 3));
    assert!(!o.only_launchers_left());
    o.leftovers.pop();
    o.server_process.as_mut().unwrap().launchers.clear();
    assert!(!o.only_launchers_left());
}
