//! Access grants: an investigator or administrator asks for time-boxed access to one
//! person's sessions (scope `USER`) or to one session (`SESSION`), with a
//! justification; a different administrator approves or denies it.
//!
//! Invariants: a grant starts at approval and lasts its requested duration (at most
//! [`MAX_DURATION_MS`]); expiry is decided at the moment of each read
//! ([`active_for`] compares with the caller's `now`), so no job is needed and a grant
//! one millisecond past its end grants nothing; the approver is never the requester
//! nor the subject; every step writes its `GRANT_*` audit row in the same transaction.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::roles::OrgRole;
use crate::audit::{self, Action, Entry};
use crate::db::DbError;

pub const MIN_DURATION_MS: i64 = 15 * 60_000;
/// Three days: long enough for an investigation, short enough to need renewing.
pub const MAX_DURATION_MS: i64 = 72 * 3_600_000;
const MIN_JUSTIFICATION_CHARS: usize = 10;
const MAX_JUSTIFICATION_CHARS: usize = 2000;

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Grant {
    pub id: String,
    pub requester_id: String,
    pub requester_email: String,
    pub subject_id: String,
    pub subject_email: String,
    pub scope: String,
    pub session_id: Option<String>,
    pub justification: String,
    pub duration_ms: i64,
    pub status: String,
    pub requested_at_ms: i64,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<i64>,
    pub decision_note: Option<String>,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
}

impl Grant {
    /// Whether `actor` may see whose data the grant opens. A request on one session names
    /// the session, not its owner: the requester learns the owner only once an
    /// administrator approves (approval sets the expiry), so a request cannot be used to
    /// find out whose a session is. Deciders always see the subject.
    pub fn names_subject_to(&self, actor: Actor<'_>) -> bool {
        actor.role.may_decide_grants() || self.session_id.is_none() || self.expires_at_ms.is_some()
    }

    /// APPROVED and not yet expired at `now_ms`.
    pub fn is_active(&self, now_ms: i64) -> bool {
        self.status == "APPROVED" && self.expires_at_ms.is_some_and(|end| now_ms < end)
    }
}

/// The person acting on a grant: their id and org role.
#[derive(Clone, Copy, Debug)]
pub struct Actor<'a> {
    pub user_id: &'a str,
    pub role: OrgRole,
}

#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("only investigators and administrators may request access")]
    MayNotRequest,
    #[error("only administrators may approve, deny or revoke access")]
    MayNotDecide,
    #[error("you cannot request access to your own data")]
    OwnData,
    #[error("a grant must be decided by an administrator other than its requester and its subject")]
    SameAdmin,
    #[error("justification must be {MIN_JUSTIFICATION_CHARS} to {MAX_JUSTIFICATION_CHARS} characters")]
    Justification,
    #[error("duration must be between 15 minutes and 72 hours")]
    Duration,
    #[error("no such user")]
    NoSubject,
    #[error("session {0} does not belong to the subject")]
    NoSession(String),
    #[error("scope must be USER or SESSION (SESSION needs session_id)")]
    Scope,
    #[error("no such grant")]
    NotFound,
    #[error("grant is {0}, so it cannot be changed that way")]
    WrongState(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<rusqlite::Error> for GrantError {
    fn from(err: rusqlite::Error) -> Self {
        GrantError::Db(DbError::Sqlite(err))
    }
}

/// What is asked for.
pub struct Request<'a> {
    pub subject_id: &'a str,
    /// `None` for the person's sessions, `Some` for one session.
    pub session_id: Option<&'a str>,
    pub justification: &'a str,
    pub duration_ms: i64,
}

const SELECT: &str = "SELECT g.id, g.requester_id, r.email, g.subject_id, s.email, g.scope, g.session_id,
        g.justification, g.duration_ms, g.status, g.requested_at_ms, g.decided_by, g.decided_at_ms,
        g.decision_note, g.expires_at_ms, g.revoked_at_ms
    FROM access_grants g JOIN users r ON r.id = g.requester_id JOIN users s ON s.id = g.subject_id";

fn read_grant(row: &rusqlite::Row<'_>) -> rusqlite::Result<Grant> {
    Ok(Grant {
        id: row.get(0)?,
        requester_id: row.get(1)?,
        requester_email: row.get(2)?,
        subject_id: row.get(3)?,
        subject_email: row.get(4)?,
        scope: row.get(5)?,
        session_id: row.get(6)?,
        justification: row.get(7)?,
        duration_ms: row.get(8)?,
        status: row.get(9)?,
        requested_at_ms: row.get(10)?,
        decided_by: row.get(11)?,
        decided_at_ms: row.get(12)?,
        decision_note: row.get(13)?,
        expires_at_ms: row.get(14)?,
        revoked_at_ms: row.get(15)?,
    })
}

pub fn by_id(conn: &Connection, id: &str) -> Result<Option<Grant>, DbError> {
    Ok(conn.query_row(&format!("{SELECT} WHERE g.id = ?1"), [id], read_grant).optional()?)
}

fn audit_grant(conn: &Connection, actor: &str, action: Action, grant: &Grant, now_ms: i64) -> Result<(), DbError> {
    audit::record(
        conn,
        &Entry {
            actor_id: Some(actor),
            action,
            subject_user_id: Some(&grant.subject_id),
            target: Some(&grant.id),
            detail: serde_json::json!({
                "scope": grant.scope,
                "session_id": grant.session_id,
                "justification": grant.justification,
                "duration_ms": grant.duration_ms,
                "expires_at_ms": grant.expires_at_ms,
            }),
        },
        now_ms,
    )?;
    Ok(())
}

/// Whether a session is the person's: answered by `sessions`, which sits above `access`
/// (its reads take grants), so a grant request is handed the question, not the table.
pub type SessionOwnership = fn(&Connection, &str, &str) -> Result<bool, DbError>;

/// Records a request; `is_owned_by(conn, session, subject)` checks a named session.
pub fn request(
    conn: &Connection,
    actor: Actor<'_>,
    ask: &Request<'_>,
    now_ms: i64,
    is_owned_by: SessionOwnership,
) -> Result<Grant, GrantError> {
    if !actor.role.may_request_grants() {
        return Err(GrantError::MayNotRequest);
    }
    if ask.subject_id == actor.user_id {
        return Err(GrantError::OwnData);
    }
    let justification = ask.justification.trim();
    if !(MIN_JUSTIFICATION_CHARS..=MAX_JUSTIFICATION_CHARS).contains(&justification.chars().count()) {
        return Err(GrantError::Justification);
    }
    if !(MIN_DURATION_MS..=MAX_DURATION_MS).contains(&ask.duration_ms) {
        return Err(GrantError::Duration);
    }
    let subject_exists: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM users WHERE id = ?1)", [ask.subject_id], |row| row.get(0))?;
    if !subject_exists {
        return Err(GrantError::NoSubject);
    }
    if let Some(session_id) = ask.session_id
        && !is_owned_by(conn, session_id, ask.subject_id)?
    {
        return Err(GrantError::NoSession(session_id.to_string()));
    }
    let id = uuid::Uuid::now_v7().to_string();
    conn.execute(
        "INSERT INTO access_grants (id, requester_id, subject_id, scope, session_id, justification, duration_ms,
             status, requested_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'REQUESTED', ?8)",
        params![
            id,
            actor.user_id,
            ask.subject_id,
            if ask.session_id.is_some() { "SESSION" } else { "USER" },
            ask.session_id,
            justification,
            ask.duration_ms,
            now_ms
        ],
    )?;
    let grant = by_id(conn, &id)?.ok_or(GrantError::NotFound)?;
    audit_grant(conn, actor.user_id, Action::GrantRequested, &grant, now_ms)?;
    Ok(grant)
}

fn decidable(conn: &Connection, actor: Actor<'_>, grant_id: &str) -> Result<Grant, GrantError> {
    if !actor.role.may_decide_grants() {
        return Err(GrantError::MayNotDecide);
    }
    let grant = by_id(conn, grant_id)?.ok_or(GrantError::NotFound)?;
    if grant.requester_id == actor.user_id || grant.subject_id == actor.user_id {
        return Err(GrantError::SameAdmin);
    }
    if grant.status != "REQUESTED" {
        return Err(GrantError::WrongState(grant.status));
    }
    Ok(grant)
}

/// An administrator's answer to a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The grant runs from now for its requested duration.
    Approve,
    Deny,
}

pub fn decide(
    conn: &Connection,
    actor: Actor<'_>,
    grant_id: &str,
    decision: Decision,
    note: Option<&str>,
    now_ms: i64,
) -> Result<Grant, GrantError> {
    let grant = decidable(conn, actor, grant_id)?;
    let (status, action) = match decision {
        Decision::Approve => ("APPROVED", Action::GrantApproved),
        Decision::Deny => ("DENIED", Action::GrantDenied),
    };
    conn.execute(
        "UPDATE access_grants SET status = ?5, decided_by = ?2, decided_at_ms = ?3, decision_note = ?4,
             expires_at_ms = CASE ?5 WHEN 'APPROVED' THEN ?3 + duration_ms END
         WHERE id = ?1 AND status = 'REQUESTED'",
        params![grant.id, actor.user_id, now_ms, note, status],
    )?;
    let grant = by_id(conn, grant_id)?.ok_or(GrantError::NotFound)?;
    audit_grant(conn, actor.user_id, action, &grant, now_ms)?;
    Ok(grant)
}

/// Ends a requested or approved grant early: an administrator, or the requester
/// withdrawing their own.
pub fn revoke(conn: &Connection, actor: Actor<'_>, grant_id: &str, now_ms: i64) -> Result<Grant, GrantError> {
    let grant = by_id(conn, grant_id)?.ok_or(GrantError::NotFound)?;
    if !actor.role.may_decide_grants() && grant.requester_id != actor.user_id {
        return Err(GrantError::MayNotDecide);
    }
    if grant.status != "APPROVED" && grant.status != "REQUESTED" {
        return Err(GrantError::WrongState(grant.status));
    }
    conn.execute(
        "UPDATE access_grants SET status = 'REVOKED', revoked_by = ?2, revoked_at_ms = ?3 WHERE id = ?1",
        params![grant.id, actor.user_id, now_ms],
    )?;
    let grant = by_id(conn, grant_id)?.ok_or(GrantError::NotFound)?;
    audit_grant(conn, actor.user_id, Action::GrantRevoked, &grant, now_ms)?;
    Ok(grant)
}

/// The id of a grant that lets `grantee_id` read `session_id` of `subject_id` at
/// `now_ms`, if there is one. Expiry is decided here, at the read.
pub fn active_for(
    conn: &Connection,
    grantee_id: &str,
    subject_id: &str,
    session_id: &str,
    now_ms: i64,
) -> Result<Option<String>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM access_grants
         WHERE requester_id = ?1 AND subject_id = ?2 AND status = 'APPROVED' AND expires_at_ms > ?4
           AND (scope = 'USER' OR session_id = ?3)
         ORDER BY expires_at_ms DESC LIMIT 1",
    )?;
    Ok(stmt.query_row(params![grantee_id, subject_id, session_id, now_ms], |row| row.get(0)).optional()?)
}

/// Grants on `subject_id`'s data, newest first (`/me/grants`).
pub fn on_subject(conn: &Connection, subject_id: &str) -> Result<Vec<Grant>, DbError> {
    let mut stmt = conn.prepare(&format!("{SELECT} WHERE g.subject_id = ?1 ORDER BY g.requested_at_ms DESC"))?;
    let rows = stmt.query_map([subject_id], read_grant)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Grants an administrator sees (all) or an investigator sees (their own requests).
pub fn visible_to(conn: &Connection, actor: Actor<'_>) -> Result<Vec<Grant>, DbError> {
    let (filter, value) = if actor.role.may_decide_grants() {
        ("WHERE ?1 IS NOT NULL", actor.user_id)
    } else {
        ("WHERE g.requester_id = ?1", actor.user_id)
    };
    let mut stmt = conn.prepare(&format!("{SELECT} {filter} ORDER BY g.requested_at_ms DESC LIMIT 500"))?;
    let rows = stmt.query_map([value], read_grant)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
