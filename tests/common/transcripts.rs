//! Transcripts for the search tests: a session made through `POST /v1/events`, its
//! transcript written in the agent's own format (Claude Code's session JSONL, Codex's
//! rollout JSONL, as `tests/fixtures/agents/<agent>/transcript.jsonl` show them) and
//! uploaded in one chunk, `GET /api/search` on the web listener, and the library's own
//! index and search for tests that run with the server stopped.

use std::path::Path;

use serde_json::{Value, json};

use super::{TestServer, agent, envelope, event, now_ms, read, ts_rfc3339};
use sightline::transcripts::index::TranscriptIndex;
use sightline::transcripts::search::{self, Scope, SearchRequest};

/// One step of a conversation, as the agent's transcript records it.
#[derive(Debug, Clone, Copy)]
pub enum Turn<'a> {
    User(&'a str),
    Assistant(&'a str),
    /// The model runs a shell command and reads its output.
    Shell {
        command: &'a str,
        output: &'a str,
    },
}

/// A session's transcript: which agent wrote it, with which model, from when.
pub struct Transcript<'a> {
    pub agent: &'a str,
    pub session: &'a str,
    pub model: &'a str,
    /// The first turn's time; each next turn is a second later.
    pub start_ms: i64,
    pub turns: &'a [Turn<'a>],
}

impl Transcript<'_> {
    /// The transcript file the agent would have written.
    pub fn text(&self) -> String {
        let lines = match self.agent {
            "claude_code" => self.claude_code(),
            "codex" => self.codex(),
            other => panic!("no transcript writer for {other}"),
        };
        lines.iter().map(|line| format!("{line}\n")).collect()
    }

    fn ts(&self, turn: usize) -> String {
        ts_rfc3339(self.start_ms + 1000 * turn as i64)
    }

    /// Claude Code: `user`/`assistant` lines holding Messages API messages; a shell
    /// command is a `Bash` `tool_use` block and a `tool_result` block in the next user line.
    fn claude_code(&self) -> Vec<Value> {
        let line = |i: usize, kind: &str, message: Value| {
            json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/dev/shop",
                "sessionId": self.session, "version": "2.0.37", "uuid": format!("{kind}-{i}"),
                "timestamp": self.ts(i), "type": kind, "message": message})
        };
        let reply = |i: usize, content: Value| {
            json!({"id": format!("msg_{i:02}"), "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "cache_read_input_tokens": 1000, "output_tokens": 40}})
        };
        let mut lines = Vec::new();
        for (i, turn) in self.turns.iter().enumerate() {
            match turn {
                Turn::User(text) => lines.push(line(i, "user", json!({"role": "user", "content": text}))),
                Turn::Assistant(text) => {
                    lines.push(line(i, "assistant", reply(i, json!([{"type": "text", "text": text}]))));
                }
                Turn::Shell { command, output } => {
                    let id = format!("toolu_{i:02}");
                    let call = json!([{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]);
                    lines.push(line(i, "assistant", reply(i, call)));
                    let result = json!([{"type": "tool_result", "tool_use_id": id, "content": output}]);
                    lines.push(line(i, "user", json!({"role": "user", "content": result})));
                }
            }
        }
        lines
    }

    /// Codex: a rollout of `session_meta`, `turn_context` (the model), `response_item`
    /// messages, `exec_command` function calls with their outputs, and `token_count` events.
    fn codex(&self) -> Vec<Value> {
        let line =
            |i: usize, kind: &str, payload: Value| json!({"timestamp": self.ts(i), "type": kind, "payload": payload});
        let meta = json!({"id": self.session, "timestamp": self.ts(0), "cwd": "/home/dev/shop",
            "originator": "codex_cli_rs", "cli_version": "0.131.0", "source": "cli", "model_provider": "openai"});
        let context = json!({"turn_id": "turn-1", "cwd": "/home/dev/shop", "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write"}, "model": self.model, "effort": "medium"});
        let mut lines = vec![line(0, "session_meta", meta), line(0, "turn_context", context)];
        let mut total = 0;
        for (i, turn) in self.turns.iter().enumerate() {
            // Each model response ends with the session's running token total.
            let mut responded = |lines: &mut Vec<Value>| {
                total += 1000;
                let usage = json!({"input_tokens": total, "cached_input_tokens": 0, "output_tokens": total / 10,
                    "reasoning_output_tokens": 0, "total_tokens": total + total / 10});
                let info =
                    json!({"total_token_usage": usage, "last_token_usage": usage, "model_context_window": 258400});
                lines.push(line(i, "event_msg", json!({"type": "token_count", "info": info})));
            };
            let message = |role: &str, kind: &str, text: &str| {
                let content = json!([{"type": kind, "text": text}]);
                json!({"type": "message", "role": role, "content": content})
            };
            match turn {
                Turn::User(text) => lines.push(line(i, "response_item", message("user", "input_text", text))),
                Turn::Assistant(text) => {
                    lines.push(line(i, "response_item", message("assistant", "output_text", text)));
                    responded(&mut lines);
                }
                Turn::Shell { command, output } => {
                    let id = format!("call_{i:02}");
                    let arguments = json!({"cmd": command, "workdir": "/home/dev/shop"}).to_string();
                    let call = json!({"type": "function_call", "name": "exec_command", "arguments": arguments,
                        "call_id": id});
                    lines.push(line(i, "response_item", call));
                    responded(&mut lines);
                    let said = format!("Process exited with code 0\nOutput:\n{output}\n");
                    let result = json!({"type": "function_call_output", "call_id": id, "output": said});
                    lines.push(line(i, "response_item", result));
                }
            }
        }
        lines
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes))
}

/// Uploads `text` as the session's transcript in one zstd chunk, as the shipper would.
pub fn upload(server: &TestServer, token: &str, agent_type: &str, session: &str, text: &str) -> (u16, Value) {
    let body = zstd::bulk::compress(text.as_bytes(), 3).unwrap();
    let digest = sha256(&body);
    let url = format!("{}/v1/transcripts/{session}?agent_type={agent_type}", server.ingest);
    read(
        agent()
            .post(&url)
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/zstd")
            .header("X-Chunk-Index", "0")
            .header("X-Chunk-Total", "1")
            .header("X-Chunk-Sha256", &digest)
            .header("X-Transcript-Sha256", &digest)
            .send(&body[..]),
    )
}

/// Makes the session exist for the token's owner (its start and one priced turn, so the
/// session has the transcript's model), uploads the transcript, and returns the
/// session's row id (what search hits and `session:` name).
pub fn session_with_transcript(server: &TestServer, token: &str, transcript: &Transcript<'_>) -> String {
    let stamp = |kind: &str, ts_ms: i64| {
        let mut e = event(kind, transcript.session, ts_ms);
        e["agent_type"] = json!(transcript.agent);
        if kind == "turn_end" {
            e["model"] = json!(transcript.model);
        }
        e
    };
    let now = now_ms();
    let (status, body) =
        server.post_events(token, &envelope(vec![stamp("session_start", now), stamp("turn_end", now + 1)]));
    assert_eq!((status, &body["accepted"]), (200, &json!(2)), "{body}");
    let (status, body) = upload(server, token, transcript.agent, transcript.session, &transcript.text());
    assert_eq!((status, body), (200, json!({"complete": true})), "upload of {}", transcript.session);
    row_id(&server.data_dir, transcript.agent, transcript.session)
}

/// The row id of the agent's session (session ids are unique within a test).
pub fn row_id(data_dir: &Path, agent_type: &str, session: &str) -> String {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    conn.query_row(
        "SELECT id FROM sessions WHERE agent_type = ?1 AND agent_session_id = ?2",
        [agent_type, session],
        |r| r.get(0),
    )
    .unwrap()
}

/// A user's id, by email.
pub fn user_id(data_dir: &Path, email: &str) -> String {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    conn.query_row("SELECT id FROM users WHERE email = ?1", [email], |r| r.get(0)).unwrap()
}

/// `GET /api/search` with these query parameters, as `token`'s owner (or with no token).
/// Search wants an access token; a hook token names its owner, who is signed in with
/// the test password instead.
pub fn search(server: &TestServer, token: Option<&str>, params: &[(&str, &str)]) -> (u16, Value) {
    let access = token.map(|token| match token.starts_with("slh_hook_") {
        true => super::access_token(server, &owner_email(server, token)),
        false => token.to_string(),
    });
    let token = access.as_deref();
    let mut request = agent().get(format!("{}/api/search", server.web));
    for (key, value) in params {
        request = request.query(*key, *value);
    }
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    read(request.call())
}

/// The whole answer to `q` (up to 100 hits), which must be a 200.
pub fn results(server: &TestServer, token: &str, q: &str) -> Value {
    let (status, body) = search(server, Some(token), &[("q", q), ("limit", "100")]);
    assert_eq!(status, 200, "{q}: {body}");
    assert_eq!(body["cut_short"], false, "{q}: {body}");
    body
}

/// The hits of `q` as (session row id, position), sorted.
pub fn hits(server: &TestServer, token: &str, q: &str) -> Vec<(String, u64)> {
    let body = results(server, token, q);
    let mut hits: Vec<(String, u64)> = body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| (hit["session_id"].as_str().unwrap().to_string(), hit["position"].as_u64().unwrap()))
        .collect();
    hits.sort();
    assert_eq!(body["total"], json!(hits.len()), "{q}: the total counts what the caller may see");
    hits
}

/// Waits (generously) until each of these sessions has documents the owner can find.
pub fn wait_searchable(server: &TestServer, token: &str, sessions: &[&str]) {
    for session in sessions {
        super::wait_until(std::time::Duration::from_secs(30), &format!("{session} to be searchable"), || {
            results(server, token, &format!("session:{session}"))["total"].as_u64() > Some(0)
        });
    }
}

/// The library search on the index under `data_dir` (the server stopped): the hits of
/// `q` in the user's own sessions, as (session row id, position).
pub fn library_hits(data_dir: &Path, user_id: &str, q: &str) -> Vec<(String, u64)> {
    let index = TranscriptIndex::open(data_dir).expect("open the index").index;
    let mut request = SearchRequest::new(q, Scope::OwnSessions { user_id: user_id.to_string() });
    request.limit = search::MAX_LIMIT;
    let found = search::search(&index, &request).expect("search");
    let mut hits: Vec<(String, u64)> = found.hits.into_iter().map(|hit| (hit.session_id, hit.position)).collect();
    hits.sort();
    hits
}

/// A stored transcript's text, by the path its session row names.
pub fn stored_text(data_dir: &Path, row_id: &str) -> String {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    let path: String =
        conn.query_row("SELECT transcript_path FROM sessions WHERE id = ?1", [row_id], |r| r.get(0)).unwrap();
    String::from_utf8(zstd::stream::decode_all(std::fs::File::open(data_dir.join(path)).unwrap()).unwrap()).unwrap()
}

/// The e-mail of a hook token's owner, read from main.db by the token's digest.
pub fn owner_email(server: &TestServer, hook_token: &str) -> String {
    let digest = sightline::auth::tokens::digest(hook_token);
    server
        .main_db()
        .query_row(
            "SELECT u.email FROM auth_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_sha256 = ?1",
            [digest.as_slice()],
            |row| row.get(0),
        )
        .expect("the hook token's owner")
}
