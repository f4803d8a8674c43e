//! Team drill-in: which members of a team (and the teams below it) a caller may see one
//! by one — their sessions' metadata, pull requests and own figures — and on what basis.
//! The same decision as `sessions::read::authorize` makes for one session, for a list.
//!
//! Invariants: the caller themself always; otherwise never for `VIEWER_AGGREGATE`; else
//! an approved, unexpired grant on the whole person (scope `USER`) by the caller, or the
//! caller leading a team the member is in (directly or below) with the member's
//! `team_drill_in` on. A member's name is given only where their `named_in_team_views`
//! is on or the caller holds a grant on them. The caller records the audit row
//! (`MEMBER_VIEWED`) for every member other than themself whose data it shows.

use rusqlite::{Connection, params};

use super::roles::OrgRole;
use crate::db::DbError;

/// Why a member may be seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    Own,
    Grant,
    TeamLead,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Own => "own",
            Basis::Grant => "grant",
            Basis::TeamLead => "team_lead",
        }
    }
}

/// A member the caller may see one by one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Visible {
    pub user_id: String,
    pub name: Option<String>,
    pub basis: Basis,
}

/// The members of `team_id` and the teams below it whom the caller may see one by one,
/// by name (unnamed last).
pub fn visible_members(
    conn: &Connection,
    caller_id: &str,
    role: OrgRole,
    team_id: &str,
    now_ms: i64,
) -> Result<Vec<Visible>, DbError> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE tree(id) AS (SELECT ?1 UNION SELECT t.id FROM teams t JOIN tree ON t.parent_id = tree.id)
         SELECT DISTINCT u.id, u.name, coalesce(v.named_in_team_views, 1), coalesce(v.team_drill_in, 1)
         FROM team_members m JOIN tree ON m.team_id = tree.id JOIN users u ON u.id = m.user_id
         LEFT JOIN visibility_policies v ON v.user_id = u.id
         WHERE u.disabled_at_ms IS NULL",
    )?;
    let members: Vec<(String, String, bool, bool)> = stmt
        .query_map([team_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))?
        .collect::<Result<_, _>>()?;
    let mut visible = Vec::new();
    for (user_id, name, named, drill_in) in members {
        let basis = if user_id == caller_id {
            Some(Basis::Own)
        } else if !role.may_reach_individual_sessions() {
            None
        } else if role.may_request_grants() && has_user_grant(conn, caller_id, &user_id, now_ms)? {
            Some(Basis::Grant)
        } else if drill_in && super::teams::leads_over(conn, caller_id, &user_id)? {
            Some(Basis::TeamLead)
        } else {
            None
        };
        if let Some(basis) = basis {
            let name = (named || basis != Basis::TeamLead).then_some(name);
            visible.push(Visible { user_id, name, basis });
        }
    }
    visible.sort_by(|a, b| a.name.is_none().cmp(&b.name.is_none()).then_with(|| a.name.cmp(&b.name)));
    Ok(visible)
}

/// An approved, unexpired grant by `grantee_id` on the whole of `subject_id`'s data.
fn has_user_grant(conn: &Connection, grantee_id: &str, subject_id: &str, now_ms: i64) -> Result<bool, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM access_grants WHERE requester_id = ?1 AND subject_id = ?2
                        AND scope = 'USER' AND status = 'APPROVED' AND expires_at_ms > ?3)",
    )?;
    Ok(stmt.query_row(params![grantee_id, subject_id, now_ms], |row| row.get(0))?)
}

/// The sessions of other people whose transcript the caller could open and whose owner
/// shared it (the session's switch, else the owner's `share_transcripts`): the scope of
/// `/org/search` beside the caller's own. The same rules as `sessions::read::authorize`
/// for a transcript: never for `VIEWER_AGGREGATE`; a grant (the person's, or this
/// session's) held by a role that may request grants, or team lead over the owner with
/// their `team_drill_in` on. Each hit shown is still read through `authorize`, which
/// audits it.
pub fn shared_transcript_sessions(
    conn: &Connection,
    caller_id: &str,
    role: OrgRole,
    now_ms: i64,
) -> Result<Vec<String>, DbError> {
    if !role.may_reach_individual_sessions() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE led(id) AS (
             SELECT team_id FROM team_members WHERE user_id = ?1 AND team_role = 'lead'
             UNION SELECT t.id FROM teams t JOIN led ON t.parent_id = led.id),
         led_people(user_id) AS (SELECT DISTINCT m.user_id FROM team_members m JOIN led ON m.team_id = led.id)
         SELECT s.id FROM sessions s LEFT JOIN visibility_policies v ON v.user_id = s.user_id
         WHERE s.user_id <> ?1 AND s.transcript_path IS NOT NULL
           AND coalesce(s.transcript_shared, v.share_transcripts, 0) = 1
           AND ((coalesce(v.team_drill_in, 1) = 1 AND s.user_id IN led_people)
                OR (?3 AND EXISTS (SELECT 1 FROM access_grants g
                                   WHERE g.requester_id = ?1 AND g.subject_id = s.user_id AND g.status = 'APPROVED'
                                     AND g.expires_at_ms > ?2 AND (g.scope = 'USER' OR g.session_id = s.id))))",
    )?;
    let ids = stmt.query_map(params![caller_id, now_ms, role.may_request_grants()], |row| row.get(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}
