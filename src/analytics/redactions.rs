//! The redactions aggregate (`agg_redactions_daily`, owned here): per day, person and
//! rule, the secrets taken out of interactive events' metadata, those the hook had
//! already redacted (their labels arrived) apart from those ingest caught. Counted by
//! [`RedactionFold`] in the writer's transaction as events are stored, from what ingest
//! measured (`redact::redact_json_counted`), since the stored metadata no longer tells the
//! two apart.
//!
//! Invariants: a stored event is counted once (the writer never folds a duplicate); an
//! event refolded after a crash carries no count and is left out (the figures are then a
//! lower bound); only `INTERACTIVE` events are counted; a person's rows go with their
//! deletion ([`forget`]).

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::events::writer::{CommitFold, Joined, Stored};
use crate::model::RunKind;

/// Adds each newly stored interactive event's redactions to its day.
pub struct RedactionFold;

impl CommitFold for RedactionFold {
    fn step(&self) -> &'static str {
        "fold_redactions"
    }

    fn fold(
        &self,
        main: &Connection,
        stored: &[Stored<'_>],
        _joined: &[Joined<'_>],
        _now_ms: i64,
    ) -> Result<u64, DbError> {
        let mut add = main.prepare_cached(
            "INSERT INTO agg_redactions_daily (day_start_ms, user_id, rule, hook_hits, ingest_hits)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (day_start_ms, user_id, rule) DO UPDATE
             SET hook_hits = hook_hits + excluded.hook_hits, ingest_hits = ingest_hits + excluded.ingest_hits",
        )?;
        for event in stored {
            let Some(hits) = event.redactions else { continue };
            if event.event.run_kind != RunKind::Interactive {
                continue;
            }
            let day = event.event.ts_ms.div_euclid(86_400_000) * 86_400_000;
            for (rule, hook, ingest) in &hits.0 {
                add.execute(params![day, event.user_id, rule, hook, ingest])?;
            }
        }
        Ok(0)
    }
}

/// Removes every row of a person (their deletion request).
pub fn forget(conn: &Connection, user_id: &str) -> Result<(), DbError> {
    conn.execute("DELETE FROM agg_redactions_daily WHERE user_id = ?1", [user_id])?;
    Ok(())
}
