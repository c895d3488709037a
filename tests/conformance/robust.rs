//! Robustness properties (proptest): the bounded stdout line reader over arbitrary byte
//! streams delivered in arbitrary chunks, and the manifest parser over arbitrary and mutated
//! text. Each property runs at most 256 cases and stays fast; a failure prints the shrunk
//! input (no regression files are written).

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};

use mcp_shutdown_conformance::internals::{
    classify, read_stdout, read_stdout_bounded, WireEvent, MAX_LINE,
};
use mcp_shutdown_conformance::manifest::{self, ManifestError};
use mcp_shutdown_conformance::model::{StdoutRecord, Violation, ViolationKind};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Value};

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

// ---- the stdout reader ------------------------------------------------------------------

/// A reader that hands out its data in the given chunk sizes (cycled), and now and then
/// fails with `Interrupted` (never twice in a row), as a pipe read may.
struct Chunked<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    interrupts: Vec<bool>,
    calls: usize,
    interrupted_last: bool,
}

impl<'a> Chunked<'a> {
    fn new(data: &'a [u8], sizes: Vec<usize>, interrupts: Vec<bool>) -> Self {
        assert!(!sizes.is_empty() && !interrupts.is_empty());
        Self {
            data,
            sizes,
            interrupts,
            calls: 0,
            interrupted_last: false,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let k = self.calls;
        self.calls += 1;
        if !self.interrupted_last && self.interrupts[k % self.interrupts.len()] {
            self.interrupted_last = true;
            return Err(io::ErrorKind::Interrupted.into());
        }
        self.interrupted_last = false;
        let n = self.sizes[k % self.sizes.len()]
            .max(1)
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// The line bound the property tests use: small, so that lines far beyond it are cheap.
/// (The real bound, 64 MiB, is tested once at its edge below.)
const BOUND: usize = 4096;

/// What the reader recorded, and what it forwarded (`None` is the final `Eof`).
fn read_with(input: impl Read) -> (StdoutRecord, Vec<Option<Value>>) {
    read_bounded(input, BOUND)
}

fn read_bounded(input: impl Read, bound: usize) -> (StdoutRecord, Vec<Option<Value>>) {
    let rec = Arc::new(Mutex::new(StdoutRecord::default()));
    let (tx, rx) = channel();
    if bound == MAX_LINE {
        read_stdout(input, rec.clone(), tx);
    } else {
        read_stdout_bounded(input, rec.clone(), tx, bound);
    }
    let r = rec.lock().unwrap().clone();
    let events = rx
        .try_iter()
        .map(|e| match e {
            WireEvent::Message(v) => Some(v),
            WireEvent::Eof => None,
        })
        .collect();
    (r, events)
}

/// The reader's excerpt, restated: the first 80 bytes escaped, `…` if there were more.
fn excerpt(bytes: &[u8]) -> String {
    let mut s = bytes[..bytes.len().min(80)].escape_ascii().to_string();
    if bytes.len() > 80 {
        s.push('…');
    }
    s
}

/// An independent model of `read_stdout`: split on `\n`, judge each line as a whole.
fn model(input: &[u8]) -> (StdoutRecord, Vec<Option<Value>>) {
    let mut rec = StdoutRecord {
        bytes: input.len() as u64,
        closed: true,
        ..StdoutRecord::default()
    };
    let mut events = Vec::new();
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let tail = parts.pop().expect("split yields at least one part");
    let violation = |rec: &mut StdoutRecord, kind: ViolationKind, line: &[u8]| {
        rec.violations += 1;
        if rec.first_violation.is_none() {
            rec.first_violation = Some(Violation {
                line: rec.lines,
                kind,
                excerpt: excerpt(line),
                size: Some(line.len() as u64),
            });
        }
    };
    for line in parts {
        rec.lines += 1;
        let verdict = if line.len() > BOUND {
            Err(ViolationKind::TooLong)
        } else {
            classify(line)
        };
        match verdict {
            Ok(v) => {
                rec.messages += 1;
                if v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null()) {
                    rec.server_requests += 1;
                    rec.first_server_request
                        .get_or_insert_with(|| excerpt(line));
                }
                events.push(Some(v));
            }
            Err(kind) => violation(&mut rec, kind, line),
        }
    }
    if !tail.is_empty() {
        rec.lines += 1;
        let kind = if tail.len() > BOUND {
            ViolationKind::TooLong
        } else {
            ViolationKind::Unterminated
        };
        violation(&mut rec, kind, tail);
    }
    events.push(None);
    (rec, events)
}

/// Checks one input three ways: one plain read, the chunked reader, and the model.
fn check_reader(
    input: &[u8],
    sizes: Vec<usize>,
    interrupts: Vec<bool>,
) -> Result<(), TestCaseError> {
    let (whole, whole_events) = read_with(input);
    let (chunked, chunked_events) = read_with(Chunked::new(input, sizes, interrupts));
    let newlines = input.iter().filter(|&&b| b == b'\n').count() as u64;
    let tail = input.len() - input.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    prop_assert_eq!(whole.bytes, input.len() as u64);
    prop_assert_eq!(whole.lines, newlines + u64::from(tail > 0));
    prop_assert_eq!(whole.messages + whole.violations, whole.lines);
    prop_assert!(whole.closed);
    if let Some(v) = &whole.first_violation {
        // Bounded whatever the line: 80 bytes escaped (≤ 4 chars each) and the ellipsis.
        prop_assert!(
            v.excerpt.chars().count() <= 4 * 80 + 1,
            "excerpt too long: {}",
            v.excerpt.len()
        );
        prop_assert!(v.line >= 1 && v.line <= whole.lines);
    }
    prop_assert_eq!(whole_events.last(), Some(&None), "the last event is Eof");
    prop_assert_eq!(whole_events.len() as u64, whole.messages + 1);
    let (expected, expected_events) = model(input);
    prop_assert_eq!(&whole, &expected, "one read vs the model");
    prop_assert_eq!(&whole_events, &expected_events);
    prop_assert_eq!(&chunked, &whole, "chunked reads vs one read");
    prop_assert_eq!(&chunked_events, &whole_events);
    Ok(())
}

fn arb_id() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        any::<i64>().prop_map(|i| Some(json!(i))),
        any::<String>().prop_map(|s| Some(json!(s))),
    ]
}

/// One JSON-RPC 2.0 message: request, notification, result or error response.
fn arb_message() -> impl Strategy<Value = Value> {
    (arb_id(), proptest::option::of(any::<String>()), 0u8..3).prop_map(|(id, method, shape)| {
        let mut m = json!({"jsonrpc": "2.0"});
        if let Some(id) = id {
            m["id"] = id;
        }
        match (method, shape) {
            (Some(method), _) => {
                m["method"] = json!(method);
                m["params"] = json!({"n": 1});
            }
            (None, 0) => m["result"] = json!({}),
            (None, _) => m["error"] = json!({"code": -32601, "message": "no"}),
        }
        m
    })
}

/// One piece of a stream; pieces are concatenated, so pieces without a newline glue onto
/// their neighbours.
fn arb_piece() -> impl Strategy<Value = Vec<u8>> {
    let line = |v: Value, end: &'static [u8]| {
        let mut b = serde_json::to_vec(&v).unwrap();
        b.extend_from_slice(end);
        b
    };
    prop_oneof![
        5 => arb_message().prop_map(move |m| line(m, b"\n")),
        1 => arb_message().prop_map(move |m| line(m, b"\r\n")),
        1 => arb_message().prop_map(move |m| line(m, b"")),
        1 => proptest::collection::vec(arb_message(), 0..3).prop_map(move |b| line(json!(b), b"\n")),
        1 => prop_oneof![
            Just(json!({"jsonrpc": "1.0", "id": 1})),
            Just(json!(42)),
            Just(json!("text")),
            Just(json!(null)),
            Just(json!([{"a": 1}])),
        ]
        .prop_map(move |v| line(v, b"\n")),
        2 => proptest::collection::vec(any::<u8>(), 0..64),
        1 => "[ -~]{0,40}\n".prop_map(String::into_bytes),
        1 => "[ \t\r]{0,4}\n".prop_map(String::into_bytes),
        1 => ("[ -~]{0,8}", prop_oneof![
            Just(&b"\xff"[..]),
            Just(&b"\xc3"[..]),
            Just(&b"\xed\xa0\x80"[..]),
            Just(&b"\xf4\x90\x80\x80"[..]),
        ])
            .prop_map(|(pre, bad)| [pre.as_bytes(), bad, b"\"}\n"].concat()),
        1 => Just(b"\n".to_vec()),
    ]
}

fn arb_sizes(max: usize) -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(prop_oneof![3 => 1usize..=8, 1 => 1usize..=max], 1..12)
}

/// Held by the tests that move megabytes, so that the peak-memory check of the 50 MiB test
/// measures the reader and not its neighbours.
fn big_memory() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A long line of pseudo-random bytes (no `\n`), made from a seed rather than generated
/// byte by byte.
fn long_line(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x as u8 {
                b'\n' => b'#',
                b => b,
            }
        })
        .collect()
}

#[derive(Clone, Debug)]
enum Big {
    Small(Vec<u8>),
    Long {
        len: usize,
        seed: u64,
        newline: bool,
    },
}

fn arb_big() -> impl Strategy<Value = Big> {
    let len = prop_oneof![
        Just(BOUND - 1),
        Just(BOUND),
        Just(BOUND + 1),
        Just(3 * BOUND),
        BOUND + 2..=3 * BOUND + 2,
    ];
    prop_oneof![
        3 => arb_piece().prop_map(Big::Small),
        1 => (len, any::<u64>(), any::<bool>()).prop_map(|(len, seed, newline)| Big::Long { len, seed, newline }),
    ]
}

proptest! {
    #![proptest_config(config(256))]

    /// Arbitrary bytes, read whole and in small chunks.
    #[test]
    fn reader_random_bytes(
        input in proptest::collection::vec(any::<u8>(), 0..2048),
        sizes in arb_sizes(4096),
        interrupts in proptest::collection::vec(any::<bool>(), 1..6),
    ) {
        check_reader(&input, sizes, interrupts)?;
    }

    /// Valid messages mixed with garbage, blank lines, invalid UTF-8, non-JSON-RPC JSON,
    /// CRLF endings and unterminated tails.
    #[test]
    fn reader_mixed_streams(
        pieces in proptest::collection::vec(arb_piece(), 0..40),
        sizes in arb_sizes(300),
        interrupts in proptest::collection::vec(any::<bool>(), 1..6),
    ) {
        check_reader(&pieces.concat(), sizes, interrupts)?;
    }
}

proptest! {
    // Each case moves a few MiB; 24 cases cover the interesting lengths.
    #![proptest_config(config(24))]

    /// Lines around and far beyond the bound, terminated or not, among ordinary lines: every
    /// one over it is TooLong, and the lines after it are still judged.
    #[test]
    fn reader_huge_lines(
        pieces in proptest::collection::vec(arb_big(), 1..6),
        sizes in proptest::collection::vec(prop_oneof![1usize..=512, 4096usize..=200_000], 1..8),
        interrupts in proptest::collection::vec(any::<bool>(), 1..6),
    ) {
        let _big = big_memory();
        let mut input = Vec::new();
        for p in &pieces {
            match p {
                Big::Small(b) => input.extend_from_slice(b),
                Big::Long { len, seed, newline } => {
                    input.extend_from_slice(&long_line(*len, *seed));
                    if *newline {
                        input.push(b'\n');
                    }
                }
            }
        }
        check_reader(&input, sizes, interrupts)?;
    }
}

#[test]
fn three_bounds_long_line_is_too_long_in_any_chunking() {
    let msg = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
    for newline in [true, false] {
        let mut input = msg.to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * BOUND));
        if newline {
            input.push(b'\n');
            input.extend_from_slice(msg);
        }
        for sizes in [vec![1 << 20], vec![7, 65536, 1], vec![1000]] {
            let (r, events) = read_with(Chunked::new(&input, sizes, vec![false]));
            assert_eq!(r.bytes, input.len() as u64);
            let v = r.first_violation.clone().expect("a violation");
            assert_eq!((v.line, v.kind), (2, ViolationKind::TooLong), "{r:?}");
            assert_eq!(v.size, Some(3 * BOUND as u64), "reported with its size");
            assert_eq!(v.excerpt, format!("{}…", "x".repeat(80)));
            let expected = if newline { (3, 2, 1) } else { (2, 1, 1) };
            assert_eq!((r.lines, r.messages, r.violations), expected);
            assert_eq!(events.len() as u64, r.messages + 1);
        }
    }
}

/// Exactly at the real bound (64 MiB): a line of MAX_LINE bytes is judged on its content,
/// one byte more is TooLong, terminated or not.
#[test]
fn max_line_boundary() {
    let _big = big_memory();
    for len in [MAX_LINE, MAX_LINE + 1] {
        for newline in [true, false] {
            let mut input = vec![b'z'; len];
            if newline {
                input.push(b'\n');
            }
            let kind = match (len > MAX_LINE, newline) {
                (true, _) => ViolationKind::TooLong,
                (false, true) => ViolationKind::NotJson,
                (false, false) => ViolationKind::Unterminated,
            };
            let (r, _) = read_bounded(
                Chunked::new(&input, vec![1 << 20, 3], vec![false]),
                MAX_LINE,
            );
            let v = r.first_violation.clone().expect("a violation");
            assert_eq!(
                (r.lines, r.violations, v.line, v.kind, v.size),
                (1, 1, 1, kind, Some(len as u64)),
                "len {len}, newline {newline}"
            );
        }
    }
}

// ---- far beyond the bound without a newline ---------------------------------------------

/// Produces `left` pseudo-random bytes that are never `\n`, in varying chunk sizes, without
/// ever holding them all.
struct Garbage {
    left: usize,
    x: u64,
}

impl Read for Garbage {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        let n = (1 + (self.x as usize) % buf.len()).min(self.left);
        for b in &mut buf[..n] {
            self.x = self
                .x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *b = match (self.x >> 56) as u8 {
                b'\n' => b'.',
                b => b,
            };
        }
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn a_line_far_beyond_the_bound_is_consumed_in_bounded_memory() {
    const TOTAL: usize = MAX_LINE * 3;
    let start = crate::alloc_meter::start();
    let (r, events) = read_bounded(
        Garbage {
            left: TOTAL,
            x: 0x9e37_79b9_7f4a_7c15,
        },
        MAX_LINE,
    );
    let grown_mib = crate::alloc_meter::peak_since(start) / (1024 * 1024);
    assert_eq!(r.bytes, TOTAL as u64);
    let v = r.first_violation.expect("a violation");
    assert_eq!((v.line, v.kind), (1, ViolationKind::TooLong));
    assert!(v.excerpt.chars().count() <= 4 * 80 + 1);
    assert_eq!((r.lines, r.messages, r.violations), (1, 0, 1));
    assert!(r.closed);
    assert_eq!(events, vec![None]);
    assert_eq!(v.size, Some(TOTAL as u64));
    // Had the reader kept the line, this thread's allocations would have peaked at 192 MiB;
    // it keeps at most the bound (64 MiB) and its read buffers (measured: 73 MiB in all).
    assert!(
        grown_mib < 64 + 16,
        "the reader's allocations peaked {grown_mib} MiB above the start while reading 192 MiB"
    );
}

// ---- manifests --------------------------------------------------------------------------

/// A valid manifest using every field; `cwd = "."` resolves to the temp dir it is parsed in.
const VALID: &str = r#"name = "srv-1"
description = "a server"
command = "python3"
args = ["-u", "x.py"]
cwd = "."
env = { A = "1", B = "two" }
protocol = "auto"

[about]
sdk = "python"
sdk_version = "1.0"
shape = "plain"

[setup]
command = ["true"]
cwd = "."
inputs = ["a.lock"]
outputs = ["out"]
requires = ["true"]

[budgets]
handshake_ms = 30000
prompt_ms = 1000
grace_ms = 2000
observe_ms = 2000

[inflight]
method = "tools/call"
params = { name = "slow" }
"#;

const FIELDS: &[&str] = &[
    "name",
    "description",
    "command",
    "args",
    "cwd",
    "env",
    "protocol",
    "about",
    "setup",
    "budgets",
    "inflight",
    "sdk",
    "sdk_version",
    "shape",
    "inputs",
    "outputs",
    "requires",
    "handshake_ms",
    "prompt_ms",
    "grace_ms",
    "observe_ms",
    "method",
    "params",
];

/// Where manifests are "read from": a real directory, so that `cwd = "."` exists.
fn manifest_path() -> &'static Path {
    static DIR: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, p) = DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("server.toml");
        (d, p)
    });
    p
}

/// Lines a 1-based line number may name: every `\n` starts one more.
fn line_count(text: &str) -> usize {
    text.matches('\n').count() + 1
}

/// What every error must satisfy, whatever the input.
fn check_error(text: &str, e: &ManifestError) -> Result<(), TestCaseError> {
    let path = manifest_path();
    prop_assert_eq!(&e.path, path);
    let shown = e.to_string();
    prop_assert!(
        shown.starts_with(&path.display().to_string()),
        "error does not name the file: {}",
        shown
    );
    prop_assert!(!e.message.is_empty(), "empty message: {}", shown);
    prop_assert_eq!(e.line.is_some(), e.column.is_some());
    if let (Some(l), Some(c)) = (e.line, e.column) {
        prop_assert!(
            l >= 1 && l <= line_count(text),
            "line {} outside the text ({} lines): {}",
            l,
            line_count(text),
            shown
        );
        prop_assert!(c >= 1, "column {}: {}", c, shown);
        prop_assert!(
            shown.starts_with(&format!("{}:{l}:{c}: ", path.display())),
            "{}",
            shown
        );
    }
    let syntax_broken = toml::from_str::<toml::Table>(text).is_err();
    let bad_field = [
        "unknown field",
        "invalid type",
        "unknown variant",
        "invalid value",
        "duplicate",
    ]
    .iter()
    .any(|k| e.message.contains(k));
    if syntax_broken || bad_field {
        prop_assert!(
            e.line.is_some(),
            "no line for a syntax error or bad field (syntax broken: {}): {}",
            syntax_broken,
            shown
        );
    }
    Ok(())
}

fn check_parse(text: &str) -> Result<(), TestCaseError> {
    match manifest::parse(manifest_path(), text) {
        Ok(m) => {
            prop_assert!(manifest::valid_name(&m.name));
            prop_assert!(!m.launch.command.trim().is_empty());
            prop_assert!(m.launch.cwd.is_absolute());
            Ok(())
        }
        Err(e) => check_error(text, &e),
    }
}

/// `key = value` lines of the valid manifest (index, key).
fn key_lines() -> Vec<(usize, &'static str)> {
    VALID
        .lines()
        .enumerate()
        .filter_map(|(i, l)| l.split_once(" = ").map(|(k, _)| (i, k)))
        .collect()
}

const WRONG_VALUES: &[&str] = &[
    "42",
    "true",
    "\"text\"",
    "[1, 2]",
    "{ x = 1 }",
    "1.5",
    "1979-05-27T07:32:00Z",
    "[]",
];

#[derive(Clone, Debug)]
enum Mutation {
    RenameKey { line: usize, to: String },
    Revalue { line: usize, value: usize },
    Truncate { at: usize },
    DeleteLine { line: usize },
    DuplicateLine { line: usize },
    Insert { at: usize, text: String },
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), "[a-z_][a-z0-9_-]{0,12}")
            .prop_map(|(line, to)| Mutation::RenameKey { line, to }),
        (any::<usize>(), 0..WRONG_VALUES.len())
            .prop_map(|(line, value)| Mutation::Revalue { line, value }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        any::<usize>().prop_map(|line| Mutation::DeleteLine { line }),
        any::<usize>().prop_map(|line| Mutation::DuplicateLine { line }),
        (
            any::<usize>(),
            prop_oneof!["[\\[\\]{}=\",.#'\\n a-z0-9]{1,6}", any::<String>()]
        )
            .prop_map(|(at, text)| Mutation::Insert { at, text }),
    ]
}

fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let n = lines.len();
    match m {
        Mutation::RenameKey { line, to } => {
            let l = &mut lines[line % n];
            if let Some((_, v)) = l.split_once(" = ") {
                *l = format!("{to} = {v}");
            }
        }
        Mutation::Revalue { line, value } => {
            let l = &mut lines[line % n];
            if let Some((k, _)) = l.split_once(" = ") {
                *l = format!("{k} = {}", WRONG_VALUES[*value]);
            }
        }
        Mutation::Truncate { at } => {
            let cut = floor_char_boundary(text, at % (text.len() + 1));
            return text[..cut].to_string();
        }
        Mutation::DeleteLine { line } => {
            lines.remove(line % n);
        }
        Mutation::DuplicateLine { line } => {
            let l = lines[line % n].clone();
            lines.insert(line % n, l);
        }
        Mutation::Insert { at, text: ins } => {
            let at = floor_char_boundary(text, at % (text.len() + 1));
            return format!("{}{ins}{}", &text[..at], &text[at..]);
        }
    }
    lines.join("\n")
}

#[test]
fn the_valid_manifest_parses() {
    let m = manifest::parse(manifest_path(), VALID).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.name, "srv-1");
    assert!(m.setup.is_some());
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn manifest_arbitrary_strings(text in any::<String>()) {
        check_parse(&text)?;
    }

    /// Strings over TOML's punctuation and a few field names, so that many get past the
    /// TOML syntax and reach the field checks.
    #[test]
    fn manifest_tomlish_strings(
        parts in proptest::collection::vec(prop_oneof![
            "[\\[\\]{}=\",.#'\\n a-z0-9_-]{1,8}",
            proptest::sample::select(FIELDS).prop_map(|f| format!("\n{f} = ")),
            Just("\"x\"".to_string()),
            Just("[\"a\"]".to_string()),
            Just("\n[setup]\n".to_string()),
            Just("\n[budgets]\n".to_string()),
        ], 0..30),
    ) {
        check_parse(&parts.concat())?;
    }

    /// A valid manifest with one to four random edits.
    #[test]
    fn manifest_mutated(mutations in proptest::collection::vec(arb_mutation(), 1..5)) {
        let text = mutations.iter().fold(VALID.to_string(), |t, m| apply(&t, m));
        check_parse(&text)?;
    }

    /// One key renamed to a name no table has: rejected, naming that key and its line.
    #[test]
    fn manifest_unknown_field_is_named(which in any::<proptest::sample::Index>(), to in "x_[a-z0-9_]{0,10}") {
        let keys = key_lines();
        let (line, _) = keys[which.index(keys.len())];
        let text = apply(VALID, &Mutation::RenameKey { line, to: to.clone() });
        let e = manifest::parse(manifest_path(), &text).expect_err("an unknown field is an error");
        check_error(&text, &e)?;
        prop_assert!(e.message.contains(&to), "{}", e);
        prop_assert_eq!(e.line, Some(line + 1), "{}", e);
    }

    /// One value replaced by one of another type: rejected, at the line of that key.
    #[test]
    fn manifest_wrong_type_names_line(which in any::<proptest::sample::Index>(), value in 0..WRONG_VALUES.len()) {
        // `params` takes any TOML value; `description`, `cwd` … are strings, and so on.
        let keys: Vec<(usize, &str)> = key_lines().into_iter().filter(|(_, k)| *k != "params").collect();
        let (line, _) = keys[which.index(keys.len())];
        let original = VALID.lines().nth(line).unwrap().split_once(" = ").unwrap().1;
        let new = WRONG_VALUES[value];
        let same_type = original.chars().next() == new.chars().next()
            || (original.starts_with(|c: char| c.is_ascii_digit()) && new.parse::<i64>().is_ok());
        prop_assume!(!same_type);
        let text = apply(VALID, &Mutation::Revalue { line, value });
        let e = manifest::parse(manifest_path(), &text).expect_err("a wrong type is an error");
        check_error(&text, &e)?;
        prop_assert_eq!(e.line, Some(line + 1), "{}", e);
    }
}

// ---- defects found by the properties above, kept as runnable reproductions ---------------

/// `env = 1979-05-27T07:32:00Z` is accepted: toml hands a datetime to serde as a one-entry
/// map, so `env` becomes `{"$__toml_private_datetime": "1979-05-27T07:32:00Z"}` instead of
/// an "invalid type" error at line 3.
#[test]
fn datetime_env_is_rejected() {
    let text = "name = \"a\"\ncommand = \"x\"\nenv = 1979-05-27T07:32:00Z\n";
    let e =
        manifest::parse(manifest_path(), text).expect_err("a datetime is not a table of strings");
    assert_eq!(e.line, Some(3), "{e}");
}

/// `name = ` with nothing after it at the end of the file: toml's error has an empty
/// message, so the manifest error reads `FILE:2:8: ` and says nothing about what is wrong.
#[test]
fn missing_value_at_the_end_has_a_message() {
    let e = manifest::parse(manifest_path(), "\nname = ").expect_err("a key without a value");
    assert_eq!(e.line, Some(2), "{e}");
    assert!(
        !e.message.trim().is_empty(),
        "the error says nothing: {e:?}"
    );
}
