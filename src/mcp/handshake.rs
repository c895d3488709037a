//! The handshake that confirms the server is up and serving: `initialize` →
//! `notifications/initialized` → `ping`, or `ping` alone for a stateless (2026-07-28) server.

use std::io::Write;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use super::wire::{is_request, WireEvent};
use crate::config::manifest::Protocol;
use crate::model::{HandshakeInfo, HandshakeMode};
use crate::os::{mono_ns, ms_between};

/// The protocol revision the harness asks for in `initialize`.
pub const CLIENT_PROTOCOL_VERSION: &str = "2025-11-25";

/// Why the handshake did not complete. The caller adds what happened to the process.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeFailure {
    #[error("no answer to `{request}` within {waited_ms} ms")]
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
    stdin: &mut impl Write,
    msg: &Value,
    request: &'static str,
) -> Result<(), HandshakeFailure> {
    let mut line = serde_json::to_vec(msg).expect("JSON values serialize");
    line.push(b'\n');
    stdin
        .write_all(&line)
        .and_then(|_| stdin.flush())
        .map_err(|e| HandshakeFailure::WriteFailed {
            request,
            error: e.to_string(),
        })
}

/// Waits for the response to request `id`, answering what the server asks meanwhile.
fn await_response(
    stdin: &mut impl Write,
    rx: &Receiver<WireEvent>,
    id: i64,
    request: &'static str,
    deadline_ns: u64,
    started_ns: u64,
) -> Result<Value, HandshakeFailure> {
    loop {
        let left = deadline_ns.saturating_sub(mono_ns());
        let ev = match rx.recv_timeout(Duration::from_nanos(left)) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => {
                return Err(HandshakeFailure::Timeout {
                    request,
                    waited_ms: ms_between(started_ns, mono_ns()) as u64,
                })
            }
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
            let _ = send(stdin, &reply, request);
            continue;
        }
        if msg.get("id").and_then(Value::as_i64) == Some(id) {
            return Ok(msg);
        }
    }
}

/// Confirms the server is up and serving: `initialize` → `notifications/initialized` →
/// `ping`, or for a stateless (2026-07-28) server just `ping`. `started_ns` is the launch time.
pub fn handshake(
    stdin: &mut impl Write,
    rx: &Receiver<WireEvent>,
    protocol: Protocol,
    timeout: Duration,
    started_ns: u64,
) -> Result<HandshakeInfo, HandshakeFailure> {
    let deadline = started_ns + timeout.as_nanos() as u64;
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
        send(stdin, &init, "initialize")?;
        let resp = await_response(stdin, rx, 1, "initialize", deadline, started_ns)?;
        if let Some(result) = resp.get("result") {
            info.protocol_version = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(String::from);
            info.server_name = result
                .pointer("/serverInfo/name")
                .and_then(Value::as_str)
                .map(String::from);
            info.server_version = result
                .pointer("/serverInfo/version")
                .and_then(Value::as_str)
                .map(String::from);
            send(
                stdin,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                "notifications/initialized",
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
    )?;
    // Any answer, result or error, shows the server is serving requests.
    await_response(stdin, rx, 2, "ping", deadline, started_ns)?;
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
            Duration::from_secs(5),
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
            Duration::from_millis(20),
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
            Duration::from_secs(5),
            mono_ns(),
        )
        .unwrap();
        assert_eq!(info.mode, HandshakeMode::Stateless);
    }
}
