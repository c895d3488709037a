// rstest's #[files] globs are expanded at compile time: rebuild the tests when a manifest is
// added or removed, or when the directory of user manifests changes.
// The shape of a generated closed identifier, for both catalogues below.
#[path = "src/codegen.rs"]
mod codegen;
// RuleId and the judges' dispatch are generated from conformance/rules.toml.
#[path = "src/rules/codegen.rs"]
mod rules_codegen;
// The suite the binary carries (kits, catalogues, manifests, fixtures' sources).
#[path = "src/harness/embed_codegen.rs"]
mod embed_codegen;
// `Ending` and the test suites' lists of endings are generated from conformance/endings.toml.
#[path = "src/config/endings_codegen.rs"]
mod endings_codegen;

fn main() {
    println!("cargo::rerun-if-changed=conformance/servers");
    println!("cargo::rerun-if-changed=conformance/hostile");
    println!("cargo::rerun-if-changed=conformance/examples");
    println!("cargo::rerun-if-env-changed=MCP_SHUTDOWN_SERVERS");
    let root =
        std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    rules_codegen::write(&root, &out);
    embed_codegen::write(&root, &out);
    endings_codegen::write(&root, &out);
}
