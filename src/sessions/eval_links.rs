//! The sessions harnesses linked to their evaluation cells (`sessions.eval_cell_id`,
//! `eval_run`, `eval_phase`, kept by the fold): found by cell and by run for the eval
//! dashboard (through `web::eval_api`), with the figures the sessions row holds.
//!
//! Invariant: only `EVAL` sessions are ever returned, so what the eval engineer reads here
//! is never a person's interactive work; reading their events or transcripts still takes
//! the proof of `sessions::read::authorize_eval` (audited).

use rusqlite::{Connection, Row, params};
use serde::Serialize;

use crate::db::DbError;
use crate::model::{AgentType, NUSD_PER_USD, Usage};

/// The most sessions one run answers with (a run of thousands of cells is read a cell at
/// a time on the dashboard).
pub const MAX_RUN_SESSIONS: usize = 5000;

/// One linked session with its figures.
#[derive(Clone, Debug, Serialize)]
pub struct LinkedSession {
    pub id: String,
    #[serde(skip)]
    pub user_id: String,
    pub agent_type: AgentType,
    #[serde(skip)]
    pub agent_session_id: String,
    pub cell_id: String,
    pub run_name: Option<String>,
    pub phase: Option<String>,
    pub first_event_ms: i64,
    pub last_event_ms: i64,
    pub ended: bool,
    pub prompts: i64,
    pub tool_calls: i64,
    pub tool_errors: i64,
    pub denials: i64,
    pub notifications: i64,
    pub subagents: i64,
    pub usage: Usage,
    /// What Sightline's price tables make of the session's tokens.
    pub cost_usd: f64,
    /// What the agent itself claimed, where it said.
    pub client_cost_usd: f64,
    pub unknown_model_events: i64,
}

const COLUMNS: &str = "id, user_id, agent_type, agent_session_id, eval_cell_id, eval_run, eval_phase,
    first_event_ms, last_event_ms, ended_at_ms IS NOT NULL, prompt_count, tool_call_count, tool_error_count,
    denial_count, notification_count, subagent_count, input_tokens, output_tokens, cache_read_tokens,
    cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd, client_cost_nusd,
    unknown_model_events";

fn linked(row: &Row<'_>) -> rusqlite::Result<Option<LinkedSession>> {
    let agent: String = row.get(2)?;
    let Some(agent_type) = AgentType::parse(&agent) else { return Ok(None) };
    let (cost, client_cost): (i64, i64) = (row.get(22)?, row.get(23)?);
    Ok(Some(LinkedSession {
        id: row.get(0)?,
        user_id: row.get(1)?,
        agent_type,
        agent_session_id: row.get(3)?,
        cell_id: row.get(4)?,
        run_name: row.get(5)?,
        phase: row.get(6)?,
        first_event_ms: row.get(7)?,
        last_event_ms: row.get(8)?,
        ended: row.get(9)?,
        prompts: row.get(10)?,
        tool_calls: row.get(11)?,
        tool_errors: row.get(12)?,
        denials: row.get(13)?,
        notifications: row.get(14)?,
        subagents: row.get(15)?,
        usage: Usage {
            input_tokens: row.get(16)?,
            output_tokens: row.get(17)?,
            cache_read_tokens: row.get(18)?,
            cache_write_5m_tokens: row.get(19)?,
            cache_write_1h_tokens: row.get(20)?,
            reasoning_tokens: row.get(21)?,
        },
        cost_usd: cost as f64 / NUSD_PER_USD as f64,
        client_cost_usd: client_cost as f64 / NUSD_PER_USD as f64,
        unknown_model_events: row.get(24)?,
    }))
}

/// The sessions linked to one cell, oldest first (retries and phases in the order run).
/// With `run_name`, those that named that run or no run (a cell id recurs in every run of
/// the same grid, so a harness that names no run links its cells in every run).
pub fn of_cell(conn: &Connection, cell_id: &str, run_name: Option<&str>) -> Result<Vec<LinkedSession>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sessions
         WHERE eval_cell_id = ?1 AND run_kind = 'EVAL' AND (?2 IS NULL OR eval_run IS NULL OR eval_run = ?2)
         ORDER BY first_event_ms, id LIMIT 100"
    ))?;
    let rows = stmt.query_map(params![cell_id, run_name], linked)?;
    Ok(rows.filter_map(Result::transpose).collect::<Result<_, _>>()?)
}

/// The sessions that named one run, oldest first (at most [`MAX_RUN_SESSIONS`]).
pub fn of_run(conn: &Connection, run_name: &str) -> Result<Vec<LinkedSession>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sessions WHERE eval_run = ?1 AND run_kind = 'EVAL'
         ORDER BY first_event_ms, id LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![run_name, MAX_RUN_SESSIONS as i64], linked)?;
    Ok(rows.filter_map(Result::transpose).collect::<Result<_, _>>()?)
}

/// How many `EVAL` sessions named each of `runs` (runs no session named are absent).
/// A count of a harness's runs, not of anyone's work.
pub fn count_by_run(conn: &Connection, runs: &[String]) -> Result<std::collections::HashMap<String, i64>, DbError> {
    let mut stmt = conn.prepare_cached("SELECT count(*) FROM sessions WHERE eval_run = ?1 AND run_kind = 'EVAL'")?;
    let mut counts = std::collections::HashMap::new();
    for run in runs {
        let count: i64 = stmt.query_row([run], |row| row.get(0))?;
        if count > 0 {
            counts.insert(run.clone(), count);
        }
    }
    Ok(counts)
}
