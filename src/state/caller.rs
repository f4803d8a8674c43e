//! Request extractors for credentials.
//!
//! - [`HookUser`]: a live hook token in `Authorization: Bearer` — ingest routes only.
//! - [`Caller`]: a live access token, from `Authorization: Bearer` (API clients, the
//!   CLI) or from the sign-in cookie (the browser) — every web and API route.
//! - [`PageCaller`]: [`Caller`] for HTML pages; without one, a redirect to `/login`.
//!
//! Invariants: the three token kinds are never interchangeable (a hook or refresh
//! token is refused where an access token is wanted, and the other way round); an
//! access token counts only while its sign-in is live and its user enabled, checked
//! on every request, so logout and disabling take effect at once.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};

use super::AppState;
use crate::access::roles::OrgRole;
use crate::auth::signins::cookie_name;
use crate::auth::tokens::{self, TokenKind};
use crate::auth::users::User;
use crate::auth::{jwt, signins};
use crate::db;
use crate::http::body_deadline::BodyDeadline;
use crate::http::cookies::{bearer, cookie_value};
use crate::http::errors::AppError;
use crate::model::percent_encode;
use crate::sessions::read::Reader;

/// The user who owns the request's hook token.
#[derive(Clone, Debug)]
pub struct HookUser {
    pub user_id: String,
    /// The run kind the token fixes for every event sent with it (a harness's token).
    pub run_kind: Option<crate::model::RunKind>,
}

impl FromRequestParts<Arc<AppState>> for HookUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let secret = bearer(&parts.headers).ok_or(AppError::Unauthorized)?.to_string();
        let pool = state.readers.clone();
        let now_ms = state.clock.now_ms();
        let owner = db::blocking(move || {
            let conn = pool.get()?;
            tokens::verify(&conn, &secret, TokenKind::Hook, now_ms)
        })
        .await?;
        let owner = owner.ok_or(AppError::Unauthorized)?;
        BodyDeadline::authenticated(&parts.extensions);
        Ok(HookUser { user_id: owner.user_id, run_kind: owner.run_kind })
    }
}

/// A signed-in person: who, in which role, through which sign-in.
#[derive(Clone, Debug)]
pub struct Caller {
    pub user: User,
    pub role: OrgRole,
    /// The sign-in (`auth_sessions.id`); logout revokes it.
    pub session_id: String,
    /// True if the credential came from the cookie (a browser), which is what CSRF
    /// protection is about.
    pub via_cookie: bool,
}

impl Caller {
    pub fn reader(&self) -> Reader<'_> {
        Reader { user_id: &self.user.id, role: self.role }
    }

    pub fn actor(&self) -> crate::access::grants::Actor<'_> {
        crate::access::grants::Actor { user_id: &self.user.id, role: self.role }
    }
}

/// Resolves an access token (already taken from the request) to its caller.
pub async fn caller_from_token(state: &AppState, token: &str, via_cookie: bool) -> Result<Caller, AppError> {
    let now_ms = state.clock.now_ms();
    let claims = state.keys.verify(token, now_ms).map_err(|err| {
        tracing::debug!(error = %err, "access token refused");
        AppError::Unauthorized
    })?;
    let pool = state.readers.clone();
    let jwt::AccessClaims { sub, sid, .. } = claims;
    let session_id = sid.clone();
    let user = db::blocking(move || signins::live_user(&*pool.get()?, &sid, &sub, now_ms)).await?;
    let user = user.ok_or(AppError::Unauthorized)?;
    Ok(Caller { role: OrgRole::parse(&user.org_role), user, session_id, via_cookie })
}

impl FromRequestParts<Arc<AppState>> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let caller = if let Some(token) = bearer(&parts.headers) {
            let token = token.to_string();
            caller_from_token(state, &token, false).await?
        } else {
            let cookie =
                cookie_value(&parts.headers, cookie_name(state.https())).ok_or(AppError::Unauthorized)?.to_string();
            caller_from_token(state, &cookie, true).await?
        };
        BodyDeadline::authenticated(&parts.extensions);
        Ok(caller)
    }
}

/// [`Caller`] for pages: a browser without a live sign-in is sent to `/login`, with
/// the page it wanted as `next`.
#[derive(Clone, Debug)]
pub struct PageCaller(pub Caller);

impl FromRequestParts<Arc<AppState>> for PageCaller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        match Caller::from_request_parts(parts, state).await {
            Ok(caller) => Ok(PageCaller(caller)),
            Err(AppError::Unauthorized) => {
                Err(login_redirect(parts.uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/")))
            }
            Err(other) => Err(other.into_response()),
        }
    }
}

/// [`PageCaller`] who is an administrator: every `/admin` page takes this, so the check
/// is made once, before the request's body is read. Anyone else signed in gets the
/// 403 page.
#[derive(Clone, Debug)]
pub struct Administrator(pub Caller);

impl FromRequestParts<Arc<AppState>> for Administrator {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let PageCaller(caller) = PageCaller::from_request_parts(parts, state).await?;
        match caller.require_admin() {
            Ok(()) => Ok(Administrator(caller)),
            Err(err) => Err(crate::http::errors::PageError(err).into_response()),
        }
    }
}

impl Caller {
    /// The administrator check, the one every page and API route makes.
    pub fn require_admin(&self) -> Result<(), AppError> {
        if self.role == OrgRole::Admin { Ok(()) } else { Err(AppError::Forbidden("this is for administrators".into())) }
    }
}

/// The sign-in page, coming back to `wanted` (a path, with its query) afterwards.
pub fn login_redirect(wanted: &str) -> Response {
    Redirect::to(&format!("/login?next={}", percent_encode(wanted))).into_response()
}

/// An eval engineer reading evaluation runs (`/api/evals`): the eval dashboard with an
/// `eval` token in `Authorization: Bearer`, or a signed-in `EVAL_ENGINEER`. The role is
/// checked on every request, so a token stops working the moment its owner's role
/// changes; anyone else is refused (403), naming the role wanted.
#[derive(Clone, Debug)]
pub struct EvalReader {
    pub user_id: String,
    pub role: OrgRole,
}

impl FromRequestParts<Arc<AppState>> for EvalReader {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let role_refused = || AppError::Forbidden("evaluation runs are read by an EVAL_ENGINEER".into());
        let eval_token = bearer(&parts.headers)
            .filter(|secret| secret.starts_with(&format!("slh_{}_", TokenKind::Eval.as_str())))
            .map(str::to_string);
        let Some(secret) = eval_token else {
            let caller = Caller::from_request_parts(parts, state).await?;
            if !caller.role.reads_eval_runs() {
                return Err(role_refused());
            }
            return Ok(EvalReader { user_id: caller.user.id, role: caller.role });
        };
        let pool = state.readers.clone();
        let now_ms = state.clock.now_ms();
        let user = db::blocking(move || {
            let conn = pool.get()?;
            match tokens::verify(&conn, &secret, TokenKind::Eval, now_ms)? {
                Some(owner) => crate::auth::users::by_id(&conn, &owner.user_id),
                None => Ok(None),
            }
        })
        .await?
        .ok_or(AppError::Unauthorized)?;
        let role = OrgRole::parse(&user.org_role);
        if !role.reads_eval_runs() {
            return Err(role_refused());
        }
        BodyDeadline::authenticated(&parts.extensions);
        Ok(EvalReader { user_id: user.id, role })
    }
}
