//! The administrator's edits of a team (`/admin/teams`): renaming it, moving it under
//! another, removing a member; and which teams the GitHub team sync owns, whose name,
//! parent and members are the sync's (a change here would be undone at its next run).
//!
//! Invariants: a team cannot be placed under itself or a team below it; a team the sync
//! owns refuses what the sync would undo, naming it; re-exported by `access::teams`.

use rusqlite::{Connection, OptionalExtension, params};

use super::teams::{Team, TeamError, by_slug, member_role};
use crate::db::DbError;

/// When the GitHub team sync last wrote each team it owns, by slug (teams made here
/// are absent).
pub fn synced(conn: &Connection) -> Result<std::collections::HashMap<String, i64>, DbError> {
    let mut stmt = conn.prepare("SELECT slug, synced_at_ms FROM teams WHERE synced_at_ms IS NOT NULL")?;
    let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn refuse_if_synced(conn: &Connection, team: &Team, what: &'static str) -> Result<(), TeamError> {
    let synced: Option<i64> =
        conn.query_row("SELECT synced_at_ms FROM teams WHERE id = ?1", [&team.id], |row| row.get(0))?;
    match synced {
        Some(_) => Err(TeamError::Synced(team.slug.clone(), what)),
        None => Ok(()),
    }
}

/// Renames a team made here; answers its old name.
pub fn rename(conn: &Connection, slug: &str, name: &str) -> Result<String, TeamError> {
    let team = by_slug(conn, slug)?;
    refuse_if_synced(conn, &team, "name")?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(TeamError::BadName);
    }
    conn.execute("UPDATE teams SET name = ?2 WHERE id = ?1", params![team.id, name])?;
    Ok(team.name)
}

/// Places a team made here under `parent_slug` (`None`: at the top); refuses a parent
/// that is the team itself or below it. Answers the old parent's slug.
pub fn set_parent(conn: &Connection, slug: &str, parent_slug: Option<&str>) -> Result<Option<String>, TeamError> {
    let team = by_slug(conn, slug)?;
    refuse_if_synced(conn, &team, "parent")?;
    let parent = parent_slug.map(|parent| by_slug(conn, parent)).transpose()?;
    if let Some(parent) = &parent {
        let below_or_same: bool = conn.query_row(
            "WITH RECURSIVE below(id) AS (SELECT ?1 UNION SELECT t.id FROM teams t JOIN below b ON t.parent_id = b.id)
             SELECT count(*) > 0 FROM below WHERE id = ?2",
            params![team.id, parent.id],
            |row| row.get(0),
        )?;
        if below_or_same {
            return Err(TeamError::Cycle(team.slug, parent.slug.clone()));
        }
    }
    let old: Option<String> = conn
        .query_row("SELECT p.slug FROM teams t JOIN teams p ON p.id = t.parent_id WHERE t.id = ?1", [&team.id], |row| {
            row.get(0)
        })
        .optional()?;
    conn.execute("UPDATE teams SET parent_id = ?2 WHERE id = ?1", params![team.id, parent.map(|p| p.id)])?;
    Ok(old)
}

/// Whether a team's members are kept by the GitHub team sync (adding or removing one
/// here would be undone; a lead's role is ours and is kept by the sync).
pub fn refuse_member_change_if_synced(conn: &Connection, team: &Team) -> Result<(), TeamError> {
    refuse_if_synced(conn, team, "members")
}

/// Removes a person from a team; answers the role they had (`None`: not a member).
pub fn remove_member(conn: &Connection, team_id: &str, user_id: &str) -> Result<Option<String>, DbError> {
    let before = member_role(conn, team_id, user_id)?;
    conn.execute("DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2", params![team_id, user_id])?;
    Ok(before)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::teams::{SyncedTeam, add, by_slug, sync};

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::db::migrations::SCHEMA_SQL).unwrap();
        add(&conn, "eng", "Engineering", None, None, 0).unwrap();
        add(&conn, "web", "Web", Some("eng"), None, 0).unwrap();
        add(&conn, "web-ui", "Web UI", Some("web"), None, 0).unwrap();
        conn
    }

    #[test]
    fn a_team_cannot_be_placed_under_itself_or_below_itself() {
        let conn = conn();
        assert!(matches!(set_parent(&conn, "eng", Some("web-ui")), Err(TeamError::Cycle(..))));
        assert!(matches!(set_parent(&conn, "web", Some("web")), Err(TeamError::Cycle(..))));
        assert_eq!(set_parent(&conn, "web-ui", Some("eng")).unwrap(), Some("web".to_string()));
        assert_eq!(set_parent(&conn, "web-ui", None).unwrap(), Some("eng".to_string()));
        assert_eq!(by_slug(&conn, "web-ui").unwrap().parent_id, None);
    }

    #[test]
    fn a_synced_team_refuses_what_the_sync_would_undo() {
        let conn = conn();
        let listed =
            SyncedTeam { slug: "web".into(), name: "Web".into(), parent_slug: None, member_github_ids: vec![] };
        sync(&conn, &[listed], 5).unwrap();
        assert_eq!(synced(&conn).unwrap().get("web"), Some(&5));
        assert!(matches!(rename(&conn, "web", "Front end"), Err(TeamError::Synced(_, "name"))));
        assert!(matches!(set_parent(&conn, "web", Some("eng")), Err(TeamError::Synced(_, "parent"))));
        assert_eq!(rename(&conn, "eng", "Engineering & Product").unwrap(), "Engineering");
    }
}
