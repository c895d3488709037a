//! The command line: `run`, `check`, `rules`, and the hidden helper roles. Exit codes:
//! 0 no unexpected failure, 1 a conformance failure, 2 a usage or harness error,
//! 130 interrupted.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::budgets::BudgetOverrides;
use crate::manifest::{self, Manifest};
use crate::render::{self, Format};
use crate::report::Report;
use crate::rules::{Catalogue, Status};
use crate::runner::{bundled_suite, Case, Harness};
use crate::scenario::SCENARIOS;

#[derive(Parser, Debug)]
#[command(
    name = "mcp-shutdown",
    version,
    about = "How do MCP stdio servers behave when their session ends?"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run the scenarios against servers named in manifests (default: the bundled suite).
    Run {
        /// A manifest file or a directory of them; repeatable.
        #[arg(long = "manifest", value_name = "FILE|DIR")]
        manifests: Vec<PathBuf>,
        /// Only these servers (by name); repeatable.
        #[arg(long = "server", value_name = "NAME")]
        servers: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Run the scenarios against one command: `mcp-shutdown check -- node server.js`.
    Check {
        #[command(flatten)]
        opts: RunOpts,
        /// The server command and its arguments.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Re-render, merge or badge saved JSON reports without re-running anything.
    Report {
        #[command(subcommand)]
        action: ReportCmd,
    },
    /// Compare two JSON reports: fixed, broken, new, removed (Markdown, for a release PR).
    /// Exit code 1 when something broke.
    Diff {
        #[arg(value_name = "OLD.json")]
        old: PathBuf,
        #[arg(value_name = "NEW.json")]
        new: PathBuf,
    },
    /// Print the rule catalogue with levels for a spec revision.
    Rules {
        #[arg(long, value_name = "REV")]
        spec: Option<String>,
    },
    #[command(name = "__case", hide = true)]
    Case,
    #[command(name = "__client", hide = true)]
    Client { stderr: PathBuf, mode: String },
}

#[derive(Subcommand, Debug)]
enum ReportCmd {
    /// Render a JSON report in another format.
    Render {
        #[arg(long, value_name = "REPORT.json")]
        from: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Only the endings where servers of the same shape disagree (text).
        #[arg(long)]
        pruned: bool,
    },
    /// Join the JSON reports of sharded runs into one (printed as JSON).
    Merge {
        #[arg(required = true, value_name = "REPORT.json")]
        parts: Vec<PathBuf>,
    },
    /// Write one SVG badge and one shields.io endpoint JSON per server into a directory.
    Badges {
        #[arg(long, value_name = "REPORT.json")]
        from: PathBuf,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum FailOn {
    /// Fail on missed MUSTs only.
    Must,
    /// Fail on missed MUSTs and SHOULDs.
    Should,
}

#[derive(Args, Debug)]
struct RunOpts {
    /// Only these scenarios; repeatable. Default: the seven endings; `all` adds every
    /// client profile (`close:<profile>`).
    #[arg(long = "scenario", value_name = "ID")]
    scenarios: Vec<String>,
    /// Only this one case, `SERVER/SCENARIO` (e.g. `node-1.30.0-timer/exit`); repeatable.
    /// Replaces the servers-by-scenarios matrix with exactly the cases named.
    #[arg(
        long = "case",
        value_name = "SERVER/SCENARIO",
        conflicts_with = "scenarios"
    )]
    cases: Vec<String>,
    /// Spec revision whose rule levels score the run.
    #[arg(long, value_name = "REV")]
    spec: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Text output shows only the endings where servers of the same shape disagree.
    #[arg(long)]
    pruned: bool,
    /// Also write the report to this file (format from its extension: .json .xml .md .html
    /// .txt); repeatable.
    #[arg(long = "output", value_name = "FILE")]
    outputs: Vec<PathBuf>,
    /// Only cases whose index modulo M is K (`K/M`, 1-based K): a shard of a large matrix.
    #[arg(long, value_name = "K/M")]
    partition: Option<String>,
    /// Expected failures (strict both ways). Default for the bundled suite:
    /// conformance/expected-failures.toml.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Ignore any baseline.
    #[arg(long, conflicts_with = "baseline")]
    no_baseline: bool,
    /// Write the baseline that makes this run pass, then exit as usual.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Which missed level makes the exit code 1.
    #[arg(long, value_enum, default_value = "should")]
    fail_on: FailOn,
    /// Cases run at once.
    #[arg(long, default_value_t = 16)]
    jobs: usize,
    /// Override the prompt budget (ms) for every server.
    #[arg(long, value_name = "MS")]
    prompt_ms: Option<u64>,
    /// Override the grace period (ms) of the close ladder.
    #[arg(long, value_name = "MS")]
    grace_ms: Option<u64>,
    /// Override how long orphans are watched (ms).
    #[arg(long, value_name = "MS")]
    observe_ms: Option<u64>,
    /// Override the handshake timeout (ms).
    #[arg(long, value_name = "MS")]
    handshake_ms: Option<u64>,
}

/// Runs the command line; the binary's `main` only maps this to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Cmd::Case => {
            let helper = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-shutdown"));
            ExitCode::from(crate::case::supervisor_main(&helper) as u8)
        }
        Cmd::Client { stderr, mode } => {
            ExitCode::from(crate::case::client_main(&stderr, &mode) as u8)
        }
        Cmd::Rules { spec } => rules(spec),
        Cmd::Report { action } => report_cmd(action),
        Cmd::Diff { old, new } => match (load_report(&old), load_report(&new)) {
            (Ok(a), Ok(b)) => {
                let rows = crate::diff::diff(&a, &b);
                print!("{}", crate::diff::render_diff(&rows));
                if rows.iter().any(|r| r.change == crate::diff::Change::Broken) {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                }
            }
            (Err(e), _) | (_, Err(e)) => usage_error(&e),
        },
        Cmd::Run {
            manifests,
            servers,
            opts,
        } => {
            let bundled = manifests.is_empty();
            let paths = if bundled {
                vec![bundled_suite()]
            } else {
                manifests
            };
            let loaded = match manifest::load_all(&paths) {
                Ok(m) => m,
                Err(e) => return usage_error(&e.to_string()),
            };
            for s in &servers {
                if !loaded.iter().any(|m| &m.name == s) {
                    let known: Vec<&str> = loaded.iter().map(|m| m.name.as_str()).collect();
                    return usage_error(&format!(
                        "unknown server `{s}` (known: {})",
                        known.join(", ")
                    ));
                }
            }
            let chosen: Vec<Manifest> = loaded
                .into_iter()
                .filter(|m| servers.is_empty() || servers.contains(&m.name))
                .collect();
            let default_baseline = bundled
                .then(|| bundled_suite().with_file_name("expected-failures.toml"))
                .filter(|p| p.is_file());
            execute(chosen, &opts, default_baseline)
        }
        Cmd::Check { opts, command } => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            execute(
                vec![manifest::adhoc(&command[0], &command[1..], &cwd)],
                &opts,
                None,
            )
        }
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("mcp-shutdown: {msg}");
    ExitCode::from(2)
}

fn load_report(path: &std::path::Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a mcp-shutdown JSON report: {e}", path.display()))
}

fn report_cmd(action: ReportCmd) -> ExitCode {
    let result = match action {
        ReportCmd::Render {
            from,
            format,
            pruned,
        } => load_report(&from).map(|r| {
            if pruned {
                print!("{}", crate::diff::render_pruned(&r));
            } else {
                print!("{}", with_newline(render::render(&r, format)));
            }
        }),
        ReportCmd::Merge { parts } => parts
            .iter()
            .map(|p| load_report(p))
            .collect::<Result<Vec<_>, _>>()
            .and_then(render::merge::merge)
            .map(|r| println!("{}", r.to_json())),
        ReportCmd::Badges { from, out } => load_report(&from).and_then(|r| {
            std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
            for b in render::badge::badges(&r) {
                // Not `with_extension`: server names contain dots ("node-1.30.0-timer").
                let stem = b.file_stem();
                std::fs::write(out.join(format!("{stem}.svg")), b.svg())
                    .map_err(|e| e.to_string())?;
                std::fs::write(out.join(format!("{stem}.json")), b.endpoint_json())
                    .map_err(|e| e.to_string())?;
                println!("{}: {} ({})", b.server, b.message, b.color.name());
            }
            Ok(())
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(&e),
    }
}

fn with_newline(mut s: String) -> String {
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Parses `K/M` (1 ≤ K ≤ M).
fn partition(spec: &str) -> Option<(usize, usize)> {
    let (k, m) = spec.split_once('/')?;
    let (k, m) = (k.trim().parse().ok()?, m.trim().parse().ok()?);
    (1..=m).contains(&k).then_some((k, m))
}

fn rules(spec: Option<String>) -> ExitCode {
    let cat = Catalogue::bundled();
    let rev = spec.unwrap_or_else(|| cat.default_revision.clone());
    if let Err(e) = cat.check_revision(&rev) {
        return usage_error(&e.to_string());
    }
    println!("rules for spec {rev}:\n");
    for r in &cat.rules {
        let level = r
            .levels
            .get(&rev)
            .copied()
            .unwrap_or(crate::rules::Level::Info);
        println!("{:<28} {:<6} {}", r.id, level.to_string(), r.title);
        println!(
            "{:<28} scenarios: {}; basis: {:?}",
            "",
            r.scenarios.join(", "),
            r.basis
        );
        for x in r.references.iter().filter(|x| x.revisions.contains(&rev)) {
            println!("{:<28} \"{}\"", "", x.quote);
            println!("{:<28} {}", "", x.url.replace("{revision}", &rev));
        }
        println!();
    }
    ExitCode::SUCCESS
}

/// The cases named by `--case SERVER/SCENARIO`, in the order given.
fn named_cases(
    named: &[String],
    servers: &[Manifest],
    scenarios: &[String],
) -> Result<Vec<Case>, String> {
    named
        .iter()
        .map(|c| {
            // Scenario ids never contain '/', server names might.
            let (server, scenario) = c
                .rsplit_once('/')
                .ok_or_else(|| format!("--case {c}: expected SERVER/SCENARIO"))?;
            let manifest = servers.iter().find(|m| m.name == server).ok_or_else(|| {
                let known: Vec<&str> = servers.iter().map(|m| m.name.as_str()).collect();
                format!(
                    "--case {c}: unknown server `{server}` (known: {})",
                    known.join(", ")
                )
            })?;
            if !scenarios.iter().any(|s| s == scenario) {
                return Err(format!(
                    "--case {c}: unknown scenario `{scenario}` (known: {})",
                    scenarios.join(", ")
                ));
            }
            Ok(Case {
                manifest: manifest.clone(),
                scenario: scenario.to_string(),
            })
        })
        .collect()
}

fn execute(servers: Vec<Manifest>, opts: &RunOpts, default_baseline: Option<PathBuf>) -> ExitCode {
    let baseline_path = if opts.no_baseline {
        None
    } else {
        opts.baseline.clone().or(default_baseline)
    };
    let baseline = match baseline_path
        .as_deref()
        .map(crate::baseline::Baseline::load)
        .transpose()
    {
        Ok(b) => b,
        Err(e) => return usage_error(&e),
    };
    let Some(harness) = Harness::locate() else {
        return usage_error("cannot find the mcp-shutdown binary (set MCP_SHUTDOWN_BIN)");
    };
    let cat = harness.catalogue().clone();
    let rev = opts
        .spec
        .clone()
        .unwrap_or_else(|| cat.default_revision.clone());
    if let Err(e) = cat.check_revision(&rev) {
        return usage_error(&e.to_string());
    }
    let all = crate::scenario::all_ids();
    let scenarios: Vec<String> = if opts.scenarios.is_empty() {
        SCENARIOS.iter().map(|s| s.to_string()).collect()
    } else if opts.scenarios.iter().any(|s| s == "all") {
        all.clone()
    } else {
        opts.scenarios.clone()
    };
    for s in &scenarios {
        if !all.contains(s) {
            return usage_error(&format!(
                "unknown scenario `{s}` (known: {}, or `all`)",
                all.join(", ")
            ));
        }
    }
    // A progress line only for a person watching: never in logs or pipes.
    let harness = harness.progress(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let harness = harness
        .jobs(opts.jobs)
        .revision(rev)
        .budgets(BudgetOverrides {
            prompt_ms: opts.prompt_ms,
            grace_ms: opts.grace_ms,
            observe_ms: opts.observe_ms,
            handshake_ms: opts.handshake_ms,
        });
    let mut cases: Vec<Case> = if opts.cases.is_empty() {
        servers
            .iter()
            .flat_map(|m| {
                scenarios.iter().map(|s| Case {
                    manifest: m.clone(),
                    scenario: s.clone(),
                })
            })
            .collect()
    } else {
        match named_cases(&opts.cases, &servers, &all) {
            Ok(c) => c,
            Err(e) => return usage_error(&e),
        }
    };
    if let Some(p) = &opts.partition {
        let Some((k, m)) = partition(p) else {
            return usage_error(&format!("--partition {p}: expected K/M with 1 <= K <= M"));
        };
        cases = cases
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % m == k - 1)
            .map(|(_, c)| c)
            .collect();
    }
    // Ctrl-C / SIGTERM: every supervisor kills its tree; the run then ends with 130.
    let interrupted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ]) {
        let h = harness.clone();
        let flag = interrupted.clone();
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                h.interrupt();
            }
        });
    }
    let report: Report = harness.run(&cases);
    if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
        eprintln!("mcp-shutdown: interrupted; every server and descendant was stopped");
        return ExitCode::from(130);
    }
    if opts.pruned && opts.format == Format::Text {
        print!("{}", crate::diff::render_pruned(&report));
    } else {
        print!("{}", with_newline(render::render(&report, opts.format)));
    }
    for out in &opts.outputs {
        let format = match out.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            Some("xml") => Format::Junit,
            Some("md") => Format::Markdown,
            Some("html") => Format::Html,
            _ => Format::Text,
        };
        if let Err(e) = std::fs::write(out, with_newline(render::render(&report, format))) {
            return usage_error(&format!("{}: {e}", out.display()));
        }
    }
    if let Some(path) = &opts.write_baseline {
        let b = crate::baseline::Baseline::from_report(&report);
        if let Err(e) = std::fs::write(path, b.to_toml()) {
            return usage_error(&format!("{}: {e}", path.display()));
        }
    }
    if let Some(b) = &baseline {
        let cmp = b.compare(&report);
        if opts.format == Format::Text || cmp.fails() {
            eprint!("{}", cmp.render());
        }
        return if cmp.fails() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        };
    }
    let threshold = if opts.fail_on == FailOn::Should {
        Status::Warning
    } else {
        Status::Failure
    };
    if report.fails(threshold) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
