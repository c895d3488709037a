//! The hosts `host measure` knows: their package, binary, how their MCP configuration
//! names the recorder, how telemetry and auto-update are turned off, and every quit path
//! they have that can be driven without a model (the stand-in API answers the prompts).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

pub use crate::os::hostproc::Terminal;

/// How one quit path is driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drive {
    /// A one-shot command that starts the servers and ends on its own.
    OneShot(&'static [&'static str]),
    /// The TUI in a pseudo-terminal, then a quit.
    Tui(TuiQuit),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuiQuit {
    /// The host's quit command, typed and entered.
    Command(&'static str),
    CtrlD,
    CtrlCTwice,
    /// The terminal closes (the pty master): the kernel hangs the session up.
    TerminalClosed,
    /// SIGTERM to the host process.
    Sigterm,
    /// SIGKILL to the host process.
    Sigkill,
}

/// One quit path: its trigger name (stable: it names `<host>-<trigger>` profiles) and drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuitPath {
    pub trigger: &'static str,
    pub drive: Drive,
}

/// A host the suite can install and drive.
#[derive(Clone, Copy, Debug)]
pub struct HostSpec {
    /// The profile id (`close:<id>`).
    pub id: &'static str,
    pub name: &'static str,
    pub package: &'static str,
    pub bin: &'static str,
    /// TUI arguments (before the quit).
    pub tui_args: &'static [&'static str],
    pub paths: &'static [QuitPath],
    /// The terminal its TUI runs in: a pseudo-terminal that answers the cursor and
    /// device-attribute queries, or tmux for a TUI that waits on more (then the quit keys
    /// a user types reach it as they do in their terminal).
    pub terminal: Terminal,
    config: ConfigKind,
}

#[derive(Clone, Copy, Debug)]
enum ConfigKind {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Continue,
    Opencode,
    Copilot,
    Cline,
}

const fn tui_paths(quit: &'static str) -> [QuitPath; 6] {
    [
        QuitPath {
            trigger: "quit-command",
            drive: Drive::Tui(TuiQuit::Command(quit)),
        },
        QuitPath {
            trigger: "ctrl-d",
            drive: Drive::Tui(TuiQuit::CtrlD),
        },
        QuitPath {
            trigger: "ctrl-c-twice",
            drive: Drive::Tui(TuiQuit::CtrlCTwice),
        },
        QuitPath {
            trigger: "terminal-closed",
            drive: Drive::Tui(TuiQuit::TerminalClosed),
        },
        QuitPath {
            trigger: "sigterm",
            drive: Drive::Tui(TuiQuit::Sigterm),
        },
        QuitPath {
            trigger: "sigkill",
            drive: Drive::Tui(TuiQuit::Sigkill),
        },
    ]
}

/// A one-shot command, then the TUI's quit paths (`quit` is its quit command).
const fn one_shot_then_tui(
    trigger: &'static str,
    args: &'static [&'static str],
    quit: &'static str,
) -> [QuitPath; 7] {
    let t = tui_paths(quit);
    [
        QuitPath {
            trigger,
            drive: Drive::OneShot(args),
        },
        t[0],
        t[1],
        t[2],
        t[3],
        t[4],
        t[5],
    ]
}

const CLAUDE_TUI: [QuitPath; 6] = tui_paths("/exit");
const CLAUDE_PATHS: [QuitPath; 8] = [
    QuitPath {
        trigger: "mcp-list",
        drive: Drive::OneShot(&["mcp", "list"]),
    },
    QuitPath {
        trigger: "print",
        drive: Drive::OneShot(&["-p", "say ok"]),
    },
    CLAUDE_TUI[0],
    CLAUDE_TUI[1],
    CLAUDE_TUI[2],
    CLAUDE_TUI[3],
    CLAUDE_TUI[4],
    CLAUDE_TUI[5],
];
const CODEX_PATHS: [QuitPath; 7] = one_shot_then_tui(
    "exec",
    &["exec", "--skip-git-repo-check", "say ok"],
    "/quit",
);
const GEMINI_PATHS: [QuitPath; 7] = one_shot_then_tui("prompt", &["-p", "say ok"], "/quit");
const CONTINUE_PATHS: [QuitPath; 7] = one_shot_then_tui("print", &["-p", "say ok"], "/exit");
const OPENCODE_PATHS: [QuitPath; 7] = one_shot_then_tui("run", &["run", "say ok"], "/exit");
const COPILOT_PATHS: [QuitPath; 7] = one_shot_then_tui("prompt", &["-p", "say ok"], "/exit");
/// The native binary alone: what a user who installed it without npm starts, and what the
/// npm launcher runs (a signal to the launcher is not forwarded). Its other quit paths are
/// the launcher's (the keys reach the native binary either way).
const COPILOT_NATIVE_PATHS: [QuitPath; 2] = [
    QuitPath {
        trigger: "sigterm",
        drive: Drive::Tui(TuiQuit::Sigterm),
    },
    QuitPath {
        trigger: "sigkill",
        drive: Drive::Tui(TuiQuit::Sigkill),
    },
];
/// The native binary's name in `node_modules/.bin`: its platform package's own bin
/// (`@github/copilot-<platform>-<arch>`, which the launcher resolves the same way).
const COPILOT_NATIVE_BIN: &str = if cfg!(target_os = "macos") {
    if cfg!(target_arch = "aarch64") {
        "copilot-darwin-arm64"
    } else {
        "copilot-darwin-x64"
    }
} else if cfg!(target_arch = "aarch64") {
    "copilot-linux-arm64"
} else {
    "copilot-linux-x64"
};
/// Cline's TUI waits on terminal answers a bare pty does not give: it runs in tmux.
const CLINE_PATHS: [QuitPath; 7] = one_shot_then_tui("prompt", &["say ok"], "/quit");

pub const HOSTS: &[HostSpec] = &[
    HostSpec {
        id: "claude-code",
        name: "Claude Code",
        package: "@anthropic-ai/claude-code",
        bin: "claude",
        tui_args: &[],
        paths: &CLAUDE_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Claude,
    },
    HostSpec {
        id: "codex",
        name: "OpenAI Codex CLI",
        package: "@openai/codex",
        bin: "codex",
        tui_args: &[],
        paths: &CODEX_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Codex,
    },
    HostSpec {
        id: "gemini-cli",
        name: "Gemini CLI",
        package: "@google/gemini-cli",
        bin: "gemini",
        tui_args: &[],
        paths: &GEMINI_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Gemini,
    },
    HostSpec {
        id: "continue-cli",
        name: "Continue CLI (cn)",
        package: "@continuedev/cli",
        bin: "cn",
        tui_args: &[],
        paths: &CONTINUE_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Continue,
    },
    HostSpec {
        id: "opencode",
        name: "opencode",
        package: "opencode-ai",
        bin: "opencode",
        tui_args: &[],
        paths: &OPENCODE_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Opencode,
    },
    HostSpec {
        id: "qwen-code",
        name: "Qwen Code",
        package: "@qwen-code/qwen-code",
        bin: "qwen",
        tui_args: &[],
        paths: &GEMINI_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Qwen,
    },
    HostSpec {
        id: "copilot-cli",
        name: "GitHub Copilot CLI",
        package: "@github/copilot",
        bin: "copilot",
        tui_args: &[],
        paths: &COPILOT_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Copilot,
    },
    HostSpec {
        id: "copilot-cli-native",
        name: "GitHub Copilot CLI (its native binary)",
        package: "@github/copilot",
        bin: COPILOT_NATIVE_BIN,
        tui_args: &[],
        paths: &COPILOT_NATIVE_PATHS,
        terminal: Terminal::Pty,
        config: ConfigKind::Copilot,
    },
    HostSpec {
        id: "cline-cli",
        name: "Cline CLI",
        package: "cline",
        bin: "cline",
        tui_args: &["-i"],
        paths: &CLINE_PATHS,
        terminal: Terminal::Tmux,
        config: ConfigKind::Cline,
    },
];

/// The known host ids, for an unknown one.
pub fn known() -> Vec<&'static str> {
    HOSTS.iter().map(|h| h.id).collect()
}

pub fn find(id: &str) -> Option<&'static HostSpec> {
    HOSTS.iter().find(|h| h.id == id)
}

/// The stand-in key: fake, and only ever sent to 127.0.0.1.
pub const STANDIN_KEY: &str = "sk-standin-00000000000000000000000000000000";

/// What one measurement run writes and sets for a host.
pub struct HostSetup {
    /// Files to write (path relative to HOME or absolute, contents).
    pub files: Vec<(std::path::PathBuf, String)>,
    pub env: BTreeMap<String, String>,
}

/// What every host gets: the isolated HOME and XDG directories, a plain terminal and
/// locale, the do-not-track and no-update-notifier conventions, and the caller's PATH.
fn base_env(home: &Path) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in [
        ("HOME", home.display().to_string()),
        (
            "XDG_CONFIG_HOME",
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_DATA_HOME",
            home.join(".local/share").display().to_string(),
        ),
        ("XDG_CACHE_HOME", home.join(".cache").display().to_string()),
        (
            "XDG_STATE_HOME",
            home.join(".local/state").display().to_string(),
        ),
        ("TERM", "xterm-256color".into()),
        ("LANG", "C.UTF-8".into()),
        ("DO_NOT_TRACK", "1".into()),
        ("NO_UPDATE_NOTIFIER", "1".into()),
        ("CI", String::new()),
    ] {
        env.insert(k.into(), v);
    }
    if let Some(path) = std::env::var_os("PATH") {
        env.insert("PATH".into(), path.to_string_lossy().into_owned());
    }
    env
}

/// One host's own configuration: where its files go and what its environment says.
struct HostConfig<'a> {
    home: &'a Path,
    cwd: String,
    cmd: String,
    args: Vec<String>,
    api: &'a str,
}

fn pairs(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
    kv.iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

impl HostConfig<'_> {
    fn claude(&self) -> HostSetup {
        let key_tail = &STANDIN_KEY[STANDIN_KEY.len() - 20..];
        let file = json!({"hasCompletedOnboarding": true, "theme": "dark", "autoUpdates": false,
            "numStartups": 5, "bypassPermissionsModeAccepted": true,
            "customApiKeyResponses": {"approved": [key_tail], "rejected": []},
            "mcpServers": {"rec": {"type": "stdio", "command": self.cmd, "args": self.args, "env": {}}},
            "projects": {self.cwd.clone(): {"hasTrustDialogAccepted": true,
                "hasCompletedProjectOnboarding": true, "allowedTools": []}}});
        HostSetup {
            files: vec![(self.home.join(".claude.json"), file.to_string())],
            env: pairs(&[
                ("ANTHROPIC_API_KEY", STANDIN_KEY),
                ("ANTHROPIC_BASE_URL", self.api),
                ("DISABLE_AUTOUPDATER", "1"),
                ("DISABLE_TELEMETRY", "1"),
                ("DISABLE_ERROR_REPORTING", "1"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ("CLAUDE_CODE_DISABLE_TERMINAL_TITLE", "1"),
            ]),
        }
    }

    fn codex(&self) -> HostSetup {
        let api = self.api;
        let mut t = String::new();
        t.push_str("model = \"standin\"\nmodel_provider = \"standin\"\n");
        t.push_str("check_for_update_on_startup = false\n");
        t.push_str("[model_providers.standin]\nname = \"standin\"\n");
        t.push_str(&format!(
            "base_url = \"{api}/v1\"\nwire_api = \"responses\"\nenv_key = \"STANDIN_API_KEY\"\n"
        ));
        t.push_str("[analytics]\nenabled = false\n[otel]\nexporter = \"none\"\n");
        t.push_str(&format!(
            "[projects.{:?}]\ntrust_level = \"trusted\"\n",
            self.cwd
        ));
        t.push_str(&format!(
            "[mcp_servers.rec]\ncommand = {:?}\nargs = {}\n",
            self.cmd,
            serde_json::to_string(&self.args).unwrap_or_default()
        ));
        let codex_home = self.home.join(".codex").display().to_string();
        let base = format!("{api}/v1");
        HostSetup {
            files: vec![(self.home.join(".codex/config.toml"), t)],
            env: pairs(&[
                ("CODEX_HOME", &codex_home),
                ("STANDIN_API_KEY", STANDIN_KEY),
                ("OPENAI_API_KEY", STANDIN_KEY),
                ("OPENAI_BASE_URL", &base),
            ]),
        }
    }

    /// Gemini CLI and Qwen Code (its fork) share one settings shape.
    fn gemini_like(&self, dir: &str, auth: &str, model: &str) -> HostSetup {
        let settings = json!({
            "mcpServers": {"rec": {"command": self.cmd, "args": self.args}},
            // A named model: with the default, `gemini -p` first asks flash-lite (its model
            // routing) four times, is not satisfied by the stand-in, and does not exit.
            "model": {"name": model},
            "telemetry": {"enabled": false}, "usageStatisticsEnabled": false,
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "disableAutoUpdate": true,
            "security": {"auth": {"selectedType": auth}, "folderTrust": {"enabled": false}},
            "selectedAuthType": auth,
            "ide": {"hasSeenNudge": true}, "hasSeenIdeIntegrationNudge": true,
        });
        let base = format!("{}/v1", self.api);
        HostSetup {
            files: vec![(
                self.home.join(dir).join("settings.json"),
                settings.to_string(),
            )],
            env: pairs(&[
                ("GEMINI_API_KEY", STANDIN_KEY),
                ("GOOGLE_GEMINI_BASE_URL", self.api),
                ("GEMINI_CLI_NO_RELAUNCH", "true"),
                ("OPENAI_API_KEY", STANDIN_KEY),
                ("OPENAI_BASE_URL", &base),
                ("OPENAI_MODEL", "standin"),
            ]),
        }
    }

    fn continue_cli(&self) -> HostSetup {
        let (api, cmd) = (self.api, &self.cmd);
        let yaml = format!(
            "name: standin\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: standin\n    provider: openai\n    model: standin\n    apiBase: {api}/v1\n    apiKey: {STANDIN_KEY}\nmcpServers:\n  - name: rec\n    command: {cmd:?}\n    args: {}\n",
            serde_json::to_string(&self.args).unwrap_or_default()
        );
        let dir = self.home.join(".continue").display().to_string();
        HostSetup {
            // The onboarding flag: without it the TUI asks for an Anthropic key first.
            files: vec![
                (self.home.join(".continue/config.yaml"), yaml),
                (
                    self.home.join(".continue/.onboarding_complete"),
                    "2026-01-01T00:00:00.000Z".into(),
                ),
            ],
            env: pairs(&[
                ("CONTINUE_GLOBAL_DIR", &dir),
                ("CONTINUE_CLI_DISABLE_TELEMETRY", "1"),
            ]),
        }
    }

    fn opencode(&self) -> HostSetup {
        let mut command = vec![self.cmd.clone()];
        command.extend(self.args.iter().cloned());
        let cfg = json!({"$schema": "https://opencode.ai/config.json", "autoupdate": false,
            "share": "disabled",
            "provider": {"standin": {"npm": "@ai-sdk/openai-compatible", "name": "standin",
                "options": {"baseURL": format!("{}/v1", self.api), "apiKey": STANDIN_KEY},
                "models": {"standin": {"name": "standin"}}}},
            "model": "standin/standin",
            "mcp": {"rec": {"type": "local", "command": command, "enabled": true}}});
        HostSetup {
            files: vec![(
                self.home.join(".config/opencode/opencode.json"),
                cfg.to_string(),
            )],
            env: pairs(&[
                ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
                ("OPENCODE_DISABLE_SHARE", "1"),
            ]),
        }
    }

    /// Copilot CLI's offline mode with a custom provider (BYOK): no GitHub sign-in, no
    /// network but the stand-in's.
    fn copilot(&self) -> HostSetup {
        let cfg = json!({"mcpServers": {"rec": {"type": "local", "command": self.cmd,
            "args": self.args, "env": {}, "tools": ["*"]}}});
        let base = format!("{}/v1", self.api);
        let dir = self.home.join(".copilot").display().to_string();
        HostSetup {
            files: vec![(self.home.join(".copilot/mcp-config.json"), cfg.to_string())],
            env: pairs(&[
                ("COPILOT_HOME", &dir),
                ("COPILOT_OFFLINE", "true"),
                ("COPILOT_PROVIDER_BASE_URL", &base),
                ("COPILOT_PROVIDER_API_KEY", STANDIN_KEY),
                ("COPILOT_MODEL", "standin"),
                ("COPILOT_AUTO_UPDATE", "false"),
                // Exactly "true" also trusts the working directory (no folder-trust prompt).
                ("COPILOT_ALLOW_ALL", "true"),
            ]),
        }
    }

    /// Cline CLI: an OpenAI-compatible provider (what `cline auth -p openai -b URL` writes)
    /// and the recorder in its MCP settings (what `cline mcp add` writes).
    fn cline(&self) -> HostSetup {
        let dir = self.home.join(".cline/data/settings");
        let providers = json!({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
            "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible",
                "apiKey": STANDIN_KEY, "model": "standin", "baseUrl": format!("{}/v1", self.api)},
                "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}});
        let mcp = json!({"mcpServers": {"rec": {"transport": {"type": "stdio",
            "command": self.cmd, "args": self.args}}}});
        // The notices a first start shows (a modal any key closes, the `/` of `/quit` too).
        let notices = json!({"shown": {"cline-cli-cline-pass-intro": true,
            "cline-cli-desktop-launch": true}});
        HostSetup {
            files: vec![
                (dir.join("providers.json"), providers.to_string()),
                (dir.join("cline_mcp_settings.json"), mcp.to_string()),
                (dir.join("cli-notices.json"), notices.to_string()),
            ],
            env: BTreeMap::new(),
        }
    }
}

impl HostSpec {
    /// The isolated HOME's configuration: the recorder as the one MCP server, telemetry
    /// and auto-update off, onboarding and trust answered, the model API on the loopback.
    pub fn setup(&self, home: &Path, cwd: &Path, recorder: &[String], api: &str) -> HostSetup {
        let c = HostConfig {
            home,
            cwd: cwd.display().to_string(),
            cmd: recorder[0].clone(),
            args: recorder[1..].to_vec(),
            api,
        };
        let own = match self.config {
            ConfigKind::Claude => c.claude(),
            ConfigKind::Codex => c.codex(),
            ConfigKind::Gemini => c.gemini_like(".gemini", "gemini-api-key", "gemini-2.5-flash"),
            ConfigKind::Qwen => c.gemini_like(".qwen", "openai", "standin"),
            ConfigKind::Continue => c.continue_cli(),
            ConfigKind::Opencode => c.opencode(),
            ConfigKind::Copilot => c.copilot(),
            ConfigKind::Cline => c.cline(),
        };
        let mut env = base_env(home);
        env.extend(own.env);
        HostSetup {
            files: own.files,
            env,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_scenario_ids_and_triggers_are_unique() {
        for h in HOSTS {
            assert!(!h.id.contains(':'), "{}", h.id);
            let mut t: Vec<_> = h.paths.iter().map(|p| p.trigger).collect();
            t.sort();
            t.dedup();
            assert_eq!(t.len(), h.paths.len(), "{}", h.id);
        }
        assert!(find("codex").is_some() && find("nope").is_none());
    }
}
