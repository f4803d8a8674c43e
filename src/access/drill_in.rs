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

/// The team `?1` and every team below it.
const TREE: &str =
    "WITH RECURSIVE tree(id) AS (SELECT ?1 UNION SELECT t.id FROM teams t JOIN tree ON t.parent_id = tree.id)";
/// The people in a team that `?2` leads, directly or below (the reach `teams::leads_over`
/// decides for one person), as the CTEs `led` and `led_people`; `sessions::sharing` joins
/// it to find the shared transcripts a lead may search.
pub const LED: &str = "led(id) AS (
        SELECT team_id FROM team_members WHERE user_id = ?2 AND team_role = 'lead'
        UNION SELECT t.id FROM teams t JOIN led ON t.parent_id = led.id),
     led_people(user_id) AS (SELECT DISTINCT m.user_id FROM team_members m JOIN led ON m.team_id = led.id)";
/// The enabled members of `tree`, as `u`, with their policy `v`.
const MEMBERS: &str = "team_members m JOIN tree ON m.team_id = tree.id JOIN users u ON u.id = m.user_id
         LEFT JOIN visibility_policies v ON v.user_id = u.id WHERE u.disabled_at_ms IS NULL";

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
    if !role.may_reach_individual_sessions() {
        // Only the caller themself, if a member.
        let mut stmt =
            conn.prepare_cached(&format!("{TREE} SELECT DISTINCT u.id, u.name FROM {MEMBERS} AND u.id = ?2"))?;
        let own = stmt.query_map(params![team_id, caller_id], |row| {
            Ok(Visible { user_id: row.get(0)?, name: Some(row.get(1)?), basis: Basis::Own })
        })?;
        return Ok(own.collect::<Result<_, _>>()?);
    }
    // One query for every member: the grant and the lead's reach are decided in SQL, the
    // same rules as `sessions::read::authorize`, rather than a query per member.
    let sql = format!(
        "{TREE}, {LED}
         SELECT DISTINCT u.id, u.name, coalesce(v.named_in_team_views, 1),
                ?3 AND EXISTS (SELECT 1 FROM access_grants g WHERE g.requester_id = ?2 AND g.subject_id = u.id
                               AND g.scope = 'USER' AND g.status = 'APPROVED' AND g.expires_at_ms > ?4),
                coalesce(v.team_drill_in, 1) = 1 AND u.id IN (SELECT user_id FROM led_people)
         FROM {MEMBERS}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let members: Vec<(String, String, bool, bool, bool)> = stmt
        .query_map(params![team_id, caller_id, role.may_request_grants(), now_ms], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut visible = Vec::new();
    for (user_id, name, named, granted, led) in members {
        let basis = if user_id == caller_id {
            Some(Basis::Own)
        } else if granted {
            Some(Basis::Grant)
        } else if led {
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
