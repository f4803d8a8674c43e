//! `webhook_deliveries`, the delivery log: each delivery is written (body included,
//! zstd) before it is answered, processed once by the worker, and then keeps only its
//! account: outcome, attempts, processing time, error.
//!
//! Invariants: the delivery id is the key, so a redelivery finds its first copy and is
//! not stored or applied again; a delivery's effects and its outcome commit in one
//! transaction (the worker's), so a crash leaves it either pending or done, never half.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::db::DbError;

/// A failed delivery is tried this many times before it is left as `failed`.
pub const MAX_ATTEMPTS: i64 = 5;

pub struct Incoming<'a> {
    pub delivery_id: &'a str,
    pub event: &'a str,
    pub action: Option<&'a str>,
    pub received_at_ms: i64,
    pub body: &'a [u8],
}

#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    New,
    /// Already received under this id (a redelivery): nothing was written.
    Duplicate,
    /// A redelivery of one that had failed: it is pending again, with this body.
    Retried,
}

/// Stores a delivery as pending (or, for `settled`, with its outcome already known:
/// a ping, an event we do not handle).
pub fn record(tx: &Transaction<'_>, incoming: &Incoming<'_>, settled: Option<&str>) -> Result<Recorded, DbError> {
    let digest = crate::model::sha256_hex(incoming.body);
    let body = match settled {
        Some(_) => None,
        None => Some(
            zstd::encode_all(incoming.body, 3)
                .map_err(|err| DbError::Io { context: "compressing a webhook delivery".into(), source: err })?,
        ),
    };
    // A delivery that failed is applied again when GitHub redelivers it (an operator's
    // "Redeliver" keeps the delivery id).
    let retried = tx.execute(
        "UPDATE webhook_deliveries SET outcome = 'pending', attempts = 0, error = NULL, body_zst = ?2,
           received_at_ms = ?3, processed_at_ms = NULL, processing_ms = NULL
         WHERE delivery_id = ?1 AND outcome = 'failed' AND ?4 IS NULL",
        params![incoming.delivery_id, body, incoming.received_at_ms, settled],
    )?;
    if retried == 1 {
        return Ok(Recorded::Retried);
    }
    let inserted = tx.execute(
        "INSERT INTO webhook_deliveries (delivery_id, event, action, received_at_ms, body_sha256, body_zst, outcome,
           processed_at_ms, processing_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, coalesce(?7, 'pending'), CASE WHEN ?7 IS NULL THEN NULL ELSE ?4 END,
           CASE WHEN ?7 IS NULL THEN NULL ELSE 0 END)
         ON CONFLICT (delivery_id) DO NOTHING",
        params![incoming.delivery_id, incoming.event, incoming.action, incoming.received_at_ms, digest, body, settled],
    )?;
    Ok(if inserted == 1 { Recorded::New } else { Recorded::Duplicate })
}

/// A delivery waiting for the worker; its body, or why it cannot be read.
#[derive(Debug)]
pub struct Pending {
    pub delivery_id: String,
    pub event: String,
    pub received_at_ms: i64,
    pub body: Result<Vec<u8>, String>,
}

/// How long a delivery that failed `attempts` times waits before the next try: 10 s,
/// then doubling, so a storage hiccup passes before the attempts run out.
fn backoff_ms(attempts: i64) -> i64 {
    10_000 << attempts.clamp(0, 10)
}

/// Most body bytes one batch of pending deliveries holds in memory (one delivery is
/// always taken, whatever its size).
const BATCH_BODY_BYTES: usize = 64 << 20;

/// The oldest pending deliveries that are due (a failed attempt waits its back-off), at
/// most `limit` and about [`BATCH_BODY_BYTES`].
pub fn pending(conn: &Connection, limit: usize, now_ms: i64) -> Result<Vec<Pending>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT delivery_id, event, received_at_ms, body_zst, attempts, coalesce(processed_at_ms, 0)
         FROM webhook_deliveries WHERE outcome = 'pending' ORDER BY received_at_ms, delivery_id",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    let mut bytes = 0;
    while let Some(row) = rows.next()? {
        if out.len() >= limit || bytes > BATCH_BODY_BYTES {
            break;
        }
        let (attempts, last_try_ms): (i64, i64) = (row.get(4)?, row.get(5)?);
        if attempts > 0 && now_ms < last_try_ms + backoff_ms(attempts) {
            continue;
        }
        let delivery_id: String = row.get(0)?;
        let stored: Option<Vec<u8>> = row.get(3)?;
        let body = match stored {
            Some(stored) => {
                zstd::decode_all(stored.as_slice()).map_err(|err| format!("the stored body is unreadable: {err}"))
            }
            None => Err("the stored body is missing".to_string()),
        };
        bytes += body.as_ref().map_or(0, Vec::len);
        out.push(Pending { delivery_id, event: row.get(1)?, received_at_ms: row.get(2)?, body });
    }
    Ok(out)
}

/// Whether the delivery is still pending (another pass may have finished it).
pub fn is_pending(tx: &Transaction<'_>, delivery_id: &str) -> Result<bool, DbError> {
    Ok(tx
        .query_row("SELECT outcome = 'pending' FROM webhook_deliveries WHERE delivery_id = ?1", [delivery_id], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or(false))
}

/// Marks a delivery done (`applied` or `ignored`, with why it was ignored) and drops its body.
pub fn finish(
    tx: &Transaction<'_>,
    delivery_id: &str,
    outcome: &str,
    note: Option<&str>,
    now_ms: i64,
) -> Result<(), DbError> {
    tx.execute(
        "UPDATE webhook_deliveries SET outcome = ?2, error = ?3, attempts = attempts + 1, body_zst = NULL,
           processed_at_ms = ?4, processing_ms = max(0, ?4 - received_at_ms)
         WHERE delivery_id = ?1",
        params![delivery_id, outcome, note, now_ms],
    )?;
    Ok(())
}

/// Records a failed attempt; after [`MAX_ATTEMPTS`], or at once when retrying cannot
/// help (`permanent`: the payload is not what its event promises), the delivery is left
/// `failed` with its body kept, so an operator can look at it.
pub fn fail(tx: &Transaction<'_>, delivery_id: &str, error: &str, permanent: bool, now_ms: i64) -> Result<(), DbError> {
    tx.execute(
        "UPDATE webhook_deliveries SET attempts = attempts + 1, error = ?2, processed_at_ms = ?3,
           processing_ms = max(0, ?3 - received_at_ms),
           outcome = CASE WHEN ?5 OR attempts + 1 >= ?4 THEN 'failed' ELSE 'pending' END
         WHERE delivery_id = ?1",
        params![delivery_id, error, now_ms, MAX_ATTEMPTS, permanent],
    )?;
    Ok(())
}

/// Deliveries received since `since_ms`, by outcome: the delivery-success figure.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub applied: i64,
    pub ignored: i64,
    pub pending: i64,
    pub failed: i64,
}

impl Tally {
    /// Share of settled deliveries that did not fail (1 when none settled).
    pub fn success_ratio(&self) -> f64 {
        let settled = self.applied + self.ignored + self.failed;
        if settled == 0 { 1.0 } else { (self.applied + self.ignored) as f64 / settled as f64 }
    }
}

pub fn tally(conn: &Connection, since_ms: i64) -> Result<Tally, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT outcome, count(*) FROM webhook_deliveries WHERE received_at_ms >= ?1 GROUP BY outcome",
    )?;
    let mut tally = Tally::default();
    for row in stmt.query_map([since_ms], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (outcome, n) = row?;
        match outcome.as_str() {
            "applied" => tally.applied = n,
            "ignored" => tally.ignored = n,
            "pending" => tally.pending = n,
            _ => tally.failed = n,
        }
    }
    Ok(tally)
}

/// Receipt to processing, for the deliveries applied since `since_ms` (milliseconds,
/// ascending): the benchmark's figure.
pub fn processing_times(conn: &Connection, since_ms: i64) -> Result<Vec<i64>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT processing_ms FROM webhook_deliveries
         WHERE received_at_ms >= ?1 AND outcome IN ('applied', 'ignored') AND processing_ms IS NOT NULL
         ORDER BY processing_ms",
    )?;
    let rows = stmt.query_map([since_ms], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The deliveries received in `[from_ms, to_ms)` that have settled, or have waited
/// since before `stuck_before_ms`: whether each failed or is stuck, and receipt to
/// processing in milliseconds (for the service-level indicators).
pub fn settled_between(
    conn: &Connection,
    from_ms: i64,
    to_ms: i64,
    stuck_before_ms: i64,
) -> Result<Vec<(bool, Option<i64>)>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT outcome IN ('failed', 'pending'), processing_ms FROM webhook_deliveries
         WHERE received_at_ms >= ?1 AND received_at_ms < ?2 AND (outcome <> 'pending' OR received_at_ms < ?3)",
    )?;
    let rows = stmt.query_map(rusqlite::params![from_ms, to_ms, stuck_before_ms], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
