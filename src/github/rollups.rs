//! `pr_rollups`: what a merged pull request took. Computed on merge and again whenever
//! something it counts changes (a new link, a check run, a review, a revert).
//!
//! Invariants: developer figures (sessions, people, agents, cost, tokens, cost per
//! changed line) count `INTERACTIVE` sessions only; a CI session linked to the pull
//! request is counted apart as CI cost; EVAL sessions are in neither. A session linked
//! to several pull requests counts in full in each (a link is evidence of work on it,
//! not a share of it).

use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rollup {
    pub sessions: i64,
    pub people: i64,
    pub agents: Vec<String>,
    pub cost_nusd: i64,
    pub tokens: i64,
    pub cost_per_changed_line_nusd: Option<i64>,
    pub ci_sessions: i64,
    pub ci_cost_nusd: i64,
    pub check_failures_count: i64,
    pub review_rounds: i64,
    pub time_to_merge_ms: Option<i64>,
    pub reverted: bool,
}

/// Recomputes the rollup of a merged pull request (nothing for one not merged).
pub fn compute(conn: &Connection, pr_id: &str, now_ms: i64) -> Result<(), DbError> {
    let pr = conn
        .query_row(
            "SELECT additions + deletions, check_failures_count, review_rounds, merged_at_ms - created_at_ms,
               reverted_by_number IS NOT NULL
             FROM pull_requests WHERE id = ?1 AND state = 'merged'",
            [pr_id],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, bool>(4)?,
                ))
            },
        )
        .optional()?;
    let Some((changed_lines, check_failures, review_rounds, time_to_merge, reverted)) = pr else { return Ok(()) };
    let (sessions, people, agents, cost, tokens): (i64, i64, Option<String>, i64, i64) = conn.query_row(
        "SELECT count(*), count(DISTINCT s.user_id),
           (SELECT group_concat(agent_type, ',') FROM (SELECT DISTINCT s2.agent_type FROM session_pr_links l2
              JOIN sessions s2 ON s2.id = l2.session_id WHERE l2.pr_id = ?1 AND s2.run_kind = 'INTERACTIVE'
              ORDER BY s2.agent_type)),
           coalesce(sum(s.cost_nusd), 0),
           coalesce(sum(s.input_tokens + s.output_tokens + s.cache_read_tokens + s.cache_write_5m_tokens
             + s.cache_write_1h_tokens), 0)
         FROM session_pr_links l JOIN sessions s ON s.id = l.session_id
         WHERE l.pr_id = ?1 AND s.run_kind = 'INTERACTIVE'",
        [pr_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let (ci_sessions, ci_cost): (i64, i64) = conn.query_row(
        "SELECT count(*), coalesce(sum(s.cost_nusd), 0) FROM session_pr_links l JOIN sessions s ON s.id = l.session_id
         WHERE l.pr_id = ?1 AND s.run_kind = 'CI'",
        [pr_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let per_line = (changed_lines > 0).then(|| cost / changed_lines);
    conn.execute(
        "INSERT INTO pr_rollups (pr_id, computed_at_ms, sessions, people, agents, cost_nusd, tokens,
           cost_per_changed_line_nusd, ci_sessions, ci_cost_nusd, check_failures_count, review_rounds,
           time_to_merge_ms, reverted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (pr_id) DO UPDATE SET computed_at_ms = excluded.computed_at_ms, sessions = excluded.sessions,
           people = excluded.people, agents = excluded.agents, cost_nusd = excluded.cost_nusd,
           tokens = excluded.tokens, cost_per_changed_line_nusd = excluded.cost_per_changed_line_nusd,
           ci_sessions = excluded.ci_sessions, ci_cost_nusd = excluded.ci_cost_nusd,
           check_failures_count = excluded.check_failures_count, review_rounds = excluded.review_rounds,
           time_to_merge_ms = excluded.time_to_merge_ms, reverted = excluded.reverted",
        params![
            pr_id,
            now_ms,
            sessions,
            people,
            agents.unwrap_or_default(),
            cost,
            tokens,
            per_line,
            ci_sessions,
            ci_cost,
            check_failures,
            review_rounds,
            time_to_merge,
            reverted
        ],
    )?;
    // The bot comment follows the figures.
    conn.execute("UPDATE pull_requests SET comment_due = 1 WHERE id = ?1", [pr_id])?;
    Ok(())
}

pub fn get(conn: &Connection, pr_id: &str) -> Result<Option<Rollup>, DbError> {
    Ok(conn
        .query_row(
            "SELECT sessions, people, agents, cost_nusd, tokens, cost_per_changed_line_nusd, ci_sessions, ci_cost_nusd,
               check_failures_count, review_rounds, time_to_merge_ms, reverted
             FROM pr_rollups WHERE pr_id = ?1",
            [pr_id],
            |r| {
                let agents: String = r.get(2)?;
                Ok(Rollup {
                    sessions: r.get(0)?,
                    people: r.get(1)?,
                    agents: agents.split(',').filter(|a| !a.is_empty()).map(str::to_string).collect(),
                    cost_nusd: r.get(3)?,
                    tokens: r.get(4)?,
                    cost_per_changed_line_nusd: r.get(5)?,
                    ci_sessions: r.get(6)?,
                    ci_cost_nusd: r.get(7)?,
                    check_failures_count: r.get(8)?,
                    review_rounds: r.get(9)?,
                    time_to_merge_ms: r.get(10)?,
                    reverted: r.get(11)?,
                })
            },
        )
        .optional()?)
}

/// Rollups whose sessions changed underneath them: a deletion request removed a linked
/// session, or a linked session went on (or its events arrived late) after the merge.
/// Recomputed by the worker.
pub fn stale(conn: &Connection) -> Result<Vec<String>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.pr_id FROM pr_rollups r
         WHERE r.sessions + r.ci_sessions <> (SELECT count(*) FROM session_pr_links l
             JOIN sessions s ON s.id = l.session_id WHERE l.pr_id = r.pr_id AND s.run_kind IN ('INTERACTIVE', 'CI'))
            OR r.cost_nusd + r.ci_cost_nusd <> (SELECT coalesce(sum(s.cost_nusd), 0) FROM session_pr_links l
             JOIN sessions s ON s.id = l.session_id WHERE l.pr_id = r.pr_id AND s.run_kind IN ('INTERACTIVE', 'CI'))",
    )?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The people behind a pull request's figures: the owners of its linked interactive
/// and CI sessions (a CI run's cost is its owner's figure too).
pub fn people(conn: &Connection, pr_id: &str) -> Result<Vec<String>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT s.user_id FROM session_pr_links l JOIN sessions s ON s.id = l.session_id
         WHERE l.pr_id = ?1 AND s.run_kind IN ('INTERACTIVE', 'CI') ORDER BY s.user_id",
    )?;
    let rows = stmt.query_map([pr_id], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
