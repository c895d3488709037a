//! The wire: a bounded reader of newline-delimited JSON-RPC from the server's stdout, which
//! also keeps the record the stdout-purity rule judges.

use std::io::Read;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::model::{StdoutRecord, Violation, ViolationKind};

/// Longest line kept in memory (64 MiB): any valid message up to it is accepted (a
/// `tools/list` with large schemas, a resource with embedded content); a longer line is
/// counted, reported with its size, and discarded as it arrives.
pub const MAX_LINE: usize = 64 << 20;
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

/// Splits a byte stream into lines and judges each, with at most `max` bytes of a line in
/// memory.
struct Lines {
    max: usize,
    /// The current line (only its first bytes once it is too long).
    line: Vec<u8>,
    /// Bytes of the current line so far, kept or not.
    len: u64,
    too_long: bool,
    tx: Sender<WireEvent>,
    listening: bool,
}

impl Lines {
    fn violation(&self, rec: &mut StdoutRecord, kind: ViolationKind) {
        rec.violations += 1;
        if rec.first_violation.is_none() {
            rec.first_violation = Some(Violation {
                line: rec.lines,
                kind,
                excerpt: excerpt(&self.line),
                size: Some(self.len),
            });
        }
    }

    /// Judges the line that just ended with a newline.
    fn end_line(&mut self, rec: &mut StdoutRecord) {
        rec.lines += 1;
        let verdict = if self.too_long {
            Err(ViolationKind::TooLong)
        } else {
            classify(&self.line)
        };
        match verdict {
            Ok(v) => {
                rec.messages += 1;
                if is_request(&v) {
                    rec.server_requests += 1;
                    if rec.first_server_request.is_none() {
                        rec.first_server_request = Some(excerpt(&self.line));
                    }
                }
                if self.listening && self.tx.send(WireEvent::Message(v)).is_err() {
                    self.listening = false;
                }
            }
            Err(kind) => self.violation(rec, kind),
        }
        self.line.clear();
        // A huge line must not keep its memory after it is judged.
        self.line.shrink_to(64 * 1024);
        self.len = 0;
        self.too_long = false;
    }

    /// Adds bytes of the current line (no newline among them).
    fn extend(&mut self, part: &[u8]) {
        self.len += part.len() as u64;
        if self.too_long {
            return;
        }
        if self.line.len() + part.len() <= self.max {
            self.line.extend_from_slice(part);
            return;
        }
        // Too long: keep the start for the excerpt, drop the rest until the next newline
        // (never growing the buffer past the bound to find out).
        let room = (EXCERPT + 1)
            .saturating_sub(self.line.len())
            .min(part.len());
        self.line.extend_from_slice(&part[..room]);
        self.line.truncate(EXCERPT + 1);
        self.too_long = true;
    }

    fn feed(&mut self, mut chunk: &[u8], rec: &mut StdoutRecord) {
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n') {
            self.extend(&chunk[..pos]);
            self.end_line(rec);
            chunk = &chunk[pos + 1..];
        }
        self.extend(chunk);
    }

    /// At end of input: bytes after the last newline are a violation.
    fn finish(self, rec: &mut StdoutRecord) {
        if self.len > 0 {
            rec.lines += 1;
            let kind = if self.too_long {
                ViolationKind::TooLong
            } else {
                ViolationKind::Unterminated
            };
            self.violation(rec, kind);
        }
        rec.closed = true;
        let _ = self.tx.send(WireEvent::Eof);
    }
}

/// Reads `stdout` to its end, recording every line in `record` and forwarding valid messages
/// to `tx` for as long as someone listens. Memory is bounded by [`MAX_LINE`] whatever the
/// server writes; the thread ends only when the pipe closes.
pub fn read_stdout(stdout: impl Read, record: Arc<Mutex<StdoutRecord>>, tx: Sender<WireEvent>) {
    read_stdout_bounded(stdout, record, tx, MAX_LINE)
}

/// [`read_stdout`] with another line bound (tests use small ones).
pub fn read_stdout_bounded(
    mut stdout: impl Read,
    record: Arc<Mutex<StdoutRecord>>,
    tx: Sender<WireEvent>,
    max: usize,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = Lines {
        max,
        line: Vec::new(),
        len: 0,
        too_long: false,
        tx,
        listening: true,
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
        lines.feed(&buf[..n], &mut rec);
    }
    let mut rec = record.lock().unwrap_or_else(|p| p.into_inner());
    lines.finish(&mut rec);
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

    fn read_bounded(input: &[u8], max: usize) -> StdoutRecord {
        let rec = Arc::new(Mutex::new(StdoutRecord::default()));
        let (tx, _rx) = channel();
        read_stdout_bounded(input, rec.clone(), tx, max);
        let r = rec.lock().unwrap().clone();
        r
    }

    #[test]
    fn gigantic_line_without_newline_is_bounded_and_sized() {
        let input = vec![b'x'; 3000];
        let r = read_bounded(&input, 1000);
        assert_eq!(r.bytes, 3000);
        let v = r.first_violation.unwrap();
        assert_eq!((v.kind, v.size), (ViolationKind::TooLong, Some(3000)));
        assert!(v.excerpt.len() <= EXCERPT + 4);
    }

    #[test]
    fn long_line_then_valid_message() {
        let mut input = vec![b'y'; 1010];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        let r = read_bounded(&input, 1000);
        assert_eq!((r.lines, r.messages, r.violations), (2, 1, 1));
        assert_eq!(r.first_violation.unwrap().kind, ViolationKind::TooLong);
    }

    /// A valid message of several megabytes is a message, well inside the real bound.
    #[test]
    fn a_three_megabyte_answer_is_a_message() {
        let big = "a".repeat(3 << 20);
        let line =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"instructions\":\"{big}\"}}}}\n");
        let (r, evs) = read_all(line.as_bytes());
        assert_eq!((r.messages, r.violations), (1, 0));
        assert!(matches!(evs[0], WireEvent::Message(_)));
    }

    #[test]
    fn unterminated_tail_is_a_violation() {
        let (r, _) = read_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\npartial");
        assert_eq!(r.first_violation.unwrap().kind, ViolationKind::Unterminated);
    }
}
