//! The command line's grammar (clap only: no decisions here).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::{GroupKind, StdioKind, Via};
use crate::render::Format;
use crate::supervisor::protocol::ClientMode;

#[derive(Parser, Debug)]
#[command(
    name = "mcp-shutdown",
    version,
    about = "How do MCP stdio servers behave when their session ends?"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run the scenarios against servers named in manifests (default: the bundled suite).
    Run {
        /// A manifest file or a directory of them; repeatable.
        #[arg(long = "manifest", value_name = "FILE|DIR")]
        manifests: Vec<PathBuf>,
        /// Only these servers (by name); repeatable.
        #[arg(long = "server", value_name = "NAME")]
        servers: Vec<String>,
        /// SDK kit instances to run: `LINE@VERSION`, `LINE@latest`, `LINE@all`,
        /// `LINE@FROM..TO`, or `LINE=PATH` (a local checkout or packed artifact); repeatable.
        /// Installed into the kit cache (`MCP_SHUTDOWN_KIT_CACHE`; default `target/kit-cache`
        /// in a checkout, else `mcp-shutdown/kits` in the user's cache); replaces the bundled
        /// suite unless `--manifest` is given too.
        #[arg(long = "sdk", value_name = "SPEC")]
        sdks: Vec<String>,
        /// Only servers of these shapes (`[about] shape`: timer, plain, ...); repeatable.
        #[arg(long = "shape", value_name = "SHAPE")]
        shapes: Vec<String>,
        /// With one `--sdk LINE@A..B`: find the first release whose stages (per shape ×
        /// ending) differ from A's by bisection, running about log2(n) releases.
        #[arg(long)]
        bisect: bool,
        /// With `--bisect`: then bisect the commits between that release's tag and the
        /// previous one's in this checkout, each built as a local build.
        #[arg(long, value_name = "DIR", requires = "bisect")]
        checkout: Option<PathBuf>,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Run real published servers from an MCP registry listing: validate it (printing why
    /// each skipped entry is skipped), install every npm/PyPI package once into a shared
    /// cache, then run each entry offline as an ordinary server. Default scenarios: the
    /// default endings and every host profile.
    Census(Box<CensusArgs>),
    /// Run the scenarios against one command: `mcp-shutdown check -- node server.js`.
    Check {
        #[command(flatten)]
        opts: RunOpts,
        /// Run the server under this real host (`HOST[@VERSION]`, installed into the cache)
        /// once per quit path instead of under the harness.
        /// (`HOST` alone: the release its bundled profiles were measured on; `@latest`: the
        /// newest).
        #[arg(long, value_name = "HOST")]
        real_host: Option<String>,
        /// With `--real-host`: only these quit paths (triggers, as `host list` names them);
        /// repeatable.
        #[arg(long = "path", value_name = "TRIGGER", requires = "real_host")]
        paths: Vec<String>,
        /// Run again whenever a file changes (under the current directory, or the
        /// `--watch-path`s), showing only what changed since the last run; Ctrl-C stops
        /// (exit 130: a watch scores nothing, so no baseline or saved report applies).
        #[arg(long, conflicts_with_all = ["real_host", "diff_against", "baseline", "expected_failures", "write_baseline", "write_expected_failures"])]
        watch: bool,
        /// With `--watch`: watch this file or directory (recursively) instead of the current
        /// directory; repeatable.
        #[arg(long = "watch-path", value_name = "PATH", requires = "watch")]
        watch_paths: Vec<PathBuf>,
        /// Call the server NAME in the report, badges and baselines (`[a-z0-9._-]+`).
        /// Default: the name it gives in the handshake (`serverInfo.name`), else its command's.
        #[arg(long, value_name = "NAME", value_parser = server_name)]
        name: Option<String>,
        /// The server command and its arguments.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Re-render, merge or badge saved JSON reports without re-running anything.
    Report {
        #[command(subcommand)]
        action: ReportCmd,
    },
    /// Compare two sources, before → after: two JSON reports, or two SDK builds of one
    /// (`diff R.json --before typescript@1.32.2 --after typescript@local:eof-fix`). Kit
    /// servers of one build per line pair by line × shape × ending. Markdown, for a PR;
    /// exit code 1 when something broke.
    Diff {
        #[arg(value_name = "OLD.json")]
        old: PathBuf,
        /// The report of the after side (default: OLD.json itself, with --after).
        #[arg(value_name = "NEW.json")]
        new: Option<PathBuf>,
        /// Only this SDK build of the before side: `LINE@VERSION` or `LINE@local:NAME`.
        #[arg(long, value_name = "LINE@LABEL")]
        before: Option<String>,
        /// Only this SDK build of the after side.
        #[arg(long, value_name = "LINE@LABEL")]
        after: Option<String>,
    },
    /// Print the rule catalogue with levels for a spec revision.
    Rules {
        #[arg(long, value_name = "REV")]
        spec: Option<String>,
    },
    /// The SDK lines the kits cover and their published releases (what `--sdk` takes).
    Sdk {
        #[command(subcommand)]
        action: SdkCmd,
    },
    /// Measure real hosts: install them, drive every quit path, write measured profiles.
    Host {
        #[command(subcommand)]
        action: HostCmd,
    },
    #[command(name = "__case", hide = true)]
    Case,
    /// The recording MCP server that host measurements launch.
    #[command(name = "__recorder", hide = true)]
    Recorder {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    #[command(name = "__client", hide = true)]
    Client {
        mode: ClientMode,
        /// The pseudo-terminal a `terminal` client makes its controlling terminal.
        #[arg(long)]
        tty: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum SdkCmd {
    /// Every kit line id, one a line.
    Lines,
    /// The releases an `--sdk LINE@SEL` names (`@all`, `@latest`, `@A..B`), oldest first, one
    /// a line with its registry date: what a run would instantiate.
    Versions {
        #[arg(value_name = "LINE@SEL")]
        spec: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum ReportCmd {
    /// Render a JSON report in another format.
    Render {
        #[arg(long, value_name = "REPORT.json")]
        from: PathBuf,
        /// The format (`conformance` needs --output).
        #[arg(long, default_value = "text", value_enum)]
        format: Format,
        /// Only the endings where servers of the same shape disagree (text).
        #[arg(long)]
        pruned: bool,
        /// Where to write it (default: the terminal); for `--format conformance`, the
        /// directory its `checks.json` files go into.
        #[arg(long = "output", alias = "out", value_name = "FILE|DIR")]
        out: Option<PathBuf>,
        /// With `--format github` or `sarif`: the file (and line) the annotations or
        /// results point at, e.g. the workflow step or manifest that names the server.
        #[arg(long, value_name = "FILE[:LINE]")]
        at: Option<crate::render::github::Location>,
        /// With `--format text` or `markdown`: what got better or worse since this saved
        /// report, after the report.
        #[arg(long, value_name = "REPORT.json")]
        diff_against: Option<PathBuf>,
    },
    /// Convert a baseline between our TOML and the official suite's YAML (by the files'
    /// extensions: `.yaml`/`.yml` is the official form).
    Baseline {
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
    },
    /// Join the JSON reports of sharded runs into one (printed as JSON).
    Merge {
        #[arg(required = true, value_name = "REPORT.json")]
        parts: Vec<PathBuf>,
    },
    /// Write the static census site (leaderboard, a page and badges per server) of a report.
    Site {
        #[arg(long, value_name = "REPORT.json")]
        from: PathBuf,
        #[arg(long = "output", alias = "out", value_name = "DIR")]
        out: PathBuf,
        /// Where the site will be published, for the README snippets.
        #[arg(long, value_name = "URL")]
        site_url: Option<String>,
        /// The verdict history (JSON; a missing file starts one): updated with this census
        /// and written back; each server's page shows it, `week.html` what changed.
        #[arg(long, value_name = "FILE")]
        history: Option<PathBuf>,
    },
    /// Write the book's tables made from runs between their marker comments: results.md from
    /// DIR/matrix.json, profiles.json and hosts.json; census.md's leaderboard and findings
    /// blocks from DIR/census.json and each DIR/census-SUFFIX.json
    /// (`scripts/book/results.sh` makes them).
    Book {
        #[arg(value_name = "DIR")]
        from: PathBuf,
        /// The book's source folder.
        #[arg(long, value_name = "DIR", default_value = "docs/book/src")]
        book: PathBuf,
    },
    /// Write one SVG badge and one shields.io endpoint JSON per server into a directory.
    Badges {
        #[arg(long, value_name = "REPORT.json")]
        from: PathBuf,
        #[arg(long = "output", alias = "out", value_name = "DIR")]
        out: PathBuf,
        /// Score only the host profiles and terminal endings (files `<server>-hosts.*`).
        #[arg(long)]
        hosts: bool,
    },
}

/// `--jobs`: at least one case at a time, and no more than a machine could hold.
fn jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(format!("`{s}` is not a number of cases from 1 to 4096")),
    }
}

/// `--name`: a server name as manifests spell them.
fn server_name(s: &str) -> Result<String, String> {
    if crate::config::manifest::valid_name(s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "`{s}`: a server name is lowercase letters, digits, '.', '_' and '-'"
        ))
    }
}

/// A kebab-case model enum (`socketpair`, `session`, `shell`) from the command line.
fn kebab<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(|e| e.to_string())
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum FailOn {
    /// Fail on missed MUSTs only.
    Must,
    /// Fail on missed MUSTs and SHOULDs.
    Should,
}

#[derive(Args, Debug, Clone)]
pub struct RunOpts {
    /// Only these scenarios; repeatable. Default: the default endings; `all` adds every
    /// client profile (`close:<profile>`).
    #[arg(long = "scenario", value_name = "ID")]
    pub scenarios: Vec<String>,
    /// Add every host profile (`close:<host>`: VS Code, Codex, Zed, Goose, Claude, ...) and
    /// the terminal endings to the scenarios (the default endings stay), for the
    /// server-by-host view.
    #[arg(long)]
    pub hosts: bool,
    /// Run the triage set first (`[[census.triage]]` of conformance/endings.toml) and the
    /// rest of the scenarios only for servers where it found something; the JSON report
    /// says which pass judged each server (`servers.<name>.judged.pass`).
    #[arg(long)]
    pub triage: bool,
    /// Connect every server's stdin and stdout this way instead of each ending's or
    /// profile's: `pipes` or `socketpair` (what Node, Electron and Bun hosts give).
    #[arg(long, value_name = "KIND", value_parser = kebab::<StdioKind>)]
    pub stdio: Option<StdioKind>,
    /// Put every server in this process group: `host` (the client's; a terminal's signals
    /// reach it), `own`, or `session` (setsid).
    #[arg(long, value_name = "KIND", value_parser = kebab::<GroupKind>)]
    pub group: Option<GroupKind>,
    /// Launch every server `direct`ly or through `shell` (`/bin/sh -c`, as Zed does).
    #[arg(long, value_name = "KIND", value_parser = kebab::<Via>)]
    pub via: Option<Via>,
    /// Only this one case, `SERVER/SCENARIO` (e.g. `node-1.30.0-timer/exit`); repeatable.
    /// Replaces the servers-by-scenarios matrix with exactly the cases named.
    #[arg(
        long = "case",
        value_name = "SERVER/SCENARIO",
        conflicts_with = "scenarios"
    )]
    pub cases: Vec<String>,
    /// Spec revision whose rule levels score the run.
    #[arg(long, value_name = "REV")]
    pub spec: Option<String>,
    /// text, json, junit, markdown, html or conformance (the official conformance suite's
    /// layout, `server-<server>+<scenario>-<timestamp>/checks.json`, written to an
    /// `--output DIR`).
    #[arg(long, default_value = "text", value_enum)]
    pub format: Format,
    /// Text output shows only the endings where servers of the same shape disagree.
    #[arg(long)]
    pub pruned: bool,
    /// Also write the report to this file, in the format of its extension (.json .xml .md
    /// .html .txt .sarif; none: `--format`'s; with `--format conformance`, a path without
    /// one is the layout's directory); repeatable. Its folder is made before the run; the
    /// `--format` written to a file is not printed too.
    #[arg(long = "output", value_name = "FILE|DIR")]
    pub outputs: Vec<PathBuf>,
    /// Only cases whose index modulo M is K (`K/M`, 1-based K): a shard of a large matrix.
    #[arg(long, value_name = "K/M")]
    pub partition: Option<String>,
    /// Expected failures (strict both ways). Default for the bundled suite:
    /// conformance/expected-failures.toml.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// The official MCP conformance suite's baseline (`server:` list of
    /// `<server>+<scenario>` or `<server>+<scenario>:<check-id>`), instead of ours. A
    /// `--baseline` named `*.yaml` or `*.yml` is read as one too.
    #[arg(long, value_name = "FILE.yaml", conflicts_with = "baseline")]
    pub expected_failures: Option<PathBuf>,
    /// Ignore any baseline.
    #[arg(long, conflicts_with_all = ["baseline", "expected_failures"])]
    pub no_baseline: bool,
    /// Compare with a saved JSON report (of an earlier run, e.g. the main branch's): what got
    /// better or worse is printed (on stderr; appended to Markdown output). The exit code is
    /// then 1 only for a regression: a rule newly missed at `--fail-on`'s level, or a SHOULD
    /// that became a MUST; misses the saved report had too do not fail. Replaces any baseline.
    #[arg(long, value_name = "REPORT.json", conflicts_with_all = ["baseline", "expected_failures"])]
    pub diff_against: Option<PathBuf>,
    /// Write the baseline that makes this run pass, then exit as usual (TOML; the official
    /// YAML for a file named `*.yaml` or `*.yml`).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Write the official suite's YAML baseline that makes this run pass.
    #[arg(long, value_name = "FILE.yaml")]
    pub write_expected_failures: Option<PathBuf>,
    /// Which missed level makes the exit code 1.
    #[arg(long, value_enum, default_value = "should")]
    pub fail_on: FailOn,
    /// Cases run at once (1 to 4096).
    #[arg(long, default_value_t = 16, value_parser = jobs)]
    pub jobs: usize,
    /// Run every case N times (each a real launch): the report gives each case's stage
    /// distribution and exit-latency percentiles, and marks it flaky when runs disagree.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Score machine-bound cases (the machine, not the server, decided them: see the book's
    /// machine-bound page) like any other instead of exiting 2 and naming them.
    #[arg(long)]
    pub accept_machine_bound: bool,
    /// Override the prompt budget (ms) for every server.
    #[arg(long, value_name = "MS")]
    pub prompt_ms: Option<u64>,
    /// Override the grace period (ms) of the close ladder.
    #[arg(long, value_name = "MS")]
    pub grace_ms: Option<u64>,
    /// Override how long orphans are watched (ms).
    #[arg(long, value_name = "MS")]
    pub observe_ms: Option<u64>,
    /// Override the handshake timeout (ms).
    #[arg(long, value_name = "MS")]
    pub handshake_ms: Option<u64>,
}

// What `census` is asked for (a plain comment: the subcommand's help is the variant's).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct CensusArgs {
    #[command(subcommand)]
    pub action: Option<CensusCmd>,
    /// The registry's `GET /v0/servers` response, an array of server.json documents, or
    /// one server.json (a `census snapshot` is one).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "registry",
        conflicts_with = "registry"
    )]
    pub listing: Option<PathBuf>,
    #[command(flatten)]
    pub source: RegistrySource,
    /// Only servers whose name hashes to shard K of N (FNV-1a 64 of the registry name, mod
    /// N, 1-based K): a server stays in its shard as the registry grows, and a shard
    /// installs only its own servers.
    #[arg(long, value_name = "K/N", conflicts_with = "partition")]
    pub shard: Option<String>,
    /// Also write a static site here: the leaderboard, a page and badges per server,
    /// and report.json.
    #[arg(long, value_name = "DIR")]
    pub site: Option<PathBuf>,
    /// Where the site will be published, for the README snippets (default: relative
    /// links).
    #[arg(long, value_name = "URL", requires = "site")]
    pub site_url: Option<String>,
    /// The shared install cache (default: $MCP_SHUTDOWN_CENSUS_CACHE, else
    /// $XDG_CACHE_HOME or ~/.cache, under mcp-shutdown/census).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Only these entries (by entry name or registry name); repeatable.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// A value for a `{variable}` of the listing (e.g. `allowed_directory=/tmp/x`);
    /// repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Run each server again with this SDK replaced inside its install: `LINE@VERSION` (a
    /// release), `LINE=PATH` or `LINE@local:NAME=PATH` (a checkout or packed artifact, built
    /// as `--sdk` builds it); repeatable. A server holding no copy of the SDK is left
    /// untouched and says why; the report gets a before → after section.
    #[arg(long = "with-sdk", value_name = "LINE@VERSION|LINE=PATH")]
    pub with_sdk: Vec<String>,
    /// The date recorded on what this census judged (`2026-12-06`; default: today, UTC):
    /// a carried-forward verdict keeps it, and the history dates changes by it.
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
    /// The last census's JSON report: servers whose registry name, version and package are
    /// unchanged since keep its verdicts (carried forward, with the date they were judged);
    /// only new or updated servers run; servers it judged that the listing no longer holds
    /// are dropped and named.
    #[arg(long, value_name = "REPORT.json")]
    pub previous: Option<PathBuf>,
    /// The verdict history (JSON; a missing file starts one): updated with this census and
    /// written back; with `--site`, each server's page shows it and `week.html` what got
    /// better and worse since the last run.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    #[command(flatten)]
    pub opts: RunOpts,
}

/// The official MCP registry as the census's source.
#[derive(Args, Debug, Clone)]
pub struct RegistrySource {
    /// Read the listing from this MCP registry (`https://registry.modelcontextprotocol.io`):
    /// every page of `/v0.1/servers` (`/v0` where that is not served), latest versions,
    /// deleted and deprecated servers dropped and named.
    #[arg(long, value_name = "URL")]
    pub registry: Option<String>,
    /// With `--registry`: only servers updated since this date (`2026-12-01`) or RFC 3339
    /// time.
    #[arg(long, value_name = "DATE", requires = "registry")]
    pub updated_since: Option<String>,
}

/// `mcp-shutdown census …` other than a run.
#[derive(Subcommand, Debug)]
pub enum CensusCmd {
    /// Save the listing read from a registry, so that a census of it runs again offline
    /// (`census --listing FILE`).
    Snapshot {
        #[command(flatten)]
        source: RegistrySource,
        /// Where the listing goes (written whole once every page is read, or not at all).
        #[arg(long, value_name = "FILE")]
        output: PathBuf,
    },
}

/// `mcp-shutdown host …`: real hosts, measured.
#[derive(Subcommand, Debug)]
pub enum HostCmd {
    /// Install a real host (pinned, once, into the cache), drive every quit path with the
    /// recorder as its server, and print measured `[[profile]]` entries.
    Measure {
        /// `HOST`, `HOST@VERSION`, `HOST@A..B` (newest and 5 spread between), `HOST@all`
        /// (newest and 5 spread over the last year).
        #[arg(value_name = "HOST[@VERSION|@A..B|@all]")]
        spec: String,
        /// Runs per quit path.
        #[arg(long, default_value_t = 3)]
        repeats: u32,
        /// Only these quit paths (triggers); repeatable.
        #[arg(long = "path", value_name = "TRIGGER")]
        only: Vec<String>,
        /// Also write each release's measurement as JSON here.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Which release changed a host's ladder or plumbing (from saved measurements).
    History { host: String },
    /// The `[[profile]]` entries of saved measurements (a `measure --json` file, or one the
    /// cache keeps under hosts/measurements/), without measuring again.
    Profiles {
        #[arg(value_name = "FILE")]
        from: PathBuf,
    },
    /// The hosts this build knows and their quit paths.
    List,
}
