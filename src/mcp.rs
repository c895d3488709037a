//! The MCP client side: a bounded reader of newline-delimited JSON-RPC from the server's
//! stdout (which also keeps the record the stdout-purity rule judges), and the handshake that
//! confirms the server is up and serving.

use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::manifest::Protocol;
use crate::process::{mono_ns, ms_between};

/// Longest line kept in memory; longer lines are counted, reported and discarded.
pub const MAX_LINE: usize = 1 << 20;
/// How much of an offending line a report quotes.
const EXCERPT: usize = 80;

/// The protocol revision the harness asks for in `initialize`.
pub const CLIENT_PROTOCOL_VERSION: &str = "2025-11-25";

/// What is wrong with one line the server wrote to stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViolationKind {
    /// Not valid UTF-8.
    NotUtf8,
    /// Empty or whitespace only.
    Blank,
    /// Not parseable as JSON.
    NotJson,
    /// JSON, but not a JSON-RPC 2.0 message.
    NotJsonRpc,
    /// Longer than [`MAX_LINE`] bytes.
    TooLong,
    /// Bytes after the last newline when stdout closed.
    Unterminated,
}

/// The first offending line, quoted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// 1-based line number on stdout.
    pub line: u64,
    pub kind: ViolationKind,
    /// The first bytes of the line, escaped (`\xff`, `\n`).
    pub excerpt: String,
}

/// What the server wrote to stdout over the whole session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdoutRecord {
    pub bytes: u64,
    pub lines: u64,
    /// Valid JSON-RPC 2.0 messages.
    pub messages: u64,
    /// Lines that are not exactly one JSON-RPC message.
    pub violations: u64,
    pub first_violation: Option<Violation>,
    /// JSON-RPC requests the server sent (allowed before 2026-07-28).
    pub server_requests: u64,
    pub first_server_request: Option<String>,
    /// Whether the server's stdout reached end-of-file while the reader was running.
    pub closed: bool,
}

/// What the reader hands to the handshake.
#[derive(Debug)]
pub enum WireEvent {
    Message(Value),
    Eof,
}

fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(EXCERPT)];
    let mut s = cut.escape_ascii().to_string();
    if bytes.len() > EXCERPT {
        s.push('…');
    }
    s
}

/// Classifies one complete line (without its `\n`).
pub fn classify(line: &[u8]) -> Result<Value, ViolationKind> {
    let text = std::str::from_utf8(line).map_err(|_| ViolationKind::NotUtf8)?;
    if text.trim().is_empty() {
        return Err(ViolationKind::Blank);
    }
    let v: Value = serde_json::from_str(text).map_err(|_| ViolationKind::NotJson)?;
    let is_msg = |m: &Value| m.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let ok = match &v {
        Value::Object(_) => is_msg(&v),
        // Batches (2025-03-26 only) are judged as messages here; the handshake ignores them.
        Value::Array(items) => !items.is_empty() && items.iter().all(is_msg),
        _ => false,
    };
    if ok {
        Ok(v)
    } else {
        Err(ViolationKind::NotJsonRpc)
    }
}

fn is_request(v: &Value) -> bool {
    v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null())
}

/// Reads `stdout` to its end, recording every line in `record` and forwarding valid messages
/// to `tx` for as long as someone listens. Memory is bounded by [`MAX_LINE`] whatever the
/// server writes; the thread ends only when the pipe closes.
pub fn read_stdout(mut stdout: impl Read, record: Arc<Mutex<StdoutRecord>>, tx: Sender<WireEvent>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    let mut listening = true;
    let finish = |line: &[u8], too_long: bool, listening: &mut bool, rec: &mut StdoutRecord| {
        rec.lines += 1;
        let verdict = if too_long {
            Err(ViolationKind::TooLong)
        } else {
            classify(line)
        };
        match verdict {
            Ok(v) => {
                rec.messages += 1;
                if is_request(&v) {
                    rec.server_requests += 1;
                    if rec.first_server_request.is_none() {
                        rec.first_server_request = Some(excerpt(line));
                    }
                }
                if *listening && tx.send(WireEvent::Message(v)).is_err() {
                    *listening = false;
                }
            }
            Err(kind) => {
                rec.violations += 1;
                if rec.first_violation.is_none() {
                    rec.first_violation = Some(Violation {
                        line: rec.lines,
                        kind,
                        excerpt: excerpt(line),
                    });
                }
            }
        }
    };
    loop {
        let n = match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut rec = record.lock().unwrap_or_else(|p| p.into_inner());
        rec.bytes += n as u64;
        let mut chunk = &buf[..n];
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n') {
            if !too_long {
                line.extend_from_slice(&chunk[..pos]);
            }
            finish(
                &line,
                too_long || line.len() > MAX_LINE,
                &mut listening,
                &mut rec,
            );
            line.clear();
            too_long = false;
            chunk = &chunk[pos + 1..];
        }
        if !too_long {
            line.extend_from_slice(chunk);
            if line.len() > MAX_LINE {
                // Keep the start for the excerpt, drop the rest until the next newline.
                line.truncate(EXCERPT + 1);
                too_long = true;
            }
        }
    }
    let mut rec = record.lock().unwrap_or_else(|p| p.into_inner());
    if !line.is_empty() || too_long {
        rec.lines += 1;
        rec.violations += 1;
        if rec.first_violation.is_none() {
            rec.first_violation = Some(Violation {
                line: rec.lines,
                kind: if too_long {
                    ViolationKind::TooLong
                } else {
                    ViolationKind::Unterminated
                },
                excerpt: excerpt(&line),
            });
        }
    }
    rec.closed = true;
    drop(rec);
    let _ = tx.send(WireEvent::Eof);
}

/// How the server was confirmed to be up and serving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandshakeMode {
    /// `initialize` answered, then `notifications/initialized`, then `ping` answered.
    Initialize,
    /// No `initialize` (2026-07-28, SEP-2575): `ping` answered.
    Stateless,
}

/// A completed handshake.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandshakeInfo {
    pub mode: HandshakeMode,
    pub protocol_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// From launch to the answer of the last handshake request.
    pub ms: f64,
}

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

    fn read_all(input: &[u8]) -> (StdoutRecord, Vec<WireEvent>) {
        let rec = Arc::new(Mutex::new(StdoutRecord::default()));
        let (tx, rx) = channel();
        read_stdout(input, rec.clone(), tx);
        let r = rec.lock().unwrap().clone();
        (r, rx.try_iter().collect())
    }

    #[test]
    fn classifies_lines() {
        assert!(classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_ok());
        assert!(classify(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r").is_ok());
        assert_eq!(classify(b""), Err(ViolationKind::Blank));
        assert_eq!(classify(b"hello"), Err(ViolationKind::NotJson));
        assert_eq!(classify(b"{\"a\":1}"), Err(ViolationKind::NotJsonRpc));
        assert_eq!(classify(b"\xff\xfe"), Err(ViolationKind::NotUtf8));
        assert_eq!(classify(b"[]"), Err(ViolationKind::NotJsonRpc));
    }

    #[test]
    fn records_first_violation_and_keeps_reading() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nlog line\n\xff\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n";
        let (r, evs) = read_all(input);
        assert_eq!(
            (r.lines, r.messages, r.violations, r.server_requests),
            (4, 2, 2, 1)
        );
        let v = r.first_violation.unwrap();
        assert_eq!(
            (v.line, v.kind, v.excerpt.as_str()),
            (2, ViolationKind::NotJson, "log line")
        );
        assert!(r.closed);
        assert_eq!(evs.len(), 3); // two messages and EOF
    }

    #[test]
    fn gigantic_line_without_newline_is_bounded() {
        let input = vec![b'x'; 3 * MAX_LINE];
        let (r, _) = read_all(&input);
        assert_eq!(r.bytes, 3 * MAX_LINE as u64);
        let v = r.first_violation.unwrap();
        assert_eq!(v.kind, ViolationKind::TooLong);
        assert!(v.excerpt.len() <= EXCERPT + 4);
    }

    #[test]
    fn long_line_then_valid_message() {
        let mut input = vec![b'y'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        let (r, _) = read_all(&input);
        assert_eq!((r.lines, r.messages, r.violations), (2, 1, 1));
        assert_eq!(r.first_violation.unwrap().kind, ViolationKind::TooLong);
    }

    #[test]
    fn unterminated_tail_is_a_violation() {
        let (r, _) = read_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\npartial");
        assert_eq!(r.first_violation.unwrap().kind, ViolationKind::Unterminated);
    }

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
