//! OpenCode's session store: the SQLite database `~/.local/share/opencode/opencode.db`
//! (OpenCode 1.2 and later; `$OPENCODE_DB` or `--from` may name another file), tables
//! `session`, `message` and `part` as declared in OpenCode's
//! `packages/opencode/src/session/session.sql.ts`, each row's `data` the message or part
//! object without its ids. Opened read-only. The JSON files of older versions are
//! migrated into the database by OpenCode itself and are not read.
//!
//! A top-level session (with its subagent sessions, `parent_id` set) becomes
//! session_start (`time_created`), prompt_submit (each user message with a text part of
//! the person's, not a synthetic one), tool_start/tool_end (each `tool` part by its
//! final state: `completed` is success unless bash's `metadata.exit` is not 0, `error` is
//! error or, with OpenCode's refusal text, denied; a call that never finished is denied,
//! as hooks count it), compact (each `compaction` part), one turn_end per finished
//! assistant message with its usage (a subagent's too, as the hooks report it),
//! subagent_end (each subagent session) and session_end (`time_updated`).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, params_from_iter};
use serde_json::{Value, json};

use super::tools::{Call, Tools};
use super::{Group, ImportedSession, Importer, Source, Store, event, usage_event};
use crate::agents::opencode::{message_usage, tool_action};
use crate::agents::text;
use crate::config::machine::MachineVariable;
use crate::hook::adapters::opencode::reads_as_refusal;
use crate::hook::local::xdg_data_home;
use crate::hook::usage::session_key;
use crate::model::{AgentType, EventType};

pub const IMPORTER: Importer = Importer {
    default_root: || MachineVariable::OpenCodeDb.path().unwrap_or_else(|| xdg_data_home().join("opencode")),
    store: Store::Listed(sessions),
    parse,
    usage_line: None,
};

const AGENT: AgentType = AgentType::Opencode;

/// The database file: `root` itself, or `opencode.db` in it.
fn database(root: &Path) -> PathBuf {
    if root.is_dir() { root.join("opencode.db") } else { root.to_path_buf() }
}

fn open(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|err| anyhow::anyhow!("cannot open OpenCode's database {}: {err}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// Every top-level session in the database, keyed as hooks record the sessions they saw.
fn sessions(root: &Path) -> anyhow::Result<Vec<Source>> {
    let path = database(root);
    anyhow::ensure!(path.is_file(), "{} does not exist: no OpenCode sessions to import", path.display());
    let conn = open(&path)?;
    let mut stmt = conn
        .prepare("SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created, id")
        .map_err(|err| anyhow::anyhow!("{} is not an OpenCode database this version reads: {err}", path.display()))?;
    let ids = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    Ok(ids
        .into_iter()
        .map(|id| Source { key: session_key(AGENT, &id), path: path.clone(), id: Some(id), parent_key: None })
        .collect())
}

fn time(value: &Value, key: &str) -> Option<i64> {
    value.get("time").and_then(|t| t.get(key)).and_then(Value::as_i64)
}

/// Rows of `sql` over the session ids (`?` placeholders appended), with JSON `data`.
fn rows(conn: &Connection, sql: &str, ids: &[String]) -> anyhow::Result<Vec<(String, String, i64, Value)>> {
    let marks = vec!["?"; ids.len()].join(",");
    let mut stmt = conn.prepare(&sql.replace("{ids}", &marks))?;
    let rows = stmt.query_map(params_from_iter(ids), |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, String>(3)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, session, at, data) = row?;
        // A row OpenCode wrote in a shape we cannot read is skipped, not fatal.
        if let Ok(data) = serde_json::from_str::<Value>(&data) {
            out.push((id, session, at, data));
        }
    }
    Ok(out)
}

fn parse(source: &Source) -> anyhow::Result<Option<ImportedSession>> {
    let Some(root) = source.id.as_deref() else { return Ok(None) };
    let conn = open(&source.path)?;
    let (created, updated): (i64, i64) =
        conn.query_row("SELECT time_created, time_updated FROM session WHERE id = ?1", [root], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    let mut stmt = conn.prepare(
        "WITH RECURSIVE tree(id) AS (SELECT ?1 UNION SELECT s.id FROM session s JOIN tree ON s.parent_id = tree.id)
         SELECT id FROM tree",
    )?;
    let ids = stmt.query_map([root], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    let messages = rows(
        &conn,
        "SELECT id, session_id, time_created, data FROM message WHERE session_id IN ({ids}) ORDER BY time_created, id",
        &ids,
    )?;
    let parts = rows(
        &conn,
        "SELECT message_id, session_id, time_created, data FROM part WHERE session_id IN ({ids}) ORDER BY time_created, id",
        &ids,
    )?;

    let mut events = vec![event(AGENT, root, EventType::SessionStart, created, "start")];
    let mut calls = Tools::new(AGENT, root);
    let mut last_ms = updated.max(created);
    for (message, session, at, data) in &parts {
        last_ms = last_ms.max(*at);
        match text(data, "type") {
            Some("tool") => tool_part(&mut calls, data, *at),
            Some("compaction") if session == root => events.push(event(AGENT, root, EventType::Compact, *at, message)),
            _ => {}
        }
    }
    let mut ledger: Vec<(String, Vec<Group>)> = Vec::new();
    let mut subagent_last: Vec<(String, i64)> = Vec::new();
    for (id, session, at, data) in &messages {
        let at = time(data, "completed").unwrap_or(*at);
        last_ms = last_ms.max(at);
        if session != root {
            match subagent_last.iter_mut().find(|(s, _)| s == session) {
                Some(entry) => entry.1 = entry.1.max(at),
                None => subagent_last.push((session.clone(), at)),
            }
        }
        match text(data, "role") {
            Some("user") if session == root && is_person_prompt(&parts, id) => {
                events.push(event(AGENT, root, EventType::PromptSubmit, at, id));
            }
            Some("assistant") if time(data, "completed").is_some() => {
                let mut info = data.clone();
                info["id"] = json!(id);
                let Some(group) = message_usage(&info) else { continue };
                if !group.2.is_zero() {
                    events.push(usage_event(AGENT, root, EventType::TurnEnd, at, id, group.1.as_deref(), &group.2)?);
                }
                let key = format!("opencode:{session}");
                match ledger.iter_mut().find(|(k, _)| *k == key) {
                    Some(entry) => entry.1.push(group),
                    None => ledger.push((key, vec![group])),
                }
            }
            _ => {}
        }
    }
    calls.end_open(last_ms, "denied");
    events.extend(calls.events);
    for (session, at) in subagent_last {
        events.push(event(AGENT, root, EventType::SubagentEnd, at, &session));
    }
    events.push(event(AGENT, root, EventType::SessionEnd, last_ms, "end"));
    Ok(Some(ImportedSession { events, last_ms, ledger }))
}

/// Whether the user message `message` holds text the person wrote (OpenCode marks the
/// text it adds itself `synthetic`).
fn is_person_prompt(parts: &[(String, String, i64, Value)], message: &str) -> bool {
    parts.iter().any(|(of, _, _, data)| {
        of == message && text(data, "type") == Some("text") && data.get("synthetic") != Some(&json!(true))
    })
}

fn tool_part(calls: &mut Tools, part: &Value, at: i64) {
    let Some(use_id) = text(part, "callID") else { return };
    let name = text(part, "tool").unwrap_or("unknown");
    let state = part.get("state").unwrap_or(&Value::Null);
    let input = state.get("input").unwrap_or(&Value::Null);
    let start = time(state, "start").unwrap_or(at);
    calls.start(start, &Call { use_id, name, action: tool_action(name), server: None, input });
    let end = time(state, "end").unwrap_or(start);
    match text(state, "status") {
        Some("completed") => {
            let exit = state.get("metadata").and_then(|m| m.get("exit")).and_then(Value::as_i64);
            let status = if exit.is_some_and(|code| code != 0) { "error" } else { "success" };
            calls.end(end, use_id, state.get("output").unwrap_or(&Value::Null), status);
        }
        Some("error") => {
            let error = state.get("error").unwrap_or(&Value::Null);
            let status = if error.as_str().is_some_and(reads_as_refusal) { "denied" } else { "error" };
            calls.end(end, use_id, error, status);
        }
        // Pending or running when OpenCode stopped: ended as denied with the others.
        _ => {}
    }
}
