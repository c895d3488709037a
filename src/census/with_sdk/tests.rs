use std::path::Path;

use super::*;
use crate::census::parse_listing;
use crate::model::{Stage, Untouched};
// Test support is not an import of the census (tests/docs.rs counts only this mark).
#[cfg(test)]
use crate::test_support::{report_of, result};

fn entries() -> Vec<Entry> {
    let text = std::fs::read_to_string("conformance/census/small.json").unwrap();
    parse_listing(Path::new("small.json"), &text)
        .unwrap()
        .entries
}

fn ts(source: SdkSource) -> Replacement {
    Replacement {
        line: "typescript".into(),
        package: "@modelcontextprotocol/sdk".into(),
        registry: Registry::Npm,
        source,
        others: vec![
            (
                "typescript-v2".into(),
                "@modelcontextprotocol/server".into(),
            ),
            ("fastmcp-ts".into(), "fastmcp".into()),
        ],
    }
}

fn release(v: &str) -> Replacement {
    ts(SdkSource::Release { version: v.into() })
}

fn local() -> Replacement {
    ts(SdkSource::Artifact {
        path: "/b/modelcontextprotocol-sdk-1.24.0.tgz".into(),
        name: "local-eof-fix".into(),
        version: "1.24.0+local.1a2b3c4d".into(),
    })
}

fn found(
    package: &str,
    path: &str,
    version: &str,
    bundled: bool,
    resolved: &str,
) -> (String, Found) {
    (
        package.into(),
        Found {
            copy: SdkCopy {
                path: path.into(),
                version: version.into(),
                bundled,
            },
            resolved: Some(resolved.into()),
        },
    )
}

#[test]
fn who_the_replacement_reaches_and_why_not() {
    let r = release("1.24.0");
    let sdk = |bundled| {
        found(
            "@modelcontextprotocol/sdk",
            "node_modules/@modelcontextprotocol/sdk",
            "1.32.2",
            bundled,
            "https://registry.npmjs.org/x",
        )
    };
    let inv = |c: Vec<(String, Found)>| Inventory { copies: c };
    assert_eq!(
        classify(Registry::Npm, &inv(vec![sdk(false)]), &r)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        classify(Registry::Pypi, &inv(vec![]), &r),
        Err(Untouched::OtherRegistry {
            registry: "pypi".into()
        })
    );
    assert_eq!(
        classify(Registry::Npm, &inv(vec![]), &r),
        Err(Untouched::NoCopy)
    );
    let v2 = found(
        "@modelcontextprotocol/server",
        "node_modules/@modelcontextprotocol/server",
        "2.1.0",
        false,
        "x",
    );
    assert_eq!(
        classify(Registry::Npm, &inv(vec![v2]), &r),
        Err(Untouched::OtherSdk {
            lines: vec!["typescript-v2".into()]
        })
    );
    assert_eq!(
        classify(Registry::Npm, &inv(vec![sdk(true)]), &r),
        Err(Untouched::NotReplaceable)
    );
    // One bundled copy beside a reachable one: it runs, and the bundled one is reported.
    assert_eq!(
        classify(Registry::Npm, &inv(vec![sdk(true), sdk(false)]), &r)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_copy_is_the_replacement_by_version_and_for_a_local_build_by_its_file() {
    let after = Inventory {
        copies: vec![
            found(
                "@modelcontextprotocol/sdk",
                "node_modules/@modelcontextprotocol/sdk",
                "1.24.0",
                false,
                "file:/b/modelcontextprotocol-sdk-1.24.0.tgz",
            ),
            found(
                "@modelcontextprotocol/sdk",
                "node_modules/x/node_modules/@modelcontextprotocol/sdk",
                "1.24.0",
                false,
                "https://registry.npmjs.org/@modelcontextprotocol/sdk/-/sdk-1.24.0.tgz",
            ),
            found(
                "@modelcontextprotocol/sdk",
                "node_modules/y/node_modules/@modelcontextprotocol/sdk",
                "1.17.0",
                true,
                "x",
            ),
        ],
    };
    let paths = |v: Vec<SdkCopy>| v.into_iter().map(|c| c.path).collect::<Vec<_>>();
    assert_eq!(
        paths(not_replaced(&after, &release("1.24.0"))),
        ["node_modules/y/node_modules/@modelcontextprotocol/sdk"]
    );
    // The release's own 1.24.0 is not the patched build of it.
    assert_eq!(
        paths(not_replaced(&after, &local())),
        [
            "node_modules/x/node_modules/@modelcontextprotocol/sdk",
            "node_modules/y/node_modules/@modelcontextprotocol/sdk"
        ]
    );
}

#[test]
fn names_labels_and_the_npm_project() {
    let e = &entries()[0];
    assert_eq!(
        release("1.24.0").server_name(e),
        "modelcontextprotocol-server-everything-2026.8.31.with-typescript-1.24.0"
    );
    assert_eq!(local().shown(), "local:eof-fix");
    assert_eq!(local().declared(), "1.24.0");
    let pj: serde_json::Value = serde_json::from_str(&npm::project_json(e, &local())).unwrap();
    assert_eq!(
        pj["dependencies"]["@modelcontextprotocol/server-everything"],
        "2026.8.31"
    );
    assert_eq!(
        pj["overrides"]["@modelcontextprotocol/sdk"],
        "file:/b/modelcontextprotocol-sdk-1.24.0.tgz"
    );
    let a = npm::project_dir(e, &local(), Path::new("/c"));
    assert!(
        a.starts_with("/c/with-sdk") && a.ends_with(&e.id),
        "{}",
        a.display()
    );
    assert_ne!(a, npm::project_dir(e, &release("1.24.0"), Path::new("/c")));
    let steps = npm::steps(e, &a, Path::new("/c"));
    assert_eq!(steps[0].render(), "npm install");
    assert_eq!(steps[1].env["npm_config_offline"], "true");
}

#[test]
fn a_node_modules_tree_is_read_at_every_depth() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let put = |rel: &str, version: &str| {
        let d = root.join(rel);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("package.json"),
            format!("{{\"version\":\"{version}\"}}"),
        )
        .unwrap();
    };
    put("node_modules/@modelcontextprotocol/sdk", "1.32.2");
    put(
        "node_modules/a/node_modules/@modelcontextprotocol/sdk",
        "1.17.0",
    );
    put("node_modules/a", "1.0.0");
    put("node_modules/fastmcp", "3.0.0");
    std::fs::write(
        root.join("node_modules/.package-lock.json"),
        r#"{"packages":{"node_modules/a/node_modules/@modelcontextprotocol/sdk":{"inBundle":true,"resolved":"r"}}}"#,
    )
    .unwrap();
    let inv = npm::scan(root, &["@modelcontextprotocol/sdk", "fastmcp"]).unwrap();
    let got: Vec<(&str, &str, bool)> = inv
        .copies
        .iter()
        .map(|(p, f)| (p.as_str(), f.copy.version.as_str(), f.copy.bundled))
        .collect();
    assert_eq!(
        got,
        [
            ("@modelcontextprotocol/sdk", "1.32.2", false),
            ("@modelcontextprotocol/sdk", "1.17.0", true),
            ("fastmcp", "3.0.0", false),
        ]
    );
}

#[test]
fn a_python_environment_is_read_by_normalised_name() {
    let out = "warning: x\n[[\"MCP\", \"1.20.0\", {\"url\": \"file:///b/mcp-1.20.0-py3-none-any.whl\"}], [\"fast_mcp\", \"1\", null], [\"pydantic\", \"2\", null]]\n";
    let inv = pypi::parse_dists(out, &["mcp"]).unwrap();
    assert_eq!(inv.copies.len(), 1);
    assert_eq!(inv.copies[0].1.copy.version, "1.20.0");
    assert_eq!(
        inv.copies[0].1.resolved.as_deref(),
        Some("file:///b/mcp-1.20.0-py3-none-any.whl")
    );
    assert!(pypi::parse_dists("no json", &["mcp"]).is_none());
    let r = Replacement {
        line: "python".into(),
        package: "mcp".into(),
        registry: Registry::Pypi,
        source: SdkSource::Release {
            version: "1.20.0".into(),
        },
        others: vec![],
    };
    assert_eq!(pypi::requirement(&r), "mcp==1.20.0");
    let time = &entries()[1];
    let steps = pypi::steps(time, &r, Path::new("/c/o.txt"), Path::new("/c"));
    assert_eq!(
        steps[0].args[..4],
        ["--overrides", "/c/o.txt", "--with", "mcp==1.20.0"]
    );
    assert_eq!(steps[1].env["UV_OFFLINE"], "1");
}

#[test]
fn endings_pair_before_and_after_from_the_report() {
    let e = &entries()[0];
    let r = release("1.24.0");
    let after = r.server_name(e);
    let b = result(&e.id, "close", Stage::Sigterm, 2100.0);
    let a = result(&after, "close", Stage::Eof, 40.0);
    let report = report_of(vec![b, a]);
    let prepared = PreparedEntry {
        server: WhatIfServer {
            after: Some(after),
            ..WhatIfServer::named(&e.id)
        },
        manifest: None,
    };
    let w = pair(&report, &r, &[prepared]);
    assert_eq!(w.replacement, "1.24.0");
    let s = &w.servers[0];
    assert!(s.changed());
    assert_eq!(
        (s.endings[0].before, s.endings[0].after),
        (Some(Stage::Sigterm), Some(Stage::Eof))
    );
    assert_eq!(s.no_verdict, None);
}

#[test]
fn a_server_without_a_verdict_on_either_side_says_why_and_changes_nothing() {
    let stripe = &entries()[2];
    let r = release("1.24.0");
    let after = r.server_name(stripe);
    let why = crate::model::NotTestable {
        reason: crate::model::NotTestableReason::NeedsCredentials,
        message: "STRIPE_SECRET_KEY".into(),
    };
    let mut b = result(&stripe.id, "close", Stage::Eof, 700.0);
    b.not_testable = Some(why.clone());
    let mut a = result(&after, "close", Stage::Eof, 900.0);
    a.not_testable = Some(why);
    let prepared = PreparedEntry {
        server: WhatIfServer {
            after: Some(after),
            ..WhatIfServer::named(&stripe.id)
        },
        manifest: None,
    };
    let w = pair(&report_of(vec![b, a]), &r, &[prepared]);
    let s = &w.servers[0];
    assert_eq!(s.no_verdict.as_deref(), Some("needs credentials"));
    assert!(!s.changed());
    assert_eq!(s.endings[0].before, None);
}

#[test]
fn a_fix_for_one_major_line_is_not_swapped_into_servers_of_another() {
    let r = release("1.24.0");
    let copy = |v: &str| {
        found(
            "@modelcontextprotocol/sdk",
            "node_modules/@modelcontextprotocol/sdk",
            v,
            false,
            "x",
        )
    };
    let inv = |c: Vec<(String, Found)>| Inventory { copies: c };
    for other in ["2.3.0", "0.6.2"] {
        assert_eq!(
            classify(Registry::Npm, &inv(vec![copy(other)]), &r),
            Err(Untouched::OtherMajor {
                versions: vec![other.into()]
            }),
            "{other}"
        );
    }
    // A copy of the replacement's line beside one of another: it runs.
    assert!(classify(Registry::Npm, &inv(vec![copy("2.3.0"), copy("1.2.0")]), &r).is_ok());
    // A version that does not parse is tried rather than guessed at.
    assert!(classify(Registry::Npm, &inv(vec![copy("next")]), &r).is_ok());
}

#[test]
fn a_server_that_ran_before_and_no_longer_starts_is_broken_by_the_replacement_not_changed() {
    let e = &entries()[0];
    let r = release("1.24.0");
    let after = r.server_name(e);
    let mut b = result(&e.id, "close", Stage::Eof, 40.0);
    b.observation.handshake = Some(crate::model::HandshakeInfo {
        mode: crate::model::HandshakeMode::Initialize,
        protocol_version: Some("2025-11-25".into()),
        server_name: None,
        server_version: None,
        ms: 900.0,
    });
    // Without a handshake, stdin at EOF from the start reads a crash as an exit on EOF.
    let null = result(&after, "stdin-null", Stage::Eof, 900.0);
    let mut a = result(&after, "close", Stage::Eof, 0.0);
    a.stage = None;
    a.checks.clear();
    a.error = Some(crate::model::CaseError {
        kind: crate::model::ErrorKind::ExitedBeforeHandshake,
        message: "the server exited (exit code 1) before completing the handshake".into(),
    });
    a.stderr_tail = "Traceback\nImportError: cannot import name 'MCPServer'\n".into();
    let prepared = |after: &str| PreparedEntry {
        server: WhatIfServer {
            after: Some(after.into()),
            ..WhatIfServer::named(&e.id)
        },
        manifest: None,
    };
    let w = pair(
        &report_of(vec![b.clone(), a.clone(), null]),
        &r,
        &[prepared(&after)],
    );
    let s = &w.servers[0];
    assert_eq!(
        s.broken.as_deref(),
        Some("ImportError: cannot import name 'MCPServer'")
    );
    assert!(!s.changed() && !s.undecided());
    // Placeholder credentials on the after side are not the replacement's doing.
    a.error = None;
    a.not_testable = Some(crate::model::NotTestable {
        reason: crate::model::NotTestableReason::NeedsCredentials,
        message: "KEY".into(),
    });
    let w = pair(&report_of(vec![b, a]), &r, &[prepared(&after)]);
    assert_eq!(w.servers[0].broken, None);
}
