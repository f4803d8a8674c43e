//! The token endpoints, mounted on both the web and the ingest listener so the CLI
//! needs one server address:
//!
//! - `POST /oauth/token`: `grant_type=refresh_token` (rotation) or `password` (the
//!   CLI's fallback when no browser is at hand; throttled like `/login`).
//! - `POST /oauth/revoke` (RFC 7009): ends the sign-in of a refresh token.
//! - `POST /oauth/device/code`, `POST /oauth/device/token` (RFC 8628): an approved code
//!   yields a hook token for the machine (`"scope": "hook"`, no refresh token), not a
//!   sign-in; asking for codes is throttled per address.
//! - `POST /api/me/hook-tokens`: an access token buys a hook token for this machine.
//!
//! Invariants: bodies are form-encoded as OAuth requires; errors use OAuth's
//! `{"error", "error_description"}` shape; token answers carry `Cache-Control:
//! no-store`; each exchange is one writer transaction.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::device::{self, Poll};
use crate::auth::jwt::ACCESS_TOKEN_LIFETIME_MS;
use crate::auth::signins::{self, Client, Method, Refreshed};
use crate::auth::{passwords, throttle, tokens, users};
use crate::http::errors::{AppError, with_retry_after};
use crate::http::extract::{Form, Json};
use crate::model::oauth::{CLIENT_ID, DEVICE_GRANT};
use crate::state::AppState;
use crate::state::caller::Caller;

/// The token answer of RFC 6749 §5.1.
#[derive(Debug, Serialize, Deserialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: String,
    pub expires_in: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// An OAuth error answer (RFC 6749 §5.2, RFC 8628 §3.5).
pub fn oauth_error(status: StatusCode, code: &str, description: &str) -> Response {
    no_store((status, Json(json!({ "error": code, "error_description": description }))).into_response())
}

fn internal(err: impl std::fmt::Display) -> Response {
    AppError::Internal(err.to_string()).into_response()
}

/// The token answer for sign-in `session_id` of `user_id`: a fresh access token and,
/// when there is one, the sign-in's current refresh token.
fn token_answer(state: &AppState, user_id: &str, session_id: &str, refresh: Option<&str>, now_ms: i64) -> Response {
    match state.keys.issue(user_id, session_id, now_ms) {
        Ok(access_token) => no_store(
            Json(TokenResponse {
                access_token,
                token_type: "Bearer".into(),
                expires_in: ACCESS_TOKEN_LIFETIME_MS / 1000,
                refresh_token: refresh.map(str::to_string),
            })
            .into_response(),
        ),
        Err(err) => internal(err),
    }
}

/// Starts a CLI sign-in for `user_id` and answers with its tokens.
async fn issue_cli_tokens(state: &AppState, user_id: String, method: Method) -> Response {
    let now_ms = state.clock.now_ms();
    let owner = user_id.clone();
    match state.write(move |tx| signins::start(tx, &owner, Client::Cli, method, now_ms)).await {
        Ok(started) => token_answer(
            state,
            &user_id,
            &started.session_id,
            started.refresh.as_ref().map(|token| token.secret.as_str()),
            now_ms,
        ),
        Err(err) => internal(err),
    }
}

#[derive(Deserialize)]
pub struct TokenForm {
    grant_type: Option<String>,
    refresh_token: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

pub async fn token(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    match form.grant_type.as_deref() {
        Some("refresh_token") => match form.refresh_token {
            Some(secret) => refresh_grant(&state, secret).await,
            None => oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "refresh_token is required"),
        },
        Some("password") => {
            let (Some(email), Some(password)) = (form.username, form.password) else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "username and password are required");
            };
            match check_password(&state, &email, password, state.client_ip(&headers, peer)).await {
                Ok(user_id) => issue_cli_tokens(&state, user_id, Method::Password).await,
                Err(response) => response,
            }
        }
        Some(other) => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            &format!("grant_type {other:?} is not supported here; use refresh_token or password"),
        ),
        None => oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "grant_type is required"),
    }
}

/// The refresh-token grant: rotates the token, or revokes its sign-in on reuse.
async fn refresh_grant(state: &AppState, secret: String) -> Response {
    let now_ms = state.clock.now_ms();
    let rotated = state.write(move |tx| signins::rotate(tx, &secret, now_ms)).await;
    match rotated {
        Ok(Refreshed::Rotated { user_id, session_id, refresh }) => {
            token_answer(state, &user_id, &session_id, Some(&refresh.secret), now_ms)
        }
        Ok(Refreshed::Reused) => oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "refresh token was already used; this sign-in has been revoked, sign in again",
        ),
        Ok(Refreshed::Invalid) => oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "refresh token is not valid"),
        Err(err) => internal(err),
    }
}

/// Why a password sign-in failed, for the caller to shape its answer.
pub enum PasswordFailure {
    Throttled { retry_after_secs: u64 },
    Wrong,
    Internal(String),
}

/// Verifies a password sign-in under the throttle; returns the user id. Unknown
/// accounts cost the same scrypt time as wrong passwords.
pub async fn verify_password_sign_in(
    state: &AppState,
    email: &str,
    password: String,
    address: std::net::IpAddr,
) -> Result<String, PasswordFailure> {
    let now_ms = state.clock.now_ms();
    // Counted before the password is checked, so parallel guesses cannot all pass.
    if let Err(retry_after_secs) = state.login_throttle.attempt(email, address, now_ms) {
        return Err(PasswordFailure::Throttled { retry_after_secs });
    }
    let lookup_email = email.to_string();
    let found = state
        .read(move |conn| users::password_hash_of(conn, &lookup_email))
        .await
        .map_err(|err| PasswordFailure::Internal(err.to_string()))?;
    let (user_id, stored) = match found {
        Some((user, Some(hash))) => (Some(user.id), hash),
        _ => (None, passwords::DUMMY_HASH.to_string()),
    };
    let matches = passwords::verify_async(password, stored).await;
    match (matches, user_id) {
        (true, Some(user_id)) => {
            state.login_throttle.succeeded(email, address, now_ms);
            // Kept for the next start too; a failure to keep it only costs that.
            let account = email.to_string();
            let kept = state.write(move |tx| throttle::remember(tx, &account, address, now_ms)).await;
            if let Err(err) = kept {
                tracing::warn!(%err, "the sign-in's address is not kept as familiar");
            }
            Ok(user_id)
        }
        // Already counted by `attempt`.
        _ => Err(PasswordFailure::Wrong),
    }
}

async fn check_password(
    state: &AppState,
    email: &str,
    password: String,
    address: std::net::IpAddr,
) -> Result<String, Response> {
    verify_password_sign_in(state, email, password, address).await.map_err(|failure| match failure {
        PasswordFailure::Throttled { retry_after_secs } => {
            let response = oauth_error(
                StatusCode::TOO_MANY_REQUESTS,
                "slow_down",
                "too many failed sign-ins for this account or address; retry later",
            );
            with_retry_after(response, Some(retry_after_secs))
        }
        PasswordFailure::Wrong => {
            oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "e-mail or password is incorrect")
        }
        PasswordFailure::Internal(cause) => internal(cause),
    })
}

#[derive(Deserialize)]
pub struct RevokeForm {
    token: Option<String>,
}

/// RFC 7009: answers 200 whether or not the token was known.
pub async fn revoke(State(state): State<Arc<AppState>>, Form(form): Form<RevokeForm>) -> Response {
    let Some(secret) = form.token else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "token is required");
    };
    let now_ms = state.clock.now_ms();
    let result = state
        .write(move |tx| {
            if let Some(family) = tokens::refresh_family(tx, &secret)? {
                signins::revoke(tx, &family, "revoked by client", now_ms)?;
            }
            Ok(())
        })
        .await;
    match result {
        Ok(()) => no_store(StatusCode::OK.into_response()),
        Err(err) => internal(err),
    }
}

#[derive(Deserialize)]
pub struct DeviceCodeForm {
    client_id: Option<String>,
    /// The hook token's label the machine asks for (`<host> (sightline login)`).
    label: Option<String>,
}

pub async fn device_code(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<DeviceCodeForm>,
) -> Response {
    let client_id = form.client_id.unwrap_or_default();
    if client_id != CLIENT_ID {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", &format!("client_id must be {:?}", CLIENT_ID));
    }
    let (now_ms, address) = (state.clock.now_ms(), state.client_ip(&headers, peer));
    if let Err(retry_after_secs) = state.device_throttle.take_code(address, now_ms) {
        return too_many_codes(retry_after_secs);
    }
    let asker = device::Asker {
        address: address.to_string(),
        user_agent: headers.get(header::USER_AGENT).and_then(|value| value.to_str().ok()).map(str::to_string),
        label: form.label,
    };
    let created = state.write(move |tx| device::create(tx, &client_id, &asker, now_ms)).await;
    match created {
        Ok(None) => too_many_codes(60),
        Ok(Some(created)) => {
            let verification_uri = format!("{}/device", state.web_origin);
            no_store(
                Json(json!({
                    "device_code": created.device_code,
                    "user_code": created.user_code,
                    "verification_uri": verification_uri,
                    "verification_uri_complete": format!("{verification_uri}?user_code={}", created.user_code),
                    "expires_in": created.expires_in_secs,
                    "interval": created.interval_secs,
                }))
                .into_response(),
            )
        }
        Err(err) => internal(err),
    }
}

/// 429 `slow_down` with `Retry-After`: too many codes asked for.
fn too_many_codes(retry_after_secs: u64) -> Response {
    let response = oauth_error(
        StatusCode::TOO_MANY_REQUESTS,
        "slow_down",
        "too many device codes asked for from this address; retry later",
    );
    with_retry_after(response, Some(retry_after_secs))
}

/// The hook token an approved device code yields, in a token answer's shape (RFC 6749
/// §5.1): the machine keeps it and nothing else; it works on ingest routes only.
fn hook_token_answer(token: &tokens::NewToken, now_ms: i64) -> Response {
    no_store(
        Json(json!({
            "access_token": token.secret,
            "token_type": "Bearer",
            "expires_in": (token.expires_at_ms - now_ms) / 1000,
            "scope": "hook",
        }))
        .into_response(),
    )
}

#[derive(Deserialize)]
pub struct DeviceTokenForm {
    grant_type: Option<String>,
    device_code: Option<String>,
    client_id: Option<String>,
}

pub async fn device_token(State(state): State<Arc<AppState>>, Form(form): Form<DeviceTokenForm>) -> Response {
    if form.grant_type.as_deref() != Some(DEVICE_GRANT) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            &format!("grant_type must be {DEVICE_GRANT}"),
        );
    }
    let (Some(code), Some(client_id)) = (form.device_code, form.client_id) else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "device_code and client_id are required");
    };
    let now_ms = state.clock.now_ms();
    // The code is used up and its hook token made in one transaction: a failure between
    // the two cannot burn the code.
    let polled = state
        .write(move |tx| match device::poll(tx, &code, &client_id, now_ms)? {
            Poll::Approved { user_id, label } => {
                let label = label.unwrap_or_else(|| "device sign-in".into());
                Ok(Ok(tokens::create(tx, &user_id, tokens::TokenKind::Hook, Some(&label), now_ms)?))
            }
            other => Ok(Err(other)),
        })
        .await;
    let bad = |code: &str, text: &str| oauth_error(StatusCode::BAD_REQUEST, code, text);
    match polled {
        Ok(Ok(token)) => hook_token_answer(&token, now_ms),
        Ok(Err(Poll::Approved { .. })) => internal("an approved code was not exchanged"),
        Ok(Err(Poll::Pending)) => bad("authorization_pending", "waiting for the code to be entered at /device"),
        Ok(Err(Poll::SlowDown)) => bad("slow_down", "polling too fast; the interval is now 5 seconds longer"),
        Ok(Err(Poll::Denied)) => bad("access_denied", "the sign-in was denied at /device"),
        Ok(Err(Poll::Expired)) => bad("expired_token", "the code expired; run `sightline login` again"),
        Ok(Err(Poll::Invalid)) => bad("invalid_grant", "unknown or already used device code"),
        Err(err) => internal(err),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookTokenRequest {
    label: Option<String>,
}

/// A signed-in person creates a hook token for a machine; the secret is in this
/// answer only.
pub async fn create_hook_token(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Json(body): Json<HookTokenRequest>,
) -> Result<Response, AppError> {
    let label = body.label.map(|label| label.chars().filter(|c| !c.is_control()).take(200).collect::<String>());
    let now_ms = state.clock.now_ms();
    let user_id = caller.user.id.clone();
    let created =
        state.write(move |tx| tokens::create(tx, &user_id, tokens::TokenKind::Hook, label.as_deref(), now_ms)).await?;
    Ok(no_store(
        (
            StatusCode::CREATED,
            Json(json!({
                "id": created.id,
                "token": created.secret,
                "expires_at": crate::model::rfc3339_ms(created.expires_at_ms),
            })),
        )
            .into_response(),
    ))
}
