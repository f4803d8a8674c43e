//! `backfill-redaction`: when the redaction rules change (a new `redact::RULES_VERSION`),
//! every stored transcript written under older rules is redacted again and queued for
//! re-indexing.
//!
//! Invariants: one run drains the whole backlog (it loops until no transcript is older
//! than the current rules); the new file replaces the old one by rename before the row
//! records the new version, so a run killed midway leaves each transcript either done
//! or still listed as old, and running again finishes the rest. Redacting twice changes
//! nothing more than redacting once, so a re-run is harmless.

use std::path::Path;

use rusqlite::Connection;

use super::store;
use crate::db::DbError;
use crate::redact;

/// Transcripts redacted per round.
const BATCH: usize = 100;

/// What a backfill did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BackfillReport {
    pub transcripts: usize,
    /// Transcripts whose text changed under the new rules.
    pub changed: usize,
}

/// Re-redacts every transcript stored under rules older than this binary's.
pub fn reredact_all(
    conn: &Connection,
    data_dir: &Path,
    mut progress: impl FnMut(usize),
) -> Result<BackfillReport, DbError> {
    let mut report = BackfillReport::default();
    loop {
        let batch = store::redacted_before(conn, redact::RULES_VERSION, BATCH)?;
        if batch.is_empty() {
            return Ok(report);
        }
        for outdated in batch {
            let text = store::read(data_dir, &outdated.relative_path)?;
            let redacted = redact::redact_transcript(&text);
            if redacted != text {
                store::write(data_dir, &outdated.session_id, &redacted)?;
                report.changed += 1;
            }
            store::record_reredacted(conn, &outdated.session_id, redacted.len() as i64, redact::RULES_VERSION)?;
            report.transcripts += 1;
            progress(report.transcripts);
        }
    }
}
