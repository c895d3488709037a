// rstest's #[files] globs are expanded at compile time: rebuild the tests when a manifest is
// added or removed, or when the directory of user manifests changes.
// RuleId and the judges' dispatch are generated from conformance/rules.toml.
#[path = "src/rules/codegen.rs"]
mod rules_codegen;

fn main() {
    println!("cargo::rerun-if-changed=conformance/servers");
    println!("cargo::rerun-if-changed=conformance/hostile");
    println!("cargo::rerun-if-changed=conformance/examples");
    println!("cargo::rerun-if-env-changed=MCP_SHUTDOWN_SERVERS");
    rules_codegen::write(
        std::path::Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it")),
        std::path::Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets it")),
    );
}
