//! Codex's transcript store: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (or under
//! `$CODEX_HOME`). A rollout becomes session_start (`session_meta`), prompt_submit (each
//! `user_message`), tool_start/tool_end (each `function_call` or `custom_tool_call` and
//! its output, `error` when the output states a non-zero exit code), one turn_end per
//! `token_count` request (running totals differenced, as the hook does) and session_end.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{ImportedSession, Importer, Store, by_path, event, parse_ms};
use crate::hook::adapters::codex::{exit_code, record_usage, tool_action, transcript_line};
use crate::hook::adapters::common::{digest_of, target_hash};
use crate::hook::local::dir_from_env;
use crate::hook::usage::Line;
use crate::model::{AgentType, Usage};

pub const IMPORTER: Importer = Importer {
    default_root: || dir_from_env("CODEX_HOME", ".codex").join("sessions"),
    store: Store::Files(|path| {
        path.extension().is_some_and(|e| e == "jsonl")
            && path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
    }),
    parse: |source| by_path(parse_file, source),
    usage_line: Some(transcript_line),
};

const AGENT: AgentType = AgentType::Codex;

fn parse_file(path: &Path) -> anyhow::Result<Option<ImportedSession>> {
    let text = std::fs::read_to_string(path)?;
    let mut session: Option<String> = None;
    let (mut first_ms, mut last_ms) = (None::<i64>, 0i64);
    let mut events = Vec::new();
    let mut started: HashMap<String, (i64, Value)> = HashMap::new();
    let (mut model, mut total) = (None::<String>, Usage::default());
    for (number, raw) in text.lines().enumerate() {
        let Ok(line) = serde_json::from_str::<Value>(raw) else { continue };
        let Some(ts) = line.get("timestamp").and_then(Value::as_str).and_then(parse_ms) else { continue };
        let payload = line.get("payload").unwrap_or(&Value::Null);
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "session_meta" {
            session = payload.get("id").and_then(Value::as_str).map(str::to_string);
        }
        let Some(id) = session.clone() else { continue };
        first_ms.get_or_insert(ts);
        last_ms = last_ms.max(ts);
        let key = number.to_string();
        match (kind, payload.get("type").and_then(Value::as_str)) {
            ("event_msg", Some("user_message")) => events.push(event(AGENT, &id, "prompt_submit", ts, &key)),
            ("response_item", Some(call @ ("function_call" | "custom_tool_call"))) => {
                let Some(call_id) = payload.get("call_id").and_then(Value::as_str) else { continue };
                let name = payload.get("name").and_then(Value::as_str).unwrap_or("unknown");
                let input_key = if call == "function_call" { "arguments" } else { "input" };
                let input = payload.get(input_key).cloned().unwrap_or(Value::Null);
                let parsed =
                    input.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()).unwrap_or(input.clone());
                let (digest, bytes) = digest_of(&input);
                // Hooks see shell calls as `Bash`; imported calls are named the same.
                let name = if matches!(name, "shell" | "shell_command" | "local_shell" | "exec_command") {
                    "Bash"
                } else {
                    name
                };
                let action = tool_action(name);
                let mut tool = json!({"name": format!("codex:{name}"), "action": action, "use_id": call_id,
                    "input_sha256": digest, "input_bytes": bytes});
                if let Some(target) = target_hash(&parsed) {
                    tool["target_hash"] = json!(target);
                }
                let mut start = event(AGENT, &id, "tool_start", ts, call_id);
                start["tool"] = tool.clone();
                events.push(start);
                started.insert(call_id.to_string(), (ts, tool));
            }
            ("response_item", Some("function_call_output" | "custom_tool_call_output")) => {
                let Some(call_id) = payload.get("call_id").and_then(Value::as_str) else { continue };
                let Some((start_ms, mut tool)) = started.remove(call_id) else { continue };
                let output = payload.get("output").cloned().unwrap_or(Value::Null);
                let said = output.as_str().map(str::to_string).unwrap_or_else(|| output.to_string());
                let failed = exit_code(&said).is_some_and(|code| code != 0);
                let (digest, bytes) = digest_of(&output);
                tool["output_sha256"] = json!(digest);
                tool["output_bytes"] = json!(bytes);
                tool["status"] = json!(if failed { "error" } else { "success" });
                tool["duration_ms"] = json!((ts - start_ms).max(0));
                let mut end = event(AGENT, &id, "tool_end", ts, call_id);
                end["tool"] = tool;
                events.push(end);
            }
            _ => match record_usage(&line) {
                Some(Line::Model(name)) => model = Some(name),
                Some(Line::Cumulative { usage, .. }) => {
                    let grown = crate::hook::usage::growth(&usage, &total);
                    total = usage.max_with(&total);
                    if !grown.is_zero() {
                        let mut turn = event(AGENT, &id, "turn_end", ts, &key);
                        if let Some(model) = &model {
                            turn["model"] = json!(model);
                        }
                        turn["usage"] = serde_json::to_value(grown)?;
                        events.push(turn);
                    }
                }
                _ => {}
            },
        }
    }
    let (Some(id), Some(first_ms)) = (session, first_ms) else { return Ok(None) };
    events.insert(0, event(AGENT, &id, "session_start", first_ms, "start"));
    events.push(event(AGENT, &id, "session_end", last_ms, "end"));
    Ok(Some(ImportedSession { events, last_ms, ledger: Vec::new() }))
}
