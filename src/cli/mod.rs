//! The command line: `run`, `check`, `report`, `diff`, `rules`, and the hidden helper roles.
//! [`args`] is the grammar, [`plan`] turns it into a run plan (pure), [`run`] carries it out.

pub mod args;
mod bisect;
mod book;
mod census;
mod census_site;
pub mod host;
pub mod plan;
mod run;
mod sdk;
mod watch;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use clap::Parser;

use crate::config::manifest::{self, Manifest};
use crate::config::profiles::Profiles;
use crate::error::Error;
use crate::exit_codes;
use crate::harness::locate;
use crate::model::{Report, Untested};
use crate::render::{self, badge, conformance, diff, merge};
use crate::rules::Catalogue;
use crate::supervisor::client_stub;
use args::{Cli, Cmd, ReportCmd};

/// Runs the command line; the binary's `main` prints the error and maps it to an exit code.
pub fn run() -> Result<ExitCode, Error> {
    let cli = Cli::parse();
    let role = matches!(
        cli.command,
        Cmd::Case | Cmd::Client { .. } | Cmd::Recorder { .. }
    );
    if role {
        // The supervisor and the stand-in client handle their own signals.
        return dispatch(cli);
    }
    crate::os::interrupt::install();
    let result = dispatch(cli);
    // Whatever the interrupted command returned (an install killed under it fails), the run
    // ends as interrupted: `128 + signal`.
    match crate::os::interrupt::signal() {
        Some(sig) => Ok(ExitCode::from(crate::os::interrupt::announce(sig))),
        None => result,
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Cmd::Case => {
            let helper = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-shutdown"));
            Ok(role(crate::supervisor::main(&helper)))
        }
        Cmd::Client { mode, tty } => Ok(role(client_stub::main(mode, tty.as_deref()))),
        Cmd::Recorder { args } => Ok(role(crate::os::recorder::main(&args))),
        Cmd::Host { action } => host::run(action),
        Cmd::Sdk { action } => sdk::list(action, &locate::kits_dir()?),
        Cmd::Rules { spec } => rules(spec.as_deref()),
        Cmd::Report { action } => report(action),
        Cmd::Diff {
            old,
            new,
            before,
            after,
        } => diff_reports(&old, new.as_deref(), before.as_deref(), after.as_deref()),
        Cmd::Run {
            sdks,
            shapes,
            bisect: true,
            checkout,
            opts,
            ..
        } => bisect_releases(&sdks, checkout.as_deref(), &shapes, &opts),
        Cmd::Run {
            manifests,
            servers,
            sdks,
            shapes,
            opts,
            ..
        } => run_suite(&opts, manifests, &servers, &sdks, &shapes),
        Cmd::Census(args) => census::run(*args),
        Cmd::Check {
            opts,
            real_host: Some(host),
            paths,
            command,
            ..
        } => host::real_host(&opts, &host, &paths, &command),
        Cmd::Check {
            opts,
            command,
            watch: true,
            watch_paths,
            name,
            ..
        } => check_watch(&opts, &command, name.as_deref(), watch_paths),
        Cmd::Check {
            opts,
            command,
            name,
            ..
        } => check_once(&opts, &command, name.as_deref()),
    }
}

/// `check -- CMD`: the one server, run once, named by its handshake unless `--name` says.
fn check_once(
    opts: &args::RunOpts,
    command: &[String],
    name: Option<&str>,
) -> Result<ExitCode, Error> {
    let server = adhoc(command, name);
    execute(opts, &[server], None, Vec::new(), None, name.is_none())
}

/// A hidden role's exit code (`__case`, `__client`, `__recorder`), as the role returned it.
fn role(code: i32) -> ExitCode {
    ExitCode::from(code as u8)
}

/// `run --sdk LINE@A..B --bisect`: the first release, then commit, that changed.
fn bisect_releases(
    sdks: &[String],
    checkout: Option<&Path>,
    shapes: &[String],
    opts: &args::RunOpts,
) -> Result<ExitCode, Error> {
    let [spec] = sdks else {
        return Err(Error::Usage(
            "--bisect takes exactly one --sdk LINE@A..B".into(),
        ));
    };
    let (kits, cache) = (locate::kits_dir()?, locate::kit_cache()?);
    bisect::run(spec, checkout, shapes, opts, &kits, &cache)
}

/// `diff OLD.json [NEW.json] [--before B] [--after A]`: what got fixed or broken; exit 1 when
/// something broke.
fn diff_reports(
    old: &Path,
    new: Option<&Path>,
    before: Option<&str>,
    after: Option<&str>,
) -> Result<ExitCode, Error> {
    let a = load_report(old)?;
    let b = match new {
        Some(p) => Some(load_report(p)?),
        None if after.is_none() => {
            return Err(Error::Usage(
                "diff: give NEW.json, or --after LINE@LABEL to compare two builds of OLD.json"
                    .into(),
            ))
        }
        None => None,
    };
    let name = |p: &Path| p.display().to_string();
    let (na, nb) = (name(old), new.map_or_else(|| name(old), name));
    let d = diff::compare(
        diff::Side {
            report: &a,
            source: before,
            name: &na,
        },
        diff::Side {
            report: b.as_ref().unwrap_or(&a),
            source: after,
            name: &nb,
        },
    )
    .map_err(|e| Error::Usage(format!("diff: {e}")))?;
    print!("{}", diff::render_compare(&d));
    let broke = d.rows.iter().any(|r| r.change == diff::Change::Broken);
    Ok(ExitCode::from(if broke {
        exit_codes::CONFORMANCE_FAILURE
    } else {
        exit_codes::SUCCESS
    }))
}

/// `run`: the manifests given (else the bundled suite and its baseline) and the `--sdk`
/// servers, narrowed by `--shape` and `--server`, then run as one plan.
fn run_suite(
    opts: &args::RunOpts,
    manifests: Vec<PathBuf>,
    servers: &[String],
    sdks: &[String],
    shapes: &[String],
) -> Result<ExitCode, Error> {
    let bundled = manifests.is_empty() && sdks.is_empty();
    let paths = if bundled {
        vec![locate::bundled_suite()?]
    } else {
        manifests
    };
    let mut loaded = manifest::load_all(&paths)?;
    let sdk = if sdks.is_empty() {
        sdk::SdkServers::default()
    } else {
        sdk::load(sdks, &locate::kits_dir()?, &locate::kit_cache()?)?
    };
    loaded.extend(sdk.manifests);
    let chosen = select(by_shape(loaded, shapes)?, servers)?;
    let default_baseline = if bundled {
        locate::bundled_baseline()?
    } else {
        None
    };
    let suite = (bundled || !sdks.is_empty())
        .then(locate::suite)
        .transpose()?;
    execute(opts, &chosen, default_baseline, sdk.untested, suite, false)
}

/// `check --watch -- CMD`: one plan, run again on every change under `watch_paths`.
fn check_watch(
    opts: &args::RunOpts,
    command: &[String],
    name: Option<&str>,
    watch_paths: Vec<PathBuf>,
) -> Result<ExitCode, Error> {
    let mut plan = plan::plan(
        opts,
        &[adhoc(command, name)],
        None,
        &Catalogue::bundled(),
        &Profiles::bundled(),
    )?;
    plan.name_by_handshake = name.is_none();
    watch::watch(plan, watch_paths)
}

/// `check`'s server: its command, called `name` (else after its command until the run names
/// it by its handshake).
fn adhoc(command: &[String], name: Option<&str>) -> Manifest {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut server = manifest::adhoc(&command[0], &command[1..], &cwd);
    if let Some(n) = name {
        server.name = n.to_string();
    }
    server
}

fn execute(
    opts: &args::RunOpts,
    servers: &[Manifest],
    default_baseline: Option<PathBuf>,
    not_testable: Vec<Untested>,
    suite: Option<&locate::Suite>,
    name_by_handshake: bool,
) -> Result<ExitCode, Error> {
    let mut plan = plan::plan(
        opts,
        servers,
        default_baseline,
        &Catalogue::bundled(),
        &Profiles::bundled(),
    )?;
    plan.not_testable = not_testable;
    plan.name_by_handshake = name_by_handshake;
    let (source, path) = match suite {
        Some(s) => (Some(s.source), Some(s.absolute())),
        None => (None, None),
    };
    run::execute_with(plan, |r| {
        r.host.suite_source = source;
        r.host.suite_path = path;
        Ok(())
    })
}

/// The servers of the shapes named by `--shape` (all when none is named).
fn by_shape(loaded: Vec<Manifest>, shapes: &[String]) -> Result<Vec<Manifest>, Error> {
    let has = |m: &Manifest, s: &str| m.about.shape.as_deref() == Some(s);
    if let Some(s) = shapes.iter().find(|s| !loaded.iter().any(|m| has(m, s))) {
        let mut known: Vec<&str> = loaded
            .iter()
            .filter_map(|m| m.about.shape.as_deref())
            .collect();
        known.sort_unstable();
        known.dedup();
        return Err(Error::Usage(format!(
            "no server has shape `{s}` (shapes: {})",
            known.join(", ")
        )));
    }
    Ok(loaded
        .into_iter()
        .filter(|m| shapes.is_empty() || shapes.iter().any(|s| has(m, s)))
        .collect())
}

/// The servers named by `--server` (all when none is named).
fn select(loaded: Vec<Manifest>, names: &[String]) -> Result<Vec<Manifest>, Error> {
    if let Some(s) = names.iter().find(|s| !loaded.iter().any(|m| &m.name == *s)) {
        let known: Vec<&str> = loaded.iter().map(|m| m.name.as_str()).collect();
        return Err(Error::Usage(format!(
            "unknown server `{s}` (known: {})",
            known.join(", ")
        )));
    }
    Ok(loaded
        .into_iter()
        .filter(|m| names.is_empty() || names.contains(&m.name))
        .collect())
}

fn load_report(path: &Path) -> Result<Report, Error> {
    let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
    let mut report: Report = serde_json::from_str(&text).map_err(|source| Error::NotAReport {
        path: path.to_path_buf(),
        source,
    })?;
    // Judged before the harness signalled the server behind its launcher: read the same way.
    report.attribute_to_launchers();
    Ok(report)
}

fn report(action: ReportCmd) -> Result<ExitCode, Error> {
    match action {
        ReportCmd::Render {
            from,
            format,
            pruned,
            out,
            at,
            diff_against,
        } => render_saved(&from, format, pruned, out, at, diff_against)?,
        ReportCmd::Site {
            from,
            out,
            site_url,
            history,
        } => census_site::site_from(&from, &out, site_url.as_deref(), history.as_deref())?,
        ReportCmd::Baseline { from, to } => {
            let b = crate::config::baseline::Baseline::load(&from)?;
            std::fs::write(&to, b.to_file_text(&to)).map_err(Error::io(&to))?;
        }
        ReportCmd::Merge { parts } => {
            let reports: Result<Vec<_>, _> = parts.iter().map(|p| load_report(p)).collect();
            println!("{}", merge::merge(reports?)?.to_json());
        }
        ReportCmd::Badges { from, out, hosts } => write_badges(&load_report(&from)?, &out, hosts)?,
        ReportCmd::Book { from, book } => book::write(&from, &book)?,
    }
    Ok(ExitCode::from(exit_codes::SUCCESS))
}

/// `report render`: a saved report in another format, to `--output` or the terminal.
fn render_saved(
    from: &Path,
    format: render::Format,
    pruned: bool,
    mut out: Option<PathBuf>,
    at: Option<render::github::Location>,
    diff_against: Option<PathBuf>,
) -> Result<(), Error> {
    let r = load_report(from)?;
    if at.is_some() && !matches!(format, render::Format::Github | render::Format::Sarif) {
        return Err(Error::Usage("--at is for --format github or sarif".into()));
    }
    let text = if let Some(old) = diff_against {
        let after = changes_since(&r, &old, format)?;
        format!("{}{after}", render::render(&r, format))
    } else if format == render::Format::Github {
        render::github::render(&r, at.as_ref())
    } else if let (render::Format::Sarif, Some(at)) = (format, &at) {
        format!("{}\n", render::sarif::render(&r, Some(at)))
    } else if format == render::Format::Conformance {
        let dir = out
            .take()
            .ok_or_else(|| Error::Usage("--format conformance needs --output DIR".into()))?;
        // A saved report has no wall clock: its file's time is when it was made.
        let made = std::fs::metadata(from).and_then(|m| m.modified());
        write_conformance(&r, &dir, made.unwrap_or_else(|_| SystemTime::now()))?;
        render::render(&r, format)
    } else if pruned {
        diff::render_pruned(&r)
    } else {
        render::render(&r, format)
    };
    write_or_print(out.as_deref(), &text)
}

/// A rendered format goes to `--output` when it is given, else to the terminal.
fn write_or_print(out: Option<&Path>, text: &str) -> Result<(), Error> {
    match out {
        Some(file) => {
            if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
            }
            std::fs::write(file, text).map_err(Error::io(file))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// `report badges`: an SVG and a shields endpoint per server (or per server's host view).
fn write_badges(r: &Report, out: &Path, hosts: bool) -> Result<(), Error> {
    std::fs::create_dir_all(out).map_err(Error::io(out))?;
    let scope = if hosts {
        badge::Scope::Hosts
    } else {
        badge::Scope::All
    };
    for b in badge::badges_in(r, scope) {
        // Not `with_extension`: server names contain dots ("node-1.30.0-timer").
        let stem = match scope {
            badge::Scope::All => b.file_stem(),
            badge::Scope::Hosts => format!("{}-hosts", b.file_stem()),
        };
        let svg = out.join(format!("{stem}.svg"));
        std::fs::write(&svg, b.svg()).map_err(Error::io(&svg))?;
        let json = out.join(format!("{stem}.json"));
        std::fs::write(&json, b.endpoint_json()).map_err(Error::io(&json))?;
        println!("{}: {} ({})", b.server, b.message, b.color.name());
    }
    Ok(())
}

/// What got better or worse in `report` since the saved report `old`, in `format` (text or
/// Markdown), for `report render --diff-against`.
fn changes_since(report: &Report, old: &Path, format: render::Format) -> Result<String, Error> {
    let changes = render::changes::compare(&load_report(old)?, report);
    let since = old.display().to_string();
    match format {
        render::Format::Text => Ok(changes.text(&since)),
        render::Format::Markdown => Ok(format!("\n{}", changes.markdown(&since))),
        _ => Err(Error::Usage(
            "--diff-against renders with --format text or markdown".into(),
        )),
    }
}

/// Writes the official conformance suite's layout under `dir` (created if missing), every
/// check stamped with `made`.
fn write_conformance(report: &Report, dir: &Path, made: SystemTime) -> Result<(), Error> {
    let stamp = conformance::iso8601(made);
    for (rel, text) in conformance::files(report, &stamp) {
        let path = dir.join(rel);
        let parent = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(Error::io(parent))?;
        std::fs::write(&path, text).map_err(Error::io(&path))?;
    }
    Ok(())
}

fn rules(spec: Option<&str>) -> Result<ExitCode, Error> {
    let cat = Catalogue::bundled();
    let rev = match spec {
        Some(s) => cat.revision(s)?,
        None => cat.default_revision,
    };
    println!("rules for spec {rev}:\n");
    for r in &cat.rules {
        println!("{:<32} {:<6} {}", r.id, r.level(rev).to_string(), r.title);
        let endings: Vec<&str> = r.scenarios.iter().map(|e| e.as_str()).collect();
        println!(
            "{:<32} scenarios: {}; basis: {:?}",
            "",
            endings.join(", "),
            r.basis(rev)
        );
        for x in r.references_for(rev) {
            println!("{:<32} \"{}\"", "", x.quote);
            println!("{:<32} {}", "", x.url_for(rev));
        }
        println!();
    }
    Ok(ExitCode::from(exit_codes::SUCCESS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shaped(name: &str, shape: Option<&str>) -> Manifest {
        let mut m = manifest::adhoc("true", &[], Path::new("/tmp"));
        m.name = name.into();
        m.about.shape = shape.map(str::to_string);
        m
    }

    #[test]
    fn shapes_filter_and_unknown_ones_list_the_known() {
        let all = || {
            vec![
                shaped("a-timer", Some("timer")),
                shaped("a-plain", Some("plain")),
                shaped("adhoc", None),
            ]
        };
        let names = |v: Vec<Manifest>| v.into_iter().map(|m| m.name).collect::<Vec<_>>();
        assert_eq!(names(by_shape(all(), &[]).unwrap()).len(), 3);
        assert_eq!(
            names(by_shape(all(), &["timer".into()]).unwrap()),
            ["a-timer"]
        );
        let e = by_shape(all(), &["timre".into()]).unwrap_err().to_string();
        assert!(e.contains("`timre`") && e.contains("plain, timer"), "{e}");
    }
}
