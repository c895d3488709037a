// rstest's #[files] globs are expanded at compile time: rebuild the tests when a manifest is
// added or removed, or when the directory of user manifests changes.
fn main() {
    println!("cargo::rerun-if-changed=conformance/servers");
    println!("cargo::rerun-if-changed=conformance/hostile");
    println!("cargo::rerun-if-changed=conformance/examples");
    println!("cargo::rerun-if-env-changed=MCP_SHUTDOWN_SERVERS");
}
