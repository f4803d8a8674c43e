//! The query layer over the aggregates: every developer-behaviour figure a page shows is
//! read here, from the aggregates and nothing else. The aggregates hold `INTERACTIVE`
//! runs only, so no figure of this module can include a CI or EVAL run: that is a
//! property of the types ([`Figures`] is only ever built from aggregate rows), not a
//! `WHERE` each caller must remember. CI and EVAL runs are listed apart, by name, from
//! the sessions table (`sessions::views`).
//!
//! Invariants: a [`Subject`] says whose figures are read; deciding whether the caller may
//! read them is the handler's job, before it builds the subject (a person's own are always
//! theirs). A team's figures cover its members and the members of every team below it,
//! each person once.

use rusqlite::{Connection, ToSql, params_from_iter};
use serde::Serialize;

use crate::db::DbError;
use crate::model::Usage;

/// Whose figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// One person, by user id.
    Person(String),
    /// A team with the teams below it, by team id.
    Team(String),
    Organisation,
}

/// A half-open time range `[from_ms, to_ms)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub from_ms: i64,
    pub to_ms: i64,
}

impl Period {
    /// The `days` whole UTC days ending with the one that contains `now_ms`.
    pub fn last_days(now_ms: i64, days: i64) -> Period {
        let end = (now_ms.div_euclid(DAY_MS) + 1) * DAY_MS;
        Period { from_ms: end - days * DAY_MS, to_ms: end }
    }

    /// The period of the same length just before this one (trends).
    pub fn previous(self) -> Period {
        Period { from_ms: 2 * self.from_ms - self.to_ms, to_ms: self.from_ms }
    }
}

const DAY_MS: i64 = 86_400_000;

/// Usage figures of interactive runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Figures {
    pub events: i64,
    pub prompts: i64,
    pub sessions_started: i64,
    pub usage: Usage,
    pub cost_nusd: i64,
}

impl Figures {
    /// Cache reads over all the input the model read (fresh, cached and written to cache);
    /// `None` when there was none.
    pub fn cache_hit_ratio(&self) -> Option<f64> {
        let read = self.usage.input_tokens
            + self.usage.cache_read_tokens
            + self.usage.cache_write_5m_tokens
            + self.usage.cache_write_1h_tokens;
        (read > 0).then(|| self.usage.cache_read_tokens as f64 / read as f64)
    }
}

/// What usage figures can be broken down by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    Agent,
    /// Model family: snapshots and alias together, sessions counted under each model they
    /// used, no row for events without a model (`models`).
    Model,
    /// UTC day (the key is the day's start in milliseconds, as text).
    Day,
    /// Agent and exact model id, as `agent<TAB>model` (a model's price depends on its
    /// agent's table); no row for events without a model, sessions as for [`By::Model`].
    AgentModel,
    /// The exact model ids a family's row is made of (`models`).
    ModelSnapshot,
}

impl By {
    fn column(self) -> &'static str {
        match self {
            By::Agent => "agent_type",
            By::Model | By::ModelSnapshot => "model",
            By::Day => "CAST((bucket_start_ms / 86400000) * 86400000 AS TEXT)",
            By::AgentModel => "agent_type || char(9) || model",
        }
    }
}

/// Session figures of interactive runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Activity {
    /// Agent sessions summed over days (a session active on two days counts twice).
    pub session_days: i64,
    pub active_ms: i64,
    pub permission_prompts: i64,
    pub response_ms: i64,
    pub responses: i64,
}

/// One tool's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ToolFigures {
    pub tool: String,
    pub tool_server: String,
    pub calls: i64,
    pub errors: i64,
    pub denials: i64,
    pub duration_ms: i64,
}

/// The `WHERE` that picks the subject's rows of a table with a `user_id` column, and its
/// parameters.
fn subject_filter(subject: &Subject) -> (&'static str, Vec<String>) {
    match subject {
        Subject::Person(user) => ("user_id = ?", vec![user.clone()]),
        Subject::Team(team) => (
            "user_id IN (WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT t.id FROM teams t JOIN tree ON t.parent_id = tree.id)
                         SELECT DISTINCT m.user_id FROM team_members m JOIN tree ON m.team_id = tree.id)",
            vec![team.clone()],
        ),
        Subject::Organisation => ("1 = 1", Vec::new()),
    }
}

const FIGURE_SUMS: &str = "coalesce(sum(events), 0), coalesce(sum(prompts), 0), coalesce(sum(sessions_started), 0),
    coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(cache_read_tokens), 0),
    coalesce(sum(cache_write_5m_tokens), 0), coalesce(sum(cache_write_1h_tokens), 0),
    coalesce(sum(reasoning_tokens), 0), coalesce(sum(cost_nusd), 0)";

fn read_figures(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Figures> {
    Ok(Figures {
        events: row.get(at)?,
        prompts: row.get(at + 1)?,
        sessions_started: row.get(at + 2)?,
        usage: Usage {
            input_tokens: row.get(at + 3)?,
            output_tokens: row.get(at + 4)?,
            cache_read_tokens: row.get(at + 5)?,
            cache_write_5m_tokens: row.get(at + 6)?,
            cache_write_1h_tokens: row.get(at + 7)?,
            reasoning_tokens: row.get(at + 8)?,
        },
        cost_nusd: row.get(at + 9)?,
    })
}

/// Parameters: the subject's, then the period's bounds.
fn parameters(subject: Vec<String>, period: Period) -> Vec<Box<dyn ToSql>> {
    let mut all: Vec<Box<dyn ToSql>> = subject.into_iter().map(|value| Box::new(value) as Box<dyn ToSql>).collect();
    all.push(Box::new(period.from_ms));
    all.push(Box::new(period.to_ms));
    all
}

/// The subject's usage over the period.
pub fn totals(conn: &Connection, subject: &Subject, period: Period) -> Result<Figures, DbError> {
    let (filter, values) = subject_filter(subject);
    let usage = crate::analytics::usage::table_for(period);
    let sql =
        format!("SELECT {FIGURE_SUMS} FROM {usage} WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?");
    Ok(conn.query_row(&sql, params_from_iter(parameters(values, period)), |row| read_figures(row, 0))?)
}

/// How many people of the subject had interactive usage in the period.
pub fn active_people(conn: &Connection, subject: &Subject, period: Period) -> Result<i64, DbError> {
    let (filter, values) = subject_filter(subject);
    let usage = crate::analytics::usage::table_for(period);
    let sql = format!(
        "SELECT count(DISTINCT user_id) FROM {usage} WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?"
    );
    Ok(conn.query_row(&sql, params_from_iter(parameters(values, period)), |row| row.get(0))?)
}

/// The subject's usage over the period, broken down, the costliest first (days in order).
pub fn breakdown(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    by: By,
) -> Result<Vec<(String, Figures)>, DbError> {
    let (filter, values) = subject_filter(subject);
    let order = if by == By::Day { "1" } else { "11 DESC, 1" };
    let usage = crate::analytics::usage::table_for(period);
    let sql = format!(
        "SELECT {column}, {FIGURE_SUMS} FROM {usage}
         WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?
         GROUP BY 1 ORDER BY {order}",
        column = by.column()
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows =
        stmt.query_map(params_from_iter(parameters(values, period)), |row| Ok((row.get(0)?, read_figures(row, 1)?)))?;
    let rows: Vec<(String, Figures)> = rows.collect::<Result<_, _>>()?;
    if models::is_about_models(by) {
        return models::model_rows(conn, subject, period, by, rows);
    }
    Ok(rows)
}

/// The subject's most used tools over the period (whole days it covers).
pub fn top_tools(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    limit: usize,
) -> Result<Vec<ToolFigures>, DbError> {
    let (filter, values) = subject_filter(subject);
    let sql = format!(
        "SELECT tool_name, tool_server, sum(calls), sum(errors), sum(denials), sum(duration_ms) FROM agg_tools_daily
         WHERE {filter} AND day_start_ms >= ? AND day_start_ms < ?
         GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT {limit}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(parameters(values, period)), read_tool_figures)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A tool row's figures from its first six columns (name, server, calls, errors,
/// denials, duration).
fn read_tool_figures(row: &rusqlite::Row<'_>) -> rusqlite::Result<ToolFigures> {
    Ok(ToolFigures {
        tool: row.get(0)?,
        tool_server: row.get(1)?,
        calls: row.get(2)?,
        errors: row.get(3)?,
        denials: row.get(4)?,
        duration_ms: row.get(5)?,
    })
}

/// The subject's sessions and active time over the period. Each person counts once,
/// whatever number of teams they are in.
pub fn activity(conn: &Connection, subject: &Subject, period: Period) -> Result<Activity, DbError> {
    let (filter, values) = subject_filter(subject);
    // One row per person and day: the aggregate repeats a person for each of their teams.
    let sql = format!(
        "SELECT coalesce(sum(sessions), 0), coalesce(sum(active_ms), 0), coalesce(sum(notifications_permission), 0),
                coalesce(sum(response_ms), 0), coalesce(sum(responses), 0)
         FROM (SELECT day_start_ms, user_id, max(sessions) AS sessions, max(active_ms) AS active_ms,
                      max(notifications_permission) AS notifications_permission, max(response_ms) AS response_ms,
                      max(responses) AS responses
               FROM agg_sessions_daily WHERE {filter} AND day_start_ms >= ? AND day_start_ms < ?
               GROUP BY day_start_ms, user_id)"
    );
    Ok(conn.query_row(&sql, params_from_iter(parameters(values, period)), |row| {
        Ok(Activity {
            session_days: row.get(0)?,
            active_ms: row.get(1)?,
            permission_prompts: row.get(2)?,
            response_ms: row.get(3)?,
            responses: row.get(4)?,
        })
    })?)
}

/// What [`per_person`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    Spend,
    Sessions,
    ActiveTime,
}

/// Everyone's figure over the period (people with any interactive activity), for a
/// comparison that names nobody: the caller keeps only where one person stands.
pub fn per_person(conn: &Connection, period: Period, measure: Measure) -> Result<Vec<(String, i64)>, DbError> {
    let usage = crate::analytics::usage::table_for(period);
    let sql = match measure {
        Measure::Spend => format!(
            "SELECT user_id, sum(cost_nusd) FROM {usage} WHERE bucket_start_ms >= ?1 AND bucket_start_ms < ?2 GROUP BY user_id"
        ),
        Measure::Sessions => format!(
            "SELECT user_id, sum(sessions_started) FROM {usage} WHERE bucket_start_ms >= ?1 AND bucket_start_ms < ?2 GROUP BY user_id"
        ),
        Measure::ActiveTime => "SELECT user_id, sum(active_ms) FROM (SELECT DISTINCT day_start_ms, user_id, active_ms FROM agg_sessions_daily
                 WHERE day_start_ms >= ?1 AND day_start_ms < ?2) GROUP BY user_id"
            .to_string(),
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([period.from_ms, period.to_ms], |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The fewest people a comparison may cover: below it, a band could point at someone.
pub const MIN_PEOPLE_COMPARED: usize = 5;

/// The mean friction of the scored interactive sessions in `period`, over everyone (a
/// person in two teams counts once); `None` when no session was scored.
pub fn organisation_friction(conn: &Connection, period: Period) -> Result<Option<f64>, DbError> {
    let (sum, sessions): (Option<f64>, Option<i64>) = conn.query_row(
        "SELECT sum(friction_sum), sum(friction_sessions) FROM (
             SELECT DISTINCT day_start_ms, user_id, friction_sum, friction_sessions FROM agg_sessions_daily
             WHERE day_start_ms >= ?1 AND day_start_ms < ?2)",
        rusqlite::params![period.from_ms, period.to_ms],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    Ok(match (sum, sessions) {
        (Some(sum), Some(sessions)) if sessions > 0 => Some(sum / sessions as f64),
        _ => None,
    })
}

/// Where `value` stands among `values` (which include it), as a band in words, or `None`
/// when fewer than [`MIN_PEOPLE_COMPARED`] people are compared.
pub fn band(values: &[i64], value: i64) -> Option<&'static str> {
    if values.len() < MIN_PEOPLE_COMPARED {
        return None;
    }
    let below = values.iter().filter(|v| **v < value).count() as f64;
    let share = below / (values.len() - 1).max(1) as f64;
    Some(match share {
        s if s >= 0.9 => "in the top tenth",
        s if s >= 0.75 => "in the top quarter",
        s if s > 0.25 => "in the middle half",
        s if s > 0.1 => "in the bottom quarter",
        _ => "in the bottom tenth",
    })
}

pub mod adoption;
pub mod delivery;
pub mod disclosure;
pub mod governance;
pub mod groups;
pub mod knowledge;
pub mod models;
pub mod security;

#[cfg(test)]
mod disclosure_tests;
#[cfg(test)]
mod tests;
