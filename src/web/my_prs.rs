//! `/me/prs`: my pull requests — those I wrote and those my sessions are linked to —
//! with what my own sessions on each took and the pull request's own figures (checks,
//! reviews, time to merge, reverted).
//!
//! Invariant: the page shows the caller's own sessions' figures only; another
//! contributor's sessions on the same pull request are neither counted nor named.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;

use super::login::render;
use super::shown::usd;
use crate::db::DbError;
use crate::github::pulls;
use crate::http::errors::PageError;
use crate::model::rfc3339_ms;
use crate::state::AppState;
use crate::state::caller::PageCaller;

/// Most pull requests listed.
const LIMIT: usize = 200;

pub struct Line {
    pub id: String,
    pub title: String,
    pub state: String,
    pub draft: bool,
    pub issue_key: String,
    pub opened: String,
    pub merged: String,
    pub lines: String,
    pub ci: String,
    pub review: String,
    pub rounds: i64,
    pub failures: i64,
    pub my_sessions: i64,
    pub my_cost: String,
    pub time_to_merge: String,
    pub reverted: bool,
}

#[derive(Template)]
#[template(path = "web/me_prs.html")]
struct PullRequestsPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    lines: Vec<Line>,
}

fn day(ms: i64) -> String {
    rfc3339_ms(ms).chars().take(10).collect()
}

fn hours(ms: i64) -> String {
    format!("{:.1} h", ms as f64 / 3_600_000.0)
}

pub async fn page(State(state): State<Arc<AppState>>, PageCaller(caller): PageCaller) -> Result<Response, PageError> {
    let user_id = caller.user.id.clone();
    let (prs, shares) = state
        .read(move |conn| {
            Ok::<_, DbError>((pulls::of_person(conn, &user_id, LIMIT)?, pulls::own_share(conn, &user_id)?))
        })
        .await?;
    let lines = prs
        .into_iter()
        .map(|pr| {
            let (my_sessions, my_cost) = shares.get(&pr.id).copied().unwrap_or((0, 0));
            Line {
                title: pr.title,
                state: pr.state,
                draft: pr.is_draft,
                issue_key: pr.issue_key.unwrap_or_default(),
                opened: day(pr.created_at_ms),
                merged: pr.merged_at_ms.map(day).unwrap_or_default(),
                lines: format!("+{} −{}", pr.additions, pr.deletions),
                ci: pr.ci_decision.unwrap_or_else(|| "—".into()),
                review: pr.review_decision.unwrap_or_else(|| "—".into()).replace('_', " "),
                rounds: pr.review_rounds,
                failures: pr.check_failures_count,
                my_sessions,
                my_cost: usd(my_cost),
                time_to_merge: pr.merged_at_ms.map(|m| hours(m - pr.created_at_ms)).unwrap_or_default(),
                reverted: pr.reverted_by_number.is_some(),
                id: pr.id,
            }
        })
        .collect();
    Ok(render(&PullRequestsPage { nav_role: caller.role.as_str(), lines }))
}
