//! Breakdowns by team group (a team with the teams below it, a team's direct members,
//! the people in no team): their tallies as rows are read, and the rows the disclosure
//! (`super::super::disclosure`) lets be shown; no "other" row, since team groups overlap.

use std::collections::{BTreeSet, HashMap};

use rusqlite::{Connection, params_from_iter};

use super::{FIGURE_COLUMNS, GroupRow, PersonIds, Tally, text};
use crate::analytics::query::disclosure::{Disclosure, GroupKey};
use crate::analytics::query::{Figures, Period, read_figures};
use crate::db::DbError;

/// A group of a team breakdown: a team with the teams below it, or the people directly
/// in a team (`Some`) or in none (`None`) and in none of the listed teams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TeamGroup {
    Team { id: String, label: String },
    Rest { team_id: Option<String>, label: String },
}

/// Usage per team group, costliest first: only the groups `disclosure` (of usage in the
/// period, `Disclosure::of_usage`) lets be shown, and no "other" row (team groups overlap, so a folded row
/// could be had by subtraction, or be the whole organisation).
pub fn per_team(
    conn: &Connection,
    groups: &[TeamGroup],
    period: Period,
    disclosure: &Disclosure,
) -> Result<Vec<GroupRow<Figures>>, DbError> {
    let mut teams = TeamTallies::of(conn, groups)?;
    // Every row, not `GROUP BY user_id`: SQLite sorts to group, which cost more than the
    // tallies (their per-row work is a look-up of the person's number and groups).
    let usage = crate::analytics::usage::table_for(period);
    let sql =
        format!("SELECT user_id, {FIGURE_COLUMNS} FROM {usage} WHERE bucket_start_ms >= ?1 AND bucket_start_ms < ?2");
    let mut people = PersonIds::default();
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([period.from_ms, period.to_ms])?;
    while let Some(row) = rows.next()? {
        let user = text(row, 0)?;
        let person = people.of(user);
        teams.add(&read_figures(row, 1)?, user, person);
    }
    Ok(teams.rows(disclosure))
}

/// Figures per team group as rows are read: each row goes to every group its person is in.
pub(super) struct TeamTallies {
    keys: Vec<GroupKey>,
    members: Vec<(String, BTreeSet<String>)>,
    tallies: Vec<Tally>,
    /// The groups each person (by `PersonIds`) is in, found on first meeting them.
    groups_of: HashMap<u32, Vec<usize>>,
}

impl TeamTallies {
    pub(super) fn of(conn: &Connection, groups: &[TeamGroup]) -> Result<TeamTallies, DbError> {
        let members = members_of(conn, groups)?;
        let tallies = members.iter().map(|_| Tally::default()).collect();
        Ok(TeamTallies { keys: groups.iter().map(GroupKey::of).collect(), members, tallies, groups_of: HashMap::new() })
    }

    /// Adds a row of `user` (`person` by `PersonIds`) to every group they are in.
    pub(super) fn add(&mut self, figures: &Figures, user: &str, person: u32) {
        let members = &self.members;
        let groups = self.groups_of.entry(person).or_insert_with(|| {
            members.iter().enumerate().filter(|(_, (_, ids))| ids.contains(user)).map(|(i, _)| i).collect()
        });
        for &group in groups.iter() {
            self.tallies[group].add(figures, person);
        }
    }

    /// The groups with anyone active that `disclosure` lets be shown, costliest first.
    pub(super) fn rows(self, disclosure: &Disclosure) -> Vec<GroupRow<Figures>> {
        let mut rows: Vec<GroupRow<Figures>> = self
            .keys
            .into_iter()
            .zip(self.members)
            .zip(self.tallies)
            .filter(|((key, _), tally)| !tally.people.is_empty() && disclosure.allows(key))
            .map(|((_, (label, _)), tally)| GroupRow {
                key: Some(label),
                people: tally.people.len() as i64,
                figures: tally.figures,
            })
            .collect();
        rows.sort_by(|a, b| b.figures.cost_nusd.cmp(&a.figures.cost_nusd).then_with(|| a.key.cmp(&b.key)));
        rows
    }
}

/// The members of each team group, by user id.
pub(in crate::analytics::query) fn members_of(
    conn: &Connection,
    groups: &[TeamGroup],
) -> Result<Vec<(String, BTreeSet<String>)>, DbError> {
    let mut out = Vec::new();
    for group in groups {
        let (label, sql, values) = match group {
            TeamGroup::Team { id, label } => (
                label,
                "WITH RECURSIVE tree(id) AS (SELECT ?1 UNION SELECT t.id FROM teams t JOIN tree ON t.parent_id = tree.id)
                 SELECT DISTINCT m.user_id FROM team_members m JOIN tree ON m.team_id = tree.id",
                vec![id.clone()],
            ),
            TeamGroup::Rest { team_id: Some(id), label } => {
                (label, "SELECT user_id FROM team_members WHERE team_id = ?1", vec![id.clone()])
            }
            TeamGroup::Rest { team_id: None, label } => {
                (label, "SELECT id FROM users WHERE id NOT IN (SELECT user_id FROM team_members)", Vec::new())
            }
        };
        let mut stmt = conn.prepare_cached(sql)?;
        let ids =
            stmt.query_map(params_from_iter(values), |row| row.get(0))?.collect::<Result<BTreeSet<String>, _>>()?;
        out.push((label.clone(), ids));
    }
    Ok(out)
}
