//! A loopback stand-in for a vendor's model API, for the conformance suite that runs the
//! real agent CLIs (`tests/real_agents.rs`). It speaks the documented wire protocol
//! (OpenAI's Responses API, Google's `streamGenerateContent`, each streamed as
//! server-sent events), scripts a session (the
//! first request of a turn calls the agent's shell tool, the next answers in text), and
//! records what it answered: the ground truth the stored session is checked against.
//!
//! Invariant: every answer's usage is distinct and recorded before it is sent, so a
//! request the agent made is in [`Standin::answered`] whether or not the agent reports it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One model response the stand-in gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The model the request named.
    pub model: String,
    /// Input tokens, cached input included (as the vendor counts them).
    pub input: i64,
    pub cached: i64,
    /// Output tokens, reasoning included.
    pub output: i64,
    pub reasoning: i64,
    /// The tool the answer called, if any.
    pub tool_call: Option<String>,
}

/// How one vendor's connection is answered: the request read, the answer recorded.
type Serve = fn(TcpStream, &Mutex<Vec<Answer>>, &Mutex<Vec<String>>);

pub struct Standin {
    pub url: String,
    answered: Arc<Mutex<Vec<Answer>>>,
    /// Every request's path, for the failure message of a test.
    pub paths: Arc<Mutex<Vec<String>>>,
}

impl Standin {
    /// OpenAI's Responses API (`POST /v1/responses`, `stream: true`), as Codex calls it.
    pub fn openai_responses() -> Standin {
        Standin::start(serve)
    }

    /// The Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`), as
    /// Gemini CLI calls it.
    pub fn gemini() -> Standin {
        Standin::start(serve_gemini)
    }

    fn start(serve: Serve) -> Standin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let answered = Arc::new(Mutex::new(Vec::new()));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let (answers, seen) = (answered.clone(), paths.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (answers, seen) = (answers.clone(), seen.clone());
                std::thread::spawn(move || serve(stream, &answers, &seen));
            }
        });
        Standin { url, answered, paths }
    }

    pub fn answered(&self) -> Vec<Answer> {
        self.answered.lock().unwrap().clone()
    }
}

/// Reads one HTTP/1.1 request (a body of Content-Length bytes, or chunked); `None` on a
/// closed or malformed connection.
fn read_request(stream: &TcpStream) -> Option<(String, String, Vec<u8>)> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
    let (mut length, mut chunked) = (0usize, false);
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            } else if name.eq_ignore_ascii_case("transfer-encoding") && value.trim().eq_ignore_ascii_case("chunked") {
                chunked = true;
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((method, path, body))
}

fn respond(mut stream: &TcpStream, status: &str, content_type: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

/// The n-th answer's counts: distinct, and growing as a conversation's input does.
fn answer_of(n: i64, model: &str, tool_call: Option<String>) -> Answer {
    Answer {
        model: model.to_string(),
        input: 4_000 + 1_000 * n,
        cached: 3_000 + 500 * n,
        output: 120 + 10 * n,
        reasoning: 40 + n,
        tool_call,
    }
}

/// Gemini: the first request of a turn calls `run_shell_command`, the one after its
/// `functionResponse` answers in text; the counts in the last chunk's `usageMetadata`
/// (`promptTokenCount` includes the cached, `candidatesTokenCount` excludes thoughts).
fn serve_gemini(stream: TcpStream, answered: &Mutex<Vec<Answer>>, seen: &Mutex<Vec<String>>) {
    let Some((method, path, body)) = read_request(&stream) else { return };
    seen.lock().unwrap().push(format!("{method} {path}"));
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(model) = path
        .split_once("/models/")
        .and_then(|(_, rest)| rest.split_once(":streamGenerateContent"))
        .map(|(model, _)| model.to_string())
        .filter(|_| method == "POST")
    else {
        return respond(
            &stream,
            "404 Not Found",
            "application/json",
            r#"{"error":{"code":404,"message":"not found"}}"#,
        );
    };
    let contents = request["contents"].as_array().cloned().unwrap_or_default();
    let answered_a_call = contents
        .last()
        .and_then(|content| content["parts"].as_array())
        .is_some_and(|parts| parts.iter().any(|part| part.get("functionResponse").is_some()));
    let offers_shell = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|tool| tool["functionDeclarations"].as_array().cloned().unwrap_or_default())
        .any(|declaration| declaration["name"] == "run_shell_command");
    let call = (offers_shell && !answered_a_call).then(|| "run_shell_command".to_string());
    let mut recorded = answered.lock().unwrap();
    let n = recorded.len() as i64;
    let answer = answer_of(n, &model, call.clone());
    recorded.push(answer.clone());
    drop(recorded);
    let part = match &call {
        Some(_) => json!({"functionCall": {"name": "run_shell_command",
                                            "args": {"command": "git status --short", "description": "the working tree"}}}),
        None => json!({"text": "The working tree is clean."}),
    };
    let chunks = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Looking. "}]}, "index": 0}],
               "usageMetadata": {"promptTokenCount": answer.input, "totalTokenCount": answer.input},
               "modelVersion": model, "responseId": format!("standin-{n}")}),
        json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": answer.input, "candidatesTokenCount": answer.output - answer.reasoning,
                                 "cachedContentTokenCount": answer.cached, "thoughtsTokenCount": answer.reasoning,
                                 "totalTokenCount": answer.input + answer.output},
               "modelVersion": model, "responseId": format!("standin-{n}")}),
    ];
    let body: String = chunks.iter().map(|chunk| format!("data: {chunk}\r\n\r\n")).collect();
    respond(&stream, "200 OK", "text/event-stream", &body);
}

fn serve(stream: TcpStream, answered: &Mutex<Vec<Answer>>, seen: &Mutex<Vec<String>>) {
    let Some((method, path, body)) = read_request(&stream) else { return };
    seen.lock().unwrap().push(format!("{method} {path}"));
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if method != "POST" || !path.trim_end_matches('/').ends_with("/responses") || request["stream"] != true {
        // Anything else (Codex's turn-cost probe, a models list): not offered, and Codex
        // stops asking.
        return respond(&stream, "404 Not Found", "application/json", r#"{"error":{"message":"not found"}}"#);
    }
    let model = request["model"].as_str().unwrap_or("unknown").to_string();
    let inputs = request["input"].as_array().cloned().unwrap_or_default();
    let answered_a_call = inputs.iter().any(|item| item["type"] == "function_call_output");
    let shell = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| ["exec_command", "shell_command", "shell"].contains(name))
        .map(str::to_string);
    let side_request = request["text"]["format"]["type"] == "json_schema";
    let call = shell.filter(|_| !answered_a_call && !side_request);
    let mut recorded = answered.lock().unwrap();
    // Distinct counts per answer: the n-th answer's input grows as a conversation's does.
    let n = recorded.len() as i64;
    let answer = answer_of(n, &model, call.clone());
    recorded.push(answer.clone());
    drop(recorded);
    let id = format!("resp_standin_{n}");
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id": id, "object": "response", "created_at": 1_780_000_000, "status": status,
               "model": model, "output": output, "usage": usage})
    };
    let (item, deltas) = match &call {
        Some(tool) => {
            let arguments = if tool == "exec_command" {
                json!({"cmd": "git status --short"})
            } else {
                json!({"command": ["bash", "-lc", "git status --short"]})
            };
            let item = json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_standin_{n}"),
                              "name": tool, "arguments": arguments.to_string(), "status": "completed"});
            (item, Vec::new())
        }
        None => {
            let text = "The working tree is clean.";
            let item = json!({"type": "message", "id": format!("msg_{n}"), "status": "completed", "role": "assistant",
                              "content": [{"type": "output_text", "text": text, "annotations": []}]});
            (item, vec![text])
        }
    };
    let usage = json!({
        "input_tokens": answer.input, "input_tokens_details": {"cached_tokens": answer.cached},
        "output_tokens": answer.output, "output_tokens_details": {"reasoning_tokens": answer.reasoning},
        "total_tokens": answer.input + answer.output,
    });
    let mut events = vec![
        json!({"type": "response.created", "response": response("in_progress", json!([]), Value::Null)}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
    ];
    for delta in deltas {
        events.push(json!({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                           "content_index": 0, "delta": delta}));
    }
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    events.push(json!({"type": "response.completed", "response": response("completed", json!([item]), usage)}));
    let body: String = events
        .iter()
        .enumerate()
        .map(|(sequence, event)| {
            let mut event = event.clone();
            event["sequence_number"] = json!(sequence);
            format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap())
        })
        .collect();
    respond(&stream, "200 OK", "text/event-stream", &body);
}
