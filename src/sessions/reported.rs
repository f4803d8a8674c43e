//! What an agent reports about a session that no event carries: lines of code added
//! and removed, commits, pull requests and active time, from the agents' OTLP metrics
//! (`otlp::metrics`). Owns `session_reported` (the totals per person, agent and session)
//! and `otlp_metric_series` (each series' last applied point).
//!
//! Invariants: a cumulative series adds only its growth since the last point applied
//! (a new start time, or a value below the last, is a restart and adds the whole
//! value); a point at or before the last applied time of its series is a retry and adds
//! nothing; tokens and cost never come this way. Series state older than two days is
//! dropped (an exporter sends every interval, a minute at most, while it runs).

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use crate::db::DbError;

/// The column a reading adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    LinesAdded,
    LinesRemoved,
    Commits,
    PullRequests,
    ActiveUserSeconds,
    ActiveAgentSeconds,
}

impl Column {
    fn sql(self) -> &'static str {
        match self {
            Column::LinesAdded => "lines_added",
            Column::LinesRemoved => "lines_removed",
            Column::Commits => "commits",
            Column::PullRequests => "pull_requests",
            Column::ActiveUserSeconds => "active_user_ms",
            Column::ActiveAgentSeconds => "active_agent_ms",
        }
    }

    /// The stored integer for `amount` (seconds are kept as milliseconds), within
    /// [`MAX_REPORTED`].
    fn stored(self, amount: f64) -> i64 {
        let stored = match self {
            Column::ActiveUserSeconds | Column::ActiveAgentSeconds => (amount * 1000.0).round(),
            _ => amount.round(),
        };
        // `as` saturates (and maps NaN to 0); the bound keeps every sum an integer.
        (stored as i64).clamp(0, MAX_REPORTED)
    }
}

/// One data point of a series, as the exporter sent it.
#[derive(Clone, Debug)]
pub struct Reading<'a> {
    pub agent_type: &'a str,
    pub session_id: &'a str,
    pub column: Column,
    pub series: &'a str,
    pub start_nanos: u64,
    pub time_nanos: u64,
    pub value: f64,
    pub cumulative: bool,
}

/// What became of an export's readings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub added: u64,
    /// Readings already applied (an exporter's retry or a replay).
    pub repeated: u64,
}

const SERIES_KEPT_MS: i64 = 2 * 86_400_000;

/// The most any reported total holds (lines, commits, milliseconds: 10^12 ms is 31
/// years). A sum past it stays at it: SQLite turns an integer sum that overflows into a
/// REAL, which no reader takes as an integer (a point of 9.2e18 made its session a 500).
pub const MAX_REPORTED: i64 = 1_000_000_000_000;

/// Adds `readings` for `user_id` in the caller's transaction.
pub fn apply(tx: &Transaction<'_>, user_id: &str, readings: &[Reading<'_>], now_ms: i64) -> Result<Applied, DbError> {
    let mut applied = Applied::default();
    for reading in readings {
        let last: Option<(i64, i64, f64)> = tx
            .prepare_cached("SELECT start_nanos, last_nanos, last_value FROM otlp_metric_series WHERE series = ?1")?
            .query_row([reading.series], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .optional()?;
        let (start, time) = (clamp(reading.start_nanos), clamp(reading.time_nanos));
        let delta = match last {
            Some((_, last_time, _)) if time <= last_time => {
                applied.repeated += 1;
                continue;
            }
            Some((last_start, _, last_value))
                if reading.cumulative && last_start == start && reading.value >= last_value =>
            {
                reading.value - last_value
            }
            _ => reading.value,
        };
        tx.prepare_cached(
            "INSERT INTO otlp_metric_series (series, start_nanos, last_nanos, last_value, seen_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (series) DO UPDATE SET start_nanos = excluded.start_nanos,
                 last_nanos = excluded.last_nanos, last_value = excluded.last_value, seen_ms = excluded.seen_ms",
        )?
        .execute(params![reading.series, start, time, reading.value, now_ms])?;
        let column = reading.column.sql();
        tx.prepare_cached(&format!(
            "INSERT INTO session_reported (user_id, agent_type, agent_session_id, {column}, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (user_id, agent_type, agent_session_id)
             DO UPDATE SET {column} = min({column} + excluded.{column}, {MAX_REPORTED}),
                 updated_ms = excluded.updated_ms"
        ))?
        .execute(params![
            user_id,
            reading.agent_type,
            reading.session_id,
            reading.column.stored(delta),
            now_ms
        ])?;
        applied.added += 1;
    }
    tx.prepare_cached("DELETE FROM otlp_metric_series WHERE seen_ms < ?1")?.execute([now_ms - SERIES_KEPT_MS])?;
    Ok(applied)
}

fn clamp(nanos: u64) -> i64 {
    nanos.min(i64::MAX as u64) as i64
}

/// A session's reported totals (absent when its agent exported no such metric).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Reported {
    pub lines_added: i64,
    pub lines_removed: i64,
    pub commits: i64,
    pub pull_requests: i64,
    pub active_user_ms: i64,
    pub active_agent_ms: i64,
}

impl Reported {
    /// The person's active time, as a page shows it (`1 h 05 min`, `12 min`, `40 s`).
    pub fn active_user(&self) -> String {
        shown_duration(self.active_user_ms)
    }

    /// The agent's working time, as a page shows it.
    pub fn active_agent(&self) -> String {
        shown_duration(self.active_agent_ms)
    }
}

fn shown_duration(ms: i64) -> String {
    let seconds = (ms.max(0) + 500) / 1000;
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        _ => format!("{} h {:02} min", seconds / 3600, seconds % 3600 / 60),
    }
}

/// The totals reported for one session of `user_id`.
pub fn of_session(
    conn: &Connection,
    user_id: &str,
    agent_type: &str,
    session_id: &str,
) -> Result<Option<Reported>, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT lines_added, lines_removed, commits, pull_requests, active_user_ms, active_agent_ms
             FROM session_reported WHERE user_id = ?1 AND agent_type = ?2 AND agent_session_id = ?3",
        )?
        .query_row(params![user_id, agent_type, session_id], |row| {
            Ok(Reported {
                lines_added: row.get(0)?,
                lines_removed: row.get(1)?,
                commits: row.get(2)?,
                pull_requests: row.get(3)?,
                active_user_ms: row.get(4)?,
                active_agent_ms: row.get(5)?,
            })
        })
        .optional()?)
}

/// Removes a person's reported totals (a deletion request). The series state holds
/// only digests and numbers and ages out in two days.
pub fn forget(tx: &Connection, user_id: &str) -> Result<(), DbError> {
    tx.execute("DELETE FROM session_reported WHERE user_id = ?1", [user_id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading<'a>(series: &'a str, start: u64, time: u64, value: f64, cumulative: bool) -> Reading<'a> {
        Reading {
            agent_type: "claude_code",
            session_id: "s-1",
            column: Column::LinesAdded,
            series,
            start_nanos: start,
            time_nanos: time,
            value,
            cumulative,
        }
    }

    fn lines_added(conn: &Connection) -> i64 {
        of_session(conn, "u1", "claude_code", "s-1").unwrap().unwrap().lines_added
    }

    #[test]
    fn a_cumulative_series_adds_its_growth_and_restarts_on_a_new_start_time() {
        let mut conn = crate::db::plans::main_db();
        let tx = conn.transaction().unwrap();
        let points = [
            reading("a", 100, 1_000, 10.0, true),
            reading("a", 100, 2_000, 25.0, true),
            reading("a", 100, 2_000, 25.0, true),
            reading("a", 3_000, 4_000, 4.0, true),
            reading("a", 3_000, 5_000, 3.0, true),
        ];
        let applied = apply(&tx, "u1", &points, 0).unwrap();
        assert_eq!(applied, Applied { added: 4, repeated: 1 });
        // 10, +15, retry ignored, restart +4, value fell (a restart without a new start) +3.
        assert_eq!(lines_added(&tx), 32);
    }

    #[test]
    fn a_delta_series_adds_each_point_once() {
        let mut conn = crate::db::plans::main_db();
        let tx = conn.transaction().unwrap();
        apply(&tx, "u1", &[reading("d", 0, 1_000, 5.0, false), reading("d", 0, 2_000, 7.0, false)], 0).unwrap();
        let again = apply(&tx, "u1", &[reading("d", 0, 2_000, 7.0, false)], 0).unwrap();
        assert_eq!(again, Applied { added: 0, repeated: 1 }, "a retried export adds nothing");
        assert_eq!(lines_added(&tx), 12);
        forget(&tx, "u1").unwrap();
        assert_eq!(of_session(&tx, "u1", "claude_code", "s-1").unwrap(), None);
    }

    #[test]
    fn sums_stay_integers_within_the_bound_whatever_a_point_says() {
        let mut conn = crate::db::plans::main_db();
        let tx = conn.transaction().unwrap();
        let points = [
            reading("h", 0, 1_000, 9.2e18, false),
            reading("h", 0, 2_000, 9.2e18, false),
            reading("h", 0, 3_000, f64::MAX, false),
        ];
        apply(&tx, "u1", &points, 0).unwrap();
        assert_eq!(lines_added(&tx), MAX_REPORTED, "held at the bound, read as an integer");
        let kind: String =
            tx.query_row("SELECT typeof(lines_added) FROM session_reported", [], |row| row.get(0)).unwrap();
        assert_eq!(kind, "integer");
    }
}
