//! `report book`: the census page's blocks written from a stored census report, the findings
//! as `report render --format findings` prints them.

use std::fs;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-shutdown");
const CENSUS: &str = "docs/book/data/census-close-repeat3-2026-12-02.json";

#[test]
fn the_census_page_takes_its_findings_from_the_report() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reports = tempfile::tempdir().unwrap();
    let book = tempfile::tempdir().unwrap();
    fs::copy(root.join(CENSUS), reports.path().join("census.json")).unwrap();
    let page = "intro\n<!-- census-findings:begin -->\nold\n<!-- census-findings:end -->\n\
                <!-- leaderboard:begin -->\nold\n<!-- leaderboard:end -->\n";
    fs::write(book.path().join("census.md"), page).unwrap();
    let out = Command::new(BIN)
        .args(["report", "book"])
        .arg(reports.path())
        .arg("--book")
        .arg(book.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let findings = Command::new(BIN)
        .args(["report", "render", "--format", "findings", "--from"])
        .arg(root.join(CENSUS))
        .output()
        .unwrap();
    assert!(findings.status.success());
    let findings = String::from_utf8(findings.stdout).unwrap();
    assert!(
        findings.starts_with("Census: 3 cases, spec 2026-07-28"),
        "{findings}"
    );
    let written = fs::read_to_string(book.path().join("census.md")).unwrap();
    let block = format!("<!-- census-findings:begin -->\n{findings}<!-- census-findings:end -->");
    assert!(written.contains(&block), "{written}");
    assert!(
        written.contains("<details><summary>All 3 servers</summary>"),
        "{written}"
    );
}
