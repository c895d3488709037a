//! The handshake that confirms the server is up and serving: `initialize` →
//! `notifications/initialized` → `ping`, or `ping` alone for a stateless (2026-07-28) server.

use std::io;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use super::wire::{is_request, WireEvent};
use crate::config::manifest::Protocol;
use crate::model::{HandshakeInfo, HandshakeMode};
use crate::os::{mono_ns, ms_between};

/// The protocol revision the harness asks for in `initialize`.
pub const CLIENT_PROTOCOL_VERSION: &str = "2025-11-25";

/// The handshake's budget. The harness counts only the server's own time (not time its
/// processes waited for a CPU), so a slow start on a busy machine is not a timeout.
pub trait Deadline {
    /// How long to wait before asking again; `None` once the budget is spent.
    fn next_wait(&mut self) -> Option<Duration>;
    /// The time counted so far, in milliseconds (for messages).
    fn counted_ms(&self) -> u64;
}

/// A budget of wall-clock time from a start (for tests and for callers without a tree to
/// sample).
pub struct WallDeadline {
    start_ns: u64,
    end_ns: u64,
}

impl WallDeadline {
    pub fn new(start_ns: u64, budget: Duration) -> Self {
        Self {
            start_ns,
            end_ns: start_ns + budget.as_nanos() as u64,
        }
    }
}

impl Deadline for WallDeadline {
    fn next_wait(&mut self) -> Option<Duration> {
        let left = self.end_ns.saturating_sub(mono_ns());
        (left > 0).then(|| Duration::from_nanos(left).min(Duration::from_millis(50)))
    }

    fn counted_ms(&self) -> u64 {
        ms_between(self.start_ns, mono_ns()) as u64
    }
}

/// The server's stdin, as the handshake writes to it.
pub trait Peer {
    /// Writes all of `buf`, waiting while the server does not read (its stdin pipe is
    /// full); gives up with `TimedOut` when the deadline is spent.
    fn send_all(&mut self, buf: &[u8], deadline: &mut dyn Deadline) -> io::Result<()>;
}

impl Peer for Vec<u8> {
    fn send_all(&mut self, buf: &[u8], _: &mut dyn Deadline) -> io::Result<()> {
        self.extend_from_slice(buf);
        Ok(())
    }
}

/// Why the handshake did not complete. The caller adds what happened to the process.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeFailure {
    #[error("no answer to `{request}` within {waited_ms} ms of the server's own time")]
    Timeout {
        request: &'static str,
        waited_ms: u64,
    },
    #[error("the server closed its stdout before answering `{request}`")]
    StdoutClosed { request: &'static str },
    #[error("cannot write `{request}` to the server's stdin: {error}")]
    WriteFailed {
        request: &'static str,
        error: String,
    },
    #[error("the server answered `{request}` with an error: {error}")]
    Rejected {
        request: &'static str,
        error: String,
    },
}

fn send(
    stdin: &mut impl Peer,
    msg: &Value,
    request: &'static str,
    deadline: &mut dyn Deadline,
) -> Result<(), HandshakeFailure> {
    let mut line = serde_json::to_vec(msg).expect("JSON values serialize");
    line.push(b'\n');
    stdin
        .send_all(&line, deadline)
        .map_err(|e| HandshakeFailure::WriteFailed {
            request,
            error: if e.kind() == io::ErrorKind::TimedOut {
                format!(
                    "it stopped reading its stdin ({} bytes could not be written within the handshake budget)",
                    line.len()
                )
            } else {
                e.to_string()
            },
        })
}

/// Waits for the response to request `id`, answering what the server asks meanwhile.
fn await_response(
    stdin: &mut impl Peer,
    rx: &Receiver<WireEvent>,
    id: i64,
    request: &'static str,
    deadline: &mut dyn Deadline,
) -> Result<Value, HandshakeFailure> {
    loop {
        let Some(wait) = deadline.next_wait() else {
            return Err(HandshakeFailure::Timeout {
                request,
                waited_ms: deadline.counted_ms(),
            });
        };
        let ev = match rx.recv_timeout(wait) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(HandshakeFailure::StdoutClosed { request })
            }
        };
        let msg = match ev {
            WireEvent::Eof => return Err(HandshakeFailure::StdoutClosed { request }),
            WireEvent::Message(m) => m,
        };
        if is_request(&msg) {
            // Servers may ask the client things (roots, sampling, ping) even this early.
            let reply = if msg.get("method").and_then(Value::as_str) == Some("ping") {
                json!({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
            } else {
                json!({"jsonrpc": "2.0", "id": msg["id"],
                       "error": {"code": -32601, "message": "not supported by mcp-shutdown-conformance"}})
            };
            send(stdin, &reply, request, deadline)?;
            continue;
        }
        if msg.get("id").and_then(Value::as_i64) == Some(id) {
            return Ok(msg);
        }
    }
}

/// What the server says of itself in its `initialize` result: the protocol version and its
/// name and version.
fn read_initialize(result: &Value, info: &mut HandshakeInfo) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(String::from);
    info.protocol_version = text(result.get("protocolVersion"));
    info.server_name = text(result.pointer("/serverInfo/name"));
    info.server_version = text(result.pointer("/serverInfo/version"));
}

/// Confirms the server is up and serving: `initialize` → `notifications/initialized` →
/// `ping`, or for a stateless (2026-07-28) server just `ping`. `started_ns` is the launch time.
pub fn handshake(
    stdin: &mut impl Peer,
    rx: &Receiver<WireEvent>,
    protocol: Protocol,
    deadline: &mut dyn Deadline,
    started_ns: u64,
) -> Result<HandshakeInfo, HandshakeFailure> {
    let mut info = HandshakeInfo {
        mode: HandshakeMode::Initialize,
        protocol_version: None,
        server_name: None,
        server_version: None,
        ms: 0.0,
    };
    if protocol != Protocol::Stateless {
        let init = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": CLIENT_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp-shutdown-conformance", "version": env!("CARGO_PKG_VERSION")}
            }
        });
        send(stdin, &init, "initialize", deadline)?;
        let resp = await_response(stdin, rx, 1, "initialize", deadline)?;
        if let Some(result) = resp.get("result") {
            read_initialize(result, &mut info);
            send(
                stdin,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                "notifications/initialized",
                deadline,
            )?;
        } else if protocol == Protocol::Auto {
            info.mode = HandshakeMode::Stateless;
        } else {
            return Err(HandshakeFailure::Rejected {
                request: "initialize",
                error: resp.get("error").map(|e| e.to_string()).unwrap_or_default(),
            });
        }
    } else {
        info.mode = HandshakeMode::Stateless;
    }
    send(
        stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        "ping",
        deadline,
    )?;
    // Any answer, result or error, shows the server is serving requests.
    await_response(stdin, rx, 2, "ping", deadline)?;
    info.ms = ms_between(started_ns, mono_ns());
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn handshake_answers_server_requests_and_times_out() {
        let (tx, rx) = channel();
        tx.send(WireEvent::Message(
            json!({"jsonrpc":"2.0","id":"s1","method":"ping"}),
        ))
        .unwrap();
        tx.send(WireEvent::Message(json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"1"}}}))).unwrap();
        tx.send(WireEvent::Message(
            json!({"jsonrpc":"2.0","id":2,"result":{}}),
        ))
        .unwrap();
        let mut sink = Vec::new();
        let info = handshake(
            &mut sink,
            &rx,
            Protocol::Auto,
            &mut WallDeadline::new(mono_ns(), Duration::from_secs(5)),
            mono_ns(),
        )
        .unwrap();
        assert_eq!(info.mode, HandshakeMode::Initialize);
        assert_eq!(info.server_name.as_deref(), Some("s"));
        let written = String::from_utf8(sink).unwrap();
        assert_eq!(written.lines().count(), 4, "{written}"); // initialize, ping reply, initialized, ping
        let e = handshake(
            &mut Vec::new(),
            &rx,
            Protocol::Auto,
            &mut WallDeadline::new(mono_ns(), Duration::from_millis(20)),
            mono_ns(),
        )
        .unwrap_err();
        assert!(matches!(
            e,
            HandshakeFailure::Timeout {
                request: "initialize",
                ..
            }
        ));
    }

    #[test]
    fn stateless_server_is_detected() {
        let (tx, rx) = channel();
        tx.send(WireEvent::Message(
            json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}),
        ))
        .unwrap();
        tx.send(WireEvent::Message(
            json!({"jsonrpc":"2.0","id":2,"result":{}}),
        ))
        .unwrap();
        let info = handshake(
            &mut Vec::new(),
            &rx,
            Protocol::Auto,
            &mut WallDeadline::new(mono_ns(), Duration::from_secs(5)),
            mono_ns(),
        )
        .unwrap();
        assert_eq!(info.mode, HandshakeMode::Stateless);
    }
}
