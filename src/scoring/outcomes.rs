//! Outcome scores: what became of the work. `compute-effectiveness` gives each
//! interactive session linked to a decided pull request an `effectiveness` score;
//! `compute-subject-scores` scores the pull requests themselves.
//!
//! Effectiveness of one pull request: 0 if it was closed unmerged or later reverted;
//! otherwise `1 / (1 + 0.25 × failed checks + 0.25 × extra review rounds)` (rounds beyond
//! the first), so a clean merge is 1 and every failed check or extra round costs a
//! little. A session's effectiveness is the mean over the decided pull requests it is
//! linked to; its label names them.
//!
//! Invariant: the scores are recomputed whole each run (a revert or a late check run
//! changes them), at the current version; only interactive sessions are scored.

use std::collections::BTreeMap;

use rusqlite::{Connection, params};

use super::registry::{self, Scorer};
use crate::db::DbError;
use crate::github::pulls::{self, DecidedLink};

pub fn pr_effectiveness(merged: bool, reverted: bool, check_failures: i64, review_rounds: i64) -> f64 {
    if !merged || reverted {
        return 0.0;
    }
    1.0 / (1.0 + 0.25 * check_failures.max(0) as f64 + 0.25 * (review_rounds - 1).max(0) as f64)
}

fn put(
    conn: &Connection,
    subject_type: &str,
    subject_id: &str,
    scorer: &Scorer,
    value: f64,
    label: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, period_start_ms, value, label, source,
           created_at_ms)
         VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, ?8)
         ON CONFLICT (subject_type, subject_id, scorer_name, scorer_version, period_start_ms) DO UPDATE SET
           value = excluded.value, label = excluded.label, created_at_ms = excluded.created_at_ms",
    )?
    .execute(params![subject_type, subject_id, scorer.name, scorer.version, value, label, scorer.source.as_str(), now_ms])?;
    Ok(())
}

/// Writes every linked session's effectiveness; answers how many sessions.
pub fn compute_effectiveness(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    let mut by_session: BTreeMap<String, Vec<DecidedLink>> = BTreeMap::new();
    for link in pulls::decided_links(conn)? {
        by_session.entry(link.session_id.clone()).or_default().push(link);
    }
    for (session, links) in &by_session {
        let value = links
            .iter()
            .map(|l| pr_effectiveness(l.merged, l.reverted, l.check_failures, l.review_rounds))
            .sum::<f64>()
            / links.len() as f64;
        let label = links.iter().map(|l| l.pr_id.as_str()).take(3).collect::<Vec<_>>().join(", ");
        put(conn, "session", session, &registry::EFFECTIVENESS, value, &label, now_ms)?;
    }
    Ok(by_session.len())
}

/// Writes the merged pull requests' own scores; answers how many pull requests.
pub fn compute_subject_scores(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    let merged = pulls::merged_outcomes(conn)?;
    for pr in &merged {
        let value = pr_effectiveness(true, pr.reverted, pr.check_failures, pr.review_rounds);
        let label = if pr.reverted { "reverted" } else { "merged" };
        put(conn, "pull_request", &pr.pr_id, &registry::PR_EFFECTIVENESS, value, label, now_ms)?;
        if let Some(nusd) = pr.cost_per_line_nusd {
            put(conn, "pull_request", &pr.pr_id, &registry::PR_COST_PER_LINE, nusd as f64 / 1e9, "USD", now_ms)?;
        }
    }
    Ok(merged.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effectiveness_of_a_pull_request() {
        assert_eq!(pr_effectiveness(true, false, 0, 1), 1.0, "a clean merge, one round");
        assert_eq!(pr_effectiveness(true, false, 0, 0), 1.0, "merged without review");
        assert_eq!(pr_effectiveness(true, false, 2, 3), 0.5, "two failed checks and two extra rounds");
        assert_eq!(pr_effectiveness(true, true, 0, 1), 0.0, "reverted");
        assert_eq!(pr_effectiveness(false, false, 0, 1), 0.0, "closed unmerged");
    }
}
