//! Every bundled server under every ending, run for real, and the reference Node servers
//! under every client profile.

use std::path::PathBuf;

use rstest::rstest;

use crate::support::{classes, run, snapshot_name};

#[rstest]
fn bundled_server(
    #[files("conformance/servers/*.toml")] manifest: PathBuf,
    #[values(
        "close",
        "exit",
        "crash",
        "stdin-null",
        "sigterm",
        "sigint",
        "inflight",
        "sighup",
        "ctrl-c"
    )]
    scenario: &str,
) {
    let r = run(&manifest, scenario);
    insta::assert_yaml_snapshot!(snapshot_name(&r), classes(&r));
}

#[rstest]
fn reference_server_under_client_profile(
    #[files("conformance/servers/node-1.30.0-*.toml")] manifest: PathBuf,
    #[values(
        "close:typescript",
        "close:python",
        "close:go",
        "close:rust",
        "close:java",
        "close:csharp"
    )]
    scenario: &str,
) {
    let r = run(&manifest, scenario);
    insta::assert_yaml_snapshot!(snapshot_name(&r), classes(&r));
}

#[test]
fn every_bundled_server_has_a_snapshot_under_every_default_ending() {
    crate::support::assert_snapshot_per_default_ending("conformance/servers", "bundled");
}
