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
use super::teams::{ScopePage, ScopeParams, overview_response};
use crate::access::teams;
use crate::analytics::query::Subject;
use crate::http::errors::PageError;
use crate::http::extract::Query;
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
    let read = state
        .read(move |conn| {
            let all: Vec<_> = teams::list(conn)?.into_iter().map(|(team, _)| team).collect();
            let groups = super::reports::org_groups(&all);
            scope::read(conn, &Subject::Organisation, &groups, period, min_people)
        })
        .await?;
    let page = ScopePage {
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
