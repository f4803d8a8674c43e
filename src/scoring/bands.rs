//! What a score is usually, so one session's score reads in context: per scorer and
//! version, over the interactive sessions of the last [`WINDOW_DAYS`] days, the
//! organisation's middle half (25th to 75th percentile) and each person's median. The
//! scoring jobs compute them on a reader connection and write them whole into
//! `score_bands` (owned here); the session page reads two rows.
//!
//! Invariants: CI and evaluation runs never count (interactive sessions only); the
//! organisation's row records how many people it covers, and a page shows it only when
//! they are at least `analytics.min_group_size`; a person's row is shown to that person
//! only, and only when it covers at least [`MIN_OWN_SESSIONS`] sessions. A refresh
//! replaces every row in one transaction, so a reader sees the old bands or the new.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;
use crate::events::writer::MainChange;

/// How far back the bands look.
pub const WINDOW_DAYS: i64 = 90;
/// A person's "usual" needs this many scored sessions to mean anything.
pub const MIN_OWN_SESSIONS: i64 = 5;
/// The scope of the organisation's rows (a person's rows are scoped by their user id).
const ORGANISATION: &str = "";

/// One scorer's band in one scope.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub scope: String,
    pub scorer_name: String,
    pub scorer_version: String,
    pub sessions: i64,
    pub people: i64,
    /// 25th, 50th and 75th percentiles.
    pub low: f64,
    pub middle: f64,
    pub high: f64,
}

/// The `q`-quantile of sorted `values` (nearest rank, so a band is made of real scores).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn band(scope: &str, (name, version): &(String, String), mut values: Vec<f64>, people: i64) -> Band {
    values.sort_by(f64::total_cmp);
    Band {
        scope: scope.to_string(),
        scorer_name: name.clone(),
        scorer_version: version.clone(),
        sessions: values.len() as i64,
        people,
        low: quantile(&values, 0.25),
        middle: quantile(&values, 0.5),
        high: quantile(&values, 0.75),
    }
}

/// The bands of every session scorer, from the scores of the window ending `now_ms`.
pub fn compute(conn: &Connection, now_ms: i64) -> Result<Vec<Band>, DbError> {
    let from_ms = now_ms - WINDOW_DAYS * 86_400_000;
    let mut stmt = conn.prepare(
        "SELECT s.user_id, sc.scorer_name, sc.scorer_version, sc.value FROM scores sc
         JOIN sessions s ON s.id = sc.subject_id
         WHERE sc.subject_type = 'session' AND sc.period_start_ms = 0 AND sc.value IS NOT NULL
           AND s.run_kind = 'INTERACTIVE' AND s.first_event_ms >= ?1 AND s.first_event_ms < ?2",
    )?;
    type Key = (String, String);
    let mut everyone: HashMap<Key, (Vec<f64>, HashSet<String>)> = HashMap::new();
    let mut each: HashMap<(String, Key), Vec<f64>> = HashMap::new();
    let mut rows = stmt.query(params![from_ms, now_ms])?;
    while let Some(row) = rows.next()? {
        let (user, name, version, value): (String, String, String, f64) =
            (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
        if !value.is_finite() {
            continue;
        }
        let key = (name, version);
        let all = everyone.entry(key.clone()).or_default();
        all.0.push(value);
        all.1.insert(user.clone());
        each.entry((user, key)).or_default().push(value);
    }
    let mut bands: Vec<Band> = everyone
        .into_iter()
        .map(|(key, (values, people))| band(ORGANISATION, &key, values, people.len() as i64))
        .collect();
    bands.extend(
        each.into_iter()
            .filter(|(_, values)| values.len() as i64 >= MIN_OWN_SESSIONS)
            .map(|((user, key), values)| band(&user, &key, values, 1)),
    );
    Ok(bands)
}

/// Computes the bands on `reads` and replaces the stored ones in one change of main.db
/// (the writer's in the server): the long read holds no write lock. The count written.
pub fn refresh(
    reads: &Connection,
    change_main: &dyn Fn(MainChange) -> Result<(), DbError>,
    now_ms: i64,
) -> Result<usize, DbError> {
    let bands = compute(reads, now_ms)?;
    let written = bands.len();
    change_main(Box::new(move |tx| replace(tx, &bands, now_ms)))?;
    Ok(written)
}

/// Replaces every band with `bands` (in the caller's transaction).
pub fn replace(conn: &Connection, bands: &[Band], now_ms: i64) -> Result<(), DbError> {
    conn.execute("DELETE FROM score_bands", [])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO score_bands (scope, scorer_name, scorer_version, sessions, people, low, middle, high, computed_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for b in bands {
        insert.execute(params![
            b.scope,
            b.scorer_name,
            b.scorer_version,
            b.sessions,
            b.people,
            b.low,
            b.middle,
            b.high,
            now_ms
        ])?;
    }
    Ok(())
}

/// Removes a deleted person's own bands (the organisation's lose them at the next refresh).
pub fn forget(conn: &Connection, user_id: &str) -> Result<(), DbError> {
    conn.execute("DELETE FROM score_bands WHERE scope = ?1", [user_id])?;
    Ok(())
}

/// The organisation's band of a scorer's version, when it covers at least `min_people`.
pub fn organisation(
    conn: &Connection,
    scorer_name: &str,
    scorer_version: &str,
    min_people: i64,
) -> Result<Option<Band>, DbError> {
    read(conn, ORGANISATION, scorer_name, scorer_version).map(|band| band.filter(|b| b.people >= min_people))
}

/// A person's own usual of a scorer's version: for that person's eyes only.
pub fn own(conn: &Connection, user_id: &str, scorer_name: &str, scorer_version: &str) -> Result<Option<Band>, DbError> {
    read(conn, user_id, scorer_name, scorer_version)
}

fn read(conn: &Connection, scope: &str, scorer_name: &str, scorer_version: &str) -> Result<Option<Band>, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT sessions, people, low, middle, high FROM score_bands
             WHERE scope = ?1 AND scorer_name = ?2 AND scorer_version = ?3",
        )?
        .query_row(params![scope, scorer_name, scorer_version], |r| {
            Ok(Band {
                scope: scope.to_string(),
                scorer_name: scorer_name.to_string(),
                scorer_version: scorer_version.to_string(),
                sessions: r.get(0)?,
                people: r.get(1)?,
                low: r.get(2)?,
                middle: r.get(3)?,
                high: r.get(4)?,
            })
        })
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_scores_that_were_given() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        assert_eq!((quantile(&values, 0.25), quantile(&values, 0.5), quantile(&values, 0.75)), (2.0, 4.0, 6.0));
        assert_eq!(quantile(&[3.5], 0.25), 3.5);
    }

    /// Over a real main.db: interactive sessions in the window count, a CI run and an old
    /// session do not; a person with few sessions has no "usual"; the organisation's
    /// row counts its people, and is withheld below the minimum group size.
    #[test]
    fn bands_come_from_the_windows_interactive_scores() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        let now: i64 = 200 * 86_400_000;
        let session = |id: &str, user: &str, kind: &str, at: i64, friction: f64| {
            conn.execute(
                "INSERT OR IGNORE INTO users (id, email, name, created_at_ms) VALUES (?1, ?1 || '@example.com', ?1, 0)",
                [user],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO sessions (id, user_id, agent_type, agent_session_id, run_kind, first_event_ms, last_event_ms)
                 VALUES (?1, ?2, 'claude_code', ?1, ?3, ?4, ?4)",
                params![id, user, kind, at],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, value, source, created_at_ms)
                 VALUES ('session', ?1, 'friction', '2', ?2, 'HEURISTIC', 0)",
                params![id, friction],
            )
            .unwrap();
        };
        for i in 0..6 {
            session(&format!("ada-{i}"), "ada", "INTERACTIVE", now - 86_400_000, 10.0 * f64::from(i));
        }
        session("bo-1", "bo", "INTERACTIVE", now - 86_400_000, 90.0);
        session("bo-ci", "bo", "CI", now - 86_400_000, 1_000.0);
        session("bo-old", "bo", "INTERACTIVE", now - 100 * 86_400_000, 1_000.0);
        let bands = compute(&conn, now).unwrap();
        replace(&conn, &bands, now).unwrap();

        let org = organisation(&conn, "friction", "2", 2).unwrap().expect("two people");
        assert_eq!((org.sessions, org.people), (7, 2));
        assert_eq!((org.low, org.middle, org.high), (10.0, 30.0, 50.0));
        assert_eq!(organisation(&conn, "friction", "2", 3).unwrap(), None, "below the minimum group size");
        let ada = own(&conn, "ada", "friction", "2").unwrap().expect("six sessions");
        assert_eq!((ada.sessions, ada.middle), (6, 20.0));
        assert_eq!(own(&conn, "bo", "friction", "2").unwrap(), None, "one session is no usual");
        assert_eq!(own(&conn, "ada", "friction", "1").unwrap(), None, "bands are per version");
    }
}
