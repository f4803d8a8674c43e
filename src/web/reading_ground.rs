//! The banner on a session or transcript page read by someone other than its owner: on
//! what ground this person reads it (their team lead's drill-in, or an access grant with
//! its approver, end and justification), and that the read is in the audit log the
//! owner sees under "Who read my data".
//!
//! Invariant: the owner reading their own session gets no banner; the ground is the one
//! `sessions::read::authorize` decided and audited, never recomputed here.

use rusqlite::Connection;

use crate::access::grants;
use crate::auth::users;
use crate::db::DbError;
use crate::sessions::read::Basis;

/// What the banner says, or `None` for the owner.
pub fn describe(conn: &Connection, basis: &Basis, owner_id: &str) -> Result<Option<String>, DbError> {
    let owner = match users::by_id(conn, owner_id)? {
        Some(user) => format!("{} <{}>", user.name, user.email),
        None => "its owner".to_string(),
    };
    let ground = match basis {
        Basis::Own => return Ok(None),
        Basis::EvalEngineer => {
            format!(
                "You are reading an evaluation run of {owner} as an eval engineer: a harness linked it to its cell."
            )
        }
        Basis::TeamLead => {
            format!("You are reading the work of {owner} as their team lead: they let their team leads drill in.")
        }
        Basis::Grant { grant_id } => match grants::by_id(conn, grant_id)? {
            Some(grant) => {
                let approver = match grant.decided_by.as_deref() {
                    Some(id) => users::by_id(conn, id)?.map_or_else(|| id.to_string(), |user| user.email),
                    None => "an administrator".to_string(),
                };
                format!(
                    "You are reading the work of {owner} under access grant {} ({}), approved by {approver}, until {}, for: “{}”.",
                    grant.id,
                    grant.session_id.as_deref().map_or("all their sessions".to_string(), |s| format!("session {s}")),
                    grant.expires_at_ms.map(crate::model::instants::exact_utc).unwrap_or_default(),
                    grant.justification
                )
            }
            None => format!("You are reading the work of {owner} under access grant {grant_id}."),
        },
    };
    Ok(Some(format!("{ground} This read is recorded in the audit log, and they see it under Who read my data.")))
}
