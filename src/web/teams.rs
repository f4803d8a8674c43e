//! `/team`: the teams the caller may see; `/team/<slug>`: a team's overview (its members
//! and every team below it, over 7, 30 or 90 days, each table as CSV);
//! `/team/<slug>/roster`: who is in it.
//!
//! Invariants: a team the caller may not see (`access::teams::visible_to`) is a 404, the
//! same as a team that does not exist; figures come from `web::scope`, so none describes
//! fewer than `analytics.min_group_size` people; the roster names only people whose
//! `named_in_team_views` is on and shows no figures of anyone.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::login::render;
use super::scope::{self, PERIODS};
use crate::access::teams::{self, RosterEntry, Team};
use crate::analytics::query::groups::Guarded;
use crate::analytics::query::{Period, Subject};
use crate::db::DbError;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Path, Query};
use crate::state::AppState;
use crate::state::caller::{Caller, PageCaller};

#[derive(Deserialize, Default)]
pub struct ScopeParams {
    pub days: Option<String>,
    pub format: Option<String>,
    pub table: Option<String>,
}

/// The team `slug` if the caller may see it, with the teams directly below it.
fn visible_team(
    conn: &rusqlite::Connection,
    caller: &Caller,
    slug: &str,
) -> Result<Option<(Team, Vec<Team>)>, DbError> {
    let visible = teams::visible_to(conn, &caller.user.id, caller.role)?;
    let Some((team, _)) = visible.iter().find(|(team, _)| team.slug == slug).cloned() else { return Ok(None) };
    let all = teams::list(conn)?;
    let children = all.into_iter().map(|(t, _)| t).filter(|t| t.parent_id.as_deref() == Some(&team.id)).collect();
    Ok(Some((team, children)))
}

/// Runs `read` on a reader connection with the team `slug` and the teams directly below
/// it, when the caller may see it; a team they may not see is a 404, like a missing one.
pub async fn read_team<T: Send + 'static>(
    state: &AppState,
    caller: &Caller,
    slug: &str,
    read: impl FnOnce(&rusqlite::Connection, Team, Vec<Team>) -> Result<T, DbError> + Send + 'static,
) -> Result<T, PageError> {
    let (caller, slug) = (caller.clone(), slug.to_string());
    let found = state
        .read(move |conn| match visible_team(conn, &caller, &slug)? {
            Some((team, children)) => read(conn, team, children).map(Some),
            None => Ok(None),
        })
        .await?;
    found.ok_or(PageError(AppError::NotFound))
}

#[derive(Template)]
#[template(path = "web/teams.html")]
struct TeamsPage {
    nav_role: &'static str,
    /// (slug, name, parent slug, whether the caller may open the parent, direct members)
    teams: Vec<(String, String, String, bool, i64)>,
    sees_all: bool,
}

pub async fn index(State(state): State<Arc<AppState>>, PageCaller(caller): PageCaller) -> Result<Response, PageError> {
    let (user_id, role) = (caller.user.id.clone(), caller.role);
    let visible = state
        .read(move |conn| {
            let all = teams::list(conn)?;
            let visible = teams::visible_to(conn, &user_id, role)?;
            Ok::<_, DbError>((all, visible))
        })
        .await?;
    let (all, visible) = visible;
    let slug_of = |id: &str| all.iter().find(|(t, _)| t.id == id).map(|(t, _)| t.slug.clone()).unwrap_or_default();
    // A parent the caller may not open is named, never linked (its page would be a 404).
    let opens: std::collections::HashSet<String> = visible.iter().map(|(team, _)| team.id.clone()).collect();
    let rows = visible
        .into_iter()
        .map(|(team, members)| {
            let parent = team.parent_id.as_deref().map(slug_of).unwrap_or_default();
            let parent_opens = team.parent_id.as_ref().is_some_and(|id| opens.contains(id));
            (team.slug, team.name, parent, parent_opens, members)
        })
        .collect();
    Ok(render(&TeamsPage { nav_role: caller.role.as_str(), teams: rows, sees_all: caller.role.sees_every_team() }))
}

#[derive(Template)]
#[template(path = "web/scope_overview.html")]
pub struct ScopePage {
    pub nav_role: &'static str,
    pub title: String,
    /// The page's path, for the period and CSV links.
    pub path: String,
    pub days: i64,
    pub periods: [i64; 3],
    /// Why the figures are not shown, when they are not.
    pub withheld: Option<String>,
    pub shown: Option<scope::Shown>,
    pub teams_heading: &'static str,
    /// Links of the pages beside this one: (path, label).
    pub tabs: Vec<(String, &'static str)>,
    /// The calendar month against the budget (the organisation's page only).
    pub month: Option<MonthCard>,
    /// What the cost figures leave out: tokens of models no table prices, counted at $0
    /// (the organisation's page only: the count is organisation-wide).
    pub unpriced: Option<String>,
}

/// Month to date against the organisation's budget, with the forecast, in words.
pub struct MonthCard {
    pub month: String,
    pub spent: String,
    /// "of a $X budget (Y %)", or why there is none.
    pub budget: String,
    pub linear: String,
    pub weekday: String,
    pub range: String,
    /// Spend per active developer so far, and how many.
    pub per_developer: String,
    pub people: usize,
    /// The forecast past the budget: said as a warning.
    pub over_budget: bool,
}

/// The tabs of a team's pages.
pub fn team_tabs(slug: &str) -> Vec<(String, &'static str)> {
    let mut tabs = vec![
        (format!("/team/{slug}"), "Overview"),
        (format!("/team/{slug}/roster"), "Roster"),
        (format!("/team/{slug}/sessions"), "Sessions"),
        (format!("/team/{slug}/pulls"), "Pull requests"),
    ];
    tabs.extend(super::reports::Report::TEAM.iter().map(|r| (format!("/team/{slug}/{}", r.segment()), r.label())));
    tabs
}

/// Renders an overview page, or one of its tables as CSV.
pub fn overview_response(
    page: ScopePage,
    read: Guarded<scope::Read>,
    period: Period,
    params: &ScopeParams,
    file: &str,
) -> Result<Response, PageError> {
    let shown = match &read {
        Guarded::Shown(read) => Some(scope::shown(read, page.days, period)),
        Guarded::TooFew { .. } | Guarded::Withheld { .. } => None,
    };
    match params.format.as_deref() {
        None | Some("") | Some("html") => {}
        Some("csv") => {
            let Some(shown) = &shown else {
                return Err(PageError(AppError::Forbidden(
                    "this group's figures are not shown in the period, so they cannot be exported".into(),
                )));
            };
            return scope::csv(shown, params.table.as_deref().unwrap_or(""), file);
        }
        Some(other) => {
            return Err(PageError(AppError::bad_request(
                "format",
                format!("format must be html or csv, not {other:?}"),
            )));
        }
    }
    let withheld = super::report::withheld_notice(&read);
    Ok(render(&ScopePage { withheld, shown, ..page }))
}

pub async fn overview(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(slug): Path<String>,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let (days, period) = scope::period_param(params.days.as_deref(), state.clock.now_ms())?;
    let min_people = state.config.analytics.min_group_size;
    let (team, read) = read_team(&state, &caller, &slug, move |conn, team, children| {
        let groups = super::reports::team_groups(&team, children);
        let read = scope::read(conn, &Subject::Team(team.id.clone()), &groups, period, min_people)?;
        Ok((team, read))
    })
    .await?;
    let page = ScopePage {
        month: None,
        unpriced: None,
        nav_role: caller.role.as_str(),
        title: format!("Team {}", team.name),
        path: format!("/team/{slug}"),
        days,
        periods: PERIODS,
        withheld: None,
        shown: None,
        teams_heading: "Sub-teams",
        tabs: team_tabs(&slug),
    };
    overview_response(page, read, period, &params, &format!("team-{slug}"))
}

#[derive(Template)]
#[template(path = "web/team_roster.html")]
struct RosterPage {
    nav_role: &'static str,
    name: String,
    tabs: Vec<(String, &'static str)>,
    entries: Vec<RosterEntry>,
    unnamed: usize,
}

pub async fn roster(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(slug): Path<String>,
) -> Result<Response, PageError> {
    let (team, entries) = read_team(&state, &caller, &slug, |conn, team, _| {
        let entries = teams::roster(conn, &team.id)?;
        Ok((team, entries))
    })
    .await?;
    let unnamed = entries.iter().filter(|e| e.name.is_none()).count();
    let nav_role = caller.role.as_str();
    Ok(render(&RosterPage { nav_role, name: team.name, tabs: team_tabs(&slug), entries, unnamed }))
}
