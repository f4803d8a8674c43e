//! The minimum group size: figures shown to people who may not see the individuals
//! behind them (team and organisation pages, their CSV exports) never describe fewer than
//! `min_people` people. A figure set is read only when its subject had at least that many
//! active people in the period ([`people`], [`Guarded`]); a breakdown folds its small
//! groups into one "other" row, and keeps folding the smallest shown group into it until
//! that row too covers enough people, so no small group can be had by subtracting the
//! shown rows from the total ([`breakdown`], [`tools`]).
//!
//! Invariant: the user ids a group is counted from stay in this module; callers get counts.

use std::collections::BTreeSet;

use rusqlite::{Connection, params_from_iter};

use super::disclosure::{Disclosure, GroupKey};
use super::models;
use super::{By, Figures, Period, Subject, ToolFigures, parameters, read_figures, subject_filter};
use crate::db::DbError;

/// A subject's figures, or why they are not shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guarded<T> {
    Shown(T),
    /// Fewer than the minimum number of people were active: nothing is shown.
    TooFew {
        people: i64,
        min_people: i64,
    },
    /// Enough people, but showing them would let a smaller team's figures be had by
    /// subtraction (`disclosure`): nothing is shown.
    Withheld {
        min_people: i64,
    },
}

impl<T> Guarded<T> {
    pub fn shown(&self) -> Option<&T> {
        match self {
            Guarded::Shown(value) => Some(value),
            Guarded::TooFew { .. } | Guarded::Withheld { .. } => None,
        }
    }
}

/// How many people had interactive activity of the subject in the period.
pub fn people(conn: &Connection, subject: &Subject, period: Period) -> Result<i64, DbError> {
    let (filter, values) = subject_filter(subject);
    let sql = format!(
        "SELECT count(DISTINCT user_id) FROM agg_usage_hourly
         WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?"
    );
    Ok(conn.query_row(&sql, params_from_iter(parameters(values, period)), |row| row.get(0))?)
}

/// Whether a team's usage figures may be shown at all (`disclosure`); a person's and the
/// organisation's always may (their size is checked on its own).
pub fn disclosed(conn: &Connection, subject: &Subject, period: Period, min_people: i64) -> Result<bool, DbError> {
    match subject {
        Subject::Team(_) => Ok(Disclosure::of_usage(conn, period, min_people)?.allows_subject(subject)),
        Subject::Person(_) | Subject::Organisation => Ok(true),
    }
}

/// Reads the subject's figures with `read` only when at least `min_people` were active.
pub fn guarded<T>(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    min_people: i64,
    read: impl FnOnce(&Connection) -> Result<T, DbError>,
) -> Result<Guarded<T>, DbError> {
    let people = people(conn, subject, period)?;
    if people < min_people {
        return Ok(Guarded::TooFew { people, min_people });
    }
    if !disclosed(conn, subject, period, min_people)? {
        return Ok(Guarded::Withheld { min_people });
    }
    Ok(Guarded::Shown(read(conn)?))
}

/// One row of a guarded breakdown: `key` is `None` for the folded "other" row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRow<T> {
    pub key: Option<String>,
    pub figures: T,
    pub people: i64,
}

/// Folds rows of fewer than `min_people` into one "other" row, then the smallest shown
/// rows too until "other" covers at least `min_people` (or every row is in it). Rows
/// come in display order; "other" goes last.
pub(super) fn fold<T: Clone>(
    rows: Vec<(String, T, BTreeSet<String>)>,
    min_people: i64,
    add: impl Fn(&mut T, &T),
    weight: impl Fn(&T) -> i64,
) -> Vec<GroupRow<T>> {
    let min = min_people.max(1) as usize;
    let (mut shown, mut small): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(_, _, people)| people.len() >= min);
    if small.is_empty() {
        return shown
            .into_iter()
            .map(|(key, figures, people)| GroupRow { key: Some(key), figures, people: people.len() as i64 })
            .collect();
    }
    let union = |rows: &[(String, T, BTreeSet<String>)]| {
        rows.iter().flat_map(|(_, _, p)| p.iter().cloned()).collect::<BTreeSet<_>>()
    };
    while union(&small).len() < min && !shown.is_empty() {
        // The shown row with the least weight joins "other".
        let at = (0..shown.len()).min_by_key(|&i| weight(&shown[i].1)).unwrap_or(0);
        small.push(shown.remove(at));
    }
    let mut out: Vec<GroupRow<T>> = shown
        .into_iter()
        .map(|(key, figures, people)| GroupRow { key: Some(key), figures, people: people.len() as i64 })
        .collect();
    let people = union(&small);
    if people.len() >= min {
        let mut figures = small[0].1.clone();
        for (_, more, _) in &small[1..] {
            add(&mut figures, more);
        }
        out.push(GroupRow { key: None, figures, people: people.len() as i64 });
    }
    out
}

fn add_figures(into: &mut Figures, more: &Figures) {
    into.events += more.events;
    into.prompts += more.prompts;
    into.sessions_started += more.sessions_started;
    into.usage.add(&more.usage);
    into.cost_nusd += more.cost_nusd;
}

/// The hourly aggregate's figure columns, in the order `read_figures` reads them.
const FIGURE_COLUMNS: &str = "events, prompts, sessions_started, input_tokens, output_tokens, cache_read_tokens,
    cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd";

/// Groups as rows, the costliest first, the small ones folded into "other".
fn costliest_first(groups: impl IntoIterator<Item = (String, Tally)>, min_people: i64) -> Vec<GroupRow<Figures>> {
    let mut rows: Vec<(String, Figures, BTreeSet<String>)> =
        groups.into_iter().map(|(key, t)| (key, t.figures, t.people)).collect();
    rows.sort_by(|a, b| b.1.cost_nusd.cmp(&a.1.cost_nusd).then_with(|| a.0.cmp(&b.0)));
    fold(rows, min_people, add_figures, |f| f.cost_nusd)
}

/// The subject's usage broken down (`by`), costliest first (days in order), with every
/// group of fewer than `min_people` folded into the last row.
pub fn breakdown(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    by: By,
    min_people: i64,
) -> Result<Vec<GroupRow<Figures>>, DbError> {
    let sessions = if models::is_about_models(by) {
        models::ModelSessions::read(conn, subject, period)?
    } else {
        models::ModelSessions::default()
    };
    breakdown_with(conn, subject, period, by, min_people, &sessions)
}

/// [`breakdown`] with the subject's model sessions already read (a page showing several
/// model breakdowns reads them once).
pub fn breakdown_with(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    by: By,
    min_people: i64,
    sessions: &models::ModelSessions,
) -> Result<Vec<GroupRow<Figures>>, DbError> {
    let (filter, values) = subject_filter(subject);
    // Grouped here rather than by SQL, as in `tool_groups`.
    let sql = format!(
        "SELECT {column}, user_id, {FIGURE_COLUMNS}
         FROM agg_usage_hourly WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?",
        column = by.column()
    );
    let mut groups: std::collections::HashMap<String, Tally> = Default::default();
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(params_from_iter(parameters(values, period)))?;
    while let Some(row) = found.next()? {
        let (raw, user): (String, String) = (row.get(0)?, row.get(1)?);
        // Model rows are families, and events without a model make none (`models`).
        let Some(key) = models::row_key(by, &raw) else { continue };
        groups.entry(key).or_default().add(&read_figures(row, 2)?, &user);
    }
    if models::is_about_models(by) {
        return Ok(with_model_sessions(sessions, by, costliest_first(groups, min_people)));
    }
    if by != By::Day {
        return Ok(costliest_first(groups, min_people));
    }
    let mut days: Vec<(String, Figures, BTreeSet<String>)> =
        groups.into_iter().map(|(key, t)| (key, t.figures, t.people)).collect();
    days.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(fold(days, min_people, add_figures, |f| f.cost_nusd))
}

/// Model rows' sessions and prompts: those of the sessions that used each model, and for
/// "other" those of the models folded into it, each session once (`models`).
fn with_model_sessions(
    sessions: &models::ModelSessions,
    by: By,
    mut rows: Vec<GroupRow<Figures>>,
) -> Vec<GroupRow<Figures>> {
    let sessions = sessions.keyed(by);
    let shown: BTreeSet<String> = rows.iter().filter_map(|row| row.key.clone()).collect();
    let shown: BTreeSet<&str> = shown.iter().map(String::as_str).collect();
    for row in &mut rows {
        sessions.apply(row.key.as_deref(), &shown, &mut row.figures);
    }
    rows
}

/// What tool calls are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolKey {
    /// Tool and tool server (the row's `tool` and `tool_server`).
    Tool,
    /// Tool server (MCP); calls to no server are left out.
    Server,
    /// Skill; calls that loaded none are left out.
    Skill,
    /// Slash command; calls under none are left out.
    SlashCommand,
    /// Agent.
    Agent,
}

impl ToolKey {
    /// The name column, the server column and the rows' filter.
    fn columns(self) -> (&'static str, &'static str, &'static str) {
        match self {
            ToolKey::Tool => ("tool_name", "tool_server", "1 = 1"),
            ToolKey::Server => ("tool_server", "''", "tool_server <> ''"),
            ToolKey::Skill => ("skill", "''", "skill <> ''"),
            ToolKey::SlashCommand => ("slash_command", "''", "slash_command <> ''"),
            ToolKey::Agent => ("agent_type", "''", "1 = 1"),
        }
    }
}

/// The subject's most used tools (up to `limit` groups before folding), with every tool
/// used by fewer than `min_people` folded into the last row.
pub fn tools(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    limit: usize,
    min_people: i64,
) -> Result<Vec<GroupRow<ToolFigures>>, DbError> {
    tool_groups(conn, subject, period, ToolKey::Tool, limit, min_people)
}

/// The subject's tool calls grouped by `key` (up to `limit` groups before folding), the
/// most called first, with every group of fewer than `min_people` folded into the last
/// row (whose `tool` and `tool_server` are empty).
pub fn tool_groups(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    key: ToolKey,
    limit: usize,
    min_people: i64,
) -> Result<Vec<GroupRow<ToolFigures>>, DbError> {
    let (filter, values) = subject_filter(subject);
    let (name, server, only) = key.columns();
    // Grouped here rather than by SQL: `group_concat(DISTINCT user_id)` over a quarter's
    // rows costs more than the whole scan.
    let sql = format!(
        "SELECT {name}, {server}, user_id, calls, errors, denials, duration_ms
         FROM agg_tools_daily WHERE {filter} AND {only} AND day_start_ms >= ? AND day_start_ms < ?"
    );
    let mut groups: std::collections::HashMap<(String, String), (ToolFigures, BTreeSet<String>)> = Default::default();
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(params_from_iter(parameters(values, period)))?;
    while let Some(row) = found.next()? {
        let (tool, tool_server, user): (String, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let (figures, people) = groups.entry((tool, tool_server)).or_default();
        figures.calls += row.get::<_, i64>(3)?;
        figures.errors += row.get::<_, i64>(4)?;
        figures.denials += row.get::<_, i64>(5)?;
        figures.duration_ms += row.get::<_, i64>(6)?;
        people.insert(user);
    }
    let mut rows: Vec<(String, ToolFigures, BTreeSet<String>)> = groups
        .into_iter()
        .map(|((tool, tool_server), (figures, people))| {
            (format!("{tool}\t{tool_server}"), ToolFigures { tool, tool_server, ..figures }, people)
        })
        .collect();
    rows.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then_with(|| a.0.cmp(&b.0)));
    let add = |into: &mut ToolFigures, more: &ToolFigures| {
        into.calls += more.calls;
        into.errors += more.errors;
        into.denials += more.denials;
        into.duration_ms += more.duration_ms;
    };
    let mut folded = fold(rows, min_people, add, |t| t.calls);
    // The most used first, "other" last; the shown rows beyond `limit` are left out (a top
    // list: the rows kept still each cover at least the minimum).
    if folded.len() > limit + 1 {
        let other_at = folded.iter().position(|r| r.key.is_none());
        let other = other_at.map(|at| folded.remove(at));
        folded.truncate(limit);
        folded.extend(other);
    }
    for row in &mut folded {
        if row.key.is_none() {
            row.figures.tool = String::new();
            row.figures.tool_server = String::new();
        }
    }
    Ok(folded)
}

/// A group of a team breakdown: a team with the teams below it, or the people directly
/// in a team (`Some`) or in none (`None`) and in none of the listed teams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TeamGroup {
    Team { id: String, label: String },
    Rest { team_id: Option<String>, label: String },
}

/// Usage per team group, costliest first: only the groups `disclosure` lets be shown
/// for usage in the period, and no "other" row (team groups overlap, so a folded row
/// could be had by subtraction, or be the whole organisation).
pub fn per_team(
    conn: &Connection,
    groups: &[TeamGroup],
    period: Period,
    min_people: i64,
) -> Result<Vec<GroupRow<Figures>>, DbError> {
    let mut teams = TeamTallies::of(conn, groups)?;
    let sql = format!(
        "SELECT user_id, {FIGURE_COLUMNS} FROM agg_usage_hourly WHERE bucket_start_ms >= ?1 AND bucket_start_ms < ?2"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([period.from_ms, period.to_ms])?;
    while let Some(row) = rows.next()? {
        let user: String = row.get(0)?;
        teams.add(&read_figures(row, 1)?, &user);
    }
    Ok(teams.rows(&Disclosure::of_usage(conn, period, min_people)?))
}

/// Figures per team group as rows are read: each row goes to every group its person is in.
struct TeamTallies {
    keys: Vec<GroupKey>,
    members: Vec<(String, BTreeSet<String>)>,
    tallies: Vec<Tally>,
}

impl TeamTallies {
    fn of(conn: &Connection, groups: &[TeamGroup]) -> Result<TeamTallies, DbError> {
        let members = members_of(conn, groups)?;
        let tallies = members.iter().map(|_| Tally::default()).collect();
        Ok(TeamTallies { keys: groups.iter().map(GroupKey::of).collect(), members, tallies })
    }

    fn add(&mut self, figures: &Figures, user: &str) {
        for ((_, ids), tally) in self.members.iter().zip(self.tallies.iter_mut()) {
            if ids.contains(user) {
                tally.add(figures, user);
            }
        }
    }

    /// The groups with anyone active that `disclosure` lets be shown, costliest first.
    fn rows(self, disclosure: &Disclosure) -> Vec<GroupRow<Figures>> {
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
pub(super) fn members_of(conn: &Connection, groups: &[TeamGroup]) -> Result<Vec<(String, BTreeSet<String>)>, DbError> {
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

/// What an overview shows of its subject, read in one pass over the hourly aggregate.
pub struct Overview {
    pub people: i64,
    pub totals: Figures,
    pub by_day: Vec<GroupRow<Figures>>,
    pub agents: Vec<GroupRow<Figures>>,
    pub models: Vec<GroupRow<Figures>>,
    pub teams: Vec<GroupRow<Figures>>,
}

/// The figures behind a group, and who they are of.
#[derive(Default)]
struct Tally {
    figures: Figures,
    people: BTreeSet<String>,
}

impl Tally {
    fn add(&mut self, figures: &Figures, user: &str) {
        add_figures(&mut self.figures, figures);
        if !self.people.contains(user) {
            self.people.insert(user.to_string());
        }
    }
}

/// The subject's people, totals, and its breakdowns by day, agent, model (each folded
/// like [`breakdown`]) and team group (disclosed like [`per_team`]), from one read of the period's rows:
/// the same figures as those functions, for the price of one scan instead of six.
pub fn overview(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    teams: &[TeamGroup],
    min_people: i64,
) -> Result<Overview, DbError> {
    use std::collections::{BTreeMap, HashMap};
    let (filter, values) = subject_filter(subject);
    let sql = format!(
        "SELECT bucket_start_ms, user_id, agent_type, model, {FIGURE_COLUMNS}
         FROM agg_usage_hourly WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?"
    );
    let mut per_team = TeamTallies::of(conn, teams)?;
    let mut totals = Tally::default();
    let (mut days, mut agents, mut model_families): (
        BTreeMap<i64, Tally>,
        HashMap<String, Tally>,
        HashMap<String, Tally>,
    ) = Default::default();
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(params_from_iter(parameters(values, period)))?;
    while let Some(row) = rows.next()? {
        let (bucket, user): (i64, String) = (row.get(0)?, row.get(1)?);
        let figures = read_figures(row, 4)?;
        totals.add(&figures, &user);
        days.entry(bucket.div_euclid(86_400_000) * 86_400_000).or_default().add(&figures, &user);
        agents.entry(row.get(2)?).or_default().add(&figures, &user);
        if let Some(family) = models::row_key(By::Model, &row.get::<_, String>(3)?) {
            model_families.entry(family).or_default().add(&figures, &user);
        }
        per_team.add(&figures, &user);
    }
    let by_day = days.into_iter().map(|(day, t)| (day.to_string(), t.figures, t.people)).collect();
    Ok(Overview {
        people: totals.people.len() as i64,
        totals: totals.figures,
        by_day: fold(by_day, min_people, add_figures, |f| f.cost_nusd),
        agents: costliest_first(agents, min_people),
        models: with_model_sessions(
            &models::ModelSessions::read(conn, subject, period)?,
            By::Model,
            costliest_first(model_families, min_people),
        ),
        teams: per_team.rows(&Disclosure::of_usage(conn, period, min_people)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn people(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    fn sum(into: &mut i64, more: &i64) {
        *into += more;
    }

    proptest::proptest! {
        /// Whatever the groups: no row describes fewer than the minimum, and either nothing
        /// is shown (everyone together is fewer) or every figure is somewhere (nothing lost).
        #[test]
        fn no_row_is_about_fewer_than_the_minimum_and_nothing_is_lost(
            groups in proptest::collection::vec((0i64..1_000, proptest::collection::btree_set(0u8..12, 0..6)), 0..8),
            min in 2i64..7,
        ) {
            let rows: Vec<(String, i64, BTreeSet<String>)> = groups
                .iter()
                .enumerate()
                .map(|(i, (value, ids))| (format!("g{i}"), *value, ids.iter().map(|id| id.to_string()).collect()))
                .collect();
            let everyone: BTreeSet<String> = rows.iter().flat_map(|(_, _, p)| p.iter().cloned()).collect();
            let total: i64 = rows.iter().map(|(_, v, _)| v).sum();
            let folded = fold(rows, min, sum, |v| *v);
            proptest::prop_assert!(folded.iter().all(|row| row.people >= min));
            if (everyone.len() as i64) < min {
                proptest::prop_assert!(folded.is_empty());
            } else {
                proptest::prop_assert_eq!(folded.iter().map(|row| row.figures).sum::<i64>(), total);
            }
        }
    }

    #[test]
    fn big_groups_stay_and_small_ones_fold_into_other() {
        let rows = vec![
            ("a".to_string(), 50, people(&["1", "2", "3"])),
            ("b".to_string(), 30, people(&["1", "4"])),
            ("c".to_string(), 20, people(&["5"])),
        ];
        let folded = fold(rows, 3, sum, |v| *v);
        assert_eq!(folded.len(), 2);
        assert_eq!((folded[0].key.as_deref(), folded[0].figures, folded[0].people), (Some("a"), 50, 3));
        // b and c together are three people (1, 4, 5).
        assert_eq!((folded[1].key.as_deref(), folded[1].figures, folded[1].people), (None, 50, 3));
    }

    /// One small group alone could be had by subtraction: the smallest shown group joins it.
    #[test]
    fn other_too_small_takes_the_smallest_shown_group_and_never_shows_fewer() {
        let rows = vec![
            ("a".to_string(), 50, people(&["1", "2", "3"])),
            ("b".to_string(), 40, people(&["4", "5", "6"])),
            ("c".to_string(), 5, people(&["7"])),
        ];
        let folded = fold(rows, 3, sum, |v| *v);
        assert_eq!(folded.iter().map(|r| r.key.clone()).collect::<Vec<_>>(), [Some("a".to_string()), None]);
        assert_eq!((folded[1].figures, folded[1].people), (45, 4));
        // Everyone together is fewer than the minimum: nothing at all.
        let rows = vec![("a".to_string(), 5, people(&["1"])), ("b".to_string(), 5, people(&["2"]))];
        assert!(fold(rows, 3, sum, |v| *v).is_empty());
        // No row is ever about fewer than the minimum.
        let rows = vec![("a".to_string(), 9, people(&["1", "2", "3"])), ("b".to_string(), 1, people(&["1"]))];
        assert!(fold(rows, 3, sum, |v| *v).iter().all(|r| r.people >= 3));
    }
}
