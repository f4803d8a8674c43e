//! A developer's own insights over a period (`/me/insights`): their spend by agent and
//! model, this period beside the one before, the tools that failed or were refused most,
//! their activity, and where they stand among everyone (a band, never a rank).
//!
//! Invariants: every figure is the person's own or a band over at least
//! `query::MIN_PEOPLE_COMPARED` people (no other person's figure is ever answered); the
//! standings are the person's own band, computed over every active developer, with the
//! person counted at zero when they were not active.

use rusqlite::Connection;

use super::query::{self, Activity, By, Figures, Measure, Period, Subject, ToolFigures};
use crate::db::DbError;

/// What the insights page shows of `user_id` over `period`.
pub struct Insights {
    /// Spend per `agent\tmodel`, costliest first.
    pub by_model: Vec<(String, Figures)>,
    pub now: Figures,
    pub before: Figures,
    /// The tools with errors or refusals, most of them first (at most ten).
    pub hotspots: Vec<ToolFigures>,
    pub activity: Activity,
    pub activity_before: Activity,
    pub standings: Vec<Standing>,
}

/// Where a person stands on one measure among everyone active in the period.
pub struct Standing {
    pub measure: Measure,
    pub band: &'static str,
    pub developers: usize,
}

/// The insights of `user_id` over `period`, read from the aggregates.
pub fn of_person(conn: &Connection, user_id: &str, period: Period) -> Result<Insights, DbError> {
    let subject = Subject::Person(user_id.to_string());
    let mut standings = Vec::new();
    for measure in [Measure::Spend, Measure::Sessions, Measure::ActiveTime] {
        standings.extend(standing(measure, &query::per_person(conn, period, measure)?, user_id));
    }
    Ok(Insights {
        by_model: query::breakdown(conn, &subject, period, By::AgentModel)?,
        now: query::totals(conn, &subject, period)?,
        before: query::totals(conn, &subject, period.previous())?,
        hotspots: hotspots(query::top_tools(conn, &subject, period, 200)?),
        activity: query::activity(conn, &subject, period)?,
        activity_before: query::activity(conn, &subject, period.previous())?,
        standings,
    })
}

/// The tools with errors or refusals, most first, then by name; at most ten.
fn hotspots(tools: Vec<ToolFigures>) -> Vec<ToolFigures> {
    let mut failing: Vec<ToolFigures> = tools.into_iter().filter(|tool| tool.errors + tool.denials > 0).collect();
    failing.sort_by(|a, b| (b.errors + b.denials).cmp(&(a.errors + a.denials)).then(a.tool.cmp(&b.tool)));
    failing.truncate(10);
    failing
}

/// `me`'s band among `everyone` (person, value); a person not among them counts at 0.
fn standing(measure: Measure, everyone: &[(String, i64)], me: &str) -> Option<Standing> {
    let mine = everyone.iter().find(|(user, _)| user == me).map_or(0, |(_, v)| *v);
    let mut all: Vec<i64> = everyone.iter().map(|(_, v)| *v).collect();
    if !everyone.iter().any(|(user, _)| user == me) {
        all.push(mine);
    }
    query::band(&all, mine).map(|band| Standing { measure, band, developers: all.len() })
}
