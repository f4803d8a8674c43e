//! The join keys of a partition (`join_keys`, schema version 3): how the writer finds the
//! other source's report (the hook's or the agent's OTLP export) of one tool call, model
//! request or prompt, by the vendor's id or by time, and marks what it paired. The
//! policy (which events are looked at, which report is counted) is `events::writer`'s
//! join; the SQL on the partition lives here.

use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;
use crate::model::wire::Event;
use crate::model::{AgentType, EventType};

/// The join key of what an event reports, from its stored columns: a tool call's use id,
/// a model request's id (`metadata.request_id`); for a Gemini CLI or Codex request, whose
/// two sources share no id for it (the hook reads the transcript: Gemini's messages,
/// Codex's `token_count` lines, one per response; the export names neither), the
/// response's exact token counts, which both report per response and which two
/// responses of one session almost never share (the input, cached input included, grows
/// with every response); `None` for anything else.
pub fn join_key(
    event_type: EventType,
    agent: AgentType,
    tool_use_id: Option<&str>,
    metadata: Option<&str>,
    usage: &crate::model::Usage,
) -> Option<String> {
    match event_type {
        EventType::ToolEnd => tool_use_id.filter(|id| !id.is_empty()).map(|id| format!("tool:{id}")),
        EventType::TurnEnd => {
            let request = metadata.filter(|text| text.contains("request_id")).and_then(|metadata| {
                let value: serde_json::Value = serde_json::from_str(metadata).ok()?;
                value.get("request_id")?.as_str().filter(|id| !id.is_empty()).map(|id| format!("request:{id}"))
            });
            request.or_else(|| usage_key(agent, usage))
        }
        _ => None,
    }
}

fn usage_key(agent: AgentType, usage: &crate::model::Usage) -> Option<String> {
    let counts = [
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_5m_tokens,
        usage.cache_write_1h_tokens,
        usage.reasoning_tokens,
    ];
    let keyed_by_counts = matches!(agent, AgentType::GeminiCli | AgentType::Codex);
    (keyed_by_counts && counts.iter().sum::<i64>() > 0).then(|| {
        let counts: Vec<String> = counts.iter().map(i64::to_string).collect();
        format!("usage:{}", counts.join("/"))
    })
}

/// The stored event the other source reported under `key` in this session, if any.
pub fn other_report(conn: &Connection, event: &Event, user_id: &str, key: &str) -> Result<Option<Vec<u8>>, DbError> {
    let mut find = conn.prepare_cached(
        "SELECT event_id FROM join_keys
         WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3 AND key = ?4 AND from_otlp = ?5",
    )?;
    Ok(find
        .query_row(params![user_id, event.agent_type.as_str(), event.session_id, key, !event.is_otlp()], |row| {
            row.get(0)
        })
        .optional()?)
}

/// How near in time the other source's report of an event without a shared id must be
/// to be the same thing (both come from one machine's clock), by type; `None` for types
/// that are only joined by key.
pub fn near_window_ms(event: &Event) -> Option<i64> {
    match event.event_type {
        EventType::PromptSubmit => Some(10_000),
        EventType::SessionStart => Some(120_000),
        EventType::Compact => Some(30_000),
        EventType::SubagentEnd => Some(60_000),
        EventType::ToolEnd => Some(5_000),
        _ => None,
    }
}

/// The other source's unpaired report of the same kind near `event` in its session
/// (for a tool call, of the same tool), if any: the twin of an event that has no id both
/// sources share (a prompt, a session's start, a compaction, a Gemini tool call).
pub fn other_report_near(
    conn: &Connection,
    event: &Event,
    user_id: &str,
    window_ms: i64,
) -> Result<Option<Vec<u8>>, DbError> {
    use crate::model::wire::OTLP_METADATA_PREFIX;
    let mut find = conn.prepare_cached(
        "SELECT e.event_id FROM events e INDEXED BY events_by_session
         WHERE e.user_id = ?1 AND e.agent_type = ?2 AND e.session_id = ?3 AND e.ts_ms BETWEEN ?4 AND ?5
           AND e.type = ?6 AND (?7 IS NULL OR e.tool_name = ?7)
           AND (substr(coalesce(e.metadata, ''), 1, length(?8)) = ?8) = ?9
           AND NOT EXISTS (SELECT 1 FROM join_keys j WHERE j.user_id = ?1 AND j.agent_type = ?2
                           AND j.session_id = ?3 AND j.key = 'paired:' || hex(e.event_id))
         ORDER BY abs(e.ts_ms - ?10) LIMIT 1",
    )?;
    Ok(find
        .query_row(
            params![
                user_id,
                event.agent_type.as_str(),
                event.session_id,
                event.ts_ms - window_ms,
                event.ts_ms + window_ms,
                event.event_type.as_str(),
                event.tool.as_ref().map(|tool| tool.name.as_str()),
                OTLP_METADATA_PREFIX,
                !event.is_otlp(),
                event.ts_ms,
            ],
            |row| row.get(0),
        )
        .optional()?)
}

/// The marker a session's hook rows leave in `join_keys` (only sessions that sent OTLP):
/// an OTLP event looks for a twin by time only in a session the hook also reports.
const HOOK_MARKER: &str = "source:hook";

/// Whether the hook has reported in this session (for a session that sent OTLP).
pub fn hook_reports(conn: &Connection, event: &Event, user_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM join_keys WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3
               AND key = ?4 AND from_otlp = 0",
        )?
        .query_row(params![user_id, event.agent_type.as_str(), event.session_id, HOOK_MARKER], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Notes that the hook reports in this session (see [`hook_reports`]).
pub fn mark_hook_reports(
    conn: &Connection,
    user_id: &str,
    agent_type: AgentType,
    session_id: &str,
    event_id: &[u8],
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO join_keys (user_id, agent_type, session_id, key, from_otlp, event_id)
         VALUES (?1, ?2, ?3, ?4, 0, ?5)",
    )?
    .execute(params![user_id, agent_type.as_str(), session_id, HOOK_MARKER, event_id])?;
    Ok(())
}

/// Marks a stored report as paired with its other source's (so it is the twin of one
/// report only).
pub fn mark_paired(conn: &Connection, event: &Event, user_id: &str, stored_id: &[u8]) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO join_keys (user_id, agent_type, session_id, key, from_otlp, event_id)
         VALUES (?1, ?2, ?3, 'paired:' || hex(?4), ?5, ?4)",
    )?
    .execute(params![user_id, event.agent_type.as_str(), event.session_id, stored_id, event.is_otlp()])?;
    Ok(())
}

/// Gives the stored report `stored_id` what it lacks of `event`, the same call's or
/// request's other report: digests and git context, never a counted column.
pub fn fill_from(conn: &Connection, stored_id: &[u8], event: &Event) -> Result<(), DbError> {
    let tool = event.tool.as_ref();
    let git = event.git.as_ref();
    conn.prepare_cached(
        "UPDATE events SET
            tool_input_sha256 = coalesce(tool_input_sha256, ?2),
            tool_output_sha256 = coalesce(tool_output_sha256, ?3),
            tool_target_hash = coalesce(tool_target_hash, ?4),
            git_branch = coalesce(git_branch, ?5),
            git_commit = coalesce(git_commit, ?6),
            git_remote = coalesce(git_remote, ?7),
            git_dirty = coalesce(git_dirty, ?8)
         WHERE event_id = ?1",
    )?
    .execute(params![
        stored_id,
        tool.and_then(|t| t.input_sha256.as_ref()).map(|d| d.as_slice()),
        tool.and_then(|t| t.output_sha256.as_ref()).map(|d| d.as_slice()),
        tool.and_then(|t| t.target_hash.as_ref()).map(|d| d.as_slice()),
        git.and_then(|g| g.branch.as_deref()),
        git.and_then(|g| g.commit.as_deref()),
        git.and_then(|g| g.remote.as_deref()),
        git.and_then(|g| g.dirty),
    ])?;
    Ok(())
}

/// Records a just-stored event's join key (the first report of a source wins).
pub fn record_join_key(conn: &Connection, event: &Event, user_id: &str, key: &str) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO join_keys (user_id, agent_type, session_id, key, from_otlp, event_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        user_id,
        event.agent_type.as_str(),
        event.session_id,
        key,
        event.is_otlp(),
        event.event_id.as_bytes().as_slice()
    ])?;
    Ok(())
}

/// Records the join keys of a session's rows already stored in this partition: when a
/// session first sends OTLP, the hook's reports before it become findable.
pub fn record_session_join_keys(
    conn: &Connection,
    user_id: &str,
    agent_type: AgentType,
    session_id: &str,
) -> Result<(), DbError> {
    let mut rows = conn.prepare_cached(
        "SELECT event_id, type, tool_use_id, metadata, input_tokens, output_tokens, cache_read_tokens,
                cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens
         FROM events INDEXED BY events_by_session
         WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3",
    )?;
    /// A stored report: its id, type, tool use id, metadata and tokens.
    type Report = (Vec<u8>, String, Option<String>, Option<String>, crate::model::Usage);
    let found: Vec<Report> = rows
        .query_map(params![user_id, agent_type.as_str(), session_id], |row| {
            let usage = crate::model::Usage {
                input_tokens: row.get(4)?,
                output_tokens: row.get(5)?,
                cache_read_tokens: row.get(6)?,
                cache_write_5m_tokens: row.get(7)?,
                cache_write_1h_tokens: row.get(8)?,
                reasoning_tokens: row.get(9)?,
            };
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, usage))
        })?
        .collect::<Result<_, _>>()?;
    let mut insert = conn.prepare_cached(
        "INSERT OR IGNORE INTO join_keys (user_id, agent_type, session_id, key, from_otlp, event_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (event_id, kind, tool_use_id, metadata, usage) in found {
        let Some(kind) = EventType::parse(&kind) else { continue };
        let from_otlp =
            metadata.as_deref().is_some_and(|text| text.starts_with(crate::model::wire::OTLP_METADATA_PREFIX));
        if !from_otlp {
            insert.execute(params![user_id, agent_type.as_str(), session_id, HOOK_MARKER, false, event_id])?;
        }
        if let Some(key) = join_key(kind, agent_type, tool_use_id.as_deref(), metadata.as_deref(), &usage) {
            insert.execute(params![user_id, agent_type.as_str(), session_id, key, from_otlp, event_id])?;
        }
    }
    Ok(())
}
