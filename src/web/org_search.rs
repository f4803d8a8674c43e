//! `/org/search`: search across the organisation's transcripts that the caller may read:
//! their own, and those whose owners shared them (the session's switch, else the owner's
//! `share_transcripts`) and whom the caller may reach, by a grant or as their team lead
//! where they allow drill-in (`sessions::sharing::shared_transcript_sessions`).
//!
//! Invariants: the scope is part of the search query (`transcripts::search`), so nothing
//! else is scored or counted; every other person's session among the hits is then read
//! through `sessions::read::authorize` (which writes its `TRANSCRIPT_READ` or
//! `GRANT_USED` audit row) before its snippet is shown, and a hit it refuses is dropped;
//! `VIEWER_AGGREGATE` never searches anyone's transcripts but its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;

use super::login::render;
use super::search::{SearchParams, request_in, run};
use crate::db::DbError;
use crate::http::errors::PageError;
use crate::http::extract::Query;
use crate::sessions::read::{self, Reader, Reading};
use crate::state::AppState;
use crate::state::caller::PageCaller;
use crate::transcripts::search::{Hit, Scope};

#[derive(Template)]
#[template(path = "web/org_search.html")]
struct OrgSearchPage {
    nav_role: &'static str,
    path: String,
    tabs: Vec<(String, &'static str)>,
    q: String,
    newest: bool,
    aggregates_only: bool,
    /// Other people's sessions the caller could find (shared and reachable).
    reachable: usize,
    total: u64,
    cut_short: bool,
    /// Each hit, and whether it is the caller's own session.
    hits: Vec<(Hit, bool)>,
    next: Option<String>,
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Query(params): Query<SearchParams>,
) -> Result<Response, PageError> {
    let q = params.q.clone().unwrap_or_default();
    let newest = params.sort.as_deref() == Some("newest");
    let mut page = OrgSearchPage {
        nav_role: caller.role.as_str(),
        path: "/org/search".into(),
        tabs: super::org::org_tabs(),
        q: q.clone(),
        newest,
        aggregates_only: !caller.role.may_reach_individual_sessions(),
        reachable: 0,
        total: 0,
        cut_short: false,
        hits: Vec::new(),
        next: None,
    };
    let (now, user_id, role) = (state.clock.now_ms(), caller.user.id.clone(), caller.role);
    let session_ids =
        state.read(move |conn| crate::sessions::sharing::shared_transcript_sessions(conn, &user_id, role, now)).await?;
    page.reachable = session_ids.len();
    if q.trim().is_empty() {
        return Ok(render(&page));
    }
    let scope = Scope::OwnAndSessions { user_id: caller.user.id.clone(), session_ids };
    let results = run(&state, request_in(scope, &params)?).await?;
    // Every other person's session among the hits goes through the audited read.
    let others: Vec<String> = {
        let mut ids: Vec<String> = Vec::new();
        for hit in &results.hits {
            if !ids.contains(&hit.session_id) {
                ids.push(hit.session_id.clone());
            }
        }
        ids
    };
    let (reader_id, reader_role) = (caller.user.id.clone(), caller.role);
    let allowed: BTreeMap<String, bool> = state
        .write(move |tx| {
            let reader = Reader { user_id: &reader_id, role: reader_role };
            let mut allowed = BTreeMap::new();
            for id in others {
                if let Some((proof, _)) = read::authorize(tx, reader, &id, Reading::Transcript, now)? {
                    allowed.insert(id, proof.owner_id() == reader_id);
                }
            }
            Ok::<_, DbError>(allowed)
        })
        .await?;
    page.total = results.total;
    page.cut_short = results.cut_short;
    page.next = results.next_offset.map(|offset| {
        format!(
            "/org/search?q={}&sort={}&offset={offset}",
            crate::model::percent_encode(&q),
            if newest { "newest" } else { "relevance" }
        )
    });
    page.hits = results
        .hits
        .into_iter()
        .filter_map(|hit| allowed.get(&hit.session_id).copied().map(|own| (hit, own)))
        .collect();
    Ok(render(&page))
}
