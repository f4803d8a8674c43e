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
use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::login::render;
use super::shown::{count, hours, share, tokens, trend, usd};
use crate::access::roles::OrgRole;
use crate::analytics::query::{self, Activity, By, Figures, Period, Subject, ToolFigures};
use crate::db;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::Query;
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

/// `/`: the page that answers the caller's first question, by role: an administrator's
/// health page, the organisation for `VIEWER_AGGREGATE` (leadership, finance), an
/// investigator's grants, an eval engineer's evaluation runs, a lead's team (the team chooser when they lead several), and
/// everyone else's own overview. A visitor who is not signed in goes to `/login`.
pub async fn root(State(state): State<Arc<AppState>>, PageCaller(caller): PageCaller) -> Result<Redirect, PageError> {
    let to = match caller.role {
        OrgRole::Admin => "/admin/health".to_string(),
        OrgRole::ViewerAggregate => "/org".to_string(),
        OrgRole::Investigator => "/grants".to_string(),
        OrgRole::EvalEngineer => "/org/benchmarks".to_string(),
        OrgRole::Member => {
            let user_id = caller.user.id.clone();
            let led = state.read(move |conn| crate::access::teams::led_by(conn, &user_id)).await?;
            match led.as_slice() {
                [] => "/me".to_string(),
                [slug] => format!("/team/{slug}"),
                _ => "/team".to_string(),
            }
        }
    };
    Ok(Redirect::to(&to))
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
    /// Sessions started (for a model: the sessions that used it).
    pub sessions: i64,
}

#[derive(Template)]
#[template(path = "web/me_overview.html")]
struct OverviewPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    name: String,
    days: i64,
    periods: [i64; 3],
    headlines: Vec<Headline>,
    chart: String,
    per_day: Vec<(String, String)>,
    agents: Vec<Line>,
    models: Vec<Line>,
    /// The exact model ids behind the model families.
    snapshots: Vec<Line>,
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
    snapshots: Vec<(String, Figures)>,
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
    let read = state
        .read(move |conn| {
            Ok::<_, db::DbError>(Read {
                now: query::totals(conn, &subject, period)?,
                before: query::totals(conn, &subject, period.previous())?,
                activity: query::activity(conn, &subject, period)?,
                activity_before: query::activity(conn, &subject, period.previous())?,
                by_day: query::breakdown(conn, &subject, period, By::Day)?,
                agents: query::breakdown(conn, &subject, period, By::Agent)?,
                models: query::breakdown(conn, &subject, period, By::Model)?,
                snapshots: query::breakdown(conn, &subject, period, By::ModelSnapshot)?,
                tools: query::top_tools(conn, &subject, period, TOP)?,
            })
        })
        .await?;
    Ok(render(&overview(caller.role.as_str(), caller.user.name.clone(), days, period, read)))
}

fn overview(nav_role: &'static str, name: String, days: i64, period: Period, read: Read) -> OverviewPage {
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
                sessions: figures.sessions_started,
            })
            .collect()
    };
    OverviewPage {
        nav_role,
        name,
        days,
        periods: PERIODS,
        headlines,
        chart,
        per_day,
        empty: read.now.events == 0,
        agents: lines(read.agents),
        models: lines(read.models),
        snapshots: lines(read.snapshots),
        tools: read.tools,
    }
}
