//! What repricing reads and writes of a partition: each row's model, usage and stored
//! cost, and the corrected costs written back in one transaction.

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::model::Usage;

/// What repricing reads of a stored event: who and which session, its model and usage,
/// and the cost stored for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PricedRow {
    pub event_id: Vec<u8>,
    pub ts_ms: i64,
    pub user_id: String,
    pub agent_type: String,
    pub session_id: String,
    pub model: Option<String>,
    pub usage: Usage,
    pub cost_nusd: i64,
}

/// Calls `each` for every row of the partition with token usage (no metadata is read
/// or decompressed, so this is cheap on compacted files).
pub fn for_each_priced_row(conn: &Connection, mut each: impl FnMut(PricedRow)) -> Result<(), DbError> {
    let mut stmt = conn.prepare(
        "SELECT event_id, ts_ms, user_id, agent_type, session_id, model, input_tokens, output_tokens,
                cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd
         FROM events
         WHERE input_tokens + output_tokens + cache_read_tokens + cache_write_5m_tokens
               + cache_write_1h_tokens + reasoning_tokens <> 0 OR cost_nusd <> 0",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        each(PricedRow {
            event_id: row.get(0)?,
            ts_ms: row.get(1)?,
            user_id: row.get(2)?,
            agent_type: row.get(3)?,
            session_id: row.get(4)?,
            model: row.get(5)?,
            usage: Usage {
                input_tokens: row.get(6)?,
                output_tokens: row.get(7)?,
                cache_read_tokens: row.get(8)?,
                cache_write_5m_tokens: row.get(9)?,
                cache_write_1h_tokens: row.get(10)?,
                reasoning_tokens: row.get(11)?,
            },
            cost_nusd: row.get(12)?,
        });
    }
    Ok(())
}

/// Sets the stored cost of the given events, in one transaction. Setting a cost twice
/// is harmless (repricing re-runs this after a stop).
pub fn set_costs(conn: &Connection, costs: &[(Vec<u8>, i64)]) -> Result<u64, DbError> {
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    let mut changed = 0;
    {
        let mut update = tx.prepare("UPDATE events SET cost_nusd = ?2 WHERE event_id = ?1 AND cost_nusd <> ?2")?;
        for (event_id, cost) in costs {
            changed += update.execute(params![event_id, cost])? as u64;
        }
    }
    tx.commit()?;
    Ok(changed)
}
