//! Compaction of old event partitions: the bulky column (redacted metadata JSON)
//! is zstd-compressed with a dictionary trained on the partition's own rows, then
//! the file is vacuumed. Compacted partitions stay queryable: readers decompress
//! `metadata_zst` transparently (the codec is [`super::metadata`]).
//!
//! Invariants: compaction is one transaction followed by VACUUM, so a crash leaves
//! the partition either as it was or compacted; re-running it is safe (rows that
//! arrived late are compressed with the dictionary already stored); a partition's
//! dictionary never changes once rows depend on it.

use std::path::Path;

use rusqlite::{OptionalExtension, params};

use super::metadata::{MetadataCompressor, decompress};
use super::partitions::{self, Day};
use crate::db::{self, Checkpointing, DbError, Durability};

const DICTIONARY_BYTES: usize = 16 * 1024;
/// Training needs enough samples to beat plain zstd.
const MIN_TRAINING_SAMPLES: usize = 64;

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CompactionReport {
    pub day: String,
    pub rows_compressed: u64,
    pub metadata_bytes_before: u64,
    pub metadata_bytes_after: u64,
    pub file_bytes_before: u64,
    pub file_bytes_after: u64,
    pub used_dictionary: bool,
}

impl CompactionReport {
    pub fn file_ratio(&self) -> f64 {
        self.file_bytes_before as f64 / self.file_bytes_after.max(1) as f64
    }

    pub fn metadata_ratio(&self) -> f64 {
        self.metadata_bytes_before as f64 / self.metadata_bytes_after.max(1) as f64
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Compacts one partition. Safe to run while the server writes (SQLite locks).
pub(super) fn compact_partition(data_dir: &Path, day: Day, now_ms: i64) -> Result<CompactionReport, DbError> {
    let path = partitions::partition_path(data_dir, day);
    let conn = db::open(&path, Durability::PowerSafe, Checkpointing::Automatic)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let mut report =
        CompactionReport { day: day.to_string(), file_bytes_before: file_size(&path), ..Default::default() };

    let tx = conn.unchecked_transaction()?;
    let dictionary = match partitions::dictionary(&tx)? {
        Some(dictionary) => Some(dictionary),
        None => train_dictionary(&tx)?,
    };
    report.used_dictionary = dictionary.is_some();
    let mut compressor = MetadataCompressor::new(dictionary.as_deref())?;
    {
        let mut select = tx.prepare("SELECT event_id, metadata FROM events WHERE metadata IS NOT NULL")?;
        let mut update = tx.prepare("UPDATE events SET metadata = NULL, metadata_zst = ?2 WHERE event_id = ?1")?;
        let mut rows = select.query([])?;
        while let Some(row) = rows.next()? {
            let event_id: Vec<u8> = row.get(0)?;
            let metadata: String = row.get(1)?;
            let blob = compressor.compress(&metadata)?;
            report.rows_compressed += 1;
            report.metadata_bytes_before += metadata.len() as u64;
            report.metadata_bytes_after += blob.len() as u64;
            update.execute(params![event_id, blob])?;
        }
    }
    tx.execute(
        "UPDATE partition_meta SET compacted_at_ms = ?1, zstd_dictionary = ?2 WHERE singleton = 1",
        params![now_ms, dictionary],
    )?;
    tx.commit()?;
    rebuild(&conn)?;
    drop(conn);
    report.file_bytes_after = file_size(&path);
    Ok(report)
}

/// Whether a partition has been compacted (and so was last rebuilt by VACUUM).
pub fn is_compacted(conn: &rusqlite::Connection) -> Result<bool, DbError> {
    Ok(conn
        .query_row("SELECT compacted_at_ms IS NOT NULL FROM partition_meta WHERE singleton = 1", [], |row| row.get(0))
        .optional()?
        .unwrap_or(false))
}

/// Rebuilds a partition file (VACUUM, then truncates its WAL): after compaction, and
/// after rows in it were rewritten (re-redaction). `secure_delete` zeroes deleted cells
/// and freed pages, but a b-tree page that is rebalanced keeps old bytes in its unused
/// space; a rebuild leaves none. A compacted partition needs
/// [`recompact_with_new_dictionary`] instead, so its dictionary forgets the old rows too.
pub fn rebuild(conn: &rusqlite::Connection) -> Result<(), DbError> {
    conn.execute_batch("VACUUM")?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(())
}

/// Compacts a compacted partition again from its plain rows, with a dictionary trained
/// anew: after its rows were rewritten (re-redaction), the old dictionary still holds
/// samples of the old rows, secrets included, and must not outlive them.
pub(super) fn recompact_with_new_dictionary(
    data_dir: &Path,
    day: Day,
    now_ms: i64,
) -> Result<CompactionReport, DbError> {
    let Some(conn) = partitions::open_for_delete(data_dir, day)? else { return Ok(CompactionReport::default()) };
    let tx = conn.unchecked_transaction()?;
    let dictionary = partitions::dictionary(&tx)?;
    {
        let mut select = tx.prepare("SELECT event_id, metadata_zst FROM events WHERE metadata_zst IS NOT NULL")?;
        let mut update = tx.prepare("UPDATE events SET metadata = ?2, metadata_zst = NULL WHERE event_id = ?1")?;
        let mut rows = select.query([])?;
        while let Some(row) = rows.next()? {
            let event_id: Vec<u8> = row.get(0)?;
            let blob: Vec<u8> = row.get(1)?;
            update.execute(params![event_id, decompress(&blob, dictionary.as_deref())?])?;
        }
    }
    tx.execute("UPDATE partition_meta SET compacted_at_ms = NULL, zstd_dictionary = NULL WHERE singleton = 1", [])?;
    tx.commit()?;
    drop(conn);
    compact_partition(data_dir, day, now_ms)
}

fn train_dictionary(conn: &rusqlite::Connection) -> Result<Option<Vec<u8>>, DbError> {
    let mut stmt = conn.prepare("SELECT metadata FROM events WHERE metadata IS NOT NULL LIMIT 20000")?;
    let samples: Vec<String> = stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    if samples.len() < MIN_TRAINING_SAMPLES {
        return Ok(None);
    }
    let bytes: Vec<&[u8]> = samples.iter().map(|s| s.as_bytes()).collect();
    // Training fails on too little or too uniform data; plain zstd is then the answer.
    Ok(zstd::dict::from_samples(&bytes, DICTIONARY_BYTES).ok())
}

/// Compacts every partition older than `older_than_days` that is not compacted yet,
/// oldest first. Returns what it did.
pub(super) fn compact_due(
    data_dir: &Path,
    older_than_days: i64,
    now_ms: i64,
) -> Result<Vec<CompactionReport>, DbError> {
    let cutoff = Day::of_ms(now_ms - older_than_days * 86_400_000);
    let mut reports = Vec::new();
    for day in partitions::list_days(data_dir)? {
        if day >= cutoff {
            break;
        }
        let Some(conn) = partitions::open_for_read(data_dir, day)? else { continue };
        let pending: bool = conn.query_row(
            "SELECT compacted_at_ms IS NULL OR EXISTS (SELECT 1 FROM events WHERE metadata IS NOT NULL)
             FROM partition_meta WHERE singleton = 1",
            [],
            |row| row.get(0),
        )?;
        drop(conn);
        if pending {
            reports.push(compact_partition(data_dir, day, now_ms)?);
        }
    }
    Ok(reports)
}
