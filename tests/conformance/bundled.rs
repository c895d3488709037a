//! Every bundled server under every scenario, run for real.

use std::path::PathBuf;

use rstest::rstest;

use crate::support::{classes, run, snapshot_name};

#[rstest]
fn bundled_server(
    #[files("conformance/servers/*.toml")] manifest: PathBuf,
    #[values("close", "exit", "crash")] scenario: &str,
) {
    let r = run(&manifest, scenario);
    insta::assert_yaml_snapshot!(snapshot_name(&r), classes(&r));
}
