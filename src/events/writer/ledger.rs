//! The partition ledger: `event_partitions.applied_seq` records, per day partition,
//! the last partition commit folded into `main.db`. Partitions commit first and main.db
//! second (two files, not atomic together), so after a crash the writer folds every
//! commit above the ledger before any new write.

use rusqlite::{Connection, TransactionBehavior, params};

use super::{Stored, WriterState};
use crate::db::DbError;
use crate::events::partitions::{self, Day};

impl WriterState {
    /// Folds every partition commit that main.db has not applied yet.
    pub(super) fn reconcile_all(&mut self) -> Result<(), DbError> {
        for day in partitions::list_days(&self.config.data_dir)? {
            let mut applied = applied_seq(&self.main, day)?;
            let (stored, last_seq) = {
                let partition = self.partition(day)?;
                if partition.last_seq < applied {
                    // The file was removed and made anew (retention, restore): the
                    // ledger speaks of rows that are gone, so fold the new file whole.
                    tracing::warn!(%day, applied, last_seq = partition.last_seq, "partition is newer than its ledger entry");
                    applied = 0;
                }
                if partition.last_seq <= applied {
                    continue;
                }
                (partitions::events_after_seq(&partition.conn, applied)?, partition.last_seq)
            };
            let folded: Vec<Stored<'_>> = stored
                .iter()
                .map(|row| Stored {
                    user_id: &row.user_id,
                    event: &row.event,
                    known_model: None,
                    client: None,
                    redactions: None,
                })
                .collect();
            let tx = self.main.transaction_with_behavior(TransactionBehavior::Immediate)?;
            super::commit::fold_all(&self.folds, &tx, &folded, &[], self.config.clock.now_ms())?;
            tx.execute(
                "INSERT INTO event_partitions (day, applied_seq) VALUES (?1, ?2)
                 ON CONFLICT (day) DO UPDATE SET applied_seq = excluded.applied_seq",
                params![day.to_string(), last_seq],
            )?;
            tx.commit()?;
            tracing::warn!(%day, events = stored.len(), from_seq = applied, to_seq = last_seq, "folded unapplied partition commits into sessions");
        }
        self.needs_reconcile = false;
        Ok(())
    }
}

fn applied_seq(main: &Connection, day: Day) -> Result<i64, DbError> {
    use rusqlite::OptionalExtension;
    Ok(main
        .query_row("SELECT applied_seq FROM event_partitions WHERE day = ?1", [day.to_string()], |row| row.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Records that main.db has folded commit `seq` of `day`. The previous commit must
/// be the one applied before it; anything else means a commit was skipped, and the
/// transaction fails so [`WriterState::reconcile_all`] can repair it first.
pub(super) fn record_applied(tx: &Connection, day: Day, seq: i64) -> Result<(), DbError> {
    let updated = tx.execute(
        "UPDATE event_partitions SET applied_seq = ?2 WHERE day = ?1 AND applied_seq = ?2 - 1",
        params![day.to_string(), seq],
    )?;
    let in_step = updated == 1
        || (seq == 1
            && tx.execute(
                "INSERT OR IGNORE INTO event_partitions (day, applied_seq) VALUES (?1, 1)",
                [day.to_string()],
            )? == 1);
    if !in_step {
        return Err(DbError::Io {
            context: format!("event partition {day}: commit {seq} does not follow the last applied commit"),
            source: std::io::Error::other("partition ledger out of step"),
        });
    }
    Ok(())
}
