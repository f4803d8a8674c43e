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
use axum::extract::{Path, Query, State};
use axum::response::Response;
use serde::Deserialize;

use super::login::render;
use super::scope::{self, PERIODS};
use crate::access::teams::{self, RosterEntry, Team};
use crate::analytics::query::groups::{Guarded, TeamGroup};
use crate::analytics::query::{Period, Subject};
use crate::db::{self, DbError};
use crate::http::errors::{AppError, PageError};
use crate::state::AppState;
use crate::state::caller::{Caller, PageCaller};

#[derive(Deserialize, Default)]
pub struct ScopeParams {
    pub days: Option<String>,
    pub format: Option<String>,
    pub table: Option<String>,
}

/// The team `slug` if the caller may see it, with the teams directly below it.
pub fn visible_team(
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

#[derive(Template)]
#[template(path = "web/teams.html")]
struct TeamsPage {
    nav_role: &'static str,
    /// (slug, name, parent slug, direct members)
    teams: Vec<(String, String, String, i64)>,
    sees_all: bool,
}

pub async fn index(State(state): State<Arc<AppState>>, PageCaller(caller): PageCaller) -> Result<Response, PageError> {
    let pool = state.readers.clone();
    let (user_id, role) = (caller.user.id.clone(), caller.role);
    let visible = db::blocking(move || {
        let conn = pool.get()?;
        let all = teams::list(&conn)?;
        let visible = teams::visible_to(&conn, &user_id, role)?;
        Ok::<_, DbError>((all, visible))
    })
    .await
    .map_err(AppError::from)?;
    let (all, visible) = visible;
    let slug_of = |id: &str| all.iter().find(|(t, _)| t.id == id).map(|(t, _)| t.slug.clone()).unwrap_or_default();
    let rows = visible
        .into_iter()
        .map(|(team, members)| {
            let parent = team.parent_id.as_deref().map(slug_of).unwrap_or_default();
            (team.slug, team.name, parent, members)
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
    pub too_few: Option<(i64, i64)>,
    pub shown: Option<scope::Shown>,
    pub teams_heading: &'static str,
    /// Links of the pages beside this one: (path, label).
    pub tabs: Vec<(String, &'static str)>,
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
        Guarded::TooFew { .. } => None,
    };
    match params.format.as_deref() {
        None | Some("") | Some("html") => {}
        Some("csv") => {
            let Some(shown) = &shown else {
                return Err(PageError(AppError::Forbidden(
                    "this group has too few active people in the period for its figures to be exported".into(),
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
    let too_few = match read {
        Guarded::TooFew { people, min_people } => Some((people, min_people)),
        Guarded::Shown(_) => None,
    };
    Ok(render(&ScopePage { too_few, shown, ..page }))
}

pub async fn overview(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(slug): Path<String>,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let days = scope::days_param(params.days.as_deref())?;
    let period = Period::last_days(state.clock.now_ms(), days);
    let min_people = state.config.analytics.min_group_size;
    let pool = state.readers.clone();
    let (nav_role, wanted) = (caller.role.as_str(), slug.clone());
    let found = db::blocking(move || {
        let conn = pool.get()?;
        let Some((team, children)) = visible_team(&conn, &caller, &wanted)? else { return Ok(None) };
        let mut groups: Vec<TeamGroup> =
            children.into_iter().map(|t| TeamGroup::Team { id: t.id, label: t.slug }).collect();
        if !groups.is_empty() {
            groups.push(TeamGroup::Rest {
                team_id: Some(team.id.clone()),
                label: format!("{} (direct members)", team.slug),
            });
        }
        let read = scope::read(&conn, &Subject::Team(team.id.clone()), &groups, period, min_people)?;
        Ok::<_, DbError>(Some((team, read)))
    })
    .await
    .map_err(AppError::from)?;
    let Some((team, read)) = found else { return Err(PageError(AppError::NotFound)) };
    let page = ScopePage {
        nav_role,
        title: format!("Team {}", team.name),
        path: format!("/team/{slug}"),
        days,
        periods: PERIODS,
        too_few: None,
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
    let pool = state.readers.clone();
    let (nav_role, wanted) = (caller.role.as_str(), slug.clone());
    let found = db::blocking(move || {
        let conn = pool.get()?;
        let Some((team, _)) = visible_team(&conn, &caller, &wanted)? else { return Ok(None) };
        let entries = teams::roster(&conn, &team.id)?;
        Ok::<_, DbError>(Some((team, entries)))
    })
    .await
    .map_err(AppError::from)?;
    let Some((team, entries)) = found else { return Err(PageError(AppError::NotFound)) };
    let unnamed = entries.iter().filter(|e| e.name.is_none()).count();
    Ok(render(&RosterPage { nav_role, name: team.name, tabs: team_tabs(&slug), entries, unnamed }))
}
