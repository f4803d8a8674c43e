//! The web listener's handlers (mounted in `app::routes`): sign-in (`/login`, `/logout`,
//! `/device`, GitHub sign-in), the OAuth endpoints (`/oauth/*`, also on the ingest
//! listener),
//! the developer's pages (`/` and `/me`: the overview; `/me/sessions`: the list; `/sessions/{id}`: one session's timeline and its transcript, for every reader the rules allow; `/me/insights`, `/me/search`, `/me/prs`, `/me/settings` with its forms; `/me/grants`, `/me/settings/audit`), and the JSON API
//! (`/api/search`, `/api/sessions/{id}…`, `/api/grants…`, `/api/me/…` including the
//! deletion request), the administrator's console (`/admin/*`, [`admin`]) and `/install`.
//!
//! Invariants: every route sits behind [`security::guard`] (CSRF on state-changing
//! requests, security headers on all answers); every data route takes the caller
//! from an extractor, and a read of another person's session goes through
//! `sessions::read::authorize`, never around it.

pub mod access_requests;
pub mod admin;
pub mod benchmarks;
pub mod deletion;
pub mod device;
pub mod eval_api;
pub mod github;
pub mod grants;
pub mod insights;
pub mod install;
pub mod install_script;
pub mod jobs;
pub mod login;
pub mod me;
pub mod my_prs;
pub mod my_session;
pub mod my_sessions;
pub mod oauth;
pub mod org;
pub mod org_search;
pub mod overview;
pub mod password_link;
pub mod reading_ground;
pub mod report;
pub mod reports;
pub mod scope;
pub mod search;
pub mod security;
pub mod session_name;
pub mod session_scores;
pub mod session_timeline;
pub mod sessions;
pub mod settings;
pub mod shown;
pub mod team_people;
pub mod teams;
pub mod trace;
pub mod transcript_page;
pub mod transcript_work;

/// What the web listener answers for a path it has no route for: the product's HTML
/// error page for a person, JSON for an API client (`/api/`, `/oauth/`, `/v1/`).
pub async fn not_found(uri: axum::http::Uri) -> axum::response::Response {
    use axum::response::IntoResponse;
    if crate::http::extract::answers_json(uri.path()) {
        crate::http::errors::AppError::NotFound.into_response()
    } else {
        crate::http::errors::PageError(crate::http::errors::AppError::NotFound).into_response()
    }
}
