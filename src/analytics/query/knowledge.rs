//! Knowledge: which skills, slash commands and tool servers spread across teams in the
//! period, and from where: for each, the people and teams that used it and the team of
//! its first users. Read from `agg_tools_daily` and today's team membership.
//!
//! Invariants: an item used by fewer than `min_people` people is not listed (they are
//! counted together in [`Spread::unlisted`], itself withheld below the minimum); the team
//! it came from is named only when that team has at least `min_people` members, so
//! "first used in" never points at a person; user ids stay in this module.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, params};

use super::Period;
use super::groups::ToolKey;
use crate::db::DbError;

/// One item that spread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    pub people: i64,
    pub teams: i64,
    pub calls: i64,
    pub first_day_ms: i64,
    /// The team most of its first day's users are in, if that team is large enough to name.
    pub first_team: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spread {
    pub items: Vec<Item>,
    /// Items used by fewer than the minimum number of people: how many.
    pub unlisted: i64,
}

/// The spread of skills, slash commands or tool servers (`key`), the widest first.
pub fn spread(conn: &Connection, key: ToolKey, period: Period, min_people: i64) -> Result<Spread, DbError> {
    let column = match key {
        ToolKey::Skill => "skill",
        ToolKey::SlashCommand => "slash_command",
        _ => "tool_server",
    };
    let sql = format!(
        "SELECT {column}, user_id, min(day_start_ms), sum(calls) FROM agg_tools_daily
         WHERE {column} <> '' AND day_start_ms >= ?1 AND day_start_ms < ?2 GROUP BY 1, 2"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut users_of: BTreeMap<String, Vec<(String, i64, i64)>> = BTreeMap::new();
    for row in stmt.query_map(params![period.from_ms, period.to_ms], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, i64>(2)?, row.get::<_, i64>(3)?))
    })? {
        let (item, user, first, calls) = row?;
        users_of.entry(item).or_default().push((user, first, calls));
    }
    // Direct memberships, and each team's size.
    let mut teams_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut size: BTreeMap<String, i64> = BTreeMap::new();
    let mut stmt =
        conn.prepare_cached("SELECT m.user_id, t.slug FROM team_members m JOIN teams t ON t.id = m.team_id")?;
    for row in stmt.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))? {
        let (user, slug) = row?;
        *size.entry(slug.clone()).or_default() += 1;
        teams_of.entry(user).or_default().push(slug);
    }
    let mut items = Vec::new();
    let mut unlisted = 0;
    for (name, users) in users_of {
        if (users.len() as i64) < min_people {
            unlisted += 1;
            continue;
        }
        let teams: BTreeSet<&String> =
            users.iter().flat_map(|(u, _, _)| teams_of.get(u).into_iter().flatten()).collect();
        let first_day_ms = users.iter().map(|(_, first, _)| *first).min().unwrap_or(period.from_ms);
        let mut first_teams: BTreeMap<&String, i64> = BTreeMap::new();
        for (user, first, _) in &users {
            if *first == first_day_ms {
                for team in teams_of.get(user).into_iter().flatten() {
                    *first_teams.entry(team).or_default() += 1;
                }
            }
        }
        let first_team = first_teams
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(team, _)| team.clone())
            .filter(|team| size.get(team).copied().unwrap_or(0) >= min_people);
        items.push(Item {
            name,
            people: users.len() as i64,
            teams: teams.len() as i64,
            calls: users.iter().map(|(_, _, calls)| calls).sum(),
            first_day_ms,
            first_team,
        });
    }
    items.sort_by(|a, b| b.teams.cmp(&a.teams).then(b.people.cmp(&a.people)).then_with(|| a.name.cmp(&b.name)));
    Ok(Spread { items, unlisted })
}
