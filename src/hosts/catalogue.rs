//! The hosts `host measure` knows: their package, binary, how their MCP configuration
//! names the recorder, how telemetry and auto-update are turned off, and every quit path
//! they have that can be driven without a model (the stand-in API answers the prompts).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

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
const CODEX_TUI: [QuitPath; 6] = tui_paths("/quit");
const CODEX_PATHS: [QuitPath; 7] = [
    QuitPath {
        trigger: "exec",
        drive: Drive::OneShot(&["exec", "--skip-git-repo-check", "say ok"]),
    },
    CODEX_TUI[0],
    CODEX_TUI[1],
    CODEX_TUI[2],
    CODEX_TUI[3],
    CODEX_TUI[4],
    CODEX_TUI[5],
];
const GEMINI_TUI: [QuitPath; 6] = tui_paths("/quit");
const GEMINI_PATHS: [QuitPath; 7] = [
    QuitPath {
        trigger: "prompt",
        drive: Drive::OneShot(&["-p", "say ok"]),
    },
    GEMINI_TUI[0],
    GEMINI_TUI[1],
    GEMINI_TUI[2],
    GEMINI_TUI[3],
    GEMINI_TUI[4],
    GEMINI_TUI[5],
];
const EXIT_TUI: [QuitPath; 6] = tui_paths("/exit");
const CONTINUE_PATHS: [QuitPath; 7] = [
    QuitPath {
        trigger: "print",
        drive: Drive::OneShot(&["-p", "say ok"]),
    },
    EXIT_TUI[0],
    EXIT_TUI[1],
    EXIT_TUI[2],
    EXIT_TUI[3],
    EXIT_TUI[4],
    EXIT_TUI[5],
];
const OPENCODE_PATHS: [QuitPath; 7] = [
    QuitPath {
        trigger: "run",
        drive: Drive::OneShot(&["run", "say ok"]),
    },
    EXIT_TUI[0],
    EXIT_TUI[1],
    EXIT_TUI[2],
    EXIT_TUI[3],
    EXIT_TUI[4],
    EXIT_TUI[5],
];

pub const HOSTS: &[HostSpec] = &[
    HostSpec {
        id: "claude-code",
        name: "Claude Code",
        package: "@anthropic-ai/claude-code",
        bin: "claude",
        tui_args: &[],
        paths: &CLAUDE_PATHS,
        config: ConfigKind::Claude,
    },
    HostSpec {
        id: "codex",
        name: "OpenAI Codex CLI",
        package: "@openai/codex",
        bin: "codex",
        tui_args: &[],
        paths: &CODEX_PATHS,
        config: ConfigKind::Codex,
    },
    HostSpec {
        id: "gemini-cli",
        name: "Gemini CLI",
        package: "@google/gemini-cli",
        bin: "gemini",
        tui_args: &[],
        paths: &GEMINI_PATHS,
        config: ConfigKind::Gemini,
    },
    HostSpec {
        id: "continue-cli",
        name: "Continue CLI (cn)",
        package: "@continuedev/cli",
        bin: "cn",
        tui_args: &[],
        paths: &CONTINUE_PATHS,
        config: ConfigKind::Continue,
    },
    HostSpec {
        id: "opencode",
        name: "opencode",
        package: "opencode-ai",
        bin: "opencode",
        tui_args: &[],
        paths: &OPENCODE_PATHS,
        config: ConfigKind::Opencode,
    },
    HostSpec {
        id: "qwen-code",
        name: "Qwen Code",
        package: "@qwen-code/qwen-code",
        bin: "qwen",
        tui_args: &[],
        paths: &GEMINI_PATHS,
        config: ConfigKind::Qwen,
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
pub struct Setup {
    /// Files to write (path relative to HOME or absolute, contents).
    pub files: Vec<(std::path::PathBuf, String)>,
    pub env: BTreeMap<String, String>,
}

impl HostSpec {
    /// The isolated HOME's configuration: the recorder as the one MCP server, telemetry
    /// and auto-update off, onboarding and trust answered, the model API on the loopback.
    pub fn setup(&self, home: &Path, cwd: &Path, recorder: &[String], api: &str) -> Setup {
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
        let (cmd, args) = (recorder[0].clone(), recorder[1..].to_vec());
        let mut files = Vec::new();
        let cwd_s = cwd.display().to_string();
        match self.config {
            ConfigKind::Claude => {
                let key_tail = &STANDIN_KEY[STANDIN_KEY.len() - 20..];
                files.push((
                    home.join(".claude.json"),
                    json!({"hasCompletedOnboarding": true, "theme": "dark", "autoUpdates": false,
                        "numStartups": 5, "bypassPermissionsModeAccepted": true,
                        "customApiKeyResponses": {"approved": [key_tail], "rejected": []},
                        "mcpServers": {"rec": {"type": "stdio", "command": cmd, "args": args, "env": {}}},
                        "projects": {cwd_s.clone(): {"hasTrustDialogAccepted": true,
                            "hasCompletedProjectOnboarding": true, "allowedTools": []}}})
                    .to_string(),
                ));
                for (k, v) in [
                    ("ANTHROPIC_API_KEY", STANDIN_KEY.to_string()),
                    ("ANTHROPIC_BASE_URL", api.to_string()),
                    ("DISABLE_AUTOUPDATER", "1".into()),
                    ("DISABLE_TELEMETRY", "1".into()),
                    ("DISABLE_ERROR_REPORTING", "1".into()),
                    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
                    ("CLAUDE_CODE_DISABLE_TERMINAL_TITLE", "1".into()),
                ] {
                    env.insert(k.into(), v);
                }
            }
            ConfigKind::Codex => {
                let mut t = String::new();
                t.push_str("model = \"standin\"\nmodel_provider = \"standin\"\n");
                t.push_str("check_for_update_on_startup = false\n");
                t.push_str("[model_providers.standin]\nname = \"standin\"\n");
                t.push_str(&format!("base_url = \"{api}/v1\"\nwire_api = \"responses\"\nenv_key = \"STANDIN_API_KEY\"\n"));
                t.push_str("[analytics]\nenabled = false\n[otel]\nexporter = \"none\"\n");
                t.push_str(&format!(
                    "[projects.{:?}]\ntrust_level = \"trusted\"\n",
                    cwd_s
                ));
                t.push_str(&format!(
                    "[mcp_servers.rec]\ncommand = {:?}\nargs = {}\n",
                    cmd,
                    serde_json::to_string(&args).unwrap_or_default()
                ));
                files.push((home.join(".codex/config.toml"), t));
                env.insert(
                    "CODEX_HOME".into(),
                    home.join(".codex").display().to_string(),
                );
                env.insert("STANDIN_API_KEY".into(), STANDIN_KEY.into());
                env.insert("OPENAI_API_KEY".into(), STANDIN_KEY.into());
                env.insert("OPENAI_BASE_URL".into(), format!("{api}/v1"));
            }
            ConfigKind::Gemini | ConfigKind::Qwen => {
                let dir = if matches!(self.config, ConfigKind::Gemini) {
                    ".gemini"
                } else {
                    ".qwen"
                };
                let settings = json!({
                    "mcpServers": {"rec": {"command": cmd, "args": args}},
                    "telemetry": {"enabled": false}, "usageStatisticsEnabled": false,
                    "privacy": {"usageStatisticsEnabled": false},
                    "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                    "disableAutoUpdate": true,
                    "security": {"auth": {"selectedType": if dir == ".gemini" { "gemini-api-key" } else { "openai" }},
                                 "folderTrust": {"enabled": false}},
                    "selectedAuthType": if dir == ".gemini" { "gemini-api-key" } else { "openai" },
                    "ide": {"hasSeenNudge": true}, "hasSeenIdeIntegrationNudge": true,
                });
                files.push((home.join(dir).join("settings.json"), settings.to_string()));
                env.insert("GEMINI_API_KEY".into(), STANDIN_KEY.into());
                env.insert("GOOGLE_GEMINI_BASE_URL".into(), api.into());
                env.insert("GEMINI_CLI_NO_RELAUNCH".into(), "true".into());
                env.insert("OPENAI_API_KEY".into(), STANDIN_KEY.into());
                env.insert("OPENAI_BASE_URL".into(), format!("{api}/v1"));
                env.insert("OPENAI_MODEL".into(), "standin".into());
            }
            ConfigKind::Continue => {
                let yaml = format!(
                    "name: standin\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: standin\n    provider: openai\n    model: standin\n    apiBase: {api}/v1\n    apiKey: {STANDIN_KEY}\nmcpServers:\n  - name: rec\n    command: {cmd:?}\n    args: {}\n",
                    serde_json::to_string(&args).unwrap_or_default()
                );
                files.push((home.join(".continue/config.yaml"), yaml));
                env.insert(
                    "CONTINUE_GLOBAL_DIR".into(),
                    home.join(".continue").display().to_string(),
                );
                env.insert("CONTINUE_CLI_DISABLE_TELEMETRY".into(), "1".into());
            }
            ConfigKind::Opencode => {
                let mut command = vec![cmd];
                command.extend(args);
                let cfg = json!({"$schema": "https://opencode.ai/config.json", "autoupdate": false,
                    "share": "disabled",
                    "provider": {"standin": {"npm": "@ai-sdk/openai-compatible", "name": "standin",
                        "options": {"baseURL": format!("{api}/v1"), "apiKey": STANDIN_KEY},
                        "models": {"standin": {"name": "standin"}}}},
                    "model": "standin/standin",
                    "mcp": {"rec": {"type": "local", "command": command, "enabled": true}}});
                files.push((home.join(".config/opencode/opencode.json"), cfg.to_string()));
                env.insert("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into());
                env.insert("OPENCODE_DISABLE_SHARE".into(), "1".into());
            }
        }
        Setup { files, env }
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
