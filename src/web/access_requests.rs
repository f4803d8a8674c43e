//! `/grants`: an investigator's (or administrator's) access grants in the browser. The
//! form asks for access to a person's sessions or to one session (a duration up to
//! 72 hours, a justification); the list shows every request with its state (requested,
//! active until…, denied, expired, revoked); `/grants/{id}` shows one grant and, while it
//! is active, the sessions it opens, each linked to its page (`/sessions/{id}`, which
//! audits the read as `GRANT_USED`). Administrators decide on `/admin/access-grants`;
//! the subject sees the grant on `/me/grants`.
//!
//! Invariants: the rules are `access::grants`' (no self-approval, no request on oneself,
//! time-boxed, expiry at read time); a request on a session names no owner to the
//! requester (the owner is looked up here, shown once an administrator approves); a
//! refused request re-shows the form with the reason, writing nothing.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::grants::on_writer;
use super::login::render;
use crate::access::grants::{self, Grant, GrantError, Request};
use crate::auth::users;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::model::instants;
use crate::sessions::listing;
use crate::state::AppState;
use crate::state::caller::{Caller, PageCaller};
use crate::web::session_name::{self, Named};

/// How far back a person-wide grant's session list reaches.
const SESSIONS_DAYS: i64 = 90;

/// The request form, also its pre-fill (`/grants?subject=…` or `?session=…`).
#[derive(Deserialize, Default, Clone)]
pub struct RequestForm {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    session: String,
    #[serde(default)]
    duration_hours: String,
    #[serde(default)]
    justification: String,
}

pub struct GrantLine {
    pub id: String,
    /// When it was asked for, relative to now, and exactly (the hover).
    pub requested: String,
    pub requested_exact: String,
    pub subject: String,
    pub scope: String,
    pub justification: String,
    pub state: String,
}

#[derive(Template)]
#[template(path = "web/grants.html")]
struct GrantsPage {
    nav_role: &'static str,
    form: RequestForm,
    error: Option<String>,
    grants: Vec<GrantLine>,
}

#[derive(Template)]
#[template(path = "web/grant.html")]
struct GrantPage {
    nav_role: &'static str,
    grant: GrantLine,
    decision: String,
    active: bool,
    /// Named by where they worked: the grant holder has not read their transcripts.
    sessions: Vec<Named>,
    now_ms: i64,
}

/// A grant's state as its requester reads it.
fn state_of(grant: &Grant, now_ms: i64) -> String {
    match grant.status.as_str() {
        "APPROVED" if grant.is_active(now_ms) => {
            let until = grant.expires_at_ms.unwrap_or(now_ms);
            format!("active until {} ({})", instants::exact_utc(until), instants::ahead(until, now_ms))
        }
        "APPROVED" => "expired".into(),
        "REQUESTED" => "requested, waiting for an administrator".into(),
        other => other.to_ascii_lowercase(),
    }
}

fn line(grant: &Grant, viewer: grants::Actor<'_>, now_ms: i64) -> GrantLine {
    GrantLine {
        id: grant.id.clone(),
        requested: instants::relative(grant.requested_at_ms, now_ms),
        requested_exact: instants::exact_utc(grant.requested_at_ms),
        // Until approved, a request on a session names the session, not its owner.
        subject: match grant.names_subject_to(viewer) {
            true => grant.subject_email.clone(),
            false => "the owner of that session".into(),
        },
        scope: match &grant.session_id {
            Some(session) => format!("session {session}"),
            None => "all their sessions".into(),
        },
        justification: grant.justification.clone(),
        state: state_of(grant, now_ms),
    }
}

fn may_request(caller: &Caller) -> Result<(), PageError> {
    if caller.role.may_request_grants() {
        Ok(())
    } else {
        Err(PageError(AppError::Forbidden(
            "only investigators and administrators ask for access to people's sessions".into(),
        )))
    }
}

async fn list_page(
    state: &AppState,
    caller: &Caller,
    form: RequestForm,
    error: Option<String>,
) -> Result<Response, PageError> {
    let now_ms = state.clock.now_ms();
    let (user_id, role) = (caller.user.id.clone(), caller.role);
    let grants = state
        .read(move |conn| grants::visible_to(conn, grants::Actor { user_id: &user_id, role }))
        .await?
        .iter()
        .filter(|grant| grant.requester_id == caller.user.id)
        .map(|grant| line(grant, caller.actor(), now_ms))
        .collect();
    let mut response = render(&GrantsPage { nav_role: caller.role.as_str(), form, error: error.clone(), grants });
    if error.is_some() {
        *response.status_mut() = axum::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// `GET /grants`: the form (pre-filled from the query) and the caller's requests.
pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Query(prefill): Query<RequestForm>,
) -> Result<Response, PageError> {
    may_request(&caller)?;
    list_page(&state, &caller, prefill, None).await
}

/// `POST /grants`: asks for access; the grant's page on success, the form with the
/// reason otherwise.
pub async fn request(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Form(form): Form<RequestForm>,
) -> Result<Response, PageError> {
    may_request(&caller)?;
    let hours: f64 = match form.duration_hours.trim().parse() {
        Ok(hours) if f64::is_finite(hours) && hours > 0.0 => hours,
        _ => {
            let error = format!("the duration must be a number of hours, up to 72, not {:?}", form.duration_hours);
            return list_page(&state, &caller, form, Some(error)).await;
        }
    };
    let (subject, session) = (form.subject.trim().to_string(), form.session.trim().to_string());
    let now_ms = state.clock.now_ms();
    let (actor_id, role, justification) = (caller.user.id.clone(), caller.role, form.justification.clone());
    let asked = on_writer(&state, move |tx| {
        let subject_id = match (subject.as_str(), session.as_str()) {
            ("", "") => return Err(GrantError::NoSubject),
            // A session names its owner; an e-mail typed beside it is not compared, so a
            // request cannot test a guess of whose the session is.
            (_, session) if !session.is_empty() => crate::sessions::sharing::owner_of(tx, session)?
                .ok_or_else(|| GrantError::NoSession(session.to_string()))?,
            (email, _) => users::find_by_email(tx, email)?.ok_or(GrantError::NoSubject)?.id,
        };
        let ask = Request {
            subject_id: &subject_id,
            session_id: (!session.is_empty()).then_some(session.as_str()),
            justification: &justification,
            duration_ms: (hours * 3_600_000.0).round() as i64,
        };
        grants::request(
            tx,
            grants::Actor { user_id: &actor_id, role },
            &ask,
            now_ms,
            crate::sessions::sharing::is_owned_by,
        )
    })
    .await;
    match asked {
        Ok(grant) => {
            super::grants::tell_approvers(&state, &grant);
            Ok(Redirect::to(&format!("/grants/{}", grant.id)).into_response())
        }
        Err(AppError::Unavailable(why)) => Err(PageError(AppError::Unavailable(why))),
        Err(AppError::Internal(why)) => Err(PageError(AppError::Internal(why))),
        Err(refused) => list_page(&state, &caller, form, Some(refused.to_string())).await,
    }
}

/// `GET /grants/{id}`: one of the caller's grants and, while active, its sessions.
pub async fn grant_page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    may_request(&caller)?;
    let now_ms = state.clock.now_ms();
    let (user_id, may_decide) = (caller.user.id.clone(), caller.role.may_decide_grants());
    let found = state
        .read(move |conn| {
            let Some(grant) = grants::by_id(conn, &id)? else { return Ok(None) };
            if grant.requester_id != user_id && !may_decide {
                return Ok(None);
            }
            let decider = match &grant.decided_by {
                Some(id) => users::by_id(conn, id)?.map(|user| user.email),
                None => None,
            };
            let sessions = if !grant.is_active(now_ms) {
                Vec::new()
            } else {
                let from_ms = now_ms - SESSIONS_DAYS * 86_400_000;
                let mut rows =
                    listing::sessions_of(conn, std::slice::from_ref(&grant.subject_id), from_ms, now_ms + 1, 200)?;
                if let Some(session) = &grant.session_id {
                    rows.retain(|(_, row)| &row.id == session);
                }
                rows.into_iter().map(|(_, row)| row).collect()
            };
            Ok::<_, crate::db::DbError>(Some((grant, decider, sessions)))
        })
        .await?;
    let Some((grant, decider, sessions)) = found else { return Err(PageError(AppError::NotFound)) };
    let decision = match (grant.decided_at_ms, decider) {
        (Some(at), who) => format!(
            "Decided {} by {}{}",
            instants::exact_utc(at),
            who.unwrap_or_else(|| "an administrator".into()),
            grant.decision_note.as_deref().map(|note| format!(": {note}")).unwrap_or_default()
        ),
        (None, _) => "Not decided yet: administrators see it on /admin/access-grants.".into(),
    };
    Ok(render(&GrantPage {
        nav_role: caller.role.as_str(),
        active: grant.is_active(now_ms),
        grant: line(&grant, caller.actor(), now_ms),
        decision,
        sessions: session_name::untitled(sessions),
        now_ms,
    }))
}
