//! The shipper's work list in the queue database: transcripts to upload once their
//! session ended or went quiet, what size was shipped last, and failed attempts with
//! their backoff.

use rusqlite::params;

use super::Queue;
use crate::db::DbError;

/// A transcript waiting for the shipper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingUpload {
    pub agent: String,
    pub session: String,
    pub path: String,
    pub shipped_len: i64,
    pub attempts: i64,
}

impl Queue {
    /// Transcripts whose session ended or has been quiet for `quiet_ms`; the shipper
    /// uploads those whose size differs from what it shipped last.
    /// A failed upload waits its backoff unless `retry_now`.
    pub fn pending_uploads(&self, now_ms: i64, quiet_ms: i64, retry_now: bool) -> Result<Vec<PendingUpload>, DbError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT agent, session, path, shipped_len, attempts FROM transcript_uploads
             WHERE (ended = 1 OR queued_ms <= ?1 - ?2) AND (?3 OR next_try_ms <= ?1) ORDER BY queued_ms",
        )?;
        let rows = stmt.query_map(params![now_ms, quiet_ms, retry_now], |r| {
            Ok(PendingUpload {
                agent: r.get(0)?,
                session: r.get(1)?,
                path: r.get(2)?,
                shipped_len: r.get(3)?,
                attempts: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many transcripts are not shipped at their latest known state, and the most
    /// recent upload error.
    pub fn upload_summary(&self) -> Result<(i64, Option<String>), DbError> {
        Ok(self.conn.query_row(
            "SELECT count(*) FILTER (WHERE attempts > 0 OR shipped_len = 0),
                    (SELECT last_error FROM transcript_uploads WHERE last_error IS NOT NULL ORDER BY queued_ms DESC LIMIT 1)
             FROM transcript_uploads",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// Records an upload's outcome: shipped at `len` bytes, or failed with `error`.
    pub fn settle_upload(&self, upload: &PendingUpload, shipped: Result<i64, String>) -> Result<(), DbError> {
        match shipped {
            Ok(len) => self.conn.execute(
                "UPDATE transcript_uploads SET shipped_len = ?3, attempts = 0, last_error = NULL
                 WHERE agent = ?1 AND session = ?2",
                params![upload.agent, upload.session, len],
            )?,
            // Backoff doubles from 30 s up to an hour.
            Err(error) => self.conn.execute(
                "UPDATE transcript_uploads SET attempts = attempts + 1, last_error = ?3,
                        next_try_ms = ?4 + min(3600000, 30000 * (1 << min(attempts, 7)))
                 WHERE agent = ?1 AND session = ?2",
                params![upload.agent, upload.session, error, crate::clock::system_now_ms()],
            )?,
        };
        Ok(())
    }
}
