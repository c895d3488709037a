//! Who the server is behind its launcher: `npx`, `uvx`, `uv run`, `pipx run` and `sh -c`
//! start the process that speaks MCP as a child and stand between it and its client. What a
//! launcher is, and which process of a tree is the server, is decided here from what `/proc`
//! said (`os::identify` reads it); a report then names, diagnoses and hints on that process,
//! and says what a launcher that left it running did ([`LauncherLeft`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ids::Runtime;
use super::scenario::Stage;
use super::signal::SignalName;

/// The process that speaks MCP, as found after the handshake (or when it should have exited).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerProcess {
    pub pid: i32,
    pub cmdline: String,
    /// The runtime recognised from its executable: node, python, jvm, or null.
    pub runtime: Option<Runtime>,
    /// The launchers it was started through, outermost first (`uv run`, `sh -c`); empty
    /// when the command launched is the server itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launchers: Vec<String>,
    /// Where its dependencies are installed, nearest first: the `node_modules` directories
    /// above its script and working directory, or its interpreter's `site-packages`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub package_dirs: Vec<PathBuf>,
}

/// The launchers ended on a signal sent to them alone, and the server behind them was still
/// running a prompt budget later: they did not pass the signal on. The harness then sent the
/// server that signal itself; what the server did with it is what it is judged on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LauncherLeft {
    /// The launchers, outermost first (`npm exec`, `sh -c`).
    pub launchers: Vec<String>,
    /// The launcher's name and version as the server's environment gives it (`npm/11.6.2`,
    /// from `npm_config_user_agent`), where it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The signal the launchers received and did not pass on.
    pub signal: SignalName,
    /// How long the server was still running after its launcher exited, before the harness
    /// sent it the signal.
    pub left_ms: f64,
    /// What the server did with the signal sent to it: the stage that ended it, and when,
    /// counted from that signal (of which `runqueue_ms` waiting for a CPU).
    pub stage: Stage,
    pub exit_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runqueue_ms: Option<f64>,
}

impl LauncherLeft {
    /// The launchers in words: `npm exec → sh -c (npm/11.6.2)`.
    pub fn named(&self) -> String {
        named(&self.launchers, self.agent.as_deref())
    }
}

pub(super) fn named(launchers: &[String], agent: Option<&str>) -> String {
    let chain = launchers
        .iter()
        .map(|l| format!("`{l}`"))
        .collect::<Vec<_>>()
        .join(" → ");
    match agent {
        Some(a) => format!("{chain} ({a})"),
        None => chain,
    }
}

/// One process of a tree as `/proc` shows it, for the decisions below.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcView {
    pub pid: i32,
    /// `/proc/<pid>/exe`, resolved.
    pub exe: String,
    pub argv: Vec<String>,
}

fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The launcher a process is, in a word or two (`uv run`, `npx`, `sh -c`), or `None` for a
/// process that is no launcher (the server itself, or something it started).
pub fn launcher(p: &ProcView) -> Option<String> {
    let exe = base(&p.exe);
    let arg = |i: usize| p.argv.get(i).map(String::as_str).unwrap_or_default();
    let words = |n: usize| {
        let w: Vec<&str> = p.argv.iter().take(n).map(|a| base(a)).collect();
        w.join(" ")
    };
    match exe {
        "sh" | "dash" | "bash" | "zsh" | "ash" | "busybox" if p.argv.iter().any(|a| a == "-c") => {
            // As it was called (`sh`, not the `dash` it links to).
            Some(format!("{} -c", base(arg(0))))
        }
        "env" => Some("env".into()),
        // `uvx` execs `uv tool uvx …`: named as the author typed it.
        "uv" | "uvx" if arg(1) == "tool" && arg(2) == "uvx" => Some("uvx".into()),
        "uv" | "uvx" if arg(1) == "tool" => Some(words(3)),
        "uv" | "uvx" if arg(1) == "run" => Some(words(2)),
        "uv" | "uvx" => Some(exe.into()),
        _ if matches!(Runtime::of_exe(&p.exe), Some(Runtime::Node)) => {
            // npm retitles itself (`npm exec my-server`: what `npx` runs); else its script
            // names it. The title is read whole: a scoped package's `/` (`npm exec @s/pkg`)
            // is no path.
            if arg(0).starts_with("npm exec") {
                return Some("npm exec".into());
            }
            let title = base(arg(0));
            let script = base(arg(1));
            ["npx", "npm", "pnpm", "yarn", "npx-cli.js", "npm-cli.js"]
                .iter()
                .find(|l| title == **l || title.starts_with(&format!("{l} ")) || script == **l)
                .map(|l| l.trim_end_matches("-cli.js").to_string())
        }
        _ if matches!(Runtime::of_exe(&p.exe), Some(Runtime::Python)) => {
            // `python -m pipx run s` or `python /x/bin/pipx run s`: the launcher and its verb.
            let at = p.argv.iter().skip(1).position(|a| {
                matches!(base(a), "pipx" | "uv" | "uvx")
                    && (a.contains('/') || p.argv.iter().any(|m| m == "-m"))
            })? + 1;
            let verb = arg(at + 1);
            let verb = if verb.starts_with('-') { "" } else { verb };
            Some(format!("{} {verb}", base(arg(at))).trim_end().to_string())
        }
        _ => None,
    }
}

/// The server behind `root`'s launchers: from `root`, each launcher's child that shares its
/// stdio (the first, by pid, when several do), until a process that is no launcher. `tree`
/// holds each process's view and its children that hold root's stdio. Returns the server
/// and the launchers above it, outermost first; `None` when root is a launcher with no such
/// child (the server is not started yet).
pub fn behind_launchers(
    root: &ProcView,
    children_on_stdio: &dyn Fn(i32) -> Vec<ProcView>,
) -> Option<(ProcView, Vec<String>)> {
    let mut at = root.clone();
    let mut launchers = Vec::new();
    // A launcher chain is short; a bound keeps a pathological tree from looping.
    for _ in 0..16 {
        let Some(name) = launcher(&at) else {
            return Some((at, launchers));
        };
        let mut next = children_on_stdio(at.pid);
        next.sort_by_key(|c| c.pid);
        at = next.into_iter().next()?;
        launchers.push(name);
    }
    None
}

/// What a launcher command starts, as named on its command line (`npx -y @s/pkg@1.2` →
/// `pkg`, `uvx pkg==1.0`, `uv run my-server`, `pipx run pkg`): a server's name before it
/// gave its own, or when it never answers. `None` for a command that is no such launcher.
pub fn launched_name(command: &str, args: &[String]) -> Option<String> {
    let verbs: &[&str] = match base(command) {
        "npx" | "bunx" | "uvx" => &[],
        "uv" | "pipx" | "pnpm" | "npm" => &["run", "tool", "exec", "dlx"],
        _ => return None,
    };
    let first = args
        .iter()
        .skip_while(|a| verbs.contains(&a.as_str()))
        .find(|a| !a.starts_with('-'))?;
    // `@scope/pkg@1.2`, `pkg==1.0`, `pkg[extra]`: the package's own name.
    let bare = first.strip_prefix('@').unwrap_or(first);
    let bare = bare.split(['@', '=', '[', '<', '>']).next()?;
    Some(base(bare).to_string()).filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, exe: &str, argv: &[&str]) -> ProcView {
        ProcView {
            pid,
            exe: exe.into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn launchers_are_known_by_executable_title_or_script() {
        let l = |v: ProcView| launcher(&v);
        assert_eq!(
            l(p(1, "/usr/bin/dash", &["sh", "-c", "node s.js"])).as_deref(),
            Some("sh -c")
        );
        assert_eq!(
            l(p(1, "/x/bin/uv", &["uv", "run", "server.py"])).as_deref(),
            Some("uv run")
        );
        assert_eq!(
            l(p(1, "/x/bin/uv", &["/x/bin/uv", "tool", "uvx", "m"])).as_deref(),
            Some("uvx")
        );
        assert_eq!(
            l(p(1, "/x/bin/uv", &["uv", "tool", "run", "m"])).as_deref(),
            Some("uv tool run")
        );
        assert_eq!(
            l(p(1, "/usr/bin/node", &["npm exec my-server"])).as_deref(),
            Some("npm exec")
        );
        assert_eq!(
            l(p(
                1,
                "/usr/bin/node",
                &["npm exec @azure/mcp@2.0.5 server start"]
            ))
            .as_deref(),
            Some("npm exec"),
            "a scoped package's title"
        );
        assert_eq!(
            l(p(1, "/usr/bin/node", &["node", "/usr/bin/npx", "-y", "s"])).as_deref(),
            Some("npx")
        );
        assert_eq!(
            l(p(
                1,
                "/usr/bin/python3.11",
                &["python", "-m", "pipx", "run", "s"]
            ))
            .as_deref(),
            Some("pipx run")
        );
        assert_eq!(l(p(1, "/usr/bin/node", &["node", "build/index.js"])), None);
        assert_eq!(
            l(p(
                1,
                "/usr/bin/node",
                &["node", "/p/node_modules/.bin/my-server"]
            )),
            None
        );
        assert_eq!(
            l(p(
                1,
                "/usr/bin/python3.11",
                &[".venv/bin/python", "server.py"]
            )),
            None
        );
        assert_eq!(l(p(1, "/usr/bin/bash", &["bash", "script.sh"])), None);
    }

    #[test]
    fn a_launcher_command_names_what_it_starts() {
        let n = |c: &str, a: &[&str]| {
            launched_name(c, &a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            n("npx", &["-y", "@scope/pkg@1.2.0"]).as_deref(),
            Some("pkg")
        );
        assert_eq!(
            n("uvx", &["mcp-server-time==2026.1"]).as_deref(),
            Some("mcp-server-time")
        );
        assert_eq!(n("uv", &["run", "my-server"]).as_deref(), Some("my-server"));
        assert_eq!(n("/x/pipx", &["run", "pkg[cli]"]).as_deref(), Some("pkg"));
        assert_eq!(n("node", &["build/index.js"]), None);
    }

    #[test]
    fn the_server_is_the_first_process_below_its_launchers() {
        let tree = |pid: i32| match pid {
            1 => vec![p(2, "/usr/bin/dash", &["sh", "-c", "node s.js"])],
            2 => vec![
                p(4, "/usr/bin/node", &["node", "s.js"]),
                p(3, "/usr/bin/node", &["node", "s.js"]),
            ],
            _ => vec![],
        };
        let npx = p(1, "/usr/bin/node", &["npm exec s"]);
        let (server, launchers) = behind_launchers(&npx, &tree).unwrap();
        assert_eq!(server.pid, 3);
        assert_eq!(launchers, ["npm exec", "sh -c"]);
        let direct = p(9, "/usr/bin/node", &["node", "s.js"]);
        let (server, launchers) = behind_launchers(&direct, &tree).unwrap();
        assert_eq!((server.pid, launchers.len()), (9, 0));
        let waiting = p(7, "/x/uv", &["uv", "run", "s.py"]);
        assert!(behind_launchers(&waiting, &tree).is_none());
    }
}
