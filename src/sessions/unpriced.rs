//! The models events named that no price table priced when they arrived (`unknown_models`,
//! written by the sessions fold): their events, their tokens by kind and the cost their
//! agent reported, so an unpriced model is never silently $0. Read by `/admin/health` and
//! `/admin/price-tables`, which show the ones the tables in force still do not price.
//!
//! Invariant: only the fold writes the table, counting newly stored events once; a row
//! stays after a price arrives (repricing fills the events' costs; the pages filter by
//! the tables in force).

use rusqlite::Connection;

use crate::db::DbError;
use crate::model::AgentType;

/// One model that had no price, with what was counted under it.
#[derive(Debug, Clone)]
pub struct Unpriced {
    pub agent: AgentType,
    pub model: String,
    pub first_seen_ms: i64,
    pub last_seen_ms: i64,
    pub events: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub reasoning_tokens: i64,
    /// What the agent reported the events cost (0 where it reports nothing).
    pub client_cost_nusd: i64,
}

impl Unpriced {
    pub fn tokens(&self) -> i64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.reasoning_tokens
    }
}

/// Every model counted as unpriced, the most recently seen first (a few hundred at
/// most: agents report a handful of names, and the fold keys the table by name).
pub fn all(conn: &Connection) -> Result<Vec<Unpriced>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT agent_type, model, first_seen_ms, last_seen_ms, event_count, input_tokens, output_tokens,
                cache_read_tokens, cache_write_tokens, reasoning_tokens, client_cost_nusd
         FROM unknown_models ORDER BY last_seen_ms DESC LIMIT 500",
    )?;
    let rows = stmt.query_map([], |row| {
        // A row of an agent this build does not know is left out.
        let Some(agent) = AgentType::parse(&row.get::<_, String>(0)?) else { return Ok(None) };
        Ok(Some(Unpriced {
            agent,
            model: row.get(1)?,
            first_seen_ms: row.get(2)?,
            last_seen_ms: row.get(3)?,
            events: row.get(4)?,
            input_tokens: row.get(5)?,
            output_tokens: row.get(6)?,
            cache_read_tokens: row.get(7)?,
            cache_write_tokens: row.get(8)?,
            reasoning_tokens: row.get(9)?,
            client_cost_nusd: row.get(10)?,
        }))
    })?;
    let found: Vec<Unpriced> = rows.filter_map(Result::transpose).collect::<Result<_, _>>()?;
    Ok(found)
}
