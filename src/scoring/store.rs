//! The `scores` table: writing a session's trajectory scores and reading the current
//! version of each. All SQL on `scores` lives here.
//!
//! Invariant: a row is keyed by (subject, scorer, version, period), so scoring again at
//! the same version replaces the row and a new version is written beside the old one.

use rusqlite::{Connection, params};

use super::registry::{self, Scorer};
use super::trajectory::{TestsEvidence, Trajectory};
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
    let evidence = match (t.tests_before_merge, t.tests_evidence) {
        (None, _) => "no edits",
        (Some(_), TestsEvidence::NoShellCalls) => "no command after the last edit",
        (Some(_), TestsEvidence::ProgramName) => "judged by program name",
        (Some(_), TestsEvidence::Transcript) => "commands read from the transcript",
    };
    put(conn, session_id, &TESTS_BEFORE_MERGE, tests, Some(evidence), now_ms)?;
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
    for scorer in registry::ALL.iter().filter(|s| s.subject == "session") {
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
    // Computed scores only: people's answers stay whatever the rubric's version.
    let computed: Vec<registry::Scorer> = registry::ALL
        .iter()
        .copied()
        .filter(|s| matches!(s.source, registry::Source::Deterministic | registry::Source::Heuristic))
        .collect();
    sweep_old_versions_of(conn, &computed)
}

/// Scores of `scorers` of versions other than their current ones (`rescore-*`).
pub fn sweep_old_versions_of(conn: &Connection, scorers: &[registry::Scorer]) -> Result<usize, DbError> {
    let mut removed = 0;
    for scorer in scorers {
        removed += conn.execute(
            "DELETE FROM scores WHERE scorer_name = ?1 AND scorer_version <> ?2",
            params![scorer.name, scorer.version],
        )?;
    }
    Ok(removed)
}

/// A person's scored interactive sessions started in a period: how many, their mean
/// friction and mean step efficiency (current version), step efficiency by shape, and the
/// five with the most friction (id, agent session id, friction, shape).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PeriodScores {
    pub sessions: i64,
    pub friction: Option<f64>,
    pub efficiency: Option<f64>,
    /// (shape label, sessions, mean step efficiency): efficiency compares only within a
    /// shape (a question has few calls to waste; a debugging session many).
    pub by_shape: Vec<(String, i64, f64)>,
    pub most_friction: Vec<(String, String, f64, String)>,
}

pub fn period_of_person(conn: &Connection, user_id: &str, from_ms: i64, to_ms: i64) -> Result<PeriodScores, DbError> {
    let version = registry::TRAJECTORY_VERSION;
    let (sessions, friction, efficiency) = conn.query_row(
        "SELECT count(*), avg(s.friction_score), avg(sc.value) FROM sessions s
         LEFT JOIN scores sc ON sc.subject_type = 'session' AND sc.subject_id = s.id
           AND sc.scorer_name = 'step_efficiency' AND sc.scorer_version = ?4 AND sc.period_start_ms = 0
         WHERE s.user_id = ?1 AND s.run_kind = 'INTERACTIVE' AND s.first_event_ms >= ?2 AND s.first_event_ms < ?3
           AND s.scored_version = ?4",
        params![user_id, from_ms, to_ms, version],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent_session_id, friction_score, coalesce(shape_label, '') FROM sessions
         WHERE user_id = ?1 AND run_kind = 'INTERACTIVE' AND first_event_ms >= ?2 AND first_event_ms < ?3
           AND scored_version = ?4 AND friction_score > 0
         ORDER BY friction_score DESC, first_event_ms DESC LIMIT 5",
    )?;
    let most_friction = stmt
        .query_map(params![user_id, from_ms, to_ms, version], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT s.shape_label, count(*), avg(sc.value) FROM sessions s
         JOIN scores sc ON sc.subject_type = 'session' AND sc.subject_id = s.id
           AND sc.scorer_name = 'step_efficiency' AND sc.scorer_version = ?4 AND sc.period_start_ms = 0
         WHERE s.user_id = ?1 AND s.run_kind = 'INTERACTIVE' AND s.first_event_ms >= ?2 AND s.first_event_ms < ?3
           AND s.scored_version = ?4 AND s.shape_label IS NOT NULL
         GROUP BY s.shape_label",
    )?;
    let by_shape = stmt
        .query_map(params![user_id, from_ms, to_ms, version], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    Ok(PeriodScores { sessions, friction, efficiency, by_shape, most_friction })
}
