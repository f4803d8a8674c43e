//! `/me/insights`: what my last 30 days say, against the 30 before — where the money went
//! (by agent and model, with each model's cache-hit ratio), what caching saved in dollars,
//! my tool error and denial hotspots, permission prompts and response time — and where I
//! stand among my organisation's developers, as a band, only when at least five people are
//! compared and never naming anyone. Every insight links to the sessions behind it.
//!
//! Invariants: figures come from `analytics::query` only (interactive runs); the
//! comparison keeps nothing of other people but where the caller stands.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;

use super::login::render;
use super::shown::usd;
use crate::analytics::insights;
use crate::analytics::query::{Measure, Period, ToolFigures};
use crate::events::partitions::Day;
use crate::http::errors::PageError;
use crate::model::{AgentType, Usage};
use crate::pricing::PriceBook;
use crate::scoring::store::{self, PeriodScores};
use crate::state::AppState;
use crate::state::caller::PageCaller;

const DAYS: i64 = 30;

pub struct CostLine {
    pub agent: String,
    pub model: String,
    pub cost: String,
    pub share: String,
    pub cache_hits: String,
    pub saved: String,
    pub link: String,
}

pub struct Hotspot {
    pub tool: String,
    pub calls: i64,
    pub errors: i64,
    pub denials: i64,
    pub rate: String,
}

pub struct Standing {
    pub figure: &'static str,
    pub band: String,
}

#[derive(Template)]
#[template(path = "web/me_insights.html")]
struct InsightsPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    costs: Vec<CostLine>,
    total: String,
    total_before: String,
    saved: String,
    hotspots: Vec<Hotspot>,
    prompts: i64,
    prompts_before: i64,
    response: String,
    standings: Vec<Standing>,
    compared: bool,
    scored: ScoredLines,
}

/// Friction and step efficiency (the trajectory scores), this period and the one before.
struct ScoredLines {
    sessions: i64,
    sessions_before: i64,
    friction: String,
    friction_before: String,
    efficiency: String,
    efficiency_before: String,
    /// (session id, agent session id, friction, shape) of the five with the most friction.
    most_friction: Vec<(String, String, String, String)>,
    shapes: Vec<ShapeLine>,
}

/// Step efficiency within one shape, this period and the one before, with the sessions.
struct ShapeLine {
    shape: String,
    sessions: i64,
    efficiency: String,
    sessions_before: i64,
    efficiency_before: String,
    change: String,
    link: String,
}

/// Step efficiency compared within each shape (in the closed set's order), each line
/// linking to this period's sessions of that shape, most friction first.
fn shape_lines(now: &PeriodScores, before: &PeriodScores, period: Period) -> Vec<ShapeLine> {
    let find = |scores: &PeriodScores, shape: &str| scores.by_shape.iter().find(|(s, _, _)| s == shape).cloned();
    let (from, to) = (Day::of_ms(period.from_ms), Day::of_ms(period.to_ms - 1));
    crate::sessions::listing::SHAPES
        .iter()
        .filter_map(|shape| {
            let (this, last) = (find(now, shape), find(before, shape));
            if this.is_none() && last.is_none() {
                return None;
            }
            let share = |line: &Option<(String, i64, f64)>| line.as_ref().map(|(_, _, e)| *e);
            let shown = |e: Option<f64>| e.map_or("—".to_string(), |e| format!("{:.0}%", e * 100.0));
            let change = match (share(&this), share(&last)) {
                (Some(now), Some(then)) => format!("{:+.0} points", (now - then) * 100.0),
                _ => "—".into(),
            };
            Some(ShapeLine {
                shape: shape.replace('_', " "),
                sessions: this.as_ref().map_or(0, |(_, n, _)| *n),
                efficiency: shown(share(&this)),
                sessions_before: last.as_ref().map_or(0, |(_, n, _)| *n),
                efficiency_before: shown(share(&last)),
                change,
                link: format!("/me/sessions?shape={shape}&from={from}&to={to}&sort=friction"),
            })
        })
        .collect()
}

fn scored_lines(now: PeriodScores, before: PeriodScores, period: Period) -> ScoredLines {
    let friction = |f: Option<f64>| f.map_or("—".into(), |f| format!("{f:.1}"));
    let efficiency = |e: Option<f64>| e.map_or("—".into(), |e| format!("{:.0}%", e * 100.0));
    let shapes = shape_lines(&now, &before, period);
    ScoredLines {
        shapes,
        sessions: now.sessions,
        sessions_before: before.sessions,
        friction: friction(now.friction),
        friction_before: friction(before.friction),
        efficiency: efficiency(now.efficiency),
        efficiency_before: efficiency(before.efficiency),
        most_friction: now
            .most_friction
            .into_iter()
            .map(|(id, agent_session, f, shape)| (id, agent_session, format!("{f:.1}"), shape.replace('_', " ")))
            .collect(),
    }
}

/// What the cache reads of `usage` would have cost as fresh input, less what they cost:
/// per-token prices read off the agent's table at a volume below any long-context tier.
fn cache_savings_nusd(book: &PriceBook, agent: &str, model: &str, usage: &Usage) -> i64 {
    let Some(agent) = AgentType::parse(agent) else { return 0 };
    const PROBE: i64 = 10_000;
    let fresh = book.price(agent, Some(model), &Usage { input_tokens: PROBE, ..Usage::default() }).cost_nusd;
    let cached = book.price(agent, Some(model), &Usage { cache_read_tokens: PROBE, ..Usage::default() }).cost_nusd;
    ((fresh - cached).max(0) as i128 * i128::from(usage.cache_read_tokens) / i128::from(PROBE)) as i64
}

pub async fn page(State(state): State<Arc<AppState>>, PageCaller(caller): PageCaller) -> Result<Response, PageError> {
    let period = Period::last_days(state.clock.now_ms(), DAYS);
    let user_id = caller.user.id.clone();
    let (read, scores, scores_before) = state
        .read(move |conn| {
            let previous = period.previous();
            let mut scores = store::period_of_person(conn, &user_id, period.from_ms, period.to_ms)?;
            // The caller's own sessions: named by their transcripts' titles where there is one.
            let ids: Vec<&str> = scores.most_friction.iter().map(|(id, ..)| id.as_str()).collect();
            let titles = crate::transcripts::store::titles(conn, &user_id, &ids)?;
            for (id, name, ..) in &mut scores.most_friction {
                *name = titles.get(id).cloned().unwrap_or_else(|| format!("session {name}"));
            }
            Ok((
                insights::of_person(conn, &user_id, period)?,
                scores,
                store::period_of_person(conn, &user_id, previous.from_ms, previous.to_ms)?,
            ))
        })
        .await?;
    let (costs, saved_total) = cost_lines(&state.prices, &read);
    let response = match read.activity.responses {
        0 => "—".to_string(),
        n => format!("{:.1} s", read.activity.response_ms as f64 / n as f64 / 1000.0),
    };
    let standings: Vec<Standing> = read.standings.iter().map(standing).collect();
    Ok(render(&InsightsPage {
        nav_role: caller.role.as_str(),
        costs,
        total: usd(read.now.cost_nusd),
        total_before: usd(read.before.cost_nusd),
        saved: usd(saved_total),
        hotspots: read.hotspots.iter().map(hotspot).collect(),
        prompts: read.activity.permission_prompts,
        prompts_before: read.activity_before.permission_prompts,
        response,
        compared: !standings.is_empty(),
        standings,
        scored: scored_lines(scores, scores_before, period),
    }))
}

/// The ten costliest agent and model lines, and what cache reads saved over all of them.
fn cost_lines(prices: &PriceBook, read: &insights::Insights) -> (Vec<CostLine>, i64) {
    let mut saved_total = 0;
    let lines = read
        .by_model
        .iter()
        .take(10)
        .map(|(key, figures)| {
            let (agent, model) = key.split_once('\t').unwrap_or((key.as_str(), ""));
            let saved = cache_savings_nusd(prices, agent, model, &figures.usage);
            saved_total += saved;
            CostLine {
                agent: agent.to_string(),
                model: if model.is_empty() { "(no model)".into() } else { model.to_string() },
                cost: usd(figures.cost_nusd),
                share: if read.now.cost_nusd > 0 {
                    format!("{:.0}%", figures.cost_nusd as f64 * 100.0 / read.now.cost_nusd as f64)
                } else {
                    "—".into()
                },
                cache_hits: figures.cache_hit_ratio().map_or("—".into(), |r| format!("{:.0}%", r * 100.0)),
                saved: usd(saved),
                link: format!(
                    "/me/sessions?agent={}&model={}&sort=cost",
                    crate::model::percent_encode(agent),
                    crate::model::percent_encode(model)
                ),
            }
        })
        .collect();
    (lines, saved_total)
}

fn hotspot(tool: &ToolFigures) -> Hotspot {
    Hotspot {
        tool: if tool.tool_server.is_empty() {
            tool.tool.clone()
        } else {
            format!("{} ({})", tool.tool, tool.tool_server)
        },
        calls: tool.calls,
        errors: tool.errors,
        denials: tool.denials,
        rate: format!("{:.0}%", (tool.errors + tool.denials) as f64 * 100.0 / tool.calls.max(1) as f64),
    }
}

fn standing(standing: &insights::Standing) -> Standing {
    let figure = match standing.measure {
        Measure::Spend => "Spend",
        Measure::Sessions => "Sessions",
        Measure::ActiveTime => "Active time",
    };
    Standing { figure, band: format!("{} of {} developers", standing.band, standing.developers) }
}
