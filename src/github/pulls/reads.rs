//! What the pages and scoring read of pull requests: a session's pull requests and the
//! commits it landed, a person's own share, and the decided pull requests' outcomes.

use rusqlite::{Connection, params};

use super::{PR_COLUMNS, StoredPr, read_pr};
use crate::db::DbError;

/// The pull requests a session is linked to, with the evidence.
pub fn of_session(conn: &Connection, session_id: &str) -> Result<Vec<(StoredPr, String)>, DbError> {
    let sql = format!(
        "SELECT {PR_COLUMNS}, l.evidence FROM session_pr_links l JOIN pull_requests p ON p.id = l.pr_id
         JOIN repos r ON r.id = p.repo_id WHERE l.session_id = ?1 ORDER BY p.created_at_ms"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([session_id], |row| Ok((read_pr(row)?, row.get(26)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Commits a session reported that were pushed to their repository's default branch
/// (the push event's correlation): repository and commit, oldest push first.
pub fn landed_commits(
    conn: &Connection,
    session_id: &str,
    host_prefix: &str,
) -> Result<Vec<(String, String)>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT r.full_name, d.sha FROM session_git g
         JOIN default_branch_commits d ON d.sha = g.commit_sha
         JOIN repos r ON r.id = d.repo_id
         WHERE g.session_id = ?1 AND g.commit_sha <> '' AND ?2 || lower(r.full_name) = g.repo
         ORDER BY d.pushed_at_ms",
    )?;
    let rows = stmt.query_map(params![session_id, host_prefix], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A person's own interactive sessions linked to each pull request: how many, what they
/// cost. Only their own: the pull request's other contributors are not in it.
pub fn own_share(conn: &Connection, user_id: &str) -> Result<std::collections::HashMap<String, (i64, i64)>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT l.pr_id, count(*), coalesce(sum(s.cost_nusd), 0) FROM session_pr_links l
         JOIN sessions s ON s.id = l.session_id
         WHERE s.user_id = ?1 AND s.run_kind = 'INTERACTIVE' GROUP BY l.pr_id",
    )?;
    let rows = stmt.query_map([user_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A decided pull request (merged or closed) and one interactive session linked to it:
/// what outcome scoring reads.
#[derive(Clone, Debug, PartialEq)]
pub struct DecidedLink {
    pub session_id: String,
    pub pr_id: String,
    pub merged: bool,
    pub reverted: bool,
    pub check_failures: i64,
    pub review_rounds: i64,
}

/// Every interactive session linked to a merged or closed pull request, by session.
pub fn decided_links(conn: &Connection) -> Result<Vec<DecidedLink>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT l.session_id, p.id, p.state = 'merged', p.reverted_by_number IS NOT NULL, p.check_failures_count,
           p.review_rounds
         FROM session_pr_links l JOIN pull_requests p ON p.id = l.pr_id JOIN sessions s ON s.id = l.session_id
         WHERE s.run_kind = 'INTERACTIVE' AND p.state IN ('merged', 'closed')
         ORDER BY l.session_id, p.created_at_ms, p.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(DecidedLink {
            session_id: r.get(0)?,
            pr_id: r.get(1)?,
            merged: r.get(2)?,
            reverted: r.get(3)?,
            check_failures: r.get(4)?,
            review_rounds: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A merged pull request's outcome and its rollup's cost per changed line.
#[derive(Clone, Debug, PartialEq)]
pub struct MergedOutcome {
    pub pr_id: String,
    pub reverted: bool,
    pub check_failures: i64,
    pub review_rounds: i64,
    pub cost_per_line_nusd: Option<i64>,
}

pub fn merged_outcomes(conn: &Connection) -> Result<Vec<MergedOutcome>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT p.id, p.reverted_by_number IS NOT NULL, p.check_failures_count, p.review_rounds,
           r.cost_per_changed_line_nusd
         FROM pull_requests p LEFT JOIN pr_rollups r ON r.pr_id = p.id WHERE p.state = 'merged' ORDER BY p.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(MergedOutcome {
            pr_id: r.get(0)?,
            reverted: r.get(1)?,
            check_failures: r.get(2)?,
            review_rounds: r.get(3)?,
            cost_per_line_nusd: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
