//! A session as its reader sees it: the row behind `GET /v1/me/sessions/…` and
//! `GET /api/sessions/{id}`, and the lookup of the caller's own session id.
//!
//! Invariant: [`session_view`] takes the audited read's proof, so a session is read
//! only by someone allowed to read it.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::read::SessionRead;
use crate::db::DbError;
use crate::events::reads;
use crate::model::wire::Rejection;
use crate::model::{AgentType, PermissionMode, Usage, nusd_to_usd, rfc3339_ms};

/// A session as a reader sees it (`/v1/me/sessions/…`, `/api/sessions/{id}`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SessionView {
    pub id: String,
    pub agent_type: String,
    pub session_id: String,
    pub run_kind: String,
    pub first_event_at: String,
    pub last_event_at: String,
    /// The same two times as integers, for callers that compute with them.
    #[serde(skip)]
    pub first_event_ms: i64,
    #[serde(skip)]
    pub last_event_ms: i64,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// `ended` (its agent said so) or `abandoned` (closed after a quiet time); `None` while open.
    pub end_reason: Option<String>,
    pub event_count: i64,
    pub prompt_count: i64,
    pub tool_call_count: i64,
    pub tool_error_count: i64,
    pub denial_count: i64,
    pub notification_count: i64,
    pub subagent_count: i64,
    pub compact_count: i64,
    pub usage: Usage,
    pub cost_usd: f64,
    pub cost_nusd: i64,
    pub client_cost_usd: f64,
    pub unknown_model_events: i64,
    pub total_response_ms: i64,
    pub response_sample_count: i64,
    pub max_permission_mode: Option<PermissionMode>,
    pub models: BTreeMap<String, i64>,
    pub git: Option<GitView>,
    pub machine_id: Option<String>,
    pub cli_version: Option<String>,
    pub os: Option<String>,
    /// What the agent reported that no event carries (lines of code, commits, active
    /// time), when it exports OTLP metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reported: Option<super::reported::Reported>,
    /// The evaluation cell a harness ran this session for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval: Option<crate::model::eval_cell::EvalTag>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct GitView {
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub remote: Option<String>,
    pub dirty: Option<bool>,
}

/// The row id of the caller's own session, or `None` (another person's session is `None`
/// too, indistinguishable from one that does not exist).
pub fn own_session_id(
    conn: &Connection,
    user_id: &str,
    agent: AgentType,
    session_id: &str,
) -> Result<Option<String>, DbError> {
    Ok(conn
        .query_row(
            "SELECT id FROM sessions WHERE user_id = ?1 AND agent_type = ?2 AND agent_session_id = ?3",
            params![user_id, agent.as_str(), session_id],
            |row| row.get(0),
        )
        .optional()?)
}

/// The session a proof covers, or `None` if it has gone since. The proof is the
/// caller's right to read it (`sessions::read`); there is no other way in.
pub fn session_view(conn: &Connection, proof: &SessionRead) -> Result<Option<SessionView>, DbError> {
    let (user_id, key_agent, session_id) = (proof.owner_id(), proof.agent_type(), proof.agent_session_id());
    let row = conn
        .query_row(
            "SELECT id, run_kind, first_event_ms, last_event_ms, started_at_ms, ended_at_ms, event_count,
                    prompt_count, tool_call_count, tool_error_count, denial_count, notification_count,
                    subagent_count, compact_count, input_tokens, output_tokens, cache_read_tokens,
                    cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd,
                    client_cost_nusd, unknown_model_events, total_response_ms, response_sample_count,
                    max_autonomy_rank, git_branch, git_commit, git_remote, git_dirty, git_ts_ms,
                    machine_id, cli_version, os, end_reason, eval_cell_id, eval_run, eval_phase
             FROM sessions WHERE user_id = ?1 AND agent_type = ?2 AND agent_session_id = ?3",
            params![user_id, key_agent.as_str(), session_id],
            |row| {
                let rank: Option<u8> = row.get(25)?;
                let git_ts: Option<i64> = row.get(30)?;
                Ok(SessionView {
                    id: row.get(0)?,
                    agent_type: key_agent.as_str().to_string(),
                    session_id: session_id.to_string(),
                    run_kind: row.get(1)?,
                    first_event_at: rfc3339_ms(row.get(2)?),
                    last_event_at: rfc3339_ms(row.get(3)?),
                    first_event_ms: row.get(2)?,
                    last_event_ms: row.get(3)?,
                    started_at: row.get::<_, Option<i64>>(4)?.map(rfc3339_ms),
                    ended_at: row.get::<_, Option<i64>>(5)?.map(rfc3339_ms),
                    event_count: row.get(6)?,
                    prompt_count: row.get(7)?,
                    tool_call_count: row.get(8)?,
                    tool_error_count: row.get(9)?,
                    denial_count: row.get(10)?,
                    notification_count: row.get(11)?,
                    subagent_count: row.get(12)?,
                    compact_count: row.get(13)?,
                    usage: Usage {
                        input_tokens: row.get(14)?,
                        output_tokens: row.get(15)?,
                        cache_read_tokens: row.get(16)?,
                        cache_write_5m_tokens: row.get(17)?,
                        cache_write_1h_tokens: row.get(18)?,
                        reasoning_tokens: row.get(19)?,
                    },
                    cost_nusd: row.get(20)?,
                    cost_usd: nusd_to_usd(row.get(20)?),
                    client_cost_usd: nusd_to_usd(row.get(21)?),
                    unknown_model_events: row.get(22)?,
                    total_response_ms: row.get(23)?,
                    response_sample_count: row.get(24)?,
                    max_permission_mode: rank.and_then(PermissionMode::from_rank),
                    models: BTreeMap::new(),
                    git: git_ts
                        .map(|_| -> rusqlite::Result<GitView> {
                            Ok(GitView {
                                branch: row.get(26)?,
                                commit: row.get(27)?,
                                remote: row.get(28)?,
                                dirty: row.get(29)?,
                            })
                        })
                        .transpose()?,
                    machine_id: row.get(31)?,
                    cli_version: row.get(32)?,
                    os: row.get(33)?,
                    end_reason: row.get(34)?,
                    reported: None,
                    eval: row
                        .get::<_, Option<String>>(35)?
                        .map(|cell_id| -> rusqlite::Result<_> {
                            Ok(crate::model::eval_cell::EvalTag {
                                cell_id,
                                run_name: row.get(36)?,
                                phase: row.get(37)?,
                            })
                        })
                        .transpose()?,
                })
            },
        )
        .optional()?;
    let Some(mut view) = row else { return Ok(None) };
    let mut stmt = conn.prepare_cached("SELECT model, event_count FROM session_models WHERE session_id = ?1")?;
    let models = stmt.query_map([&view.id], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))?;
    view.models = models.collect::<Result<_, _>>()?;
    view.reported = super::reported::of_session(conn, user_id, key_agent.as_str(), session_id)?;
    Ok(Some(view))
}

/// A page request of a session's events (`limit`, `cursor`), for the hook's
/// `/v1/me/sessions/…/events` and the web's `/api/sessions/{id}/events`. Raw strings,
/// parsed in [`EventsQuery::page`], so a bad value gets the error naming it.
#[derive(Deserialize)]
pub struct EventsQuery {
    limit: Option<String>,
    cursor: Option<String>,
}

const MAX_PAGE: usize = 1000;
const DEFAULT_PAGE: usize = 200;

impl EventsQuery {
    /// The cursor to continue after and the page size, or the rejection naming the
    /// parameter (a 400 at the HTTP edge).
    pub fn page(&self) -> Result<(Option<(i64, uuid::Uuid)>, usize), Rejection> {
        let limit = match self.limit.as_deref() {
            None => DEFAULT_PAGE,
            Some(text) => text.parse::<usize>().ok().filter(|n| (1..=MAX_PAGE).contains(n)).ok_or_else(|| {
                Rejection::new("limit", format!("limit must be a whole number between 1 and {MAX_PAGE}"))
            })?,
        };
        let cursor = match self.cursor.as_deref() {
            None => None,
            Some(text) => Some(
                reads::parse_event_cursor(text)
                    .ok_or_else(|| Rejection::new("cursor", "is not a cursor this API issued"))?,
            ),
        };
        Ok((cursor, limit))
    }
}
