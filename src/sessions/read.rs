//! The audited read: the one place that decides whether a person may read a
//! session's data, and the proof type every session, event and transcript read takes.
//!
//! Invariants:
//! - [`SessionRead`] has private fields and no public constructor: only [`own`],
//!   [`own_by_agent_key`] (the caller's own sessions, which need no audit) and
//!   [`authorize`] make one. The data functions (`sessions::views::session_view`,
//!   `transcripts::store::read_for`) take `&SessionRead`, and the event store's
//!   (`events::reads::session_events_after`) a `SessionScope` that only `SessionRead`
//!   implements, so a read of another person's data without going through [`authorize`]
//!   does not compile (see the `compile_fail` examples below).
//! - [`authorize`] runs in the caller's write transaction and writes the audit row
//!   (`GRANT_USED`, or `SESSION_READ` / `TRANSCRIPT_READ` for a team lead) before it
//!   returns the proof: if the audit row does not commit, the proof is never used.
//! - Order of the decision: owner → role (`VIEWER_AGGREGATE` never reaches an
//!   individual session) → the owner's sharing of the transcript (the session's own
//!   switch, else their `share_transcripts` flag, gates every transcript read by someone
//!   else) → an active grant (expiry decided now)
//!   → team lead with the owner's `team_drill_in` on; for `EVAL_ENGINEER`, first an `EVAL`
//!   session linked to an evaluation cell (with its transcript unless its owner marked it
//!   private), then the rules as for a member. Anything else is "not found",
//!   indistinguishable from a session that does not exist.
//!
//! Outside this module a proof cannot be built:
//!
//! ```compile_fail,E0451
//! let forged = sightline::sessions::read::SessionRead {
//!     session_id: "s".into(),
//!     owner_id: "someone-else".into(),
//!     agent_type: sightline::model::AgentType::ClaudeCode,
//!     agent_session_id: "a".into(),
//!     reading: sightline::sessions::read::Reading::Transcript,
//! };
//! ```
//!
//! and a session cannot be read without one:
//!
//! ```compile_fail,E0308
//! fn read(conn: &rusqlite::Connection) {
//!     let _ = sightline::sessions::views::session_view(conn, "another-users-session-id");
//! }
//! ```

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::access::roles::OrgRole;
use crate::access::{grants, policies, teams};
use crate::audit::{self, Action, Entry};
use crate::db::DbError;
use crate::model::AgentType;

/// What the reader wants: the session (its row and events) or also its transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    Session,
    Transcript,
}

/// Proof that the holder may read one session's data, and that the read is audited
/// if it is not their own.
#[derive(Debug)]
pub struct SessionRead {
    session_id: String,
    owner_id: String,
    agent_type: AgentType,
    agent_session_id: String,
    reading: Reading,
}

impl SessionRead {
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn owner_id(&self) -> &str {
        &self.owner_id
    }

    pub fn agent_type(&self) -> AgentType {
        self.agent_type
    }

    pub fn agent_session_id(&self) -> &str {
        &self.agent_session_id
    }

    /// Whether this proof covers the transcript, not just the session.
    pub fn covers_transcript(&self) -> bool {
        self.reading == Reading::Transcript
    }
}

/// The event store reads a session's events only for a proof (`events::reads`).
impl crate::events::reads::SessionScope for SessionRead {
    fn owner_id(&self) -> &str {
        SessionRead::owner_id(self)
    }

    fn agent_type(&self) -> AgentType {
        SessionRead::agent_type(self)
    }

    fn agent_session_id(&self) -> &str {
        SessionRead::agent_session_id(self)
    }
}

/// Who is reading.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    pub user_id: &'a str,
    pub role: OrgRole,
}

/// Why a read was allowed (for the audit row and the response).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "basis", rename_all = "snake_case")]
pub enum Basis {
    Own,
    Grant {
        grant_id: String,
    },
    TeamLead,
    /// An eval engineer reading an evaluation run a harness linked to its cell.
    EvalEngineer,
}

struct SessionKey {
    owner_id: String,
    agent_type: AgentType,
    agent_session_id: String,
    /// The owner's switch for this session's transcript; `None` follows their flag.
    transcript_shared: Option<bool>,
    /// An `EVAL` run linked to an evaluation cell.
    linked_eval_run: bool,
    /// Linked by a harness's token (fixed to EVAL), not by a person's or a collector's.
    linked_by_harness: bool,
}

fn key_of(conn: &Connection, session_id: &str) -> Result<Option<SessionKey>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT user_id, agent_type, agent_session_id, transcript_shared,
                run_kind = 'EVAL' AND eval_cell_id IS NOT NULL, eval_harness
         FROM sessions WHERE id = ?1",
    )?;
    let row = stmt
        .query_row([session_id], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, Option<bool>>(3)?,
                row.get::<_, bool>(4)?,
                row.get::<_, bool>(5)?,
            ))
        })
        .optional()?;
    Ok(row.and_then(|(owner_id, agent, agent_session_id, transcript_shared, linked_eval_run, linked_by_harness)| {
        AgentType::parse(&agent).map(|agent_type| SessionKey {
            owner_id,
            agent_type,
            agent_session_id,
            transcript_shared,
            linked_eval_run,
            linked_by_harness,
        })
    }))
}

fn proof(session_id: &str, key: SessionKey, reading: Reading) -> SessionRead {
    SessionRead {
        session_id: session_id.to_string(),
        owner_id: key.owner_id,
        agent_type: key.agent_type,
        agent_session_id: key.agent_session_id,
        reading,
    }
}

/// The reader's own session, if it is theirs: no audit (reading your own data is
/// not privileged). Runs on a read connection.
pub fn own(
    conn: &Connection,
    user_id: &str,
    session_id: &str,
    reading: Reading,
) -> Result<Option<SessionRead>, DbError> {
    Ok(key_of(conn, session_id)?.filter(|key| key.owner_id == user_id).map(|key| proof(session_id, key, reading)))
}

/// The reader's own session named by the agent's key (the hook CLI's `status`).
pub fn own_by_agent_key(
    conn: &Connection,
    user_id: &str,
    agent: AgentType,
    agent_session_id: &str,
) -> Result<Option<SessionRead>, DbError> {
    let id = super::views::own_session_id(conn, user_id, agent, agent_session_id)?;
    Ok(id.map(|session_id| SessionRead {
        session_id,
        owner_id: user_id.to_string(),
        agent_type: agent,
        agent_session_id: agent_session_id.to_string(),
        reading: Reading::Session,
    }))
}

/// The decision for any reader and any session, with its audit row. Must run inside
/// a write transaction (`conn` is the transaction): the row and the decision commit
/// together. `None` means "not found" to the reader.
pub fn authorize(
    conn: &Connection,
    reader: Reader<'_>,
    session_id: &str,
    reading: Reading,
    now_ms: i64,
) -> Result<Option<(SessionRead, Basis)>, DbError> {
    let Some(key) = key_of(conn, session_id)? else { return Ok(None) };
    if key.owner_id == reader.user_id {
        return Ok(Some((proof(session_id, key, reading), Basis::Own)));
    }
    if !reader.role.may_reach_individual_sessions() {
        return Ok(None);
    }
    if reader.role.reads_eval_runs() && eval_readable(&key, reading) {
        // An evaluation run is the harness's, not a person's work: the eval engineer reads
        // it and its transcript (a harness's task), audited. Anything else of anyone's
        // follows the rules below, as for a member.
        let action = if reading == Reading::Transcript { Action::TranscriptRead } else { Action::SessionRead };
        audit_read(conn, reader, &key, session_id, reading, &Basis::EvalEngineer, action, now_ms)?;
        return Ok(Some((proof(session_id, key, reading), Basis::EvalEngineer)));
    }
    let policy = policies::get(conn, &key.owner_id)?;
    if reading == Reading::Transcript && !key.transcript_shared.unwrap_or(policy.share_transcripts) {
        return Ok(None);
    }
    let grant = if reader.role.may_request_grants() {
        grants::active_for(conn, reader.user_id, &key.owner_id, session_id, now_ms)?
    } else {
        None
    };
    let (basis, action) = match grant {
        Some(grant_id) => (Basis::Grant { grant_id }, Action::GrantUsed),
        None if policy.team_drill_in && teams::leads_over(conn, reader.user_id, &key.owner_id)? => {
            (Basis::TeamLead, if reading == Reading::Transcript { Action::TranscriptRead } else { Action::SessionRead })
        }
        None => return Ok(None),
    };
    audit_read(conn, reader, &key, session_id, reading, &basis, action, now_ms)?;
    Ok(Some((proof(session_id, key, reading), basis)))
}

/// The eval engineer's read of evaluation runs linked to cells (`eval_links`): each session
/// it may read with its proof, and one audit row per owner naming every session read.
/// Anyone else, or a session that is not a linked `EVAL` run, gets nothing. Runs in the
/// caller's write transaction, like [`authorize`].
pub fn authorize_eval(
    conn: &Connection,
    reader: Reader<'_>,
    sessions: Vec<super::eval_links::LinkedSession>,
    reading: Reading,
    now_ms: i64,
) -> Result<Vec<(SessionRead, super::eval_links::LinkedSession)>, DbError> {
    if !reader.role.reads_eval_runs() {
        return Ok(Vec::new());
    }
    let mut proofs = Vec::new();
    let mut by_owner: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for linked in sessions {
        // Decided on the row as stored now, not on what the caller was handed.
        let Some(key) = key_of(conn, &linked.id)? else { continue };
        if !eval_readable(&key, reading) {
            continue;
        }
        if key.owner_id != reader.user_id {
            by_owner.entry(key.owner_id.clone()).or_default().push(linked.id.clone());
        }
        proofs.push((proof(&linked.id, key, reading), linked));
    }
    let action = if reading == Reading::Transcript { Action::TranscriptRead } else { Action::SessionRead };
    for (owner_id, ids) in by_owner {
        audit::record(
            conn,
            &Entry {
                actor_id: Some(reader.user_id),
                action,
                subject_user_id: Some(&owner_id),
                target: Some(&ids[0]),
                detail: serde_json::json!({ "reading": reading, "basis": Basis::EvalEngineer, "sessions": ids }),
            },
            now_ms,
        )?;
    }
    Ok(proofs)
}

/// Whether an eval engineer reads this session: an `EVAL` run linked to a cell by a
/// harness's token, or linked otherwise (before links took a harness's token) and shared
/// by its owner; and for its transcript, one its owner has not marked private (the owner
/// keeps the last word on their own conversation).
fn eval_readable(key: &SessionKey, reading: Reading) -> bool {
    let linked = key.linked_eval_run && (key.linked_by_harness || key.transcript_shared == Some(true));
    linked && (reading == Reading::Session || key.transcript_shared != Some(false))
}

#[allow(clippy::too_many_arguments)]
fn audit_read(
    conn: &Connection,
    reader: Reader<'_>,
    key: &SessionKey,
    session_id: &str,
    reading: Reading,
    basis: &Basis,
    action: Action,
    now_ms: i64,
) -> Result<(), DbError> {
    audit::record(
        conn,
        &Entry {
            actor_id: Some(reader.user_id),
            action,
            subject_user_id: Some(&key.owner_id),
            target: Some(session_id),
            detail: serde_json::json!({ "reading": reading, "basis": basis }),
        },
        now_ms,
    )?;
    Ok(())
}
