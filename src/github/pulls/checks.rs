//! Check runs and reviews of a pull request (`pr_check_runs`, `pr_reviews`), and the
//! figures recomputed from them on the pull request: failed checks, CI decision, review
//! decision and rounds.
//!
//! Invariant: the figures are recomputed from the rows, never incremented, so a
//! redelivered event cannot count twice.

use rusqlite::{Transaction, params};

use crate::db::DbError;
use crate::github::payload;

/// Records a check run on a pull request and recomputes its failure count and CI
/// decision (from the latest run of each check on the head commit).
pub fn record_check_run(tx: &Transaction<'_>, pr_id: &str, run: &payload::CheckRun) -> Result<(), DbError> {
    tx.execute(
        "INSERT INTO pr_check_runs (pr_id, check_run_id, name, head_sha, status, conclusion, completed_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (pr_id, check_run_id) DO UPDATE SET name = excluded.name, head_sha = excluded.head_sha,
           status = CASE WHEN pr_check_runs.status = 'completed' THEN pr_check_runs.status ELSE excluded.status END,
           conclusion = coalesce(excluded.conclusion, pr_check_runs.conclusion),
           completed_at_ms = coalesce(excluded.completed_at_ms, pr_check_runs.completed_at_ms)",
        params![
            pr_id,
            run.id,
            run.name.as_deref().unwrap_or(""),
            run.head_sha.as_deref().unwrap_or("").to_ascii_lowercase(),
            run.status.as_deref().unwrap_or("queued"),
            run.conclusion.as_deref(),
            payload::time_ms(run.completed_at.as_deref()),
        ],
    )?;
    tx.execute(
        "UPDATE pull_requests SET
           check_failures_count = (SELECT count(*) FROM pr_check_runs c WHERE c.pr_id = ?1
             AND c.conclusion IN ('failure', 'timed_out')),
           ci_decision = (
             WITH latest AS (
               SELECT c.name, c.status, c.conclusion,
                 row_number() OVER (PARTITION BY c.name ORDER BY c.check_run_id DESC) AS n
               FROM pr_check_runs c
               WHERE c.pr_id = ?1 AND c.head_sha = coalesce(pull_requests.head_sha, c.head_sha))
             SELECT CASE
               WHEN count(*) = 0 THEN NULL
               WHEN sum(conclusion IN ('failure', 'timed_out', 'cancelled', 'action_required')) > 0 THEN 'failing'
               WHEN sum(status <> 'completed') > 0 THEN 'pending'
               ELSE 'passing' END
             FROM latest WHERE n = 1)
         WHERE id = ?1",
        [pr_id],
    )?;
    Ok(())
}

/// Records a review (or its dismissal) and recomputes the review decision and rounds.
///
/// The decision is GitHub's rule: each reviewer's latest approving or change-requesting
/// review counts (a dismissed one no longer does); any change request wins, then any
/// approval, else `commented` when there were only comments. A round is a reviewed
/// commit: reviews on the same head commit are one round.
pub fn record_review(
    tx: &Transaction<'_>,
    pr_id: &str,
    review: &payload::Review,
    dismissed: bool,
) -> Result<(), DbError> {
    let state = match dismissed {
        true => "dismissed".to_string(),
        false => review.state.as_deref().unwrap_or("commented").to_ascii_lowercase(),
    };
    tx.execute(
        "INSERT INTO pr_reviews (pr_id, review_id, reviewer_login, state, commit_sha, submitted_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (pr_id, review_id) DO UPDATE SET
           state = CASE WHEN pr_reviews.state = 'dismissed' THEN 'dismissed' ELSE excluded.state END,
           commit_sha = coalesce(excluded.commit_sha, pr_reviews.commit_sha),
           submitted_at_ms = coalesce(excluded.submitted_at_ms, pr_reviews.submitted_at_ms)",
        params![
            pr_id,
            review.id,
            review.user.as_ref().and_then(|u| u.login.as_deref()).unwrap_or(""),
            state,
            review.commit_id.as_deref().map(str::to_ascii_lowercase),
            payload::time_ms(review.submitted_at.as_deref()),
        ],
    )?;
    tx.execute(
        "UPDATE pull_requests SET
           review_decision = (
             WITH decisive AS (
               SELECT state, row_number() OVER (PARTITION BY reviewer_login
                 ORDER BY coalesce(submitted_at_ms, 0) DESC, review_id DESC) AS n
               FROM pr_reviews WHERE pr_id = ?1 AND state IN ('approved', 'changes_requested', 'dismissed'))
             SELECT CASE
               WHEN sum(state = 'changes_requested') > 0 THEN 'changes_requested'
               WHEN sum(state = 'approved') > 0 THEN 'approved'
               WHEN (SELECT count(*) FROM pr_reviews WHERE pr_id = ?1 AND state = 'commented') > 0 THEN 'commented'
               ELSE NULL END
             FROM decisive WHERE n = 1),
           review_rounds = (SELECT count(DISTINCT coalesce(commit_sha, review_id)) FROM pr_reviews
             WHERE pr_id = ?1 AND state <> 'pending')
         WHERE id = ?1",
        [pr_id],
    )?;
    Ok(())
}
