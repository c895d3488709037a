//! The wire: a bounded reader of newline-delimited JSON-RPC from the server's stdout, which
//! also keeps the record the stdout-purity rule judges.

use std::io::Read;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::model::{StdoutRecord, Violation, ViolationKind};

/// Longest line kept in memory; longer lines are counted, reported and discarded.
pub const MAX_LINE: usize = 1 << 20;
/// How much of an offending line a report quotes.
const EXCERPT: usize = 80;

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

pub(crate) fn is_request(v: &Value) -> bool {
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
}
