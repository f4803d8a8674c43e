//! `GET /api/search?q=…[&limit=&offset=&sort=relevance|newest]`: transcript search for
//! the signed-in caller (wire contract, "Transcript search"). Thin: read the parameters,
//! build the caller's scope, run `transcripts::search` on a blocking thread.
//!
//! The caller signs in like on every web route (access token or cookie) and searches
//! their own sessions; other people's transcripts are read one session at a time
//! through the audited read, never by search.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;

use crate::http::errors::AppError;
use crate::state::AppState;
use crate::state::caller::Caller;
use crate::transcripts::search::{self, Scope, SearchError, SearchRequest, SearchResults, Sort};

#[derive(Deserialize)]
pub struct SearchParams {
    q: Option<String>,
    limit: Option<String>,
    offset: Option<String>,
    sort: Option<String>,
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
    let mut request = SearchRequest::new(params.q.unwrap_or_default(), Scope::OwnSessions { user_id: caller.user.id });
    request.limit = number("limit", params.limit.as_deref(), search::DEFAULT_LIMIT)?;
    request.offset = number("offset", params.offset.as_deref(), 0)?;
    request.sort = match params.sort.as_deref() {
        None | Some("relevance") => Sort::Relevance,
        Some("newest") => Sort::Newest,
        Some(other) => {
            return Err(AppError::bad_request("sort", format!("unknown sort {other:?}; expected relevance or newest")));
        }
    };
    let index = state.transcripts.clone();
    let results = tokio::task::spawn_blocking(move || search::search(&index, &request))
        .await
        .map_err(|err| AppError::Internal(format!("search task failed: {err}")))??;
    Ok(Json(results))
}
