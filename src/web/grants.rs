//! The access-grant API: `POST /api/grants` (request), `GET /api/grants` (all for an
//! administrator, one's own requests for an investigator), `POST
//! /api/grants/{id}/approve|deny|revoke`, and `PATCH /api/users/{id}/visibility`
//! (an administrator lowering a user's flags). Thin: `access::grants` and
//! `access::policies` decide and audit.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::access::grants::{self, Decision, GrantError, Request};
use crate::access::policies::{self, PolicyError, Visibility, VisibilityChange};
use crate::auth::users;
use crate::db::DbError;
use crate::http::errors::AppError;
use crate::http::extract::{Json, Path};
use crate::sessions;
use crate::state::AppState;
use crate::state::caller::Caller;

impl From<GrantError> for AppError {
    fn from(err: GrantError) -> Self {
        let message = err.to_string();
        match err {
            GrantError::MayNotRequest | GrantError::MayNotDecide | GrantError::SameAdmin => {
                AppError::Forbidden(message)
            }
            GrantError::OwnData | GrantError::NoSubject => AppError::bad_request("subject", message),
            GrantError::Justification => AppError::bad_request("justification", message),
            GrantError::Duration => AppError::bad_request("duration_hours", message),
            GrantError::NoSession(_) | GrantError::Scope => AppError::bad_request("session_id", message),
            GrantError::NotFound => AppError::NotFound,
            GrantError::WrongState(_) => AppError::Conflict(message),
            GrantError::Db(db) => db.into(),
        }
    }
}

impl From<PolicyError> for AppError {
    fn from(err: PolicyError) -> Self {
        match err {
            PolicyError::WouldRaise(_) => AppError::Forbidden(err.to_string()),
            PolicyError::NoSuchUser => AppError::NotFound,
            PolicyError::Db(db) => db.into(),
        }
    }
}

/// A domain error that may be a storage failure, which must roll its transaction back
/// (a grant's decision must not commit without its audit row).
pub(crate) trait StorageFailure: Sized {
    /// `Err` for a storage failure, `Ok` for a refusal.
    fn storage(self) -> Result<Self, DbError>;
}

impl StorageFailure for GrantError {
    fn storage(self) -> Result<Self, DbError> {
        match self {
            GrantError::Db(db) => Err(db),
            refusal => Ok(refusal),
        }
    }
}

impl StorageFailure for PolicyError {
    fn storage(self) -> Result<Self, DbError> {
        match self {
            PolicyError::Db(db) => Err(db),
            refusal => Ok(refusal),
        }
    }
}

/// Runs a grant or policy operation on the writer. A refusal rides inside the committed
/// value (it writes nothing, so committing it changes nothing); a storage failure rolls
/// the transaction back.
/// Tells the alert channels that `grant` waits for a decision, in the background (the
/// requester's answer never waits on a chat service); failures are logged. Nothing is
/// sent when no channel is configured and switched on.
pub(crate) fn tell_approvers(state: &Arc<AppState>, grant: &grants::Grant) {
    let scope = match grant.session_id {
        Some(_) => "one session",
        None => "a person's sessions",
    };
    let detail = format!(
        "an access grant was requested ({scope}, for {:.0} h) and waits for an administrator's decision: {}/admin/access-grants",
        grant.duration_ms as f64 / 3_600_000.0,
        state.web_origin.trim_end_matches('/')
    );
    let (state, grant_id) = (state.clone(), grant.id.clone());
    tokio::spawn(async move {
        let alerts = state.config.alerts.clone();
        let channels = match state.read(move |conn| crate::alerts::channel_configs::in_use(conn, &alerts)).await {
            Ok(Ok(channels)) => channels,
            Ok(Err(why)) => return tracing::warn!(%why, "grant request not told: the alert channels are misconfigured"),
            Err(err) => return tracing::warn!(%err, "grant request not told: reading the channels failed"),
        };
        if channels.is_empty() {
            return;
        }
        let clock = state.clock.clone();
        let told = tokio::task::spawn_blocking(move || {
            let now = move || clock.now_ms();
            crate::alerts::channels::grant_requested(&channels, &grant_id, detail, &now, &std::thread::sleep)
        })
        .await;
        match told {
            Ok(attempts) => {
                let undelivered: std::collections::BTreeSet<&str> = attempts
                    .iter()
                    .map(|a| a.channel)
                    .filter(|channel| !attempts.iter().any(|a| a.delivered && a.channel == *channel))
                    .collect();
                match undelivered.is_empty() {
                    true => tracing::info!("grant request told to the alert channels"),
                    false => tracing::warn!(?undelivered, "grant request not delivered to every alert channel"),
                }
            }
            Err(err) => tracing::warn!(%err, "grant request not told"),
        }
    });
}

pub(crate) async fn on_writer<T: Send + 'static, E: Into<AppError> + StorageFailure + Send + 'static>(
    state: &AppState,
    work: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, E> + Send + 'static,
) -> Result<T, AppError> {
    let refused = move |tx: &rusqlite::Transaction<'_>| match work(tx) {
        Ok(value) => Ok(Ok(value)),
        Err(err) => err.storage().map(Err),
    };
    state.write(refused).await?.map_err(Into::into)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantRequestBody {
    /// The subject's e-mail address; with `session_id`, not needed and not compared
    /// (the session names its owner: a request cannot test a guess of whose it is).
    subject: Option<String>,
    session_id: Option<String>,
    justification: String,
    duration_hours: f64,
}

pub async fn request(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Json(body): Json<GrantRequestBody>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    if !body.duration_hours.is_finite() {
        return Err(AppError::bad_request("duration_hours", "duration_hours must be a number"));
    }
    let duration_ms = (body.duration_hours * 3_600_000.0).round() as i64;
    let now_ms = state.clock.now_ms();
    let viewer = caller.clone();
    let grant = on_writer(&state, move |tx| {
        // An unknown subject is the caller's mistake (400); a storage failure is not.
        let subject_id = match (&body.session_id, &body.subject) {
            (Some(session), _) => {
                sessions::sharing::owner_of(tx, session)?.ok_or_else(|| GrantError::NoSession(session.clone()))?
            }
            (None, Some(email)) => users::find_by_email(tx, email)?.ok_or(GrantError::NoSubject)?.id,
            (None, None) => return Err(GrantError::NoSubject),
        };
        let ask = Request {
            subject_id: &subject_id,
            session_id: body.session_id.as_deref(),
            justification: &body.justification,
            duration_ms,
        };
        grants::request(tx, caller.actor(), &ask, now_ms, sessions::sharing::is_owned_by)
    })
    .await?;
    tell_approvers(&state, &grant);
    Ok((StatusCode::CREATED, Json(as_seen_by(&grant, viewer.actor()))))
}

pub async fn list(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Json<Value>, AppError> {
    if !caller.role.may_request_grants() {
        return Err(AppError::Forbidden("only investigators and administrators see grants".into()));
    }
    let viewer = caller.clone();
    let grants = state.read(move |conn| grants::visible_to(conn, viewer.actor())).await?;
    let shown: Vec<Value> = grants.iter().map(|grant| as_seen_by(grant, caller.actor())).collect();
    Ok(Json(json!({ "grants": shown })))
}

/// A grant as `actor` may see it: the subject is `null` while a request on one session
/// waits (or was denied), as on `/grants` (L2 of issue 52).
fn as_seen_by(grant: &grants::Grant, actor: grants::Actor<'_>) -> Value {
    let mut shown = json!(grant);
    if !grant.names_subject_to(actor) {
        shown["subject_id"] = Value::Null;
        shown["subject_email"] = Value::Null;
    }
    shown
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    note: Option<String>,
}

pub async fn approve(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    body: Option<Json<DecisionBody>>,
) -> Result<Json<Value>, AppError> {
    decide(&state, caller, id, Decision::Approve, body).await
}

pub async fn deny(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
    body: Option<Json<DecisionBody>>,
) -> Result<Json<Value>, AppError> {
    decide(&state, caller, id, Decision::Deny, body).await
}

async fn decide(
    state: &AppState,
    caller: Caller,
    id: String,
    decision: Decision,
    body: Option<Json<DecisionBody>>,
) -> Result<Json<Value>, AppError> {
    let note = body.and_then(|Json(body)| body.note);
    let now_ms = state.clock.now_ms();
    let grant =
        on_writer(state, move |tx| grants::decide(tx, caller.actor(), &id, decision, note.as_deref(), now_ms)).await?;
    Ok(Json(json!(grant)))
}

pub async fn revoke(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let now_ms = state.clock.now_ms();
    let viewer = caller.clone();
    let grant = on_writer(&state, move |tx| grants::revoke(tx, caller.actor(), &id, now_ms)).await?;
    Ok(Json(as_seen_by(&grant, viewer.actor())))
}

/// An administrator lowers another user's visibility flags (never raises them).
pub async fn lower_visibility(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(user_id): Path<String>,
    Json(change): Json<VisibilityChange>,
) -> Result<Json<Visibility>, AppError> {
    if !caller.role.may_manage_people() {
        return Err(AppError::Forbidden("only administrators may change another user's visibility".into()));
    }
    let now_ms = state.clock.now_ms();
    let admin_id = caller.user.id.clone();
    let policy = on_writer(&state, move |tx| {
        let policy = policies::lower(tx, &admin_id, &user_id, change, now_ms)?;
        crate::github::pulls::mark_person_comments_due(tx, &user_id)?;
        Ok::<_, policies::PolicyError>(policy)
    })
    .await?;
    state.webhook_arrivals.notify_one();
    Ok(Json(policy))
}
