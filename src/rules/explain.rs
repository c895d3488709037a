//! All wording of verdicts: a [`Finding`] in words, from its rule's template in the catalogue
//! (`conformance/rules.toml`); the badge's label for a missed rule; the note on an ending, and
//! the hint on what held a server. Kept apart from the judge so that changing a sentence never
//! changes a decision.
//!
//! Templates are minijinja: `{{ field }}` of the finding, `{{ x | ms }}` for milliseconds
//! (`?` when unknown); a finding with an end also has `{{ ending }}` (how the case ended, by
//! stage) and `{{ waiting }}` (the time it waited for a CPU, when noticeable). Nothing is
//! escaped, and a name the finding does not have is an error (the tests render every one).

use minijinja::value::Serde;
use minijinja::Value;
use serde_json::{Map, Value as Json};

use crate::model::{Diagnostics, Observation, ProcState, Runtime, SignalName};

use super::catalogue::{Rule, Wording};
use super::judge::Finding;
use super::template::{holds, render};

/// From this much time waiting for a CPU, a message says so.
const NOTICEABLE_WAIT_MS: f64 = 50.0;

/// A finding's fields, and what its wording adds: `ending` and `waiting` when it has an end,
/// whose the case is when it could not be judged.
fn values(w: &Wording, f: &Finding) -> Result<Map<String, Json>, minijinja::Error> {
    let mut v = match serde_json::to_value(f) {
        Ok(Json::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(end) = f.end() {
        let waiting = match end.runqueue_ms {
            Some(t) if t >= NOTICEABLE_WAIT_MS => render(&w.waiting, &v)?,
            _ => String::new(),
        };
        v.insert("waiting".into(), waiting.into());
        let stage = end
            .stage
            .map_or_else(|| "none".to_string(), |s| s.to_string());
        let ending = match w.ending.get(&stage) {
            Some(t) => render(t, &v)?,
            None => stage,
        };
        v.insert("ending".into(), ending.into());
    }
    if let Finding::NotTestable { kind, .. } = f {
        v.insert("owner".into(), kind.owner().to_string().into());
        v.insert("whose".into(), kind.owner().description().into());
    }
    Ok(v)
}

/// The template of a rule's finding: its own, or for a case that could not be judged, the
/// one every rule shares.
fn template<'c>(w: &'c Wording, rule: &'c Rule, f: &Finding) -> Option<&'c str> {
    match f {
        Finding::NotTestable { .. } => Some(&w.not_testable),
        _ => rule.messages.get(f.name()).map(String::as_str),
    }
}

/// The check message for a finding of `rule`, or why it has none (a test renders every
/// finding of every judge, so that this never shows).
pub fn try_message(w: &Wording, rule: &Rule, f: &Finding) -> Result<String, String> {
    let Some(t) = template(w, rule, f) else {
        return Err(format!(
            "rule `{}` has no message for its finding `{}`: write `{} = \"…\"` under its [rule.messages] in conformance/rules.toml",
            rule.id,
            f.name(),
            f.name()
        ));
    };
    values(w, f)
        .and_then(|v| render(t, &v))
        .map_err(|e| format!("rule `{}`, messages.{}: {e}", rule.id, f.name()))
}

/// The check message for a finding of `rule`.
pub fn message(w: &Wording, rule: &Rule, f: &Finding) -> String {
    try_message(w, rule, f).unwrap_or_else(|e| format!("({e})"))
}

/// What a badge says of a case that missed `rule`, and its rank (lower says more), or why
/// a label's `when` could not be evaluated.
pub fn try_badge_label(rule: &Rule, case: &Observation) -> Result<(u8, String), String> {
    let values = serde_json::json!({ "stage": case.stage, "stdout": case.stdout });
    let case = Value::from(Serde(values));
    for (i, b) in rule.badge.iter().enumerate() {
        let hit = match &b.when {
            None => true,
            Some(w) => {
                holds(w, &case).map_err(|e| format!("rule `{}`, badge[{i}].when: {e}", rule.id))?
            }
        };
        if hit {
            return Ok((b.rank, b.label.clone()));
        }
    }
    Err(format!("rule `{}` has no badge label", rule.id))
}

/// What a badge says of a case that missed `rule`, and its rank: a label whose `when` cannot
/// be evaluated does not hold (a test evaluates every one).
pub fn badge_label(rule: &Rule, case: &Observation) -> (u8, String) {
    try_badge_label(rule, case).unwrap_or_else(|_| {
        let fallback = rule.badge.last().map(|b| (b.rank, b.label.clone()));
        fallback.unwrap_or_else(|| (u8::MAX, rule.id.to_string()))
    })
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
pub fn state_hint(state: ProcState) -> Option<&'static str> {
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
