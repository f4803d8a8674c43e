//! A loopback stand-in for a vendor's model API, for the conformance suite that runs the
//! real agent CLIs (`tests/real_agents.rs`). It speaks the documented wire protocol
//! (Anthropic's Messages API, OpenAI's Responses API, Google's `streamGenerateContent`,
//! each streamed as server-sent events), scripts a session (each request makes the next
//! of the session's scripted tool calls, counted by the tool results the conversation
//! holds, so a resumed session goes on where it stopped; then it answers in text), and
//! records what it answered: the ground truth the stored session is checked against. A
//! subagent's conversation (its first message names [`SUBAGENT`]) is answered in text.
//!
//! Invariant: every answer's usage is distinct and recorded before it is sent, so a
//! request the agent made is in [`Standin::answered`] whether or not the agent reports it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// What a scripted subagent's prompt starts with: the stand-in answers such a
/// conversation in text, apart from the session's script.
pub const SUBAGENT: &str = "Subagent:";

/// One model response the stand-in gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The model the request named.
    pub model: String,
    /// Input tokens, cache reads and writes included (OpenAI and Google count cached
    /// input inside input; Anthropic counts each apart, and its answer is recorded summed).
    pub input: i64,
    pub cached: i64,
    /// Input written to the prompt cache (Anthropic's five-minute cache; 0 elsewhere).
    pub cache_written: i64,
    /// Output tokens, reasoning included.
    pub output: i64,
    pub reasoning: i64,
    /// The tool the answer called, if any.
    pub tool_call: Option<String>,
    /// A request to summarise the conversation (Claude Code's compaction).
    pub compaction: bool,
}

/// How one vendor's connection is answered: the request read, the answer recorded, the
/// tool calls the session is scripted to make (`{"name", "input"}`, in turn).
type Serve = fn(TcpStream, &Mutex<Vec<Answer>>, &Mutex<Vec<String>>, &[Value]);

pub struct Standin {
    pub url: String,
    answered: Arc<Mutex<Vec<Answer>>>,
    /// Every request's path, for the failure message of a test.
    pub paths: Arc<Mutex<Vec<String>>>,
}

impl Standin {
    /// Anthropic's Messages API (`POST /v1/messages`, `stream: true`), as Claude Code
    /// calls it: the session calls `calls` (`{"name", "input"}`) one per request, in turn,
    /// then answers in text.
    pub fn anthropic_messages(calls: Vec<Value>) -> Standin {
        Standin::start_scripted(serve_anthropic, calls)
    }

    /// OpenAI's Responses API (`POST /v1/responses`, `stream: true`), as Codex calls it:
    /// the session runs `commands` through Codex's shell tool, one per request (as many
    /// as the conversation holds `function_call_output`s), then answers in text.
    pub fn openai_responses(commands: &[&str]) -> Standin {
        let calls = commands.iter().map(|command| json!({"name": "shell", "input": {"command": command}})).collect();
        Standin::start_scripted(serve, calls)
    }

    /// The Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`), as
    /// Gemini CLI calls it: `calls` (`{"name", "input"}`) one per request, then text.
    pub fn gemini(calls: Vec<Value>) -> Standin {
        Standin::start_scripted(serve_gemini, calls)
    }

    fn start_scripted(serve: Serve, calls: Vec<Value>) -> Standin {
        let calls = Arc::new(calls);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let answered = Arc::new(Mutex::new(Vec::new()));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let (answers, seen) = (answered.clone(), paths.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (answers, seen, calls) = (answers.clone(), seen.clone(), calls.clone());
                std::thread::spawn(move || serve(stream, &answers, &seen, &calls));
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

fn respond(stream: &TcpStream, status: &str, content_type: &str, body: &str) {
    respond_with(stream, status, content_type, "", body);
}

/// `headers`: more header lines, each ending in CRLF.
fn respond_with(mut stream: &TcpStream, status: &str, content_type: &str, headers: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
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
        cache_written: 0,
        output: 120 + 10 * n,
        reasoning: 40 + n,
        tool_call,
        compaction: false,
    }
}

/// Gemini: the first request of a turn calls `run_shell_command`, the one after its
/// `functionResponse` answers in text; the counts in the last chunk's `usageMetadata`
/// (`promptTokenCount` includes the cached, `candidatesTokenCount` excludes thoughts).
fn serve_gemini(stream: TcpStream, answered: &Mutex<Vec<Answer>>, seen: &Mutex<Vec<String>>, calls: &[Value]) {
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
    // The scripted calls made so far: one per functionResponse in the conversation.
    let results = request["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|content| content["parts"].as_array())
        .flatten()
        .filter(|part| part.get("functionResponse").is_some())
        .count();
    let offered = |name: &Value| {
        request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|tool| tool["functionDeclarations"].as_array().cloned().unwrap_or_default())
            .any(|declaration| declaration["name"] == *name)
    };
    let next = calls.get(results).filter(|call| offered(&call["name"]));
    let call = next.map(|call| call["name"].as_str().unwrap_or_default().to_string());
    let mut recorded = answered.lock().unwrap();
    let n = recorded.len() as i64;
    let answer = answer_of(n, &model, call.clone());
    recorded.push(answer.clone());
    drop(recorded);
    let part = match next {
        Some(call) => json!({"functionCall": {"name": call["name"], "args": call["input"]}}),
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

/// Anthropic: each request makes the next scripted call (as many as the conversation
/// holds `tool_result`s), then answers in text; `message_start` carries the input counts
/// (each kind apart), `message_delta` the output's, and every response a `request-id`
/// header as the API sends one. Thinking is inside `output_tokens` (the API does not count
/// it apart), so `reasoning` is 0.
fn serve_anthropic(stream: TcpStream, answered: &Mutex<Vec<Answer>>, seen: &Mutex<Vec<String>>, calls: &[Value]) {
    let Some((method, path, body)) = read_request(&stream) else { return };
    seen.lock().unwrap().push(format!("{method} {path}"));
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let route = path.split('?').next().unwrap_or_default();
    if method != "POST" || route != "/v1/messages" || request["stream"] != true {
        let error = r#"{"type":"error","error":{"type":"not_found_error","message":"not found"}}"#;
        return respond(&stream, "404 Not Found", "application/json", error);
    }
    let model = request["model"].as_str().unwrap_or("unknown").to_string();
    let results = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .count();
    let offered = |name: &Value| request["tools"].as_array().into_iter().flatten().any(|tool| tool["name"] == *name);
    let subagent = request["messages"][0]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .chain(request["messages"][0]["content"].as_str())
        .any(|text| text.contains(SUBAGENT));
    // Claude Code's compaction asks, as the last user message, for a summary.
    let last = request["messages"].as_array().and_then(|messages| messages.last()).map(Value::to_string);
    let compaction = last.is_some_and(|text| text.contains("create a detailed summary of the conversation"));
    let next = calls.get(results).filter(|call| !subagent && offered(&call["name"]));
    let call = next.map(|call| call["name"].as_str().unwrap_or_default().to_string());
    let mut recorded = answered.lock().unwrap();
    let n = recorded.len() as i64;
    let mut answer = answer_of(n, &model, call.clone());
    answer.compaction = compaction;
    answer.cache_written = 200 + 20 * n;
    answer.reasoning = 0;
    recorded.push(answer.clone());
    drop(recorded);
    let fresh_input = answer.input - answer.cached - answer.cache_written;
    let usage = json!({"input_tokens": fresh_input, "cache_creation_input_tokens": answer.cache_written,
                       "cache_read_input_tokens": answer.cached, "output_tokens": 1,
                       "cache_creation": {"ephemeral_5m_input_tokens": answer.cache_written, "ephemeral_1h_input_tokens": 0}});
    let (block, delta, stop_reason) = match next {
        Some(call) => (
            json!({"type": "tool_use", "id": format!("toolu_standin_{n}"), "name": call["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": call["input"].to_string()}),
            "tool_use",
        ),
        None => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "The working tree is clean."}),
            "end_turn",
        ),
    };
    let events = [
        json!({"type": "message_start", "message": {"id": format!("msg_standin_{n}"), "type": "message", "role": "assistant",
               "content": [], "model": model, "stop_reason": null, "stop_sequence": null, "usage": usage}}),
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": answer.output}}),
        json!({"type": "message_stop"}),
    ];
    let body: String =
        events.iter().map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap())).collect();
    let request_id = format!("request-id: req_standin_{n}\r\n");
    respond_with(&stream, "200 OK", "text/event-stream", &request_id, &body);
}

fn serve(stream: TcpStream, answered: &Mutex<Vec<Answer>>, seen: &Mutex<Vec<String>>, calls: &[Value]) {
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
    let results = inputs.iter().filter(|item| item["type"] == "function_call_output").count();
    let shell = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| ["exec_command", "shell_command", "shell"].contains(name))
        .map(str::to_string);
    let side_request = request["text"]["format"]["type"] == "json_schema";
    let command = calls.get(results).and_then(|call| call["input"]["command"].as_str()).filter(|_| !side_request);
    let call = shell.filter(|_| command.is_some());
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
            let command = command.unwrap_or_default();
            let arguments = if tool == "exec_command" {
                json!({"cmd": command})
            } else {
                json!({"command": ["bash", "-lc", command]})
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
