//! The host view: for each server, what each host's user lives through when the session
//! ends (how long they wait, whether the server was killed hard, whether something kept
//! running) and what the host would have had to do instead, cross-referenced with the
//! server's `close` case. Pure, from the report only; text, Markdown and HTML render it.

use crate::model::{
    Action, Ending, HostsDoing, JudgedCase, ProfileBasis, ProfileInfo, ProfileKind, Report,
    ScenarioId, SignalName, Stage, Status,
};

use super::present::{cells, ms};

/// A column of the host view: a host profile, or a terminal ending a host's user causes.
#[derive(Clone, Debug)]
pub struct Column<'a> {
    pub scenario: &'a ScenarioId,
    pub label: String,
    /// Where the host's ladder comes from, in a few words (none for terminal endings).
    pub source: Option<String>,
}

/// One server under one host.
#[derive(Clone, Debug)]
pub struct HostCell<'a> {
    pub case: &'a JudgedCase,
    /// How long the host's user waited for the server to go, when it went.
    pub wait_ms: Option<f64>,
    /// What ended it, in words ("stdin EOF", "SIGTERM", "SIGKILL", ...).
    pub ended_by: String,
    /// SIGKILL (or nothing) ended it.
    pub hard: bool,
    /// The server, or something it started, outlived the host.
    pub left_running: bool,
    /// Set when the host's ladder left the server no say: what ended it (or did not) is the
    /// host's doing, not the server's conduct.
    pub hosts_doing: Option<HostsDoing>,
}

impl HostCell<'_> {
    /// The case's verdict as a host cell shows it: `None` where it could not be judged, or
    /// where the host left the server no say and it missed no rule (then it is the host's
    /// doing, never "ok" beside a server left running or killed hard).
    pub fn verdict(&self) -> Option<Status> {
        super::present::judged(self.case).filter(|s| self.hosts_doing.is_none() || s.is_miss())
    }

    /// The cell in a few words: "10 s, SIGTERM", "left running", "2 s, SIGKILL · 1 left".
    pub fn short(&self) -> String {
        if let Some(n) = &self.case.not_testable {
            return n.reason.label().to_string();
        }
        if let Some(e) = &self.case.error {
            return super::present::error_cell(e.kind);
        }
        let mut s = match self.wait_ms {
            Some(t) => format!("{}, {}", seconds(t), self.ended_by),
            None => self.ended_by.clone(),
        };
        let n = self.case.leftover_count();
        if n > 0 {
            s.push_str(&format!(" · {n} left"));
        }
        s
    }
}

/// One server's row.
#[derive(Clone, Debug)]
pub struct HostMatrixRow<'a> {
    pub server: &'a str,
    pub cells: Vec<Option<HostCell<'a>>>,
    /// What ends this server gently, from its `close` case: the answer to "what would the
    /// host have had to do".
    pub needs: Option<String>,
}

#[derive(Clone, Debug)]
pub struct HostView<'a> {
    pub columns: Vec<Column<'a>>,
    pub rows: Vec<HostMatrixRow<'a>>,
}

/// Is this scenario a column of the host view?
pub fn is_host_scenario(report: &Report, s: &ScenarioId) -> bool {
    match s {
        ScenarioId::Profile(p) => report
            .profiles
            .get(p)
            .is_some_and(|i| i.kind == ProfileKind::Host),
        ScenarioId::Ending(_) => false,
    }
}

/// The host view of a report, when it ran any host profile.
pub fn view(report: &Report) -> Option<HostView<'_>> {
    let mut columns: Vec<Column> = Vec::new();
    let mut servers: Vec<&str> = Vec::new();
    for r in &report.results {
        if !servers.contains(&r.server.as_str()) {
            servers.push(&r.server);
        }
        if is_host_scenario(report, &r.scenario)
            && !columns.iter().any(|c| c.scenario == &r.scenario)
        {
            let info = match &r.scenario {
                ScenarioId::Profile(p) => report.profiles.get(p),
                ScenarioId::Ending(_) => None,
            };
            columns.push(Column {
                scenario: &r.scenario,
                label: r
                    .scenario
                    .to_string()
                    .trim_start_matches("close:")
                    .to_string(),
                source: info.map(source),
            });
        }
    }
    if columns.is_empty() {
        return None;
    }
    columns.extend(terminal_columns(report));
    let grid = cells(report);
    let close = ScenarioId::Ending(Ending::Close);
    let rows = servers
        .into_iter()
        .filter(|s| columns.iter().any(|c| grid.contains_key(&(*s, c.scenario))))
        .map(|server| HostMatrixRow {
            server,
            cells: columns
                .iter()
                .map(|c| grid.get(&(server, c.scenario)).map(|r| cell(r)))
                .collect(),
            needs: grid.get(&(server, &close)).and_then(|r| needs(r)),
        })
        .collect();
    Some(HostView { columns, rows })
}

/// The terminal endings the report ran: they answer "what if my user closes the terminal or
/// hits Ctrl-C".
fn terminal_columns(report: &Report) -> Vec<Column<'_>> {
    Ending::ALL
        .iter()
        .filter_map(|e| Some((*e, e.host_label()?)))
        .filter_map(|(e, label)| {
            let r = report
                .results
                .iter()
                .find(|r| r.scenario == ScenarioId::Ending(e))?;
            Some(Column {
                scenario: &r.scenario,
                label: label.into(),
                source: None,
            })
        })
        .collect()
}

fn cell(r: &JudgedCase) -> HostCell<'_> {
    let survived = r.stage == Some(Stage::Survived);
    // Killed hard with no rule missed: the host's ladder left no time to act on its gentler
    // steps (Copilot's SIGKILL 2 ms after its SIGTERM), so the kill is the host's doing too.
    let unscored_kill =
        r.stage == Some(Stage::Sigkill) && super::present::judged(r).is_some_and(|s| !s.is_miss());
    let hosts_doing = r
        .hosts_doing()
        .or(unscored_kill.then_some(HostsDoing::KilledHard));
    let ended_by = match r.stage {
        Some(Stage::Survived) if hosts_doing == Some(HostsDoing::LeftRunning) => {
            "host left it running"
        }
        Some(_) if r.launcher_left_it() => "its launcher left it",
        Some(Stage::Eof) => "stdin EOF",
        Some(Stage::Sigint) => "SIGINT",
        Some(Stage::Sigterm) => "SIGTERM",
        Some(Stage::Sighup) => "SIGHUP",
        Some(Stage::Sigkill) => "SIGKILL",
        Some(Stage::Survived) => "left running",
        None => "?",
    };
    HostCell {
        case: r,
        // A server its launcher left behind never went: the user's wait did not end.
        wait_ms: if survived || r.launcher_left_it() {
            None
        } else {
            r.exit_ms
        },
        ended_by: ended_by.into(),
        // A host that sends nothing, or no SIGKILL, kills nothing: the harness ended what it
        // left running (VS Code's quit only closes the pipes).
        hard: match hosts_doing {
            Some(HostsDoing::LeftRunning) => false,
            _ => host_kills(r) && matches!(r.stage, Some(Stage::Sigkill | Stage::Survived)),
        },
        left_running: survived || r.launcher_left_it() || r.leftover_count() > 0,
        hosts_doing,
    }
}

/// The host's ladder has a SIGKILL (reports without a recorded ladder: assume it has).
fn host_kills(r: &JudgedCase) -> bool {
    r.ladder.as_ref().is_none_or(|l| {
        l.steps.iter().any(|s| {
            matches!(
                s.action,
                Action::Signal {
                    signal: SignalName::Kill,
                    ..
                }
            )
        })
    })
}

/// What ends the server gently, from how it answered the spec's ladder.
fn needs(close: &JudgedCase) -> Option<String> {
    if close.error.is_some() {
        return None;
    }
    let t = close.exit_ms.map(seconds).unwrap_or_default();
    if close.launcher_left_it() {
        return Some("nothing a host sends: its launcher exits and leaves it running".into());
    }
    Some(match close.stage? {
        Stage::Eof => format!("closing stdin ({t})"),
        Stage::Sigterm | Stage::Sigint | Stage::Sighup => {
            "SIGTERM: it ignores stdin EOF".to_string()
        }
        Stage::Sigkill => "SIGKILL: it ignores stdin EOF and SIGTERM".to_string(),
        Stage::Survived => "nothing ends it".to_string(),
    })
}

/// Where a profile's ladder comes from, in a few words: "measured: 2.1.332, 2026-12-02",
/// "read: microsoft/vscode @ 0baa8cd" or "observed: 4 reports".
pub fn source(info: &ProfileInfo) -> String {
    match (info.basis, &info.source, &info.measured) {
        (ProfileBasis::Measured, _, Some(m)) => format!("measured: {}, {}", m.version, m.date),
        (ProfileBasis::Measured, _, None) => "measured".into(),
        (ProfileBasis::Source, Some(s), _) => {
            let r: String = s.reference.chars().take(12).collect();
            let r = r.split([' ', ';']).next().unwrap_or_default().to_string();
            format!("read: {} @ {r}", s.repository)
        }
        (ProfileBasis::Source, None, _) => "read".into(),
        (ProfileBasis::Observed, _, _) => match info.observed.len() {
            1 => "observed: 1 report".into(),
            n => format!("observed: {n} reports"),
        },
    }
}

/// Where a profile's ladder comes from, in full: the source read, the measurement, or the
/// public reports it was observed in.
pub fn from(info: &ProfileInfo) -> String {
    match (&info.source, &info.measured) {
        (Some(s), _) => format!("{} {} at {}", s.repository, s.paths.join(", "), s.reference),
        (None, Some(m)) => format!(
            "measured here: {} {}, {} ({} repeats of {})",
            m.package,
            m.version,
            m.date,
            m.repeats,
            m.triggers.join(", ")
        ),
        (None, None) if !info.observed.is_empty() => {
            format!("observed in {}", info.observed.join(", "))
        }
        (None, None) => source(info),
    }
}

/// A user's wait, in the unit a person thinks in.
pub fn seconds(t: f64) -> String {
    if t < 1000.0 {
        ms(t)
    } else {
        format!("{:.1} s", t / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{report_of, result};

    #[test]
    fn a_server_that_needs_sigterm_costs_a_vscode_user_ten_seconds() {
        let report = report_of(vec![
            result("s", "close", Stage::Sigterm, 2004.0),
            result("s", "close:vscode", Stage::Sigterm, 10003.0),
            result("s", "close:zed", Stage::Sigkill, 1.0),
            result("s", "close:claude-desktop", Stage::Survived, 5000.0),
            result("s", "sighup", Stage::Sighup, 3.0),
        ]);
        let v = view(&report).expect("host cases");
        let labels: Vec<&str> = v.columns.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            ["vscode", "zed", "claude-desktop", "terminal closed"]
        );
        assert_eq!(
            v.columns[0].source.as_deref(),
            Some("read: microsoft/vscode @ 0baa8cd78ba4")
        );
        assert!(v.columns[2]
            .source
            .as_deref()
            .unwrap()
            .starts_with("observed"));
        let row = &v.rows[0];
        assert_eq!(row.needs.as_deref(), Some("SIGTERM: it ignores stdin EOF"));
        let c: Vec<&HostCell> = row.cells.iter().map(|c| c.as_ref().unwrap()).collect();
        assert_eq!(c[0].short(), "10.0 s, SIGTERM");
        assert!(c[1].hard && !c[1].left_running);
        assert!(c[2].left_running && c[2].wait_ms.is_none());
        assert_eq!(c[3].short(), "3 ms, SIGHUP");
    }

    /// A host that never ends the session left the server running; one that kills first
    /// killed it hard: neither is the server's conduct, and no fix is offered for either.
    #[test]
    fn what_the_host_did_is_the_hosts_doing() {
        let report = report_of(vec![
            result("s", "close", Stage::Eof, 3.0),
            result("s", "close:codex", Stage::Survived, 5000.0),
            result("s", "close:zed", Stage::Sigkill, 1.0),
        ]);
        let v = view(&report).expect("host cases");
        let c: Vec<&HostCell> = v.rows[0].cells.iter().flatten().collect();
        assert_eq!(c[0].hosts_doing, Some(HostsDoing::LeftRunning));
        assert_eq!(c[0].short(), "host left it running");
        assert!(!c[0].hard && c[0].left_running);
        assert_eq!(c[1].hosts_doing, Some(HostsDoing::KilledHard));
        assert!(c[1].hard);
        let mut held = report.results[1].clone();
        held.observation.diagnostics = Some(Default::default());
        assert_eq!(crate::render::present::held_by(&held), None);
    }

    /// Copilot's SIGTERM, then its SIGKILL 2 ms later: a correct server killed hard missed no
    /// rule, so the kill is the host's doing, and what held it is no fix of the server's.
    #[test]
    fn a_kill_that_missed_no_rule_is_the_hosts_doing() {
        let mut r = result("s", "close:copilot-cli", Stage::Sigkill, 18.0);
        r.observation.diagnostics = Some(Default::default());
        let report = report_of(vec![result("s", "close", Stage::Eof, 3.0), r]);
        let v = view(&report).expect("host cases");
        let c = v.rows[0].cells[0].as_ref().expect("copilot-cli");
        assert_eq!(c.hosts_doing, Some(HostsDoing::KilledHard));
        assert_eq!(c.verdict(), None);
        assert_eq!(crate::render::present::held_by(&report.results[1]), None);
        assert!(crate::render::present::first_held(&report, "s").is_none());
    }

    /// VS Code's quit only closes the pipes: a server it left running was not killed hard
    /// by it (the harness ended it), while one under Goose's SIGKILL was.
    #[test]
    fn a_host_that_sends_no_sigkill_kills_nothing() {
        let report = report_of(vec![
            result("s", "close:vscode-quit", Stage::Survived, 5000.0),
            result("s", "close:goose", Stage::Sigkill, 3000.0),
        ]);
        let v = view(&report).expect("host cases");
        let c: Vec<&HostCell> = v.rows[0].cells.iter().flatten().collect();
        assert!(!c[0].hard && c[0].left_running);
        assert!(c[1].hard);
    }

    /// A launcher that exits on the host's signal and leaves the server running: the cell and
    /// the matrix say so, and no wait is counted as the user's.
    #[test]
    fn a_server_its_launcher_left_is_not_said_to_have_gone() {
        let mut r = result("s", "close:gemini-cli", Stage::Sigterm, 3.0);
        r.observation.server_process = Some(crate::model::ServerProcess {
            pid: 42,
            cmdline: "node s.js".into(),
            launchers: vec!["sh -c".into()],
            ..Default::default()
        });
        r.observation.leftovers = vec![crate::model::Leftover {
            pid: 42,
            cmdline: "node s.js".into(),
            started_by: Some(41),
            started_by_cmdline: Some("sh -c node s.js".into()),
        }];
        let report = report_of(vec![r]);
        let v = view(&report).expect("host cases");
        let c = v.rows[0].cells[0].as_ref().unwrap();
        assert_eq!(c.ended_by, "its launcher left it");
        assert!(c.wait_ms.is_none() && c.left_running);
        let text = crate::render::present::outcome(&report.results[0]);
        assert_eq!(text, "left by its launcher");
        let lines = crate::render::present::leftovers(&report.results[0]);
        assert!(
            lines[0].contains("the server itself, its launcher left it"),
            "{lines:?}"
        );
    }

    #[test]
    fn no_host_profile_no_view() {
        let report = report_of(vec![result("s", "close", Stage::Eof, 2.0)]);
        assert!(view(&report).is_none());
    }
}
