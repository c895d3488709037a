//! The judge: one small pure function per rule, from what a case observed to a typed
//! [`Finding`]. Wording is chosen later, in [`super::explain`].

use crate::model::{
    group_leftovers, Budgets, ErrorKind, LeftoverGroup, Observation, Outcome, Revision, RuleId,
    Scenario, Stage, ViolationKind,
};

/// What set the exit rules' clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    StdinClosed,
    ClientDied,
    Sigterm,
    SigintToGroup,
    TerminalClosed,
    CtrlC,
}

/// How a case ended, as the wording of a finding needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct End {
    pub stage: Option<Stage>,
    pub exit_ms: Option<f64>,
    pub runqueue_ms: Option<f64>,
}

impl End {
    fn of(o: &Observation) -> Self {
        Self {
            stage: o.stage,
            exit_ms: o.exit_ms,
            runqueue_ms: o.runqueue_ms,
        }
    }
}

/// What a rule found in one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// A prerequisite failed (no handshake, no launch): counts at the rule's level when the
    /// error is the server's own (see [`ErrorKind::scores_untested`]), is skipped otherwise.
    NotTestable {
        kind: ErrorKind,
        message: String,
    },
    /// Exited within the prompt budget after its trigger.
    Prompt {
        after: Trigger,
        end: End,
    },
    /// Did not exit within the prompt budget after its trigger.
    NotPrompt {
        after: Trigger,
        budget_ms: u64,
        end: End,
    },
    /// Still running `observe_ms` after its client died.
    Orphaned {
        observe_ms: u64,
    },
    /// This client never closes stdin: the EOF rule does not apply.
    NeverClosesStdin,
    /// Ended before SIGKILL.
    BeforeSigkill {
        stage: Option<Stage>,
    },
    /// Needed SIGKILL, or outlived the ladder.
    Forced {
        end: End,
    },
    /// Outlived a client whose last wait has no end.
    WouldHangClient,
    /// Outlived a client that then gives up and leaves it running.
    Abandoned,
    /// Still running `observe_ms` after its terminal host went away.
    OutlivedHost {
        observe_ms: u64,
        after: Trigger,
    },
    /// A client that never closes stdin signals every server: not the server's doing.
    EveryServerSignalled,
    /// Started with stdin at EOF and exited by itself.
    ExitedAtStart {
        exit_ms: Option<f64>,
    },
    /// Started with stdin at EOF and needed a signal (or outlived the ladder).
    IgnoredEofAtStart {
        end: End,
    },
    /// The server itself never exited: the leak rule waits for the exit rules.
    ServerNeverExited,
    NothingLeft,
    Leaked {
        groups: Vec<LeftoverGroup>,
        count: u64,
        prompt_ms: u64,
    },
    StdoutClean {
        messages: u64,
    },
    StdoutViolations {
        violations: u64,
        lines: u64,
        first_line: u64,
        kind: ViolationKind,
        excerpt: String,
    },
    ServerRequests {
        count: u64,
        first: Option<String>,
    },
    InflightAnswered,
    InflightDropped,
    NothingInFlight,
    /// A process above the server was killed or stopped by a signal the harness did not send.
    SignalledAncestor {
        message: String,
    },
    /// Nothing above the server was signalled.
    AncestorsUntouched,
}

impl Finding {
    pub fn outcome(&self) -> Outcome {
        use Finding::*;
        match self {
            NotTestable { .. } => Outcome::NotTestable,
            Prompt { .. }
            | BeforeSigkill { .. }
            | ExitedAtStart { .. }
            | NothingLeft
            | StdoutClean { .. }
            | InflightAnswered
            | AncestorsUntouched => Outcome::Pass,
            NotPrompt { .. }
            | Orphaned { .. }
            | OutlivedHost { .. }
            | Forced { .. }
            | WouldHangClient
            | Abandoned
            | IgnoredEofAtStart { .. }
            | Leaked { .. }
            | StdoutViolations { .. }
            | ServerRequests { .. }
            | InflightDropped
            | SignalledAncestor { .. } => Outcome::Fail,
            NeverClosesStdin | EveryServerSignalled | ServerNeverExited | NothingInFlight => {
                Outcome::NotApplicable
            }
        }
    }
}

/// What the judge knows about a case besides its observation.
pub struct Context<'a> {
    pub scenario: &'a Scenario,
    pub budgets: &'a Budgets,
    pub revision: Revision,
}

/// Judges one rule on one case.
pub fn judge(rule: RuleId, o: &Observation, cx: &Context) -> Finding {
    if rule == RuleId::ProcessNoSignalsToAncestors {
        return no_signals_to_ancestors(o);
    }
    if let Some(e) = &o.error {
        return Finding::NotTestable {
            kind: e.kind,
            message: e.message.clone(),
        };
    }
    match rule {
        RuleId::StdioExitOnEof => exit_on_eof(o, cx),
        RuleId::StdioExitOnClientDeath => exit_on_client_death(o, cx),
        RuleId::StdioNoForcedKill => no_forced_kill(o, cx),
        RuleId::StdioExitOnEofAtStart => exit_on_eof_at_start(o),
        RuleId::ProcessExitOnSigterm => prompt_after(o, cx, Stage::Sigterm, Trigger::Sigterm),
        RuleId::ProcessExitOnSigint => prompt_after(o, cx, Stage::Sigint, Trigger::SigintToGroup),
        RuleId::ProcessNoLeakedDescendants => no_leaked_descendants(o, cx),
        RuleId::StdioStdoutOnlyMcp => stdout_only_mcp(o, cx),
        RuleId::StdioInflightResponse => inflight_response(o),
        RuleId::ProcessExitOnHangup => exit_after_host(o, cx, Trigger::TerminalClosed),
        RuleId::ProcessExitOnCtrlC => exit_after_host(o, cx, Trigger::CtrlC),
        RuleId::ProcessNoSignalsToAncestors => no_signals_to_ancestors(o),
    }
}

/// The one rule an attack on the processes above the server breaks: the error says it.
fn no_signals_to_ancestors(o: &Observation) -> Finding {
    match &o.error {
        Some(e) if e.kind == ErrorKind::AncestorSignalled => Finding::SignalledAncestor {
            message: e.message.clone(),
        },
        _ => Finding::AncestorsUntouched,
    }
}

/// Exited at `stage` within the prompt budget, counting only the server's own time.
fn within(o: &Observation, cx: &Context, stage: Stage) -> bool {
    o.stage == Some(stage) && o.own_ms().is_some_and(|t| t <= cx.budgets.prompt_ms as f64)
}

fn prompt_after(o: &Observation, cx: &Context, stage: Stage, after: Trigger) -> Finding {
    if within(o, cx, stage) {
        Finding::Prompt {
            after,
            end: End::of(o),
        }
    } else {
        Finding::NotPrompt {
            after,
            budget_ms: cx.budgets.prompt_ms,
            end: End::of(o),
        }
    }
}

fn exit_on_eof(o: &Observation, cx: &Context) -> Finding {
    if !cx.scenario.closes_stdin() {
        return Finding::NeverClosesStdin;
    }
    prompt_after(o, cx, Stage::Eof, Trigger::StdinClosed)
}

fn exit_on_client_death(o: &Observation, cx: &Context) -> Finding {
    if o.stage == Some(Stage::Survived) {
        return Finding::Orphaned {
            observe_ms: cx.budgets.observe_ms,
        };
    }
    prompt_after(o, cx, Stage::Eof, Trigger::ClientDied)
}

/// After a terminal host went away, whatever reached it (the signal, end-of-file), a server
/// must be gone within the prompt budget.
fn exit_after_host(o: &Observation, cx: &Context, after: Trigger) -> Finding {
    match o.stage {
        Some(Stage::Survived) => Finding::OutlivedHost {
            observe_ms: cx.budgets.observe_ms,
            after,
        },
        Some(_) if o.own_ms().is_some_and(|t| t <= cx.budgets.prompt_ms as f64) => {
            Finding::Prompt {
                after,
                end: End::of(o),
            }
        }
        _ => Finding::NotPrompt {
            after,
            budget_ms: cx.budgets.prompt_ms,
            end: End::of(o),
        },
    }
}

fn no_forced_kill(o: &Observation, cx: &Context) -> Finding {
    if !cx.scenario.closes_stdin() {
        return match o.stage {
            // Even its signals did not end it: a client that waits without end hangs forever,
            // one that gives up leaves it running.
            Some(Stage::Survived) if cx.scenario.unbounded => Finding::WouldHangClient,
            Some(Stage::Survived) if cx.scenario.abandons => Finding::Abandoned,
            _ => Finding::EveryServerSignalled,
        };
    }
    match o.stage {
        Some(Stage::Sigkill | Stage::Survived) => Finding::Forced { end: End::of(o) },
        stage => Finding::BeforeSigkill { stage },
    }
}

fn exit_on_eof_at_start(o: &Observation) -> Finding {
    match o.stage {
        Some(Stage::Eof) => Finding::ExitedAtStart { exit_ms: o.exit_ms },
        _ => Finding::IgnoredEofAtStart { end: End::of(o) },
    }
}

fn no_leaked_descendants(o: &Observation, cx: &Context) -> Finding {
    if o.stage == Some(Stage::Survived) {
        Finding::ServerNeverExited
    } else if o.leftover_count() == 0 {
        Finding::NothingLeft
    } else {
        Finding::Leaked {
            groups: group_leftovers(&o.leftovers),
            count: o.leftover_count(),
            prompt_ms: cx.budgets.prompt_ms,
        }
    }
}

fn stdout_only_mcp(o: &Observation, cx: &Context) -> Finding {
    let s = &o.stdout;
    if let Some(v) = &s.first_violation {
        Finding::StdoutViolations {
            violations: s.violations,
            lines: s.lines,
            first_line: v.line,
            kind: v.kind,
            excerpt: v.excerpt.clone(),
        }
    } else if cx.revision >= Revision::EOF_EXIT && s.server_requests > 0 {
        // 2026-07-28 also forbids requests from the server on stdout.
        Finding::ServerRequests {
            count: s.server_requests,
            first: s.first_server_request.clone(),
        }
    } else {
        Finding::StdoutClean {
            messages: s.messages,
        }
    }
}

fn inflight_response(o: &Observation) -> Finding {
    match o.inflight_answered {
        Some(true) => Finding::InflightAnswered,
        Some(false) => Finding::InflightDropped,
        None => Finding::NothingInFlight,
    }
}
