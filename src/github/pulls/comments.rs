//! The bot comment's bookkeeping on `pull_requests`: which comments are due, which are
//! posted, and whether they showed session figures.

use rusqlite::{Connection, Transaction, params};

use crate::db::DbError;

/// Marks pull requests whose bot comment should be posted or edited.
pub fn mark_comment_due(conn: &Connection, pr_ids: &[String]) -> Result<(), DbError> {
    let mut mark = conn.prepare_cached("UPDATE pull_requests SET comment_due = 1 WHERE id = ?1")?;
    for pr in pr_ids {
        mark.execute([pr])?;
    }
    Ok(())
}

/// A person's visibility changed: every posted comment with a session of theirs is due
/// again (to hide or show their figures).
pub fn mark_person_comments_due(conn: &Connection, user_id: &str) -> Result<usize, DbError> {
    Ok(conn.execute(
        "UPDATE pull_requests SET comment_due = 1 WHERE bot_comment_id IS NOT NULL AND id IN (
           SELECT l.pr_id FROM session_pr_links l JOIN sessions s ON s.id = l.session_id WHERE s.user_id = ?1)",
        [user_id],
    )?)
}

/// Pull requests whose bot comment is due, oldest merge first.
pub fn comments_due(conn: &Connection, limit: usize) -> Result<Vec<String>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM pull_requests WHERE comment_due = 1 ORDER BY coalesce(merged_at_ms, 0), id LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The bot comment is up to date: its id (when one was posted) and whether it showed
/// session figures.
pub fn comment_done(
    tx: &Transaction<'_>,
    pr_id: &str,
    comment_id: Option<i64>,
    consent: Option<bool>,
) -> Result<(), DbError> {
    tx.execute(
        "UPDATE pull_requests SET comment_due = 0, bot_comment_id = coalesce(?2, bot_comment_id),
           comment_consent = coalesce(?3, comment_consent) WHERE id = ?1",
        params![pr_id, comment_id, consent],
    )?;
    Ok(())
}

/// Pull requests with a posted comment, and whether it showed session figures.
pub fn commented(conn: &Connection) -> Result<Vec<(String, Option<bool>)>, DbError> {
    let mut stmt = conn.prepare("SELECT id, comment_consent FROM pull_requests WHERE bot_comment_id IS NOT NULL")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Forgets every due comment (the App is not configured: nothing would post them, and
/// configuring it later must not comment on every old pull request at once).
pub fn clear_comments_due(conn: &Connection) -> Result<usize, DbError> {
    Ok(conn.execute("UPDATE pull_requests SET comment_due = 0 WHERE comment_due = 1", [])?)
}
