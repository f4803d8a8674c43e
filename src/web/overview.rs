//! `/me`: a developer's own overview over the last 7, 30 or 90 days (`?days=`): spend,
//! tokens with the cache-hit ratio, sessions, active time, each against the period before;
//! spend per day (a chart, and the same numbers as a table); agents, models and tools.
//! `/` sends a signed-in person here. `/me/prs` explains what it will show once the GitHub
//! app is connected.
//!
//! Invariants: every figure is the caller's own and comes from `analytics::query`
//! (interactive runs only: CI and EVAL runs never count here); the page reads aggregates,
//! never raw events.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::login::render;
use super::shown::{count, usd};
use crate::analytics::query::{self, Activity, By, Figures, Period, Subject, ToolFigures};
use crate::db;
use crate::http::errors::{AppError, PageError};
use crate::model::nusd_to_usd;
use crate::state::AppState;
use crate::state::caller::PageCaller;

/// The periods the page offers.
const PERIODS: [i64; 3] = [7, 30, 90];
const TOP: usize = 8;

#[derive(Deserialize)]
pub struct OverviewParams {
    days: Option<String>,
}

/// `/`: the overview (which sends a visitor who is not signed in to `/login`).
pub async fn root() -> Redirect {
    Redirect::to("/me")
}

/// One headline figure with its trend against the previous period.
pub struct Headline {
    pub label: &'static str,
    pub value: String,
    pub trend: String,
}

/// A row of a breakdown table.
pub struct Line {
    pub name: String,
    pub cost: String,
    pub share: String,
    pub tokens: String,
    pub events: i64,
}

#[derive(Template)]
#[template(path = "web/me_overview.html")]
struct OverviewPage {
    signed_in: bool,
    name: String,
    days: i64,
    periods: [i64; 3],
    headlines: Vec<Headline>,
    chart: String,
    per_day: Vec<(String, String)>,
    agents: Vec<Line>,
    models: Vec<Line>,
    tools: Vec<ToolFigures>,
    empty: bool,
}

struct Read {
    now: Figures,
    before: Figures,
    activity: Activity,
    activity_before: Activity,
    by_day: Vec<(String, Figures)>,
    agents: Vec<(String, Figures)>,
    models: Vec<(String, Figures)>,
    tools: Vec<ToolFigures>,
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Query(params): Query<OverviewParams>,
) -> Result<Response, PageError> {
    let days = match params.days.as_deref() {
        None | Some("") => 30,
        Some(text) => text.parse().ok().filter(|days| PERIODS.contains(days)).ok_or_else(|| {
            PageError(AppError::bad_request("days", format!("days must be 7, 30 or 90, not {text:?}")))
        })?,
    };
    let period = Period::last_days(state.clock.now_ms(), days);
    let subject = Subject::Person(caller.user.id.clone());
    let pool = state.readers.clone();
    let read = db::blocking(move || {
        let conn = pool.get()?;
        Ok::<_, db::DbError>(Read {
            now: query::totals(&conn, &subject, period)?,
            before: query::totals(&conn, &subject, period.previous())?,
            activity: query::activity(&conn, &subject, period)?,
            activity_before: query::activity(&conn, &subject, period.previous())?,
            by_day: query::breakdown(&conn, &subject, period, By::Day)?,
            agents: query::breakdown(&conn, &subject, period, By::Agent)?,
            models: query::breakdown(&conn, &subject, period, By::Model)?,
            tools: query::top_tools(&conn, &subject, period, TOP)?,
        })
    })
    .await
    .map_err(AppError::from)?;
    Ok(render(&overview(caller.user.name.clone(), days, period, read)))
}

fn overview(name: String, days: i64, period: Period, read: Read) -> OverviewPage {
    let tokens = |f: &Figures| {
        f.usage.input_tokens
            + f.usage.output_tokens
            + f.usage.cache_read_tokens
            + f.usage.cache_write_5m_tokens
            + f.usage.cache_write_1h_tokens
            + f.usage.reasoning_tokens
    };
    let ratio = |f: &Figures| f.cache_hit_ratio().map_or("—".to_string(), |r| format!("{:.0}%", r * 100.0));
    let headlines = vec![
        Headline {
            label: "Spend",
            value: usd(read.now.cost_nusd),
            trend: trend(read.now.cost_nusd, read.before.cost_nusd, days),
        },
        Headline {
            label: "Tokens",
            value: count(tokens(&read.now)),
            trend: trend(tokens(&read.now), tokens(&read.before), days),
        },
        Headline {
            label: "Cache hits",
            value: ratio(&read.now),
            trend: format!("{} the previous {days} days", ratio(&read.before)),
        },
        Headline {
            label: "Sessions",
            value: count(read.now.sessions_started),
            trend: trend(read.now.sessions_started, read.before.sessions_started, days),
        },
        Headline {
            label: "Active time",
            value: hours(read.activity.active_ms),
            trend: trend(read.activity.active_ms, read.activity_before.active_ms, days),
        },
        Headline {
            label: "Prompts",
            value: count(read.now.prompts),
            trend: trend(read.now.prompts, read.before.prompts, days),
        },
    ];
    // Every day of the period, the empty ones too.
    let spent: std::collections::HashMap<String, i64> =
        read.by_day.iter().map(|(day, figures)| (day.clone(), figures.cost_nusd)).collect();
    let mut bars = Vec::new();
    let mut per_day = Vec::new();
    let mut day = period.from_ms;
    while day < period.to_ms {
        let cost = spent.get(&day.to_string()).copied().unwrap_or(0);
        let date = crate::model::rfc3339_ms(day)[..10].to_string();
        bars.push(crate::charts::Bar {
            label: date[5..].to_string(),
            hover: format!("{date}: {}", usd(cost)),
            value: nusd_to_usd(cost),
        });
        per_day.push((date, usd(cost)));
        day += 86_400_000;
    }
    let chart = crate::charts::bars("Spend per day (USD)", &bars, |v| format!("${v:.2}"), 900, 220);
    let lines = |rows: Vec<(String, Figures)>| -> Vec<Line> {
        rows.into_iter()
            .take(TOP)
            .map(|(name, figures)| Line {
                name: if name.is_empty() { "(no model)".into() } else { name },
                cost: usd(figures.cost_nusd),
                share: share(figures.cost_nusd, read.now.cost_nusd),
                tokens: count(tokens(&figures)),
                events: figures.events,
            })
            .collect()
    };
    OverviewPage {
        signed_in: true,
        name,
        days,
        periods: PERIODS,
        headlines,
        chart,
        per_day,
        empty: read.now.events == 0,
        agents: lines(read.agents),
        models: lines(read.models),
        tools: read.tools,
    }
}

fn hours(ms: i64) -> String {
    format!("{:.1} h", ms as f64 / 3_600_000.0)
}

fn share(part: i64, whole: i64) -> String {
    if whole > 0 { format!("{:.0}%", part as f64 * 100.0 / whole as f64) } else { "—".into() }
}

/// "+12% against the previous 30 days", "new", or "no change".
fn trend(now: i64, before: i64, days: i64) -> String {
    match (now, before) {
        (0, 0) => "nothing in either period".into(),
        (_, 0) => format!("new: nothing the previous {days} days"),
        _ => {
            let change = (now - before) as f64 * 100.0 / before as f64;
            if change.abs() < 0.5 {
                format!("no change on the previous {days} days")
            } else {
                format!("{change:+.0}% on the previous {days} days")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_as_people_write_them() {
        assert_eq!(trend(150, 100, 30), "+50% on the previous 30 days");
        assert_eq!(trend(50, 100, 7), "-50% on the previous 7 days");
        assert_eq!(trend(100, 0, 7), "new: nothing the previous 7 days");
        assert_eq!(trend(0, 0, 7), "nothing in either period");
        assert_eq!(trend(1001, 1000, 90), "no change on the previous 90 days");
        assert_eq!(share(1, 3), "33%");
        assert_eq!(hours(5_400_000), "1.5 h");
    }
}
