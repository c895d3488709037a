//! One judge per rule: a `pub fn` named after the rule's id in snake case
//! (`stdio-exit-on-eof` → `stdio_exit_on_eof`), from what a case observed to a typed
//! [`Finding`], small and pure. build.rs sends each `[[rule]]` of `conformance/rules.toml` to
//! its judge here: a rule without one, or a `pub fn` here without a rule, does not compile.
//! Helpers are private. A judge sees only cases that ran (one that could not is not testable),
//! but for an `only_when_missed` rule, which judges those too. Each finding a judge gives
//! needs its message in the rule's `[rule.messages]` (a test runs every judge to check).

use super::judge::{Context, End, Finding};
use crate::model::{group_leftovers, ErrorKind, HostsDoing, Observation, Revision, Stage};

pub fn stdio_exit_on_eof(o: &Observation, cx: &Context) -> Finding {
    if !cx.scenario.closes_stdin() {
        return Finding::NeverClosesStdin;
    }
    if !cx.scenario.eof_comes_alone() {
        return Finding::EofNotAlone;
    }
    prompt_after(o, cx, Stage::Eof)
}

pub fn stdio_exit_on_client_death(o: &Observation, cx: &Context) -> Finding {
    if o.stage == Some(Stage::Survived) {
        return Finding::Orphaned {
            observe_ms: cx.budgets.observe_ms,
        };
    }
    prompt_after(o, cx, Stage::Eof)
}

pub fn stdio_no_forced_kill(o: &Observation, cx: &Context) -> Finding {
    if cx.scenario.hosts_doing() == Some(HostsDoing::LeftRunning) {
        return Finding::NeverEnded;
    }
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

pub fn stdio_exit_on_eof_at_start(o: &Observation, _: &Context) -> Finding {
    match o.stage {
        Some(Stage::Eof) => Finding::ExitedAtStart { exit_ms: o.exit_ms },
        _ => Finding::IgnoredEofAtStart { end: End::of(o) },
    }
}

pub fn process_exit_on_sigterm(o: &Observation, cx: &Context) -> Finding {
    prompt_after(o, cx, Stage::Sigterm)
}

pub fn process_exit_on_sigint(o: &Observation, cx: &Context) -> Finding {
    prompt_after(o, cx, Stage::Sigint)
}

pub fn process_no_leaked_descendants(o: &Observation, cx: &Context) -> Finding {
    if o.stage == Some(Stage::Survived) {
        return Finding::ServerNeverExited;
    }
    let count = o.leftover_count();
    if count == 0 {
        return Finding::NothingLeft;
    }
    let groups = group_leftovers(&o.leftovers);
    let listed: u64 = groups.iter().map(|g| g.pids.len() as u64).sum();
    Finding::Leaked {
        groups,
        unlisted: count.saturating_sub(listed),
        count,
        prompt_ms: cx.budgets.prompt_ms,
    }
}

pub fn stdio_stdout_only_mcp(o: &Observation, cx: &Context) -> Finding {
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

pub fn stdio_inflight_response(o: &Observation, _: &Context) -> Finding {
    match o.inflight_answered {
        Some(true) => Finding::InflightAnswered,
        Some(false) => Finding::InflightDropped,
        None => Finding::NothingInFlight,
    }
}

pub fn process_exit_on_hangup(o: &Observation, cx: &Context) -> Finding {
    exit_after_host(o, cx)
}

pub fn process_exit_on_ctrl_c(o: &Observation, cx: &Context) -> Finding {
    exit_after_host(o, cx)
}

/// The one rule an attack on the processes above the server breaks: the error says it.
pub fn process_no_signals_to_ancestors(o: &Observation, _: &Context) -> Finding {
    match &o.error {
        Some(e) if e.kind == ErrorKind::AncestorSignalled => Finding::SignalledAncestor {
            message: e.message.clone(),
        },
        _ => Finding::AncestorsUntouched,
    }
}

/// Within the prompt budget, counting only the server's own time.
fn prompt(o: &Observation, cx: &Context) -> bool {
    o.own_ms().is_some_and(|t| t <= cx.budgets.prompt_ms as f64)
}

fn prompt_or_not(o: &Observation, cx: &Context, prompt: bool) -> Finding {
    if prompt {
        Finding::Prompt { end: End::of(o) }
    } else {
        Finding::NotPrompt {
            budget_ms: cx.budgets.prompt_ms,
            end: End::of(o),
        }
    }
}

/// Exited at `stage`, promptly after the rule's trigger.
fn prompt_after(o: &Observation, cx: &Context, stage: Stage) -> Finding {
    prompt_or_not(o, cx, o.stage == Some(stage) && prompt(o, cx))
}

/// After a terminal host went away, whatever reached it (the signal, end-of-file), a server
/// must be gone within the prompt budget.
fn exit_after_host(o: &Observation, cx: &Context) -> Finding {
    match o.stage {
        Some(Stage::Survived) => Finding::OutlivedHost {
            observe_ms: cx.budgets.observe_ms,
        },
        stage => prompt_or_not(o, cx, stage.is_some() && prompt(o, cx)),
    }
}
