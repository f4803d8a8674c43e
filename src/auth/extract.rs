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
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};

use super::tokens::{self, TokenKind};
use super::users::User;
use super::{jwt, signins};
use crate::access::roles::OrgRole;
use crate::app::AppState;
use crate::db;
use crate::error::AppError;
use crate::model::percent_encode;
use crate::sessions::read::Reader;

/// The user who owns the request's hook token.
#[derive(Clone, Debug)]
pub struct HookUser {
    pub user_id: String,
}

pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The sign-in cookie's name: `__Host-` prefixed when served over HTTPS, so it is
/// bound to this host and path `/` and cannot be set by a sibling subdomain.
pub fn cookie_name(https: bool) -> &'static str {
    if https { "__Host-sightline" } else { "sightline" }
}

/// The `Set-Cookie` value of the sign-in cookie holding `value` for `max_age_secs`
/// (0 clears it).
pub fn sign_in_cookie(https: bool, value: &str, max_age_secs: i64) -> String {
    format!("{}={value}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age={max_age_secs}", cookie_name(https))
}

/// Adds a `Set-Cookie` header to a response (alongside any already there).
pub fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = axum::http::HeaderValue::from_str(cookie) {
        response.headers_mut().append(axum::http::header::SET_COOKIE, value);
    }
    response
}

/// The value of cookie `name` from every `Cookie` header of the request (HTTP/2
/// sends one per cookie): the one reading of cookies for sign-in and the CSRF guard.
pub fn cookie_value<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
        .filter(|value| !value.is_empty())
}

impl FromRequestParts<Arc<AppState>> for HookUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let secret = bearer(parts).ok_or(AppError::Unauthorized)?.to_string();
        let pool = state.readers.clone();
        let now_ms = state.clock.now_ms();
        let owner = db::blocking(move || {
            let conn = pool.get()?;
            tokens::verify(&conn, &secret, TokenKind::Hook, now_ms)
        })
        .await?;
        owner.map(|owner| HookUser { user_id: owner.user_id }).ok_or(AppError::Unauthorized)
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
        if let Some(token) = bearer(parts) {
            let token = token.to_string();
            return caller_from_token(state, &token, false).await;
        }
        let cookie =
            cookie_value(&parts.headers, cookie_name(state.https())).ok_or(AppError::Unauthorized)?.to_string();
        caller_from_token(state, &cookie, true).await
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
                let wanted = parts.uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/");
                let next = percent_encode(wanted);
                Err(Redirect::to(&format!("/login?next={next}")).into_response())
            }
            Err(other) => Err(other.into_response()),
        }
    }
}
