//! Published versions and their release dates, from each SDK's registry: the ecosystem's own
//! CLI where it lists them (`npm view PKG versions time dist-tags --json`, also for the hosts
//! `host measure` installs; `go list -m -versions`),
//! HTTP where it does not (PyPI's JSON API, the crates.io sparse index, Maven Central's
//! `maven-metadata.xml`). Parsing is pure and tested; fetching is a thin layer around it.

use std::time::Duration;

use serde::Deserialize;

use super::arg::VersionSel;
use super::spec::{Ecosystem, Kit};
use super::version::Version;
use super::KitError;
use crate::os::command as os;

/// Why a registry's list of versions could not be had.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{what}: {source}")]
    Json {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("maven-metadata.xml: {0}")]
    Xml(#[from] roxmltree::Error),
    #[error("maven-metadata.xml has no <versions>")]
    NoVersions,
    #[error("{0}")]
    Http(#[from] Box<ureq::Error>),
    #[error("could not start: {0}")]
    Spawn(#[source] std::io::Error),
    /// The command failed; the last lines it printed on stderr.
    #[error("{tail}")]
    Exited { tail: String },
}

fn bad_json(what: impl Into<String>) -> impl FnOnce(serde_json::Error) -> RegistryError {
    let what = what.into();
    move |source| RegistryError::Json { what, source }
}

/// One published version.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Release {
    /// As the user writes it (no leading `v` for Go modules).
    pub version: String,
    /// When the registry says it was published (RFC 3339), if it says.
    pub date: Option<String>,
    /// Yanked (crates.io, PyPI): listed only when asked for by exact version.
    pub yanked: bool,
}

fn release(version: &str, date: Option<String>, yanked: bool) -> Release {
    Release {
        version: version.trim_start_matches('v').to_string(),
        date,
        yanked,
    }
}

/// Sorts by version, dropping what is not a version at all (npm's `created`/`modified`).
fn sorted(mut list: Vec<Release>) -> Vec<Release> {
    list.retain(|r| Version::parse(&r.version).is_ok());
    // Of two entries for one version, the one with a date is kept.
    list.sort_by_key(|r| (Version::parse(&r.version).ok(), r.date.is_none()));
    list.dedup_by(|later, first| later.version == first.version);
    list
}

// ---- parsers (pure) -----------------------------------------------------------------------

/// What `npm view PKG versions time dist-tags --json` says of a package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpmView {
    /// Every installable version, sorted, with its date.
    pub releases: Vec<Release>,
    /// The `latest` dist-tag: what `npm install PKG` picks.
    pub latest: Option<String>,
}

/// `npm view PKG versions time dist-tags --json`:
/// `{"versions": [...] | "x", "time": {v: date}, "dist-tags": {"latest": v}}`.
pub fn parse_npm(json: &str) -> Result<NpmView, RegistryError> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    #[derive(Deserialize)]
    struct View {
        versions: Option<OneOrMany>,
        #[serde(default)]
        time: std::collections::BTreeMap<String, String>,
        #[serde(default, rename = "dist-tags")]
        tags: std::collections::BTreeMap<String, String>,
    }
    let mut v: View = serde_json::from_str(json).map_err(bad_json("npm view output"))?;
    // `time` also keeps unpublished versions; `versions` is what can be installed.
    let versions = match v.versions {
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(l)) => l,
        None => v.time.keys().cloned().collect(),
    };
    Ok(NpmView {
        releases: sorted(
            versions
                .iter()
                .map(|ver| release(ver, v.time.get(ver).cloned(), false))
                .collect(),
        ),
        latest: v.tags.remove("latest"),
    })
}

/// PyPI's `https://pypi.org/pypi/PKG/json`: a release's date is its first file's upload
/// time; releases without files cannot be installed and are left out.
pub fn parse_pypi(json: &str) -> Result<Vec<Release>, RegistryError> {
    #[derive(Deserialize)]
    struct File {
        upload_time_iso_8601: Option<String>,
        #[serde(default)]
        yanked: bool,
    }
    #[derive(Deserialize)]
    struct Project {
        releases: std::collections::BTreeMap<String, Vec<File>>,
    }
    let p: Project = serde_json::from_str(json).map_err(bad_json("PyPI JSON"))?;
    Ok(sorted(
        p.releases
            .iter()
            .filter(|(_, files)| !files.is_empty())
            .map(|(ver, files)| {
                let date = files
                    .iter()
                    .filter_map(|f| f.upload_time_iso_8601.clone())
                    .min();
                release(ver, date, files.iter().all(|f| f.yanked))
            })
            .collect(),
    ))
}

/// The crates.io sparse index file of a crate: one JSON object per line, with `pubtime`.
pub fn parse_crates_index(text: &str) -> Result<Vec<Release>, RegistryError> {
    #[derive(Deserialize)]
    struct IndexLine {
        vers: String,
        #[serde(default)]
        yanked: bool,
        pubtime: Option<String>,
    }
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let e: IndexLine = serde_json::from_str(line)
            .map_err(bad_json(format!("crates.io index line {}", i + 1)))?;
        out.push(release(&e.vers, e.pubtime, e.yanked));
    }
    Ok(sorted(out))
}

/// `go list -m -json MOD@v1 MOD@v2 ...`: concatenated JSON objects with `Version`, `Time`.
pub fn parse_go_list(text: &str) -> Result<Vec<Release>, RegistryError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Module {
        version: Option<String>,
        time: Option<String>,
        #[serde(default)]
        versions: Vec<String>,
        error: Option<serde_json::Value>,
    }
    let mut out = Vec::new();
    for m in serde_json::Deserializer::from_str(text).into_iter::<Module>() {
        let m = m.map_err(bad_json("go list output"))?;
        if m.error.is_some() {
            continue;
        }
        if let Some(v) = m.version {
            out.push(release(&v, m.time, false));
        }
        out.extend(m.versions.iter().map(|v| release(v, None, false)));
    }
    Ok(sorted(out))
}

/// Maven's `maven-metadata.xml`: every `<version>` inside `<versioning><versions>`.
pub fn parse_maven_metadata(xml: &str) -> Result<Vec<Release>, RegistryError> {
    let doc = roxmltree::Document::parse(xml)?;
    let versions = doc
        .descendants()
        .find(|n| n.has_tag_name("versions"))
        .ok_or(RegistryError::NoVersions)?;
    let list = versions
        .children()
        .filter(|n| n.has_tag_name("version"))
        .filter_map(|n| n.text())
        .map(|v| release(v.trim(), None, false))
        .collect();
    Ok(sorted(list))
}

/// The crates.io sparse index path of a crate name (`rmcp` → `rm/cp/rmcp`).
pub fn crates_index_path(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    match n.len() {
        1 => format!("1/{n}"),
        2 => format!("2/{n}"),
        3 => format!("3/{}/{n}", &n[..1]),
        _ => format!("{}/{}/{n}", &n[..2], &n[2..4]),
    }
}

/// Picks from a sorted list: exact versions are found whatever they are; sweeps and
/// `latest` leave out pre-releases and yanked releases.
pub fn select(list: &[Release], sel: &VersionSel) -> Vec<Release> {
    let stable =
        |r: &&Release| !r.yanked && Version::parse(&r.version).is_ok_and(|v| !v.is_prerelease());
    match sel {
        VersionSel::Exact(want) => {
            let want = Version::parse(want).ok();
            list.iter()
                .filter(|r| Version::parse(&r.version).ok() == want)
                .take(1)
                .cloned()
                .collect()
        }
        VersionSel::Latest => list
            .iter()
            .rev()
            .find(stable)
            .cloned()
            .into_iter()
            .collect(),
        VersionSel::All => list.iter().filter(stable).cloned().collect(),
        VersionSel::Range { from, to } => {
            let from = from.as_deref().and_then(|f| Version::parse(f).ok());
            let to = to.as_deref().and_then(|t| Version::parse(t).ok());
            list.iter()
                .filter(stable)
                .filter(|r| {
                    let v = Version::parse(&r.version).ok();
                    from.as_ref().is_none_or(|f| v.as_ref() >= Some(f))
                        && to.as_ref().is_none_or(|t| v.as_ref() <= Some(t))
                })
                .cloned()
                .collect()
        }
    }
}

// ---- fetching -----------------------------------------------------------------------------

fn registry_err(kit: &Kit, source: &str, reason: impl Into<RegistryError>) -> KitError {
    KitError::Registry {
        line: kit.id.clone(),
        via: source.to_string(),
        reason: reason.into(),
    }
}

fn agent() -> ureq::Agent {
    // The platform verifier reads the system's CA store, so a TLS-intercepting proxy whose
    // CA the machine trusts works as it does for npm, pip and cargo.
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_global(Some(Duration::from_secs(60)))
        .user_agent("mcp-shutdown-conformance kits (https://github.com/modelcontextprotocol)")
        .build()
        .new_agent()
}

fn http_get(kit: &Kit, url: &str) -> Result<String, KitError> {
    agent()
        .get(url)
        .call()
        .map_err(|e| registry_err(kit, url, Box::new(e)))?
        .body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| registry_err(kit, url, Box::new(e)))
}

/// A registry's CLI, its output captured (in a group the interrupt kills).
fn run_listing(program: &str, args: &[String]) -> Result<String, RegistryError> {
    let dir = std::env::temp_dir();
    // Outside any module, so `go list` never reads or edits a go.mod of the caller.
    let env = [
        ("GOFLAGS", "-mod=mod"),
        ("GO111MODULE", "on"),
        ("NO_UPDATE_NOTIFIER", "1"),
    ];
    let out = os::run_captured(program.as_ref(), args, &dir, env, os::Stderr::Separate)
        .map_err(RegistryError::Spawn)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        return Err(RegistryError::Exited {
            tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What a registry CLI prints, its failure as the kit's registry error.
fn cli_output(kit: &Kit, program: &str, args: &[String]) -> Result<String, KitError> {
    run_listing(program, args)
        .map_err(|e| registry_err(kit, &format!("{program} {}", args.join(" ")), e))
}

/// An npm package's releases and its `latest` tag: the one npm lister, for `--sdk` lines
/// and for the hosts `host measure` installs.
pub fn npm_view(package: &str) -> Result<NpmView, RegistryError> {
    let args: Vec<String> = ["view", package, "versions", "time", "dist-tags", "--json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    parse_npm(&run_listing("npm", &args)?)
}

/// Every published version of the kit's package, sorted, with release dates.
pub fn fetch_all(kit: &Kit) -> Result<Vec<Release>, KitError> {
    let pkg = &kit.package;
    match kit.ecosystem {
        Ecosystem::Npm => npm_view(pkg)
            .map(|v| v.releases)
            .map_err(|e| registry_err(kit, &format!("npm view {pkg}"), e)),
        Ecosystem::Pypi => {
            let url = format!("https://pypi.org/pypi/{pkg}/json");
            parse_pypi(&http_get(kit, &url)?).map_err(|e| registry_err(kit, &url, e))
        }
        Ecosystem::Crates => {
            let url = format!("https://index.crates.io/{}", crates_index_path(pkg));
            parse_crates_index(&http_get(kit, &url)?).map_err(|e| registry_err(kit, &url, e))
        }
        Ecosystem::Go => {
            let args = vec![
                "list".into(),
                "-m".into(),
                "-versions".into(),
                "-json".into(),
                pkg.clone(),
            ];
            let listed = parse_go_list(&cli_output(kit, "go", &args)?)
                .map_err(|e| registry_err(kit, "go list -m -versions", e))?;
            go_times(
                kit,
                &listed.iter().map(|r| r.version.clone()).collect::<Vec<_>>(),
            )
        }
        Ecosystem::Maven => {
            let url = format!("{}/maven-metadata.xml", maven_base(pkg));
            parse_maven_metadata(&http_get(kit, &url)?).map_err(|e| registry_err(kit, &url, e))
        }
    }
}

/// Release times of Go module versions, one `go list` for all of them.
fn go_times(kit: &Kit, versions: &[String]) -> Result<Vec<Release>, KitError> {
    if versions.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["list".to_string(), "-m".into(), "-json".into()];
    args.extend(versions.iter().map(|v| format!("{}@v{v}", kit.package)));
    parse_go_list(&cli_output(kit, "go", &args)?)
        .map_err(|e| registry_err(kit, "go list -m -json", e))
}

fn maven_base(package: &str) -> String {
    let (group, artifact) = package.split_once(':').unwrap_or((package, package));
    format!(
        "https://repo1.maven.org/maven2/{}/{artifact}",
        group.replace('.', "/")
    )
}

/// A Maven release's date: the `Last-Modified` of its POM, when the repository sends one.
fn maven_date(pkg: &str, version: &str) -> Option<String> {
    let (_, artifact) = pkg.split_once(':')?;
    let url = format!("{}/{version}/{artifact}-{version}.pom", maven_base(pkg));
    let resp = agent().head(&url).call().ok()?;
    let lm = resp.headers().get("last-modified")?.to_str().ok()?;
    super::date::from_http(lm)
}

/// The releases `sel` names, with dates. An exact version the listing lacks is looked up
/// directly where the registry allows (the Go proxy's `@v/list` and Maven mirrors can be
/// incomplete); one that does not exist is an error.
pub fn versions(kit: &Kit, sel: &VersionSel) -> Result<Vec<Release>, KitError> {
    let all = fetch_all(kit)?;
    let mut picked = select(&all, sel);
    if let (VersionSel::Exact(want), true) = (sel, picked.is_empty()) {
        let direct = match kit.ecosystem {
            Ecosystem::Go => go_times(
                kit,
                std::slice::from_ref(&want.trim_start_matches('v').to_string()),
            )
            .unwrap_or_default(),
            Ecosystem::Maven => {
                let (_, artifact) = kit.package.split_once(':').unwrap_or_default();
                let url = format!("{}/{want}/{artifact}-{want}.pom", maven_base(&kit.package));
                match agent().head(&url).call() {
                    Ok(_) => vec![release(want, None, false)],
                    Err(_) => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        picked = direct;
        if picked.is_empty() {
            let near: Vec<String> = all
                .iter()
                .rev()
                .take(5)
                .map(|r| r.version.clone())
                .collect();
            return Err(KitError::NoVersion {
                line: kit.id.clone(),
                version: want.clone(),
                newest: near.join(", "),
            });
        }
    }
    if kit.ecosystem == Ecosystem::Maven {
        for r in &mut picked {
            r.date = maven_date(&kit.package, &r.version);
        }
    }
    Ok(picked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vs(list: &[Release]) -> Vec<&str> {
        list.iter().map(|r| r.version.as_str()).collect()
    }

    #[test]
    fn npm_view_with_dates() {
        let json = r#"{"versions":["1.0.0","1.10.0","1.9.0","1.23.0-beta.0"],
            "time":{"created":"2024-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z",
                    "1.0.0":"2024-11-25T14:27:34.367Z","1.9.0":"2025-04-01T00:00:00Z",
                    "1.10.0":"2025-04-17T00:00:00Z","0.0.1":"2023-01-01T00:00:00Z"}}"#;
        let view = parse_npm(json).unwrap();
        let l = &view.releases;
        assert_eq!(vs(l), ["1.0.0", "1.9.0", "1.10.0", "1.23.0-beta.0"]);
        assert_eq!(l[0].date.as_deref(), Some("2024-11-25T14:27:34.367Z"));
        assert_eq!(l[3].date, None);
        assert_eq!(view.latest, None);
        let one = parse_npm(
            r#"{"versions":"2.0.0","time":{"2.0.0":"2026-07-29T09:15:09Z"},
                "dist-tags":{"latest":"2.0.0","next":"2.1.0-rc.1"}}"#,
        )
        .unwrap();
        assert_eq!(vs(&one.releases), ["2.0.0"]);
        assert_eq!(one.latest.as_deref(), Some("2.0.0"));
    }

    #[test]
    fn pypi_json_takes_the_first_upload_and_skips_empty_releases() {
        let json = r#"{"releases":{
            "1.0.0":[{"upload_time_iso_8601":"2024-11-25T14:27:40Z","yanked":false},
                     {"upload_time_iso_8601":"2024-11-25T14:27:34Z","yanked":false}],
            "1.1.0":[],
            "2.0.0a1":[{"upload_time_iso_8601":"2026-06-11T09:55:46Z","yanked":false}],
            "1.2.0":[{"upload_time_iso_8601":"2025-01-03T16:23:36Z","yanked":true}]}}"#;
        let l = parse_pypi(json).unwrap();
        assert_eq!(vs(&l), ["1.0.0", "1.2.0", "2.0.0a1"]);
        assert_eq!(l[0].date.as_deref(), Some("2024-11-25T14:27:34Z"));
        assert!(l[1].yanked);
    }

    #[test]
    fn crates_index_lines() {
        let text = "{\"name\":\"rmcp\",\"vers\":\"0.1.0\",\"yanked\":true,\"pubtime\":\"2025-03-16T09:32:51Z\"}\n\
                    {\"name\":\"rmcp\",\"vers\":\"0.1.1\",\"yanked\":false,\"pubtime\":\"2025-03-16T09:50:44Z\"}\n";
        let l = parse_crates_index(text).unwrap();
        assert_eq!(vs(&l), ["0.1.0", "0.1.1"]);
        assert!(l[0].yanked);
        assert_eq!(crates_index_path("rmcp"), "rm/cp/rmcp");
        assert_eq!(crates_index_path("abc"), "3/a/abc");
        assert_eq!(crates_index_path("cc"), "2/cc");
    }

    #[test]
    fn go_list_streams() {
        let text = r#"{"Path":"m","Version":"v1.8.0","Versions":["v1.1.0","v1.8.0-pre.1","v1.8.0"]}
{
	"Path": "m",
	"Version": "v1.1.0",
	"Time": "2025-10-29T14:08:40Z"
}"#;
        let l = parse_go_list(text).unwrap();
        assert_eq!(vs(&l), ["1.1.0", "1.8.0-pre.1", "1.8.0"]);
        assert_eq!(l[0].date.as_deref(), Some("2025-10-29T14:08:40Z"));
    }

    #[test]
    fn maven_metadata_versions() {
        let xml = "<metadata><versioning><latest>2.2.0</latest><versions>\n<version>0.7.0</version>\n<version>2.0.0-M2</version><version>2.0.0</version><version>0.10.0</version></versions></versioning></metadata>";
        assert_eq!(
            vs(&parse_maven_metadata(xml).unwrap()),
            ["0.7.0", "0.10.0", "2.0.0-M2", "2.0.0"]
        );
        assert!(parse_maven_metadata("<metadata/>").is_err());
        assert!(parse_maven_metadata("<metadata><versions>").is_err());
    }

    #[test]
    fn selection_leaves_prereleases_out_of_sweeps() {
        let l: Vec<Release> = ["1.0.0", "1.10.0", "1.23.0-beta.0", "1.23.0", "1.32.2"]
            .iter()
            .map(|v| release(v, None, false))
            .collect();
        let mut l = l;
        l.push(release("1.24.0", None, true));
        let l = sorted(l);
        assert_eq!(
            vs(&select(&l, &VersionSel::All)),
            ["1.0.0", "1.10.0", "1.23.0", "1.32.2"]
        );
        assert_eq!(vs(&select(&l, &VersionSel::Latest)), ["1.32.2"]);
        assert_eq!(
            vs(&select(&l, &VersionSel::Exact("1.23.0-beta.0".into()))),
            ["1.23.0-beta.0"]
        );
        assert_eq!(
            vs(&select(&l, &VersionSel::Exact("1.24.0".into()))),
            ["1.24.0"]
        );
        assert!(select(&l, &VersionSel::Exact("9.9.9".into())).is_empty());
        let range = VersionSel::Range {
            from: Some("1.10.0".into()),
            to: Some("1.23.0".into()),
        };
        assert_eq!(vs(&select(&l, &range)), ["1.10.0", "1.23.0"]);
        let open = VersionSel::Range {
            from: None,
            to: Some("1.9.0".into()),
        };
        assert_eq!(vs(&select(&l, &open)), ["1.0.0"]);
    }
}
