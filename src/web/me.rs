//! The subject's own view of who may see and who did see their data:
//! `/me/settings/audit` and `/me/grants` (pages), `GET /api/me/audit`,
//! `GET /api/me/grants`, and `GET`/`PATCH /api/me/visibility` (their four flags).

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;
use serde_json::{Value, json};

use super::login::render;
use crate::access::grants::{self, Grant};
use crate::access::policies::{self, Visibility, VisibilityChange};
use crate::audit::{self, AuditRow};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::Json;
use crate::model::instants;
use crate::state::AppState;
use crate::state::caller::{Caller, PageCaller};

const AUDIT_PAGE_ROWS: usize = 500;

async fn audit_rows(state: &AppState, user_id: String) -> Result<Vec<AuditRow>, AppError> {
    state
        .read(move |conn| {
            let mut rows = audit::about_subject(conn, &user_id, AUDIT_PAGE_ROWS)?;
            let actors: Vec<String> = rows.iter().filter_map(|row| row.actor_id.clone()).collect();
            let emails = crate::auth::users::emails_by_id(conn, &actors)?;
            for row in &mut rows {
                row.actor_email = row.actor_id.as_ref().and_then(|id| emails.get(id).cloned());
            }
            Ok(rows)
        })
        .await
}

async fn grants_on(state: &AppState, user_id: String) -> Result<Vec<Grant>, AppError> {
    state.read(move |conn| grants::on_subject(conn, &user_id)).await
}

struct AuditLine {
    /// When, relative to now, and exactly (the hover).
    at: String,
    at_exact: String,
    actor: String,
    /// The action in words (`audit::said_to_subject`), and its code.
    said: Option<&'static str>,
    action: String,
    target: String,
    /// The reader's own session the row is about, named by its title, for a link.
    session: Option<String>,
    detail: String,
}

#[derive(Template)]
#[template(path = "web/me_audit.html")]
struct AuditPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    rows: Vec<AuditLine>,
}

pub async fn audit_page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
) -> Result<Response, PageError> {
    let rows = audit_rows(&state, caller.user.id.clone()).await?;
    // The sessions the rows are about are the caller's own: their titles name them.
    let user_id = caller.user.id.clone();
    let targets: Vec<String> = rows.iter().filter_map(|row| row.target.clone()).collect();
    let sessions = state
        .read(move |conn| {
            let mut own: Vec<&str> = Vec::new();
            for id in &targets {
                if !own.contains(&id.as_str()) && crate::sessions::sharing::is_owned_by(conn, id, &user_id)? {
                    own.push(id);
                }
            }
            let titles = crate::transcripts::store::titles(conn, &user_id, &own)?;
            let named = own.into_iter().map(|id| {
                let name = titles.get(id).cloned().unwrap_or_else(|| "your session".into());
                (id.to_string(), name)
            });
            Ok(named.collect::<std::collections::HashMap<String, String>>())
        })
        .await?;
    let now_ms = state.clock.now_ms();
    let rows = rows
        .into_iter()
        .map(|row| AuditLine {
            at: instants::relative(row.at_ms, now_ms),
            at_exact: instants::exact_utc(row.at_ms),
            actor: row.actor_email.or(row.actor_id).unwrap_or_else(|| "the system".into()),
            said: audit::said_to_subject(&row.action),
            action: row.action,
            session: row.target.as_ref().and_then(|target| sessions.get(target).cloned()),
            target: row.target.unwrap_or_default(),
            detail: describe(&row.detail),
        })
        .collect();
    Ok(render(&AuditPage { nav_role: caller.role.as_str(), rows }))
}

/// A short human line from an audit row's detail object.
fn describe(detail: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(reading) = detail["reading"].as_str() {
        parts.push(format!("read {reading}"));
    }
    if let Some(basis) = detail["basis"]["basis"].as_str() {
        parts.push(format!("as {}", basis.replace('_', " ")));
    }
    if let Some(justification) = detail["justification"].as_str() {
        parts.push(format!("“{justification}”"));
    }
    parts.join(", ")
}

pub async fn audit_json(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Json<Value>, AppError> {
    Ok(Json(json!({ "entries": audit_rows(&state, caller.user.id.clone()).await? })))
}

struct GrantLine {
    /// When it was asked for, relative to now, and exactly (the hover).
    requested: String,
    requested_exact: String,
    requester: String,
    scope: String,
    justification: String,
    state: String,
    until: String,
}

#[derive(Template)]
#[template(path = "web/me_grants.html")]
struct GrantsPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    grants: Vec<GrantLine>,
}

/// A grant's state as the subject should read it: an approved grant past its end is
/// "expired" even though nothing rewrote the row.
fn grant_state(grant: &Grant, now_ms: i64) -> String {
    match grant.status.as_str() {
        "APPROVED" if grant.is_active(now_ms) => "active".into(),
        "APPROVED" => "expired".into(),
        other => other.to_ascii_lowercase(),
    }
}

pub async fn grants_page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
) -> Result<Response, PageError> {
    let now_ms = state.clock.now_ms();
    let grants = grants_on(&state, caller.user.id.clone()).await?;
    let grants = grants
        .iter()
        .map(|grant| GrantLine {
            requested: instants::relative(grant.requested_at_ms, now_ms),
            requested_exact: instants::exact_utc(grant.requested_at_ms),
            requester: grant.requester_email.clone(),
            scope: match &grant.session_id {
                Some(session) => format!("session {session}"),
                None => "all my sessions".into(),
            },
            justification: grant.justification.clone(),
            state: grant_state(grant, now_ms),
            until: grant
                .expires_at_ms
                .map(|until| match until > now_ms {
                    true => format!("{} ({})", instants::exact_utc(until), instants::ahead(until, now_ms)),
                    false => instants::exact_utc(until),
                })
                .unwrap_or_default(),
        })
        .collect();
    Ok(render(&GrantsPage { nav_role: caller.role.as_str(), grants }))
}

pub async fn grants_json(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Json<Value>, AppError> {
    let now_ms = state.clock.now_ms();
    let grants = grants_on(&state, caller.user.id.clone()).await?;
    let grants: Vec<Value> = grants
        .iter()
        .map(|grant| {
            let mut value = json!(grant);
            value["state"] = json!(grant_state(grant, now_ms));
            value
        })
        .collect();
    Ok(Json(json!({ "grants": grants })))
}

pub async fn visibility(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Json<Visibility>, AppError> {
    let user_id = caller.user.id.clone();
    Ok(Json(state.read(move |conn| policies::get(conn, &user_id)).await?))
}

pub async fn set_visibility(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Json(change): Json<VisibilityChange>,
) -> Result<Json<Visibility>, AppError> {
    let now_ms = state.clock.now_ms();
    let user_id = caller.user.id.clone();
    let policy = state
        .write(move |tx| {
            let policy = policies::set_own(tx, &user_id, change, now_ms)?;
            crate::github::pulls::mark_person_comments_due(tx, &user_id)?;
            Ok(policy)
        })
        .await?;
    state.webhook_arrivals.notify_one();
    Ok(Json(policy))
}
