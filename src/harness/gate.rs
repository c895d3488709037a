//! Fail fast: a server that cannot be launched, exits before its handshake or never answers
//! it is found once. The first of its cases to start is the probe; its other cases that do a
//! handshake wait (their workers run other servers' cases meanwhile) until the probe's
//! handshake is done, then run as ever; if the probe met one of those failures instead, they
//! take its cause without launching the server again. One gate per server and run number
//! (`--repeat` runs differ in the server's environment).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use crate::model::{CaseError, ErrorKind, Observation, ScenarioId};

#[derive(Clone, Debug)]
enum State {
    Probing,
    Open,
    /// The probe's ending and its error.
    Failed(ScenarioId, CaseError),
}

type Key = (String, usize);

/// The gates of one run's cases.
#[derive(Default)]
pub struct Gates(Mutex<HashMap<Key, State>>);

/// What a case may do now.
pub enum Turn<'a> {
    /// Launch its server; as the probe, it opens or fails the gate.
    Go(Option<Probe<'a>>),
    /// Not launched: the probe (`by`) met this cause.
    Same { by: ScenarioId, error: CaseError },
}

/// The probe's hold on its gate; dropped without [`Probe::finish`] (a panic), it opens.
pub struct Probe<'a> {
    gates: &'a Gates,
    key: Key,
    scenario: ScenarioId,
}

/// Is `kind` the server's failure to come up at all, whatever the ending? Spawn failures
/// are so even for a case without a handshake (`stdin-null`).
fn shared(kind: ErrorKind, handshakes: bool) -> bool {
    match kind {
        ErrorKind::SpawnFailed => true,
        ErrorKind::ExitedBeforeHandshake | ErrorKind::HandshakeTimeout => handshakes,
        _ => false,
    }
}

impl Gates {
    fn map(&self) -> MutexGuard<'_, HashMap<Key, State>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The turn of a case of `server` (run `run`, ending `scenario`), or `None` while its
    /// probe has not finished its handshake: the caller takes another case meanwhile.
    /// `handshakes`: the case does a handshake (all but `stdin-null`), so it waits for the
    /// probe and can be a probe.
    pub fn claim(
        &self,
        server: &str,
        run: usize,
        scenario: &ScenarioId,
        handshakes: bool,
    ) -> Option<Turn<'_>> {
        let key = (server.to_string(), run);
        let mut map = self.map();
        match map.get(&key) {
            Some(State::Failed(by, error)) if shared(error.kind, handshakes) => Some(Turn::Same {
                by: by.clone(),
                error: error.clone(),
            }),
            Some(State::Probing) if handshakes => None,
            None if handshakes => {
                map.insert(key.clone(), State::Probing);
                Some(Turn::Go(Some(Probe {
                    gates: self,
                    key,
                    scenario: scenario.clone(),
                })))
            }
            _ => Some(Turn::Go(None)),
        }
    }
}

impl Probe<'_> {
    /// The probe's handshake is done: the others go.
    pub fn served(&self) {
        self.set(State::Open);
    }

    /// The probe ended: a failure to come up fails the gate (unless the machine's load
    /// decided it), anything else opens it.
    pub fn finish(self, o: &Observation) {
        let state = match &o.error {
            Some(e) if shared(e.kind, true) && o.machine_bound.is_none() => {
                State::Failed(self.scenario.clone(), e.clone())
            }
            _ => State::Open,
        };
        self.set(state);
    }

    fn set(&self, state: State) {
        let mut map = self.gates.map();
        // Once open, a gate stays open: a failure after the handshake is the ending's own.
        if matches!(map.get(&self.key), Some(State::Probing)) {
            map.insert(self.key.clone(), state);
        }
    }
}

impl Drop for Probe<'_> {
    fn drop(&mut self) {
        self.set(State::Open);
    }
}

/// The first queued case (by index) that `claim` lets go, taken off the queue with its turn;
/// `None` once the queue is empty. While every case left waits for a probe's handshake, it
/// waits too (a few, rarely long).
pub fn next_case<'g>(
    queue: &Mutex<VecDeque<usize>>,
    claim: impl Fn(usize) -> Option<Turn<'g>>,
) -> Option<(usize, Turn<'g>)> {
    loop {
        {
            let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
            if q.is_empty() {
                return None;
            }
            let found = q
                .iter()
                .enumerate()
                .find_map(|(pos, &i)| claim(i).map(|turn| (pos, i, turn)));
            if let Some((pos, i, turn)) = found {
                q.remove(pos);
                return Some((i, turn));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The observation of a case not launched because its probe met `error`.
pub fn same_cause(
    server: &str,
    scenario: &ScenarioId,
    by: &ScenarioId,
    error: &CaseError,
) -> Observation {
    // The cause without the details (stdout, stderr) the probe's row alone carries.
    let line = error.message.lines().next().unwrap_or_default();
    let cause = line.split("; ").next().unwrap_or(line);
    Observation {
        same_as: Some(by.clone()),
        ..Observation::failed(
            server,
            scenario,
            error.kind,
            format!("as its `{by}` case: {cause} (not launched again)"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Ending;

    fn id(e: Ending) -> ScenarioId {
        ScenarioId::Ending(e)
    }

    fn failed(kind: ErrorKind) -> Observation {
        Observation::failed(
            "s",
            &id(Ending::Close),
            kind,
            "no answer; stderr: boom\n".into(),
        )
    }

    #[test]
    fn the_first_case_probes_the_others_wait_then_share_its_failure() {
        let g = Gates::default();
        let Some(Turn::Go(Some(probe))) = g.claim("s", 1, &id(Ending::Close), true) else {
            panic!("the first case probes");
        };
        assert!(g.claim("s", 1, &id(Ending::Exit), true).is_none());
        // Another server, another run number, and a case without a handshake go at once.
        assert!(matches!(
            g.claim("t", 1, &id(Ending::Exit), true),
            Some(Turn::Go(Some(_)))
        ));
        assert!(matches!(
            g.claim("s", 2, &id(Ending::Exit), true),
            Some(Turn::Go(Some(_)))
        ));
        assert!(matches!(
            g.claim("s", 1, &id(Ending::StdinNull), false),
            Some(Turn::Go(None))
        ));
        probe.finish(&failed(ErrorKind::HandshakeTimeout));
        let Some(Turn::Same { by, error }) = g.claim("s", 1, &id(Ending::Exit), true) else {
            panic!("shares the cause");
        };
        let o = same_cause("s", &id(Ending::Exit), &by, &error);
        assert_eq!(o.same_as, Some(id(Ending::Close)));
        let e = o.error.unwrap();
        assert_eq!(e.kind, ErrorKind::HandshakeTimeout);
        assert_eq!(
            e.message,
            "as its `close` case: no answer (not launched again)"
        );
        // Not having a handshake, stdin-null meets its own ending.
        assert!(matches!(
            g.claim("s", 1, &id(Ending::StdinNull), false),
            Some(Turn::Go(None))
        ));
    }

    #[test]
    fn a_served_probe_or_another_error_opens_the_gate() {
        let g = Gates::default();
        let Some(Turn::Go(Some(probe))) = g.claim("s", 1, &id(Ending::Close), true) else {
            panic!();
        };
        probe.served();
        assert!(matches!(
            g.claim("s", 1, &id(Ending::Exit), true),
            Some(Turn::Go(None))
        ));
        probe.finish(&failed(ErrorKind::HandshakeTimeout));
        assert!(matches!(
            g.claim("s", 1, &id(Ending::Exit), true),
            Some(Turn::Go(None))
        ));
        let Some(Turn::Go(Some(probe))) = g.claim("u", 1, &id(Ending::Close), true) else {
            panic!();
        };
        probe.finish(&failed(ErrorKind::SetupFailed));
        assert!(matches!(
            g.claim("u", 1, &id(Ending::Exit), true),
            Some(Turn::Go(None))
        ));
        // A missing command fails stdin-null too.
        let Some(Turn::Go(Some(probe))) = g.claim("v", 1, &id(Ending::Close), true) else {
            panic!();
        };
        probe.finish(&failed(ErrorKind::SpawnFailed));
        assert!(matches!(
            g.claim("v", 1, &id(Ending::StdinNull), false),
            Some(Turn::Same { .. })
        ));
    }
}
