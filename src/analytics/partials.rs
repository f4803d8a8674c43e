//! The refresh's own state in `main.db` (tables owned here): per day partition, the last
//! commit folded into the aggregates and an epoch (`aggregate_watermarks`); per day and
//! person, the sums `agg_sessions_daily` is spread from over the person's teams
//! (`agg_person_days`); per day and session, its last event's time and active time
//! (`agg_session_days`, recent days only).
//!
//! Invariants: a day's aggregates equal a rebuild from its partition as it was at
//! `folded_seq`. Anything that changes a day's stored events other than by a new commit
//! (a deletion, new prices) calls [`force_rebuild`], which clears `folded_seq` and
//! advances the epoch, so a refresh that read the day before it applies nothing
//! ([`claim`] fails) and the next one rebuilds the day whole.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, ToSql, params, params_from_iter};

use crate::db::DbError;
use crate::events::partitions::{DailySessions, SessionDay};

const DAY_MS: i64 = 86_400_000;

/// Session days are kept this many days behind the newest folded day; an older day's
/// late event makes the refresh rebuild that day from its partition.
pub const SESSION_DAYS_KEPT: i64 = 7;

/// A day's fold state as a refresh read it (a day with no row reads as never folded,
/// epoch 0; a forced rebuild creates its row at epoch 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Watermark {
    /// The last commit folded; `None` means the day must be rebuilt whole.
    pub folded_seq: Option<i64>,
    pub epoch: i64,
}

pub fn watermark(conn: &Connection, day_start_ms: i64) -> Result<Watermark, DbError> {
    Ok(conn
        .query_row(
            "SELECT folded_seq, epoch FROM aggregate_watermarks WHERE day_start_ms = ?1",
            [day_start_ms],
            |row| Ok(Watermark { folded_seq: row.get(0)?, epoch: row.get(1)? }),
        )
        .optional()?
        .unwrap_or_default())
}

/// Records `folded_seq` for the day if its state is still the one the refresh read;
/// returns false (and changes nothing) if another refresh or a forced rebuild came first.
pub fn claim(tx: &Connection, day_start_ms: i64, seen: &Watermark, folded_seq: i64) -> Result<bool, DbError> {
    let changed = tx.execute(
        "INSERT INTO aggregate_watermarks (day_start_ms, folded_seq, epoch) VALUES (?1, ?2, 0)
         ON CONFLICT (day_start_ms) DO UPDATE SET folded_seq = excluded.folded_seq
         WHERE folded_seq IS ?3 AND epoch = ?4",
        params![day_start_ms, folded_seq, seen.folded_seq, seen.epoch],
    )?;
    Ok(changed == 1)
}

/// The days whose stored events changed otherwise than by new commits: each is rebuilt
/// whole by the next refresh (its first hour is marked dirty so the refresh looks).
pub fn force_rebuild(tx: &Connection, days_start_ms: &BTreeSet<i64>, now_ms: i64) -> Result<(), DbError> {
    let mut force = tx.prepare_cached(
        "INSERT INTO aggregate_watermarks (day_start_ms, folded_seq, epoch) VALUES (?1, NULL, 1)
         ON CONFLICT (day_start_ms) DO UPDATE SET folded_seq = NULL, epoch = epoch + 1",
    )?;
    for day in days_start_ms {
        force.execute([day])?;
    }
    // A day's start is its first hour.
    crate::sessions::fold::mark_dirty_hours(tx, days_start_ms, now_ms)
}

/// Every folded day is rebuilt by the next refresh (for a change whose days are unknown).
pub fn force_rebuild_all(tx: &Connection, now_ms: i64) -> Result<(), DbError> {
    let mut stmt = tx.prepare("SELECT day_start_ms FROM aggregate_watermarks WHERE folded_seq IS NOT NULL")?;
    let days: BTreeSet<i64> = stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    force_rebuild(tx, &days, now_ms)
}

/// Deletes a session's partials on the given days (its deletion; the caller has
/// `secure_delete` on and has forced the days' rebuild).
pub fn forget_session(
    tx: &Connection,
    days_start_ms: &BTreeSet<i64>,
    user_id: &str,
    agent_type: &str,
    session_id: &str,
) -> Result<(), DbError> {
    let mut forget = tx.prepare_cached(
        "DELETE FROM agg_session_days
         WHERE day_start_ms = ?1 AND user_id = ?2 AND agent_type = ?3 AND session_id = ?4",
    )?;
    for day in days_start_ms {
        forget.execute(params![day, user_id, agent_type, session_id])?;
    }
    Ok(())
}

/// Deletes a person's partials, every day (their deletion, once none of their sessions
/// is left; the days were forced to rebuild as each session went).
pub fn forget_person(tx: &Connection, user_id: &str) -> Result<(), DbError> {
    tx.prepare_cached("DELETE FROM agg_person_days WHERE user_id = ?1")?.execute([user_id])?;
    tx.prepare_cached("DELETE FROM agg_session_days WHERE user_id = ?1")?.execute([user_id])?;
    Ok(())
}

/// The days from the day of `first_ms` to the day of `last_ms`, by their start.
pub fn days_spanned(first_ms: i64, last_ms: i64) -> BTreeSet<i64> {
    let first = first_ms.div_euclid(DAY_MS);
    let last = last_ms.max(first_ms).div_euclid(DAY_MS);
    (first..=last).map(|day| day * DAY_MS).collect()
}

/// One session's day as last folded: (last event's time, active time).
pub fn session_day(
    conn: &Connection,
    day_start_ms: i64,
    user_id: &str,
    agent_type: &str,
    session_id: &str,
) -> Result<Option<(i64, i64)>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT last_ts_ms, active_ms FROM agg_session_days
         WHERE day_start_ms = ?1 AND user_id = ?2 AND agent_type = ?3 AND session_id = ?4",
    )?;
    Ok(stmt
        .query_row(params![day_start_ms, user_id, agent_type, session_id], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?)
}

/// Sets the given sessions' days (new or extended).
pub fn put_session_days(tx: &Connection, day_start_ms: i64, sessions: &[SessionDay]) -> Result<(), DbError> {
    let mut put = tx.prepare_cached(
        "INSERT OR REPLACE INTO agg_session_days (day_start_ms, user_id, agent_type, session_id, last_ts_ms, active_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for session in sessions {
        put.execute(params![
            day_start_ms,
            session.user_id,
            session.agent_type,
            session.session_id,
            session.last_ts_ms,
            session.active_ms
        ])?;
    }
    Ok(())
}

/// Replaces every session day of the day (a rebuild).
pub fn replace_session_days(tx: &Connection, day_start_ms: i64, sessions: &[SessionDay]) -> Result<(), DbError> {
    tx.prepare_cached("DELETE FROM agg_session_days WHERE day_start_ms = ?1")?.execute([day_start_ms])?;
    put_session_days(tx, day_start_ms, sessions)
}

/// Replaces every person day of the day (a rebuild).
pub fn replace_person_days(tx: &Connection, day_start_ms: i64, people: &[DailySessions]) -> Result<(), DbError> {
    tx.prepare_cached("DELETE FROM agg_person_days WHERE day_start_ms = ?1")?.execute([day_start_ms])?;
    add_person_days(tx, day_start_ms, people)
}

/// Adds `people`'s figures to the day's (new events).
pub fn add_person_days(tx: &Connection, day_start_ms: i64, people: &[DailySessions]) -> Result<(), DbError> {
    let mut add = tx.prepare_cached(
        "INSERT INTO agg_person_days (day_start_ms, user_id, sessions, active_ms, notifications_permission,
             notifications_idle, notifications_elicitation, notifications_auth, notifications_other, response_ms,
             responses, mode_normal, mode_plan, mode_accept_edits, mode_auto, mode_dont_ask, mode_bypass)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
         ON CONFLICT (day_start_ms, user_id) DO UPDATE SET
             sessions = sessions + excluded.sessions, active_ms = active_ms + excluded.active_ms,
             notifications_permission = notifications_permission + excluded.notifications_permission,
             notifications_idle = notifications_idle + excluded.notifications_idle,
             notifications_elicitation = notifications_elicitation + excluded.notifications_elicitation,
             notifications_auth = notifications_auth + excluded.notifications_auth,
             notifications_other = notifications_other + excluded.notifications_other,
             response_ms = response_ms + excluded.response_ms, responses = responses + excluded.responses,
             mode_normal = mode_normal + excluded.mode_normal, mode_plan = mode_plan + excluded.mode_plan,
             mode_accept_edits = mode_accept_edits + excluded.mode_accept_edits,
             mode_auto = mode_auto + excluded.mode_auto, mode_dont_ask = mode_dont_ask + excluded.mode_dont_ask,
             mode_bypass = mode_bypass + excluded.mode_bypass",
    )?;
    for person in people {
        let keys: [&dyn ToSql; 2] = [&day_start_ms, &person.user_id];
        let figures = person.figures();
        add.execute(params_from_iter(keys.into_iter().chain(figures.iter().map(|figure| figure as &dyn ToSql))))?;
    }
    Ok(())
}

/// The day's people, as `agg_sessions_daily` is made from them.
pub fn person_days(conn: &Connection, day_start_ms: i64) -> Result<Vec<DailySessions>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT user_id, sessions, active_ms, notifications_permission, notifications_idle,
                notifications_elicitation, notifications_auth, notifications_other, response_ms, responses,
                mode_normal, mode_plan, mode_accept_edits, mode_auto, mode_dont_ask, mode_bypass
         FROM agg_person_days WHERE day_start_ms = ?1 ORDER BY user_id",
    )?;
    let rows = stmt.query_map([day_start_ms], |row| {
        let mut figures = [0; DailySessions::FIGURES];
        for (i, figure) in figures.iter_mut().enumerate() {
            *figure = row.get(i + 1)?;
        }
        Ok(DailySessions::from_figures(row.get(0)?, figures))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Drops session and person days older than [`SESSION_DAYS_KEPT`] days before the
/// newest folded day, and makes those days rebuild if they ever change again.
pub fn prune(tx: &Connection) -> Result<(), DbError> {
    let newest: Option<i64> =
        tx.query_row("SELECT max(day_start_ms) FROM aggregate_watermarks WHERE folded_seq IS NOT NULL", [], |row| {
            row.get(0)
        })?;
    let Some(newest) = newest else { return Ok(()) };
    let before = newest - SESSION_DAYS_KEPT * DAY_MS;
    tx.prepare_cached("DELETE FROM agg_session_days WHERE day_start_ms < ?1")?.execute([before])?;
    tx.prepare_cached("DELETE FROM agg_person_days WHERE day_start_ms < ?1")?.execute([before])?;
    tx.prepare_cached(
        "UPDATE aggregate_watermarks SET folded_seq = NULL, epoch = epoch + 1
         WHERE day_start_ms < ?1 AND folded_seq IS NOT NULL",
    )?
    .execute([before])?;
    Ok(())
}
