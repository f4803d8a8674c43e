//! A hook invocation's one transaction on the queue: its events, tool start times,
//! transcript read positions, usage ledger and adapter marks, committed together so a
//! transcript offset never advances without the usage it read being queued.

use rusqlite::{OptionalExtension, params};

use crate::db::DbError;
use crate::model::Usage;

/// Everything one hook invocation writes, committed together.
pub struct HookTx<'c> {
    pub(super) tx: rusqlite::Transaction<'c>,
}

/// Where a transcript was last read to, and the model it was last seen using.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TranscriptMark {
    pub offset: u64,
    pub model: Option<String>,
}

impl HookTx<'_> {
    pub fn push(&self, events: &[String], now_ms: i64) -> Result<(), DbError> {
        let mut insert = self.tx.prepare_cached("INSERT INTO queue (event, enqueued_ms) VALUES (?1, ?2)")?;
        for event in events {
            insert.execute(params![event, now_ms])?;
        }
        Ok(())
    }

    pub fn commit(self) -> Result<(), DbError> {
        self.tx.commit()?;
        Ok(())
    }

    /// Tool start times live beside the queue, so a tool's end in another process finds
    /// its start; `tool` is the wire tool object, so a call that never ends can still be
    /// reported when its turn ends.
    pub fn tool_started(&self, session: &str, use_id: &str, at_ms: i64, tool: &str) -> Result<(), DbError> {
        self.tx.execute(
            "INSERT OR REPLACE INTO tool_starts (session, use_id, started_ms, tool) VALUES (?1, ?2, ?3, ?4)",
            params![session, use_id, at_ms, tool],
        )?;
        Ok(())
    }

    pub fn tool_finished(&self, session: &str, use_id: &str) -> Result<Option<i64>, DbError> {
        Ok(self
            .tx
            .query_row(
                "DELETE FROM tool_starts WHERE session = ?1 AND use_id = ?2 RETURNING started_ms",
                [session, use_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Forgets the oldest open entry of the session whose key starts with `prefix`
    /// (a permission ask that the tool's start answered).
    pub fn forget_oldest_tool(&self, session: &str, prefix: &str) -> Result<bool, DbError> {
        let removed = self.tx.execute(
            "DELETE FROM tool_starts WHERE (session, use_id) IN
               (SELECT session, use_id FROM tool_starts WHERE session = ?1 AND substr(use_id, 1, length(?2)) = ?2
                ORDER BY started_ms, use_id LIMIT 1)",
            [session, prefix],
        )?;
        Ok(removed > 0)
    }

    /// Takes every tool call of the session that started and never ended:
    /// (started_ms, wire tool object as JSON text).
    pub fn take_open_tools(&self, session: &str) -> Result<Vec<(i64, String)>, DbError> {
        let mut stmt =
            self.tx.prepare_cached("DELETE FROM tool_starts WHERE session = ?1 RETURNING started_ms, tool")?;
        let rows = stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let mut open: Vec<(i64, String)> = rows.collect::<Result<_, _>>()?;
        open.sort();
        Ok(open)
    }

    pub fn transcript_mark(&self, path: &str) -> Result<TranscriptMark, DbError> {
        Ok(self
            .tx
            .query_row("SELECT offset, model FROM transcript_offsets WHERE path = ?1", [path], |r| {
                Ok(TranscriptMark { offset: r.get::<_, i64>(0)? as u64, model: r.get(1)? })
            })
            .optional()?
            .unwrap_or_default())
    }

    pub fn set_transcript_mark(&self, path: &str, mark: &TranscriptMark) -> Result<(), DbError> {
        self.tx.execute(
            "INSERT OR REPLACE INTO transcript_offsets (path, offset, model) VALUES (?1, ?2, ?3)",
            params![path, mark.offset as i64, mark.model],
        )?;
        Ok(())
    }

    /// A small piece of adapter state between hooks (a subagent session's parent, the
    /// time of the last idle signal).
    pub fn mark(&self, key: &str) -> Result<Option<(String, i64)>, DbError> {
        super::read_mark(&self.tx, key)
    }

    pub fn set_mark(&self, key: &str, value: &str, now_ms: i64) -> Result<(), DbError> {
        super::write_mark(&self.tx, key, value, now_ms)
    }

    /// Tells the shipper about a session's transcript: at every turn end (the upload
    /// waits until the session has been quiet a while, since end hooks are unreliable)
    /// and at the session's end (the upload is due now).
    pub fn queue_transcript(
        &self,
        agent: &str,
        session: &str,
        path: &str,
        ended: bool,
        now_ms: i64,
    ) -> Result<(), DbError> {
        self.tx.execute(
            "INSERT INTO transcript_uploads (agent, session, path, queued_ms, ended) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (agent, session) DO UPDATE SET path = excluded.path, queued_ms = excluded.queued_ms,
                                                         ended = max(ended, excluded.ended)",
            params![agent, session, path, now_ms, ended],
        )?;
        Ok(())
    }

    /// The counts already reported for one usage group of a transcript (zero when none;
    /// stored as JSON, so an unreadable row counts as none).
    pub fn usage_group(&self, path: &str, key: &str) -> Result<Usage, DbError> {
        let counts: Option<String> = self
            .tx
            .query_row("SELECT counts FROM usage_groups WHERE path = ?1 AND group_key = ?2", [path, key], |r| r.get(0))
            .optional()?;
        Ok(counts.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default())
    }

    pub fn set_usage_group(&self, path: &str, key: &str, counts: &Usage, now_ms: i64) -> Result<(), DbError> {
        let counts = serde_json::to_string(counts).unwrap_or_default();
        self.tx.execute(
            "INSERT OR REPLACE INTO usage_groups (path, group_key, counts, updated_ms) VALUES (?1, ?2, ?3, ?4)",
            params![path, key, counts, now_ms],
        )?;
        Ok(())
    }
}
