//! Factory Droid's transcript store: `~/.factory/sessions/<project>/<session>.jsonl`
//! (older builds: directly under `sessions/`), with the `<session>.settings.json`
//! sidecar. A session becomes session_start (`session_start` line), prompt_submit (each
//! person's message; Droid's `<system-reminder>` context messages are not prompts),
//! tool_start/tool_end (each `tool_use` block and its `tool_result`, `error` when
//! `is_error`; a call still without a result when the next prompt arrives or the file
//! ends is `denied`, as the hooks count it), one turn_end with the sidecar's running
//! total, and session_end (last line). A sub-droid's session (its `session_start` names
//! a `callingSessionId`) becomes a subagent_end of the calling session, with its own
//! sidecar's usage.

use std::path::Path;

use serde_json::{Value, json};

use super::tools::{Call, Tools};
use super::{ImportedSession, Importer, Source, Store, by_path, event, parse_ms, transcripts, usage_event};
use crate::agents::text;
use crate::hook::adapters::droid::{sidecar_of, sidecar_total, tool_action};
use crate::hook::local::home;
use crate::hook::usage::{CUMULATIVE_GROUP, session_key};
use crate::model::{AgentType, EventType};

pub const IMPORTER: Importer = Importer {
    default_root: || home().join(".factory/sessions"),
    store: Store::Listed(sessions),
    parse: |source| by_path(parse_file, source),
    usage_line: None,
};

const AGENT: AgentType = AgentType::Droid;

/// Every transcript under `root`, keyed as hooks record the session they saw (the
/// transcript's stem is the session id); a sub-droid's also names its caller.
fn sessions(root: &Path) -> anyhow::Result<Vec<Source>> {
    let mut files = Vec::new();
    transcripts(root, |path| path.extension().is_some_and(|e| e == "jsonl"), &mut files);
    for source in &mut files {
        let Some(stem) = source.path.file_stem().map(|s| s.to_string_lossy().into_owned()) else { continue };
        source.key = session_key(AGENT, &stem);
        // Only up to the `session_start` line (the first one in Droid's files) is read.
        let first = std::fs::File::open(&source.path).ok().and_then(|file| {
            std::io::BufRead::lines(std::io::BufReader::new(file)).map_while(Result::ok).find_map(|line| {
                serde_json::from_str::<Value>(&line).ok().filter(|v| text(v, "type") == Some("session_start"))
            })
        });
        source.parent_key = first.as_ref().and_then(|f| text(f, "callingSessionId")).map(|p| session_key(AGENT, p));
    }
    Ok(files)
}

fn is_person_prompt(blocks: &[Value]) -> bool {
    let texts: Vec<&str> =
        blocks.iter().filter(|b| text(b, "type") == Some("text")).filter_map(|b| text(b, "text")).collect();
    !texts.is_empty()
        && !texts.iter().all(|t| t.trim_start().starts_with("<system-reminder>"))
        && !blocks.iter().any(|b| text(b, "type") == Some("tool_result"))
}

fn parse_file(path: &Path) -> anyhow::Result<Option<ImportedSession>> {
    let all = std::fs::read_to_string(path)?;
    let mut header: Option<Value> = None;
    let (mut first_ms, mut last_ms) = (None::<i64>, 0i64);
    let mut prompts = Vec::new();
    let mut calls: Option<Tools> = None;
    for (number, raw) in all.lines().enumerate() {
        let Ok(line) = serde_json::from_str::<Value>(raw) else { continue };
        if header.is_none() && text(&line, "type") == Some("session_start") {
            header = Some(line);
            continue;
        }
        let Some(start) = &header else { continue };
        // A sub-droid's tool calls belong to the session that called it.
        let session = text(start, "callingSessionId").or_else(|| text(start, "id")).unwrap_or_default();
        if session.is_empty() {
            return Ok(None);
        }
        let subagent = start.get("callingSessionId").is_some();
        let Some(ts) = text(&line, "timestamp").and_then(parse_ms) else { continue };
        first_ms.get_or_insert(ts);
        last_ms = last_ms.max(ts);
        let calls = calls.get_or_insert_with(|| Tools::new(AGENT, session));
        let key = text(&line, "id").map(str::to_string).unwrap_or_else(|| number.to_string());
        let message = line.get("message").unwrap_or(&Value::Null);
        let blocks = message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        match text(message, "role") {
            Some("user") if is_person_prompt(blocks) => {
                calls.end_open(ts, "denied");
                if !subagent {
                    prompts.push(event(AGENT, session, EventType::PromptSubmit, ts, &key));
                }
            }
            Some("user") => {
                for block in blocks.iter().filter(|b| text(b, "type") == Some("tool_result")) {
                    let Some(use_id) = text(block, "tool_use_id") else { continue };
                    let status = if block.get("is_error") == Some(&json!(true)) { "error" } else { "success" };
                    calls.end(ts, use_id, block.get("content").unwrap_or(&Value::Null), status);
                }
            }
            Some("assistant") => {
                for block in blocks.iter().filter(|b| text(b, "type") == Some("tool_use")) {
                    let Some(use_id) = text(block, "id") else { continue };
                    let name = text(block, "name").unwrap_or("unknown");
                    let server = name.strip_prefix("mcp__").and_then(|rest| rest.split("__").next());
                    let input = block.get("input").unwrap_or(&Value::Null);
                    calls.start(ts, &Call { use_id, name, action: tool_action(name), server, input });
                }
            }
            _ => {}
        }
    }
    let (Some(start), Some(first_ms)) = (header, first_ms) else { return Ok(None) };
    let own = text(&start, "id").unwrap_or_default();
    let calling = text(&start, "callingSessionId");
    let session = calling.unwrap_or(own);
    let mut events = Vec::new();
    if calling.is_none() {
        events.push(event(AGENT, session, EventType::SessionStart, first_ms, "start"));
    }
    if let Some(mut calls) = calls {
        calls.end_open(last_ms, "denied");
        events.extend(calls.events);
    }
    events.extend(prompts);
    let mut ledger = Vec::new();
    let sidecar = sidecar_of(&path.to_string_lossy());
    let total = sidecar.as_deref().and_then(sidecar_total);
    let kind = if calling.is_some() { EventType::SubagentEnd } else { EventType::TurnEnd };
    match (&total, &sidecar) {
        (Some((model, usage)), Some(sidecar)) if !usage.is_zero() => {
            events.push(usage_event(AGENT, session, kind, last_ms, own, model.as_deref(), usage)?);
            ledger.push((sidecar.clone(), vec![(CUMULATIVE_GROUP.to_string(), model.clone(), *usage)]));
        }
        _ if calling.is_some() => events.push(event(AGENT, session, kind, last_ms, own)),
        _ => {}
    }
    if calling.is_none() {
        events.push(event(AGENT, session, EventType::SessionEnd, last_ms, "end"));
    }
    Ok(Some(ImportedSession { events, last_ms, ledger }))
}
