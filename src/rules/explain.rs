//! All wording of verdicts: a [`Finding`] in words, the note on an ending, and the hint on
//! what held a server. Kept apart from the judge so that changing a sentence never changes a
//! decision.

use crate::model::{Diagnostics, ErrorKind, Owner, ProcState, Runtime, SignalName, Stage};

use super::judge::{End, Finding, Trigger};

fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "?".into(), |v| format!("{v:.0} ms"))
}

/// " (of which N ms waiting for a CPU)" when load was noticeable.
fn load_note(end: &End) -> String {
    match end.runqueue_ms {
        Some(w) if w >= 50.0 => format!(" (of which {w:.0} ms waiting for a CPU)"),
        _ => String::new(),
    }
}

/// How the case ended, in words.
pub fn ending(end: &End) -> String {
    match end.stage {
        Some(Stage::Eof) => format!(
            "it exited on end-of-file after {}{}",
            ms(end.exit_ms),
            load_note(end)
        ),
        Some(Stage::Sigterm) => format!(
            "SIGTERM ended it, {} after the session was ended",
            ms(end.exit_ms)
        ),
        Some(Stage::Sigint) => format!(
            "SIGINT ended it, {} after the session was ended",
            ms(end.exit_ms)
        ),
        Some(Stage::Sighup) => format!(
            "SIGHUP ended it, {} after its terminal went away",
            ms(end.exit_ms)
        ),
        Some(Stage::Sigkill) => format!(
            "only SIGKILL ended it, {} after the session was ended",
            ms(end.exit_ms)
        ),
        Some(Stage::Survived) => "still running when the harness stopped waiting".into(),
        None => "it never ran".into(),
    }
}

fn prompt(after: Trigger, end: &End) -> String {
    let what = match after {
        Trigger::StdinClosed => "after stdin closed",
        Trigger::ClientDied => "after its client died",
        Trigger::Sigterm => "after SIGTERM",
        Trigger::SigintToGroup => "after SIGINT to its process group",
        Trigger::TerminalClosed => "after its terminal host's terminal was closed",
        Trigger::CtrlC => "after Ctrl-C stopped its terminal host",
    };
    format!("exited {} {what}{}", ms(end.exit_ms), load_note(end))
}

fn not_prompt(after: Trigger, budget_ms: u64, end: &End) -> String {
    let what = match after {
        Trigger::StdinClosed => "of stdin closing",
        Trigger::ClientDied => "of its client's death",
        Trigger::Sigterm => "of SIGTERM (stdin still open)",
        Trigger::SigintToGroup => "of SIGINT to its process group",
        Trigger::TerminalClosed => "of its terminal host's terminal closing",
        Trigger::CtrlC => "of Ctrl-C stopping its terminal host",
    };
    format!("did not exit within {budget_ms} ms {what}: {}", ending(end))
}

/// The check message for a finding.
pub fn message(f: &Finding) -> String {
    match f {
        Finding::NotTestable { kind, message } => not_testable(*kind, message),
        Finding::Prompt { after, end } => prompt(*after, end),
        Finding::NotPrompt {
            after,
            budget_ms,
            end,
        } => not_prompt(*after, *budget_ms, end),
        Finding::Orphaned { observe_ms } => format!(
            "orphaned: still running {observe_ms} ms after its client died (reparented away from its client; the harness killed it)"
        ),
        Finding::OutlivedHost { observe_ms, after } => format!(
            "orphaned: still running {observe_ms} ms {} (nothing will ever stop it; the harness killed it)",
            match after {
                Trigger::CtrlC => "after Ctrl-C stopped its terminal host",
                _ => "after its terminal host's terminal was closed",
            }
        ),
        Finding::NeverClosesStdin => "this client never closes stdin".into(),
        Finding::BeforeSigkill { stage } => format!(
            "ended before SIGKILL ({})",
            stage.map(|s| s.to_string()).unwrap_or_default()
        ),
        Finding::Forced { end } => ending(end),
        Finding::WouldHangClient => {
            "it outlived this client's whole ladder: the client would wait forever".into()
        }
        Finding::Abandoned => {
            "it outlived this client's whole ladder: the client gives up and leaves it running".into()
        }
        Finding::EveryServerSignalled => {
            "this client never closes stdin, so every server it stops gets a signal".into()
        }
        Finding::ExitedAtStart { exit_ms } => format!(
            "exited {} after it was started with stdin at end-of-file",
            ms(*exit_ms)
        ),
        Finding::IgnoredEofAtStart { end } => format!(
            "started with stdin at end-of-file, it did not exit by itself: {}",
            ending(end)
        ),
        Finding::ServerNeverExited => "the server itself never exited; see the exit rules".into(),
        Finding::NothingLeft => "nothing it started outlived it".into(),
        Finding::Leaked {
            groups,
            count,
            prompt_ms,
        } => leaked(groups, *count, *prompt_ms),
        Finding::StdoutClean { messages } => {
            format!("{messages} message(s), all valid JSON-RPC")
        }
        Finding::StdoutViolations {
            violations,
            lines,
            first_line,
            kind,
            excerpt,
        } => format!(
            "{violations} of {lines} stdout line(s) are not one JSON-RPC message; first, line {first_line} ({}): \"{excerpt}\"",
            kind.as_str()
        ),
        Finding::ServerRequests { count, first } => format!(
            "sent {count} JSON-RPC request(s) on stdout; first: {}",
            first.as_deref().unwrap_or("?")
        ),
        Finding::InflightAnswered => "the request in flight was answered before it exited".into(),
        Finding::InflightDropped => {
            "it exited without answering the request in flight (the spec allows this)".into()
        }
        Finding::NothingInFlight => "no request was in flight".into(),
        Finding::SignalledAncestor { message } => format!(
            "{message}: a process above the server was signalled by none of the harness (the server or a process it started did it; a host would have been taken down with it)"
        ),
        Finding::AncestorsUntouched => "nothing above it was signalled".into(),
    }
}

/// "Not testable: …", saying whose it is when it is not the server's failure.
fn not_testable(kind: ErrorKind, message: &str) -> String {
    match kind.owner() {
        _ if kind == ErrorKind::AncestorSignalled => format!(
            "Not testable: {message} ({kind}; the server kept this from being measured: see process-no-signals-to-ancestors)"
        ),
        Owner::Server => format!("Not testable: {message} ({kind})"),
        owner => format!(
            "Not testable: {message} ({kind}; {}: never scored against the server)",
            owner.description()
        ),
    }
}

fn leaked(groups: &[crate::model::LeftoverGroup], count: u64, prompt_ms: u64) -> String {
    let listed: usize = groups.iter().map(|g| g.pids.len()).sum();
    let mut list: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
    if count > listed as u64 {
        list.push(format!("{} more not listed", count - listed as u64));
    }
    format!(
        "{count} process(es) it started still ran {prompt_ms} ms after it exited: {}",
        list.join("; ")
    )
}

/// The note on a case whose processes hit the per-case limit.
pub fn limit_hit(refused: u64) -> String {
    format!("the per-case process limit refused {refused} fork(s): a fork storm")
}

/// The note on a case whose real client gives up and leaves the server running.
pub fn left_running(capped_ms: u64) -> String {
    format!(
        "this client stops waiting after its last step and leaves the server running (the harness stopped after {capped_ms} ms)"
    )
}

/// The note on a case whose real client would have waited forever.
pub fn would_wait_forever(capped_ms: u64) -> String {
    format!(
        "this client's last wait has no end: it would wait forever (the harness stopped after {capped_ms} ms)"
    )
}

/// The fix most likely to help a process that outlived end-of-file, by runtime.
pub fn eof_hint(runtime: Option<Runtime>) -> &'static str {
    match runtime {
        Some(Runtime::Node) => "Node stays alive while a timer, socket or other handle is active, and the SDK's stdio transport does not exit on EOF: listen for process.stdin 'end' and 'close' and call process.exit().",
        Some(Runtime::Python) => "Python waits for non-daemon threads (and pending asyncio.to_thread calls) before exiting: when the stdio server's run() returns, stop them or call os._exit().",
        Some(Runtime::Jvm) => "The JVM stays up while any non-daemon thread runs (executors, timers): when the session closes, shut them down or call System.exit().",
        None => "Exit when reading stdin returns end-of-file: stop or detach background work first, and return from main.",
    }
}

/// The fix most likely to help a process that ignored `signal`, by runtime.
pub fn signal_hint(runtime: Option<Runtime>, signal: SignalName) -> String {
    let how = match runtime {
        Some(Runtime::Node) => "a process.on(...) handler that never calls process.exit()",
        Some(Runtime::Python) => "asyncio/anyio taking the KeyboardInterrupt while a worker thread blocks reading stdin, or a signal handler that returns without exiting",
        Some(Runtime::Jvm) => "a shutdown hook that never returns",
        None => "a handler that catches it and carries on",
    };
    format!("It ignored {signal}; usually {how}. Exit from the handler (after brief cleanup).")
}

/// What a process's state alone explains, before any runtime's habits.
fn state_hint(state: ProcState) -> Option<&'static str> {
    match state {
        ProcState::Stopped => Some("It is stopped (state T: SIGSTOP or SIGTSTP): it cannot run, so it can neither notice end-of-file nor act on SIGTERM until it is continued (SIGCONT); only SIGKILL ends it. Something stopped it (the server itself, a debugger, a shell's job control)."),
        ProcState::Traced => Some("It is stopped by a tracer (state t: a debugger or strace holds it): it cannot run until the tracer lets it go; only SIGKILL ends it."),
        ProcState::DiskSleep => Some("It is in uninterruptible sleep (state D: waiting on a disk, a network file system or a kernel lock): signals are held until the wait ends."),
        ProcState::Zombie => Some("It has exited but was not reaped yet (state Z): it is dead, only its parent has not collected it."),
        _ => None,
    }
}

/// The hint for diagnostics taken after `signal` (or after end-of-file when `None`): the
/// process's state first, when it explains everything, then its runtime's habits.
pub fn hint(d: &Diagnostics, signal: Option<SignalName>) -> String {
    if let Some(h) = d.state.and_then(state_hint) {
        return h.to_string();
    }
    match signal {
        Some(s) => signal_hint(d.runtime, s),
        None => eof_hint(d.runtime).to_string(),
    }
}
