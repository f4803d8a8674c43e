//! The `scores` table: writing a session's trajectory scores and reading the current
//! version of each. All SQL on `scores` lives here.
//!
//! Invariant: a row is keyed by (subject, scorer, version, period), so scoring again at
//! the same version replaces the row and a new version is written beside the old one.

use rusqlite::{Connection, params};

use super::registry::{self, Scorer};
use super::trajectory::Trajectory;
use crate::db::DbError;

/// One score as a page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownScore {
    pub scorer: &'static Scorer,
    pub value: Option<f64>,
    pub label: Option<String>,
}

fn put(
    conn: &Connection,
    session_id: &str,
    scorer: &Scorer,
    value: Option<f64>,
    label: Option<&str>,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, period_start_ms, value, label, source,
           created_at_ms)
         VALUES ('session', ?1, ?2, ?3, 0, ?4, ?5, ?6, ?7)
         ON CONFLICT (subject_type, subject_id, scorer_name, scorer_version, period_start_ms) DO UPDATE SET
           value = excluded.value, label = excluded.label, created_at_ms = excluded.created_at_ms",
    )?
    .execute(params![session_id, scorer.name, scorer.version, value, label, scorer.source.as_str(), now_ms])?;
    Ok(())
}

/// Writes every trajectory score of a session (in the caller's transaction).
pub fn write_trajectory(conn: &Connection, session_id: &str, t: &Trajectory, now_ms: i64) -> Result<(), DbError> {
    use registry::*;
    let shape = Some(t.shape.as_str());
    put(conn, session_id, &RETRY_LOOPS, Some(t.retry_loops as f64), None, now_ms)?;
    put(conn, session_id, &EDIT_THRASH, Some(t.edit_thrash as f64), None, now_ms)?;
    put(conn, session_id, &REDUNDANT_READS, Some(t.redundant_reads as f64), None, now_ms)?;
    let denials = t.denial_retry_success.is_none().then_some("no denials");
    put(conn, session_id, &DENIAL_RETRY_SUCCESS, t.denial_retry_success, denials, now_ms)?;
    let tests = t.tests_before_merge.map(|ran| if ran { 1.0 } else { 0.0 });
    put(conn, session_id, &TESTS_BEFORE_MERGE, tests, t.tests_before_merge.is_none().then_some("no edits"), now_ms)?;
    put(conn, session_id, &STEP_EFFICIENCY, Some(t.step_efficiency), shape, now_ms)?;
    put(conn, session_id, &SHAPE, None, shape, now_ms)?;
    put(conn, session_id, &FRICTION, Some(t.friction), None, now_ms)?;
    Ok(())
}

/// The current version's scores of one session, in the registry's order.
pub fn of_session(conn: &Connection, session_id: &str) -> Result<Vec<ShownScore>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT value, label FROM scores
         WHERE subject_type = 'session' AND subject_id = ?1 AND scorer_name = ?2 AND scorer_version = ?3
           AND period_start_ms = 0",
    )?;
    let mut out = Vec::new();
    for scorer in registry::ALL {
        let found = stmt
            .query_map(params![session_id, scorer.name, scorer.version], |r| Ok((r.get(0)?, r.get(1)?)))?
            .next()
            .transpose()?;
        if let Some((value, label)) = found {
            out.push(ShownScore { scorer, value, label });
        }
    }
    Ok(out)
}

/// Scores of versions other than the current ones (kept after a rescoring until swept).
pub fn sweep_old_versions(conn: &Connection) -> Result<usize, DbError> {
    let mut removed = 0;
    for scorer in registry::ALL {
        removed += conn.execute(
            "DELETE FROM scores WHERE scorer_name = ?1 AND scorer_version <> ?2",
            params![scorer.name, scorer.version],
        )?;
    }
    Ok(removed)
}
