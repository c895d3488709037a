//! What `census` and `report site` publish beside the report: the verdict history
//! (`--history FILE`, read, updated and written back) and the site.

use std::path::Path;

use crate::error::Error;
use crate::model::{History, Report};
use crate::render::{census_history, site};

/// `--history` updated and `--site` written.
pub fn publish(
    report: &Report,
    history: Option<&Path>,
    site: Option<&Path>,
    url: Option<&str>,
) -> Result<(), Error> {
    let history = history.map(|h| update_history(h, report)).transpose()?;
    match site {
        Some(dir) => write_site(report, dir, url, history.as_ref()),
        None => Ok(()),
    }
}

/// `report site --from REPORT`: the site of a saved report, with the history updated.
pub fn site_from(
    from: &Path,
    out: &Path,
    url: Option<&str>,
    history: Option<&Path>,
) -> Result<(), Error> {
    publish(&super::load_report(from)?, history, Some(out), url)
}

/// `--history FILE`: read (a missing file starts an empty history), updated with the
/// report, written back whole (a temporary file renamed).
pub fn update_history(path: &Path, report: &Report) -> Result<History, Error> {
    let mut history: History = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| Error::Usage(format!("{}: not a census history: {e}", path.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => History::default(),
        Err(e) => return Err(Error::io(path)(e)),
    };
    census_history::update(&mut history, report);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(Error::io(dir))?;
    let text = serde_json::to_string_pretty(&history).expect("a history serialises");
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(Error::io(path))?;
    tmp.persist(path).map_err(|e| Error::io(path)(e.error))?;
    eprintln!(
        "census: history {}: {} servers over {} runs",
        path.display(),
        history.servers.len(),
        history.runs.len()
    );
    Ok(history)
}

/// The site and its `report.json` (with a history: each server's and the week's changes).
pub fn write_site(
    report: &Report,
    dir: &Path,
    url: Option<&str>,
    history: Option<&History>,
) -> Result<(), Error> {
    let files = site::render_with(report, url, history);
    for (rel, content) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(Error::io(parent))?;
        }
        std::fs::write(&path, content).map_err(Error::io(&path))?;
    }
    eprintln!(
        "census: site written to {} ({} files)",
        dir.display(),
        files.len()
    );
    Ok(())
}
