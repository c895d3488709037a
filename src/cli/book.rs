//! `report book DIR`: the book's tables made from runs, written between their marker
//! comments from the reports in DIR (`render::book` words them).

use std::path::{Path, PathBuf};

use crate::config::profiles::Profiles;
use crate::error::Error;
use crate::model::{Ending, ProfileKind};
use crate::render::book;

use super::load_report as load;

/// Writes results.md from DIR's matrix, profiles and hosts reports (all three; none when DIR
/// holds census reports alone), and census.md's leaderboard block from each census report:
/// `census.json` → `leaderboard`, `census-SUFFIX.json` → `leaderboard-SUFFIX`, and its
/// findings (`report render --format findings`) → `census-findings[-SUFFIX]`.
pub fn write(dir: &Path, pages: &Path) -> Result<(), Error> {
    let report = |name: &str| dir.join(format!("{name}.json"));
    let censuses = censuses(dir)?;
    if given(&report("matrix")) || censuses.is_empty() {
        let [matrix, profiles, hosts] = ["matrix", "profiles", "hosts"].map(report);
        if let Some(missing) = [&matrix, &profiles, &hosts].into_iter().find(|p| !given(p)) {
            return Err(Error::Usage(format!(
                "report book: {} is missing (scripts/book/results.sh --run makes it)",
                missing.display()
            )));
        }
        let (matrix, profiles, hosts) = (load(&matrix)?, load(&profiles)?, load(&hosts)?);
        let (endings, closes) = columns();
        let body = book::results(&matrix, &profiles, &hosts, &endings, &closes);
        write_block(&pages.join("results.md"), "results", &body)?;
    }
    for (suffix, path) in &censuses {
        let census_md = pages.join("census.md");
        let census = load(path)?;
        write_block(
            &census_md,
            &format!("leaderboard{suffix}"),
            &book::leaderboard(&census),
        )?;
        let findings = crate::render::findings::render(&census);
        write_block(&census_md, &format!("census-findings{suffix}"), &findings)?;
    }
    Ok(())
}

/// A file that is there and not empty.
fn given(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.len() > 0)
}

/// DIR's census reports and their blocks' suffixes: `census.json` (""), `census-wide.json`
/// ("-wide"), sorted.
fn censuses(dir: &Path) -> Result<Vec<(String, PathBuf)>, Error> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir))? {
        let path = entry.map_err(Error::io(dir))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let suffix = match name.strip_suffix(".json") {
            Some("census") => String::new(),
            Some(n) => match n.strip_prefix("census-") {
                Some(s) => format!("-{s}"),
                None => continue,
            },
            None => continue,
        };
        if given(&path) {
            out.push((suffix, path));
        }
    }
    out.sort();
    Ok(out)
}

/// The tables' columns in the catalogues' order: every ending; `close` and `close` under
/// each client profile.
fn columns() -> (Vec<String>, Vec<String>) {
    let endings = Ending::ALL.iter().map(|e| e.as_str().to_string()).collect();
    let clients = Profiles::bundled()
        .iter()
        .filter(|p| p.kind == ProfileKind::Client)
        .map(|p| format!("close:{}", p.id))
        .collect::<Vec<_>>();
    let closes = std::iter::once("close".to_string())
        .chain(clients)
        .collect();
    (endings, closes)
}

fn write_block(page: &Path, name: &str, body: &str) -> Result<(), Error> {
    let text = std::fs::read_to_string(page).map_err(Error::io(page))?;
    let new = book::splice(&text, name, body).ok_or_else(|| {
        Error::Usage(format!(
            "{}: no <!-- {name}:begin --> … <!-- {name}:end --> lines to write between",
            page.display()
        ))
    })?;
    std::fs::write(page, new).map_err(Error::io(page))?;
    eprintln!("{}: {name} written", page.display());
    Ok(())
}
