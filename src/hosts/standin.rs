//! A stand-in model API on 127.0.0.1: answers every prompt with one short text in the
//! provider's own wire format (Anthropic Messages, OpenAI Responses and Chat Completions,
//! Gemini generateContent), streamed or not, so a one-shot prompt reaches its exit path
//! without a model. It never leaves the loopback; every request path is kept, to say where
//! a host stopped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

/// A running stand-in; stops when dropped.
pub struct StandIn {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl StandIn {
    pub fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (reqs, halt) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if halt.load(Ordering::Relaxed) {
                    return;
                }
                if let Ok(stream) = conn {
                    let reqs = reqs.clone();
                    std::thread::spawn(move || {
                        let _ = serve(stream, &reqs);
                    });
                }
            }
        });
        Ok(Self {
            port,
            requests,
            stop,
        })
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn seen(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(stream: TcpStream, reqs: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.trim().eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; length.min(16 << 20)];
        reader.read_exact(&mut body)?;
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        if let Ok(mut r) = reqs.lock() {
            r.push(format!("{method} {path}"));
        }
        let stream_wanted = String::from_utf8_lossy(&body).contains("\"stream\":true")
            || String::from_utf8_lossy(&body).contains("\"stream\": true")
            || path.contains("alt=sse")
            || path.ends_with("/responses");
        let (ctype, payload) = reply(&path, stream_wanted);
        let mut out = &stream;
        write!(
            out,
            "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nrequest-id: standin\r\nx-request-id: standin\r\n\r\n",
            payload.len()
        )?;
        out.write_all(payload.as_bytes())?;
        out.flush()?;
    }
}

fn sse(events: &[(&str, serde_json::Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| {
            if name.is_empty() {
                format!("data: {data}\n\n")
            } else {
                format!("event: {name}\ndata: {data}\n\n")
            }
        })
        .collect()
}

/// The one text every prompt is answered with.
const TEXT: &str = "ok";

/// The answer to one request: (content type, body).
pub fn reply(path: &str, stream: bool) -> (&'static str, String) {
    if path.contains("/messages/count_tokens") {
        return ("application/json", json!({"input_tokens": 1}).to_string());
    }
    if path.contains("/messages") {
        return anthropic_messages(stream);
    }
    if path.contains("/responses") {
        return openai_responses();
    }
    if path.contains("/chat/completions") {
        return openai_chat(stream);
    }
    if path.contains("enerateContent") {
        return gemini_generate(stream);
    }
    if path.contains("/models") {
        return (
            "application/json",
            json!({"object": "list", "data": [{"id": "standin",
            "object": "model", "created": 0, "owned_by": "standin"}], "models": []})
            .to_string(),
        );
    }
    ("application/json", "{}".to_string())
}

/// Anthropic Messages, streamed or not.
fn anthropic_messages(stream: bool) -> (&'static str, String) {
    let usage = json!({"input_tokens": 1, "output_tokens": 1});
    if !stream {
        return (
            "application/json",
            json!({"id": "msg_standin", "type": "message",
            "role": "assistant", "model": "standin", "content": [{"type": "text", "text": TEXT}],
            "stop_reason": "end_turn", "stop_sequence": null, "usage": usage})
            .to_string(),
        );
    }
    (
        "text/event-stream",
        sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_standin",
            "type": "message", "role": "assistant", "model": "standin", "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": usage}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": TEXT}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
            "stop_sequence": null}, "usage": {"output_tokens": 1}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
    )
}

/// OpenAI Responses (always streamed: Codex asks for nothing else).
fn openai_responses() -> (&'static str, String) {
    let item = json!({"type": "message", "role": "assistant", "id": "msg_standin",
        "status": "completed", "content": [{"type": "output_text", "text": TEXT, "annotations": []}]});
    (
        "text/event-stream",
        sse(&[
            (
                "response.created",
                json!({"type": "response.created", "response": {"id": "resp_standin"}}),
            ),
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done",
            "output_index": 0, "item": item}),
            ),
            (
                "response.completed",
                json!({"type": "response.completed", "response": {
            "id": "resp_standin", "status": "completed", "output": [item], "usage": {"input_tokens": 1,
            "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}}}),
            ),
        ]),
    )
}

/// OpenAI Chat Completions, streamed or not.
fn openai_chat(stream: bool) -> (&'static str, String) {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0,
               "model": "standin", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    if !stream {
        return ("application/json", json!({"id": "chatcmpl-standin", "object": "chat.completion",
            "created": 0, "model": "standin", "choices": [{"index": 0, "message": {"role": "assistant",
            "content": TEXT}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1,
            "completion_tokens": 1, "total_tokens": 2}}).to_string());
    }
    let mut body = sse(&[
        (
            "",
            chunk(json!({"role": "assistant", "content": TEXT}), json!(null)),
        ),
        ("", chunk(json!({}), json!("stop"))),
    ]);
    body.push_str("data: [DONE]\n\n");
    ("text/event-stream", body)
}

/// Gemini generateContent / streamGenerateContent.
fn gemini_generate(stream: bool) -> (&'static str, String) {
    let c = json!({"candidates": [{"content": {"parts": [{"text": TEXT}], "role": "model"},
        "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 1,
        "candidatesTokenCount": 1, "totalTokenCount": 2}});
    if stream {
        return ("text/event-stream", sse(&[("", c)]));
    }
    ("application/json", c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_gets_its_own_wire_format() {
        assert!(reply("/v1/messages", true).1.contains("message_stop"));
        assert!(reply("/v1/responses", true)
            .1
            .contains("response.completed"));
        assert!(reply("/v1/chat/completions", true)
            .1
            .ends_with("data: [DONE]\n\n"));
        assert!(
            reply("/v1beta/models/x:streamGenerateContent?alt=sse", true)
                .1
                .contains("candidates")
        );
    }
}
