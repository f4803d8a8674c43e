//! `/org`: the organisation's overview over 7, 30 or 90 days: headline figures against the
//! period before, spend per day, agents, models, tools and the top-level teams (with the
//! people in no team), each table as CSV. Every role sees it (`docs/access.md`).
//!
//! Invariants: figures come from `web::scope` (none describes fewer than
//! `analytics.min_group_size` people; interactive runs only; aggregates only).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::scope::{self, PERIODS};
use super::teams::{MonthCard, ScopePage, ScopeParams, overview_response};
use crate::access::teams;
use crate::analytics::month::MonthToDate;
use crate::analytics::query::Subject;
use crate::http::errors::PageError;
use crate::http::extract::Query;
use crate::model::nusd_to_usd;
use crate::state::AppState;
use crate::state::caller::PageCaller;

/// The organisation's tabs.
pub fn org_tabs() -> Vec<(String, &'static str)> {
    let mut tabs = vec![("/org".to_string(), "Dashboard")];
    tabs.extend(super::reports::Report::ORG.iter().map(|r| (format!("/org/{}", r.segment()), r.label())));
    tabs.insert(3, ("/org/benchmarks".into(), "Benchmarks"));
    tabs.insert(5, ("/org/search".into(), "Search"));
    tabs
}

pub async fn dashboard(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let (days, period) = scope::period_param(params.days.as_deref(), state.clock.now_ms())?;
    let min_people = state.config.analytics.min_group_size;
    let now_ms = state.clock.now_ms();
    let (read, month, unpriced) = state
        .read(move |conn| {
            let all: Vec<_> = teams::list(conn)?.into_iter().map(|(team, _)| team).collect();
            let groups = super::reports::org_groups(&all);
            let read = scope::read(conn, &Subject::Organisation, &groups, period, min_people)?;
            let month = crate::analytics::month::organisation(conn, now_ms)?;
            let budget = crate::alerts::store::rule_settings(conn)?
                .into_iter()
                .find(|setting| setting.rule == crate::alerts::rules::Rule::BudgetThreshold && setting.enabled)
                .and_then(|setting| setting.threshold)
                .filter(|dollars| *dollars > 0.0);
            let unpriced = crate::sessions::unpriced::all(conn)?;
            Ok::<_, crate::db::DbError>((read, month_card(&month, budget, min_people), unpriced))
        })
        .await?;
    let unpriced = unpriced_note(&unpriced, &state.prices, now_ms);
    let page = ScopePage {
        month,
        unpriced,
        nav_role: caller.role.as_str(),
        title: "The organisation".into(),
        path: "/org".into(),
        days,
        periods: PERIODS,
        withheld: None,
        shown: None,
        teams_heading: "Teams",
        tabs: org_tabs(),
    };
    overview_response(page, read, period, &params, "org")
}

/// The month card, or `None` when fewer than the minimum number of people were active
/// this month (a monthly total of a handful of people is their spend).
fn month_card(month: &MonthToDate, budget_usd: Option<f64>, min_people: i64) -> Option<MonthCard> {
    if (month.active_people as i64) < min_people {
        return None;
    }
    let usd = |nusd: i64| format!("${:.2}", nusd_to_usd(nusd));
    let (low, high) = month.range_nusd();
    let (budget, over_budget) = match budget_usd {
        Some(dollars) => {
            let share = nusd_to_usd(month.spent_nusd) / dollars * 100.0;
            let over = nusd_to_usd(high) > dollars;
            (format!("of a ${dollars:.2} budget ({share:.0}%)"), over)
        }
        None => ("no organisation budget is set (an administrator sets it on /admin/alerts)".into(), false),
    };
    Some(MonthCard {
        month: month.month.clone(),
        spent: usd(month.spent_nusd),
        budget,
        linear: usd(month.linear_nusd),
        weekday: usd(month.weekday_nusd),
        range: format!("{} to {}", usd(low), usd(high)),
        per_developer: usd(month.spent_nusd / month.active_people.max(1) as i64),
        people: month.active_people,
        over_budget,
    })
}

/// The sentence saying the figures leave out tokens of models without a price seen in
/// the last 31 days (organisation-wide: model names and token counts, nobody's), or
/// `None` when every model seen is priced.
fn unpriced_note(
    found: &[crate::sessions::unpriced::Unpriced],
    book: &crate::pricing::PriceBook,
    now_ms: i64,
) -> Option<String> {
    let recent: Vec<_> = crate::web::admin::prices::still_unpriced(found, book)
        .filter(|model| model.last_seen_ms >= now_ms - 31 * 86_400_000)
        .collect();
    if recent.is_empty() {
        return None;
    }
    let tokens: i64 = recent.iter().map(|model| model.tokens()).sum();
    let names: Vec<&str> = recent.iter().take(3).map(|model| model.model.as_str()).collect();
    let more = if recent.len() > 3 { format!(" and {} more", recent.len() - 3) } else { String::new() };
    Some(format!(
        "These costs leave out {} tokens of {} without a price ({}{more}), counted at $0 until an administrator adds a price on /admin/price-tables.",
        crate::model::count(tokens),
        if recent.len() == 1 { "a model".to_string() } else { format!("{} models", recent.len()) },
        names.join(", ")
    ))
}
