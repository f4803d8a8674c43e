//! `GET /api/search?q=…[&limit=&offset=&sort=relevance|newest]`: transcript search for
//! the signed-in caller (wire contract, "Transcript search"), and `/me/search`, the same
//! search as a page. Thin: read the parameters,
//! build the caller's scope, run `transcripts::search` on a blocking thread.
//!
//! The caller signs in like on every web route (access token or cookie) and searches
//! their own sessions; other people's transcripts are read one session at a time
//! through the audited read, never by search.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::login::render;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Json, Query};
use crate::state::AppState;
use crate::state::caller::{Caller, PageCaller};
use crate::transcripts::search::{self, Scope, SearchError, SearchRequest, SearchResults, Sort};

#[derive(Deserialize)]
pub struct SearchParams {
    pub q: Option<String>,
    pub limit: Option<String>,
    pub offset: Option<String>,
    pub sort: Option<String>,
}

impl From<SearchError> for AppError {
    fn from(err: SearchError) -> Self {
        match err {
            SearchError::Query(err) => AppError::bad_request("q", format!("{} (in {:?})", err.message, err.term)),
            SearchError::Paging { field, message } => AppError::bad_request(field, message),
            SearchError::Index(err) => AppError::Internal(err.to_string()),
        }
    }
}

fn number(field: &'static str, value: Option<&str>, default: usize) -> Result<usize, AppError> {
    value.map_or(Ok(default), |text| {
        text.trim().parse().map_err(|_| AppError::bad_request(field, format!("{field} must be a whole number")))
    })
}

pub async fn search(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(params): Query<SearchParams>,
) -> Result<Json<SearchResults>, AppError> {
    Ok(Json(run(&state, request(&caller, &params)?).await?))
}

/// The caller's search from the query parameters.
fn request(caller: &Caller, params: &SearchParams) -> Result<SearchRequest, AppError> {
    request_in(Scope::OwnSessions { user_id: caller.user.id.clone() }, params)
}

/// A search of `scope` from the query parameters.
pub fn request_in(scope: Scope, params: &SearchParams) -> Result<SearchRequest, AppError> {
    let mut request = SearchRequest::new(params.q.clone().unwrap_or_default(), scope);
    request.limit = number("limit", params.limit.as_deref(), search::DEFAULT_LIMIT)?;
    request.offset = number("offset", params.offset.as_deref(), 0)?;
    request.sort = match params.sort.as_deref() {
        None | Some("") | Some("relevance") => Sort::Relevance,
        Some("newest") => Sort::Newest,
        Some(other) => {
            return Err(AppError::bad_request("sort", format!("unknown sort {other:?}; expected relevance or newest")));
        }
    };
    Ok(request)
}

pub async fn run(state: &AppState, request: SearchRequest) -> Result<SearchResults, AppError> {
    let index = state.transcripts.clone();
    let searched = tokio::task::spawn_blocking(move || search::search(&index, &request))
        .await
        .map_err(|err| AppError::Internal(format!("search task failed: {err}")))?;
    Ok(searched?)
}

#[derive(Template)]
#[template(path = "web/me_search.html")]
struct SearchPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    q: String,
    newest: bool,
    results: Option<SearchResults>,
    /// The hits' sessions named by their titles (the caller's own sessions).
    titles: std::collections::HashMap<String, String>,
    next: Option<String>,
}

/// `/me/search`: the same search as a page, over the caller's own transcripts, with the
/// matches marked in each snippet and a link to the session.
pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Query(params): Query<SearchParams>,
) -> Result<Response, PageError> {
    let q = params.q.clone().unwrap_or_default();
    let newest = params.sort.as_deref() == Some("newest");
    let results = if q.trim().is_empty() { None } else { Some(run(&state, request(&caller, &params)?).await?) };
    let next = results.as_ref().and_then(|r| r.next_offset).map(|offset| {
        format!(
            "/me/search?q={}&sort={}&offset={offset}",
            crate::model::percent_encode(&q),
            if newest { "newest" } else { "relevance" }
        )
    });
    let ids: Vec<String> = results.iter().flat_map(|r| r.hits.iter().map(|hit| hit.session_id.clone())).collect();
    let user_id = caller.user.id.clone();
    let titles = state
        .read(move |conn| {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            crate::transcripts::store::titles(conn, &user_id, &ids)
        })
        .await?;
    Ok(render(&SearchPage { nav_role: caller.role.as_str(), q, newest, results, titles, next }))
}
