//! Deletion requests: a person asks for their data to be deleted (or an operator asks
//! for them), and the runner ([`runner`], `sightline run-deletions`, the server every
//! 6 hours) removes their sessions, events, transcripts, index documents, feedback and
//! session scores, then records completion. Retention ([`retention`], `sweep-retention`)
//! removes raw events past their owner's retention with the same means.
//!
//! Invariants: a person has at most one open request (a unique partial index), and
//! asking again returns it unchanged, so [`request`] is idempotent; the request and
//! its `DELETION_REQUESTED` audit row commit together, as do completion and
//! `DELETION_COMPLETED`. The user row and the audit log are kept: the account stays,
//! and the record of who read the data outlives the data.

pub mod retention;
pub mod retention_preview;
pub mod runner;
pub mod server;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::audit::{self, Action, Entry};
use crate::db::DbError;

/// `requested_by` when an operator asked with `sightline deletion request`: the CLI
/// acts as no signed-in user.
pub const OPERATOR: &str = "operator";

/// A request as its subject sees it (`GET /api/me/deletion`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeletionRequest {
    pub id: String,
    pub user_id: String,
    /// The user id of who asked, or [`OPERATOR`].
    pub requested_by: String,
    pub requested_at_ms: i64,
    /// When a runner first worked on it.
    pub started_at_ms: Option<i64>,
    pub completed_at_ms: Option<i64>,
    pub sessions_deleted: i64,
    pub events_deleted: i64,
    /// `pending`, `running` (started, not finished: a run stopped or is under way) or
    /// `completed`.
    pub status: &'static str,
}

impl DeletionRequest {
    pub fn is_completed(&self) -> bool {
        self.completed_at_ms.is_some()
    }
}

const SELECT: &str = "SELECT id, user_id, requested_by, requested_at_ms, started_at_ms, completed_at_ms,
        sessions_deleted, events_deleted
    FROM deletion_requests";

fn read_request(row: &rusqlite::Row<'_>) -> rusqlite::Result<DeletionRequest> {
    let started_at_ms: Option<i64> = row.get(4)?;
    let completed_at_ms: Option<i64> = row.get(5)?;
    let status = match (started_at_ms, completed_at_ms) {
        (_, Some(_)) => "completed",
        (Some(_), None) => "running",
        (None, None) => "pending",
    };
    Ok(DeletionRequest {
        id: row.get(0)?,
        user_id: row.get(1)?,
        requested_by: row.get(2)?,
        requested_at_ms: row.get(3)?,
        started_at_ms,
        completed_at_ms,
        sessions_deleted: row.get(6)?,
        events_deleted: row.get(7)?,
        status,
    })
}

pub fn by_id(conn: &Connection, id: &str) -> Result<Option<DeletionRequest>, DbError> {
    Ok(conn.query_row(&format!("{SELECT} WHERE id = ?1"), [id], read_request).optional()?)
}

/// Asks for `user_id`'s data to be deleted. An open request for the user is returned as
/// it is (no second request, no second audit row). Run it in a write transaction: the
/// request and its audit row must commit together.
pub fn request(conn: &Connection, user_id: &str, requested_by: &str, now_ms: i64) -> Result<DeletionRequest, DbError> {
    if let Some(open) = open_for_user(conn, user_id)? {
        return Ok(open);
    }
    let id = uuid::Uuid::now_v7().to_string();
    // The partial unique index settles a race with another process asking at once.
    let inserted = conn.execute(
        "INSERT INTO deletion_requests (id, user_id, requested_by, requested_at_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (user_id) WHERE completed_at_ms IS NULL DO NOTHING",
        params![id, user_id, requested_by, now_ms],
    )?;
    if inserted == 0 {
        return open_for_user(conn, user_id)?.ok_or_else(|| missing(user_id));
    }
    audit::record(
        conn,
        &Entry {
            actor_id: Some(requested_by),
            action: Action::DeletionRequested,
            subject_user_id: Some(user_id),
            target: Some(&id),
            detail: serde_json::json!({ "request_id": id }),
        },
        now_ms,
    )?;
    by_id(conn, &id)?.ok_or_else(|| missing(user_id))
}

fn missing(user_id: &str) -> DbError {
    DbError::Io {
        context: format!("the deletion request of user {user_id} vanished while it was made"),
        source: std::io::Error::other("no row"),
    }
}

fn open_for_user(conn: &Connection, user_id: &str) -> Result<Option<DeletionRequest>, DbError> {
    Ok(conn
        .query_row(&format!("{SELECT} WHERE user_id = ?1 AND completed_at_ms IS NULL"), [user_id], read_request)
        .optional()?)
}

/// Requests not yet completed, oldest first: the runner's work.
/// Deletion requests of a period, for the governance report: made and completed in
/// `[from_ms, to_ms)`, open now, and the sessions the completed ones removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deletions {
    pub requested: i64,
    pub completed: i64,
    pub open: i64,
    pub sessions_deleted: i64,
}

pub fn counts_in(conn: &Connection, from_ms: i64, to_ms: i64) -> Result<Deletions, DbError> {
    Ok(conn.query_row(
        "SELECT count(*) FILTER (WHERE requested_at_ms >= ?1 AND requested_at_ms < ?2),
                count(*) FILTER (WHERE completed_at_ms >= ?1 AND completed_at_ms < ?2),
                count(*) FILTER (WHERE completed_at_ms IS NULL),
                coalesce(sum(sessions_deleted) FILTER (WHERE completed_at_ms >= ?1 AND completed_at_ms < ?2), 0)
         FROM deletion_requests",
        params![from_ms, to_ms],
        |row| {
            Ok(Deletions {
                requested: row.get(0)?,
                completed: row.get(1)?,
                open: row.get(2)?,
                sessions_deleted: row.get(3)?,
            })
        },
    )?)
}

pub fn open_requests(conn: &Connection) -> Result<Vec<DeletionRequest>, DbError> {
    let mut stmt =
        conn.prepare(&format!("{SELECT} WHERE completed_at_ms IS NULL ORDER BY requested_at_ms, id LIMIT 1000"))?;
    let rows = stmt.query_map([], read_request)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The user's latest request, open or completed, so they can see where it stands.
pub fn by_user(conn: &Connection, user_id: &str) -> Result<Option<DeletionRequest>, DbError> {
    Ok(conn
        .query_row(
            &format!("{SELECT} WHERE user_id = ?1 ORDER BY requested_at_ms DESC, id DESC LIMIT 1"),
            [user_id],
            read_request,
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three requests: one made and completed in the period (4 sessions), one made
    /// before it and still open, one made in it and completed after it.
    #[test]
    fn the_governance_counts_of_a_period() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        for (id, requested, completed, sessions) in
            [("a", 150, Some(180), 4), ("b", 50, None, 0), ("c", 190, Some(250), 7)]
        {
            conn.execute(
                "INSERT INTO users (id, email, name, created_at_ms) VALUES (?1, ?1 || '@example.com', ?1, 0)",
                [id],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO deletion_requests (id, user_id, requested_by, requested_at_ms, completed_at_ms, sessions_deleted)
                 VALUES (?1, ?1, ?1, ?2, ?3, ?4)",
                params![id, requested, completed, sessions],
            )
            .unwrap();
        }
        let counts = counts_in(&conn, 100, 200).unwrap();
        assert_eq!(counts, Deletions { requested: 2, completed: 1, open: 1, sessions_deleted: 4 });
    }
}
