//! Teams (nested through `parent_id`, each with an optional `retention_days`) and
//! their members (role `lead` or `member`).
//!
//! Invariants: slugs are lower-case `[a-z0-9-]`, 1–64 characters, unique; a parent
//! must exist; a team lead's reach covers the members of their team and of every
//! team below it ([`leads_over`]), which is what team drill-in asks.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::db::DbError;

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Team {
    pub id: String,
    pub slug: String,
    pub name: String,
    pub parent_id: Option<String>,
    pub retention_days: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("team {0} cannot be placed under {1}: {1} is {0} or one of the teams below it")]
    Cycle(String, String),
    #[error("team {0} is kept by the GitHub team sync, which replaces its {1} at every run: change it on GitHub")]
    Synced(String, &'static str),
    #[error("team slug {0:?} must be 1 to 64 characters of a-z, 0-9 and -")]
    BadSlug(String),
    #[error("team name must be 1 to 200 characters")]
    BadName,
    #[error("retention_days must be at least 1")]
    BadRetention,
    #[error("team role {0:?} is not known; expected lead or member")]
    BadRole(String),
    #[error("a team with slug {0} already exists")]
    Exists(String),
    #[error("no team with slug {0}")]
    NotFound(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<rusqlite::Error> for TeamError {
    fn from(err: rusqlite::Error) -> Self {
        TeamError::Db(DbError::Sqlite(err))
    }
}

fn valid_slug(slug: &str) -> bool {
    (1..=64).contains(&slug.len()) && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

pub fn add(
    conn: &Connection,
    slug: &str,
    name: &str,
    parent_slug: Option<&str>,
    retention_days: Option<i64>,
    now_ms: i64,
) -> Result<Team, TeamError> {
    if !valid_slug(slug) {
        return Err(TeamError::BadSlug(slug.to_string()));
    }
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(TeamError::BadName);
    }
    if retention_days.is_some_and(|days| days < 1) {
        return Err(TeamError::BadRetention);
    }
    let parent_id = parent_slug.map(|parent| by_slug(conn, parent).map(|team| team.id)).transpose()?;
    let team = Team {
        id: uuid::Uuid::now_v7().to_string(),
        slug: slug.to_string(),
        name: name.to_string(),
        parent_id,
        retention_days,
    };
    let inserted = conn.execute(
        "INSERT INTO teams (id, slug, name, parent_id, retention_days, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (slug) DO NOTHING",
        params![team.id, team.slug, team.name, team.parent_id, team.retention_days, now_ms],
    )?;
    if inserted == 0 {
        return Err(TeamError::Exists(slug.to_string()));
    }
    Ok(team)
}

pub fn by_slug(conn: &Connection, slug: &str) -> Result<Team, TeamError> {
    conn.query_row("SELECT id, slug, name, parent_id, retention_days FROM teams WHERE slug = ?1", [slug], |row| {
        Ok(Team {
            id: row.get(0)?,
            slug: row.get(1)?,
            name: row.get(2)?,
            parent_id: row.get(3)?,
            retention_days: row.get(4)?,
        })
    })
    .optional()?
    .ok_or_else(|| TeamError::NotFound(slug.to_string()))
}

pub fn list(conn: &Connection) -> Result<Vec<(Team, i64)>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT t.id, t.slug, t.name, t.parent_id, t.retention_days,
                (SELECT count(*) FROM team_members m WHERE m.team_id = t.id)
         FROM teams t ORDER BY t.slug",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok((
            Team {
                id: row.get(0)?,
                slug: row.get(1)?,
                name: row.get(2)?,
                parent_id: row.get(3)?,
                retention_days: row.get(4)?,
            },
            row.get(5)?,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The teams whose pages `user_id` may open: every team for a role that sees organisation
/// aggregates (`ADMIN`, `INVESTIGATOR`, `VIEWER_AGGREGATE`); for a `MEMBER`, the teams
/// they belong to and every team below one they lead. With each team's direct member
/// count, by slug.
pub fn visible_to(
    conn: &Connection,
    user_id: &str,
    role: crate::access::roles::OrgRole,
) -> Result<Vec<(Team, i64)>, DbError> {
    let all = list(conn)?;
    if role.sees_every_team() {
        return Ok(all);
    }
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE led(id) AS (
             SELECT team_id FROM team_members WHERE user_id = ?1 AND team_role = 'lead'
             UNION SELECT t.id FROM teams t JOIN led ON t.parent_id = led.id
         )
         SELECT id FROM led UNION SELECT team_id FROM team_members WHERE user_id = ?1",
    )?;
    let ids: std::collections::HashSet<String> =
        stmt.query_map([user_id], |row| row.get(0))?.collect::<Result<_, _>>()?;
    Ok(all.into_iter().filter(|(team, _)| ids.contains(&team.id)).collect())
}

/// The slugs of the teams `user_id` leads directly (a lead's landing goes to them).
pub fn led_by(conn: &Connection, user_id: &str) -> Result<Vec<String>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.slug FROM team_members m JOIN teams t ON t.id = m.team_id
         WHERE m.user_id = ?1 AND m.team_role = 'lead' ORDER BY t.slug",
    )?;
    let slugs = stmt.query_map([user_id], |row| row.get(0))?.collect::<Result<_, _>>()?;
    Ok(slugs)
}

/// One person on a team's roster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RosterEntry {
    /// Their name, or `None` when their `named_in_team_views` is off.
    pub name: Option<String>,
    pub team_slug: String,
    pub team_role: String,
}

/// The members of a team and of every team below it (a person once per team), leads
/// first, named only where their visibility policy allows. Disabled accounts are left out.
pub fn roster(conn: &Connection, team_id: &str) -> Result<Vec<RosterEntry>, DbError> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE tree(id) AS (SELECT ?1 UNION SELECT t.id FROM teams t JOIN tree ON t.parent_id = tree.id)
         SELECT CASE WHEN coalesce(v.named_in_team_views, 1) = 1 THEN u.name END, t.slug, m.team_role
         FROM team_members m JOIN tree ON m.team_id = tree.id JOIN teams t ON t.id = m.team_id
         JOIN users u ON u.id = m.user_id LEFT JOIN visibility_policies v ON v.user_id = m.user_id
         WHERE u.disabled_at_ms IS NULL
         ORDER BY t.slug, m.team_role = 'member', coalesce(v.named_in_team_views, 1) = 0, u.name",
    )?;
    let rows = stmt.query_map([team_id], |row| {
        Ok(RosterEntry { name: row.get(0)?, team_slug: row.get(1)?, team_role: row.get(2)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Adds a member or changes their team role.
pub fn add_member(
    conn: &Connection,
    team_id: &str,
    user_id: &str,
    team_role: &str,
    now_ms: i64,
) -> Result<(), TeamError> {
    let role = team_role.trim().to_ascii_lowercase();
    if role != "lead" && role != "member" {
        return Err(TeamError::BadRole(team_role.to_string()));
    }
    conn.execute(
        "INSERT INTO team_members (team_id, user_id, team_role, added_at_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (team_id, user_id) DO UPDATE SET team_role = excluded.team_role",
        params![team_id, user_id, role, now_ms],
    )?;
    Ok(())
}

/// True if `lead_id` leads a team that `member_id` belongs to, directly or through a
/// team nested below the lead's.
pub fn leads_over(conn: &Connection, lead_id: &str, member_id: &str) -> Result<bool, DbError> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE led(id) AS (
             SELECT team_id FROM team_members WHERE user_id = ?1 AND team_role = 'lead'
             UNION SELECT t.id FROM teams t JOIN led ON t.parent_id = led.id
         )
         SELECT EXISTS (SELECT 1 FROM team_members m JOIN led ON m.team_id = led.id WHERE m.user_id = ?2)",
    )?;
    Ok(stmt.query_row(params![lead_id, member_id], |row| row.get(0))?)
}

/// Teams by id: their parent and own `retention_days`.
pub type RetentionTree = std::collections::HashMap<String, (Option<String>, Option<i64>)>;

/// A team's retention in force: its own `retention_days`, or else its nearest
/// ancestor's; `None` when none of them sets one.
pub fn retention_in_force(teams: &RetentionTree, team: &str) -> Option<i64> {
    let mut current = Some(team.to_string());
    // At most one step per team: a parent cycle cannot loop forever.
    for _ in 0..=teams.len() {
        let (parent, days) = teams.get(current.as_deref()?)?;
        if days.is_some() {
            return *days;
        }
        current = parent.clone();
    }
    None
}

/// Each team member's raw-event retention in days, where a team says so: a team's
/// `retention_days`, or else its nearest ancestor's; a member of several such teams
/// keeps the shortest (data kept for less time is the promise a team made). Members of
/// no team with a retention are absent: the organisation's applies to them.
pub fn retention_overrides(conn: &Connection) -> Result<std::collections::HashMap<String, i64>, DbError> {
    use std::collections::HashMap;
    let mut stmt = conn.prepare("SELECT id, parent_id, retention_days FROM teams")?;
    let teams: RetentionTree =
        stmt.query_map([], |row| Ok((row.get(0)?, (row.get(1)?, row.get(2)?))))?.collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare("SELECT user_id, team_id FROM team_members")?;
    let mut overrides: HashMap<String, i64> = HashMap::new();
    for member in stmt.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))? {
        let (user, team) = member?;
        if let Some(days) = retention_in_force(&teams, &team) {
            overrides.entry(user).and_modify(|kept| *kept = (*kept).min(days)).or_insert(days);
        }
    }
    Ok(overrides)
}

/// The teams each person is in (people in none are absent).
pub fn memberships(conn: &Connection) -> Result<std::collections::HashMap<String, Vec<String>>, DbError> {
    let mut stmt = conn.prepare_cached("SELECT user_id, team_id FROM team_members ORDER BY user_id, team_id")?;
    let mut teams: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    for member in stmt.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))? {
        let (user, team) = member?;
        teams.entry(user).or_default().push(team);
    }
    Ok(teams)
}

/// A team as the code-hosting service lists it, for [`sync`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncedTeam {
    pub slug: String,
    pub name: String,
    pub parent_slug: Option<String>,
    /// Their accounts' ids on the service (people are matched by `users.github_id`).
    pub member_github_ids: Vec<i64>,
}

/// What a sync changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncSummary {
    pub teams_added: usize,
    pub teams_updated: usize,
    pub members_added: usize,
    pub members_removed: usize,
}

/// Makes the given teams (and their members) ours: a team is found by slug, added if
/// new, renamed and re-parented to match; its members become exactly the listed
/// people that have an account here, leads keeping their role. A person no longer
/// listed leaves the team and is never deleted; teams not listed are left alone.
pub fn sync(conn: &Connection, teams: &[SyncedTeam], now_ms: i64) -> Result<SyncSummary, TeamError> {
    let mut summary = SyncSummary::default();
    let mut added = std::collections::BTreeSet::new();
    // Every team first: a team may name a parent listed after it.
    for team in teams {
        if !valid_slug(&team.slug) {
            return Err(TeamError::BadSlug(team.slug.clone()));
        }
        let exists: bool =
            conn.query_row("SELECT count(*) > 0 FROM teams WHERE slug = ?1", [&team.slug], |r| r.get(0))?;
        if exists {
            let changed = conn
                .execute("UPDATE teams SET name = ?2 WHERE slug = ?1 AND name <> ?2", params![team.slug, team.name])?;
            summary.teams_updated += changed;
        } else {
            add(conn, &team.slug, &team.name, None, None, now_ms)?;
            added.insert(team.slug.as_str());
            summary.teams_added += 1;
        }
        conn.execute("UPDATE teams SET synced_at_ms = ?2 WHERE slug = ?1", params![team.slug, now_ms])?;
    }
    for team in teams {
        let parent_id = team.parent_slug.as_deref().map(|parent| by_slug(conn, parent).map(|t| t.id)).transpose()?;
        let changed = conn.execute(
            "UPDATE teams SET parent_id = ?2 WHERE slug = ?1 AND parent_id IS NOT ?2",
            params![team.slug, parent_id],
        )?;
        if changed > 0 && !added.contains(team.slug.as_str()) {
            summary.teams_updated += changed;
        }
        let id = by_slug(conn, &team.slug)?.id;
        let mut wanted = Vec::new();
        for github_id in &team.member_github_ids {
            if let Some(user) = conn
                .query_row("SELECT id FROM users WHERE github_id = ?1", [github_id], |r| r.get::<_, String>(0))
                .optional()?
            {
                wanted.push(user);
            }
        }
        for user in &wanted {
            summary.members_added += conn.execute(
                "INSERT INTO team_members (team_id, user_id, team_role, added_at_ms) VALUES (?1, ?2, 'member', ?3)
                 ON CONFLICT (team_id, user_id) DO NOTHING",
                params![id, user, now_ms],
            )?;
        }
        let current: Vec<String> = {
            let mut stmt = conn.prepare("SELECT user_id FROM team_members WHERE team_id = ?1")?;
            stmt.query_map([&id], |r| r.get(0))?.collect::<Result<_, _>>()?
        };
        for user in current.iter().filter(|u| !wanted.contains(u)) {
            summary.members_removed +=
                conn.execute("DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2", params![id, user])?;
        }
    }
    Ok(summary)
}

/// One direct membership, as the administrator's teams page lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    pub team_slug: String,
    pub user_id: String,
    pub email: String,
    pub name: String,
    pub team_role: String,
}

/// Every direct membership of every team, by team then leads first.
pub fn memberships_listed(conn: &Connection) -> Result<Vec<Membership>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT t.slug, u.id, u.email, u.name, m.team_role FROM team_members m
         JOIN teams t ON t.id = m.team_id JOIN users u ON u.id = m.user_id
         ORDER BY t.slug, m.team_role = 'member', u.email",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(Membership {
            team_slug: row.get(0)?,
            user_id: row.get(1)?,
            email: row.get(2)?,
            name: row.get(3)?,
            team_role: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A member's team role before a change, `None` when they are not in the team.
pub fn member_role(conn: &Connection, team_id: &str, user_id: &str) -> Result<Option<String>, DbError> {
    Ok(conn
        .query_row(
            "SELECT team_role FROM team_members WHERE team_id = ?1 AND user_id = ?2",
            params![team_id, user_id],
            |row| row.get(0),
        )
        .optional()?)
}

/// Sets a team's own `retention_days` (`None`: inherit its parent's, or the
/// organisation's); returns what it was.
pub fn set_retention(conn: &Connection, slug: &str, days: Option<i64>) -> Result<Option<i64>, TeamError> {
    if days.is_some_and(|days| days < 1) {
        return Err(TeamError::BadRetention);
    }
    let team = by_slug(conn, slug)?;
    conn.execute("UPDATE teams SET retention_days = ?2 WHERE id = ?1", params![team.id, days])?;
    Ok(team.retention_days)
}

// The console's edits of a team (rename, move, members) and the sync's ownership.
pub use super::team_edits::{refuse_member_change_if_synced, remove_member, rename, set_parent, synced};
