//! `/login` (form fields `email`, `password`), `/logout`, and the sign-in cookie.
//!
//! Invariants: the cookie holds an access token and is `HttpOnly; SameSite=Lax; Path=/`,
//! `Secure` and named `__Host-sightline` over HTTPS (plain `sightline` without `Secure`
//! over HTTP, which a browser would otherwise drop); a sign-in is confirmed by
//! `/login/check`, which says on the page and in the log when the browser did not keep
//! the cookie; the page warns when a password would cross the network in clear; `next`
//! only ever redirects within this site; a wrong e-mail and a wrong password look and
//! cost the same; throttled attempts answer 429 with `Retry-After`.

use std::net::SocketAddr;
use std::sync::Arc;

use askama::Template;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;

use crate::auth::jwt::ACCESS_TOKEN_LIFETIME_MS;
use crate::auth::signins::sign_in_cookie;
use crate::auth::signins::{self, Client, Method};
use crate::http::cookies::with_cookie;
use crate::http::errors::{AppError, PageError, with_retry_after};
use crate::http::extract::{Form, Query};
use crate::model::percent_encode;
use crate::state::AppState;
use crate::state::caller::Caller;
use crate::web::oauth::{PasswordFailure, verify_password_sign_in};

#[derive(Template)]
#[template(path = "web/login.html")]
struct LoginPage<'a> {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    error: Option<&'a str>,
    email: &'a str,
    next: &'a str,
    next_encoded: String,
    github: bool,
    /// Plain HTTP to a host other than this machine: the password crosses the network in clear.
    cleartext: bool,
}

/// Renders a template, or a plain 500 if rendering fails.
pub fn render(template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => Html(html).into_response(),
        Err(err) => PageError(AppError::Internal(format!("template: {err}"))).into_response(),
    }
}

/// A `next` target that stays on this site ([`crate::http::redirect::local_redirect_target`],
/// shared with the eval dashboard), else the person's own overview.
pub fn safe_next(next: Option<&str>) -> String {
    crate::http::redirect::safe_next(next, "/")
}

fn login_page(
    state: &AppState,
    headers: &HeaderMap,
    status: StatusCode,
    error: Option<&str>,
    email: &str,
    next: &str,
) -> Response {
    let page = LoginPage {
        nav_role: "",
        error,
        email,
        next,
        next_encoded: percent_encode(next),
        github: state.config.auth.github_enabled(),
        cleartext: !state.https() && !crate::http::cookies::host_is_loopback(headers),
    };
    (status, render(&page)).into_response()
}

#[derive(Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
    error: Option<String>,
}

pub async fn show(State(state): State<Arc<AppState>>, headers: HeaderMap, Query(query): Query<LoginQuery>) -> Response {
    let next = safe_next(query.next.as_deref());
    let error = match query.error.as_deref() {
        Some("github") => Some("GitHub sign-in failed or this GitHub account is not linked to a Sightline user."),
        _ => None,
    };
    login_page(&state, &headers, StatusCode::OK, error, "", &next)
}

#[derive(Deserialize)]
pub struct CheckQuery {
    next: Option<String>,
}

const COOKIE_DROPPED: &str = "Your password was right, but this browser did not keep the sign-in cookie, so you are not signed in. \
    Allow cookies for this site; if the address starts with https:// only behind a proxy, set auth.public_url to it \
    (docs/operations.md).";

/// `GET /login/check`: where a sign-in lands first. With the cookie the browser was just
/// given, on to `next`; without it, the sign-in page says why, and so does the log.
pub async fn check(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Query(query): Query<CheckQuery>,
) -> Response {
    let next = safe_next(query.next.as_deref());
    let name = crate::auth::signins::cookie_name(state.https());
    if crate::http::cookies::cookie_value(&headers, name).is_some() {
        return Redirect::to(&next).into_response();
    }
    let host = headers.get(header::HOST).and_then(|host| host.to_str().ok()).unwrap_or("");
    tracing::warn!(
        host,
        https = state.https(),
        cookie = name,
        "a sign-in succeeded but the browser did not send the sign-in cookie back"
    );
    login_page(&state, &headers, StatusCode::OK, Some(COOKIE_DROPPED), "", &next)
}

#[derive(Deserialize)]
pub struct LoginForm {
    email: Option<String>,
    password: Option<String>,
    next: Option<String>,
}

pub async fn submit(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let next = safe_next(form.next.as_deref());
    let email = form.email.unwrap_or_default();
    let password = form.password.unwrap_or_default();
    if email.trim().is_empty() || password.is_empty() {
        return login_page(
            &state,
            &headers,
            StatusCode::BAD_REQUEST,
            Some("Enter your e-mail and password."),
            &email,
            &next,
        );
    }
    match verify_password_sign_in(&state, &email, password, state.client_ip(&headers, peer)).await {
        Ok(user_id) => sign_in_response(&state, &user_id, Method::Password, &next).await,
        Err(PasswordFailure::Throttled { retry_after_secs }) => {
            let message = format!("Too many failed sign-ins. Try again in {} minutes.", retry_after_secs.div_ceil(60));
            tracing::info!(email = %email.trim(), "sign-in refused: throttled");
            let response = login_page(&state, &headers, StatusCode::TOO_MANY_REQUESTS, Some(&message), &email, &next);
            with_retry_after(response, Some(retry_after_secs))
        }
        Err(PasswordFailure::Wrong) => {
            tracing::info!(email = %email.trim(), "sign-in refused: wrong e-mail or password");
            let message = Some("E-mail or password is incorrect.");
            login_page(&state, &headers, StatusCode::UNAUTHORIZED, message, &email, &next)
        }
        Err(PasswordFailure::Internal(cause)) => AppError::Internal(cause).into_response(),
    }
}

/// Starts a web sign-in for `user_id`, sets the cookie and redirects to `next` through
/// `/login/check`, which says so when the browser did not keep the cookie.
pub async fn sign_in_response(state: &AppState, user_id: &str, method: Method, next: &str) -> Response {
    let now_ms = state.clock.now_ms();
    let owner = user_id.to_string();
    let started = state.write(move |tx| signins::start(tx, &owner, Client::Web, method, now_ms)).await;
    let token = match started
        .map_err(|err| err.to_string())
        .and_then(|started| state.keys.issue(user_id, &started.session_id, now_ms).map_err(|err| err.to_string()))
    {
        Ok(token) => token,
        Err(cause) => return AppError::Internal(cause).into_response(),
    };
    let cookie = sign_in_cookie(state.https(), &token, ACCESS_TOKEN_LIFETIME_MS / 1000);
    let check = format!("/login/check?next={}", percent_encode(next));
    with_cookie(Redirect::to(&check).into_response(), &cookie)
}

/// Ends this sign-in (cookie or bearer) and clears the cookie.
pub async fn logout(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Response, AppError> {
    let now_ms = state.clock.now_ms();
    let session_id = caller.session_id.clone();
    state.write(move |tx| signins::revoke(tx, &session_id, "signed out", now_ms)).await?;
    Ok(with_cookie(Redirect::to("/login").into_response(), &sign_in_cookie(state.https(), "", 0)))
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/me/grants?x=1")), "/me/grants?x=1");
        for evil in ["//evil.example", "/\\evil.example", "https://evil.example", "me", "/a\nb"] {
            assert_eq!(safe_next(Some(evil)), "/", "{evil:?}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
