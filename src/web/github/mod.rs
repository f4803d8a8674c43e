//! GitHub sign-in: OAuth's authorization-code flow with `state` and PKCE (S256),
//! against github.com or a GitHub Enterprise Server (`auth.github_url`, REST API at
//! [`crate::config::Auth::github_api`]).
//!
//! - `GET /auth/github?next=`: starts a flow — a fresh `state` and PKCE verifier go
//!   into a short-lived `sightline_oauth` cookie of this browser, the browser goes to
//!   GitHub's authorize page.
//! - `GET /auth/github/callback?code=&state=`: finishes it — the code is exchanged
//!   (with the verifier), `GET /user` names the GitHub account, the account is mapped
//!   to a Sightline user and the sign-in cookie is set.
//!
//! Invariants: a callback counts only if its `state` equals, in constant time, the one
//! in this browser's flow cookie, so nobody can finish a flow in someone else's
//! browser (login CSRF); GitHub accounts map only to users that already exist — by the
//! linked GitHub id, else by a *verified* e-mail address, which then links the account
//! — and never create one; disabled users are refused and a link is never moved to
//! another GitHub account; every failure ends at `/login?error=github` with the reason
//! logged at warn (never the code, state, verifier or a token); GitHub's access token
//! serves two reads and is dropped, never stored.

mod api;

use std::sync::Arc;

use axum::extract::State;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use ring::rand::{SecureRandom, SystemRandom};
use rusqlite::Connection;
use serde::Deserialize;
use subtle::ConstantTimeEq;

use self::api::{Account, AccountEmail, GithubClient};
use super::login::{safe_next, sign_in_response};
use crate::auth::signins::Method;
use crate::auth::tokens::base64url;
use crate::auth::users;
use crate::db::DbError;
use crate::http::cookies::{cookie_value, with_cookie};
use crate::http::errors::AppError;
use crate::http::extract::Query;
use crate::model::percent_encode;
use crate::state::AppState;

const FLOW_COOKIE: &str = "sightline_oauth";
/// The flow cookie goes only to `/auth/github…`, so it never rides along elsewhere.
const FLOW_COOKIE_PATH: &str = "/auth/github";
/// Long enough to sign in to GitHub (and maybe do 2FA), short enough to go stale.
const FLOW_LIFETIME_SECS: u32 = 600;
const SCOPE: &str = "read:user user:email";

/// Why a GitHub sign-in did not happen; logged, never shown beyond "failed".
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error("no sign-in flow cookie (expired, or the flow began in another browser)")]
    NoFlow,
    #[error("the callback's state does not match this browser's flow")]
    StateMismatch,
    #[error("GitHub sent the user back with error {0:?}")]
    Denied(String),
    #[error("the callback carries no code")]
    NoCode,
    #[error("code exchange failed: {0}")]
    Exchange(String),
    #[error("GitHub API: {0}")]
    Api(String),
    #[error("GitHub account {login} (id {id}) is not linked and none of its verified e-mail addresses is a user's")]
    Unknown { login: String, id: i64 },
    #[error("user {0} is disabled")]
    Disabled(String),
    #[error("user {0} is linked to another GitHub account")]
    LinkedElsewhere(String),
    #[error("storage: {0}")]
    Storage(String),
}

/// One sign-in attempt, as kept in this browser's flow cookie.
struct Flow {
    state: String,
    verifier: String,
    next: String,
}

fn random_base64url() -> Result<String, AppError> {
    let mut bytes = [0u8; 32];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| AppError::Internal("operating system randomness unavailable".into()))?;
    Ok(base64url(&bytes))
}

impl Flow {
    fn new(next: String) -> Result<Flow, AppError> {
        Ok(Flow { state: random_base64url()?, verifier: random_base64url()?, next })
    }

    /// RFC 7636 §4.2: `BASE64URL(SHA256(code_verifier))`.
    fn challenge(&self) -> String {
        base64url(ring::digest::digest(&ring::digest::SHA256, self.verifier.as_bytes()).as_ref())
    }

    /// `state.verifier.hex(next)`: base64url and hex never contain `.`, and all three
    /// are valid cookie-value characters.
    /// `Secure` only over HTTPS, as the sign-in cookie (`auth::signins::sign_in_cookie`).
    fn cookie(&self, https: bool) -> String {
        let secure = if https { "; Secure" } else { "" };
        format!(
            "{FLOW_COOKIE}={}.{}.{}; Path={FLOW_COOKIE_PATH}; HttpOnly{secure}; SameSite=Lax; Max-Age={FLOW_LIFETIME_SECS}",
            self.state,
            self.verifier,
            hex::encode(&self.next)
        )
    }

    fn from_cookie(value: &str) -> Option<Flow> {
        let mut parts = value.splitn(3, '.');
        let (state, verifier, next) = (parts.next()?, parts.next()?, parts.next()?);
        let next = String::from_utf8(hex::decode(next).ok()?).ok()?;
        // The cookie came back from the browser: check `next` again rather than trust it.
        Some(Flow { state: state.to_string(), verifier: verifier.to_string(), next: safe_next(Some(&next)) })
    }
}

fn clear_flow_cookie(https: bool) -> String {
    let secure = if https { "; Secure" } else { "" };
    format!("{FLOW_COOKIE}=; Path={FLOW_COOKIE_PATH}; HttpOnly{secure}; SameSite=Lax; Max-Age=0")
}

fn redirect_uri(state: &AppState) -> String {
    format!("{}/auth/github/callback", state.web_origin)
}

#[derive(Deserialize)]
pub struct StartQuery {
    next: Option<String>,
}

/// `GET /auth/github`: starts a flow and sends the browser to GitHub.
pub async fn start(State(state): State<Arc<AppState>>, Query(query): Query<StartQuery>) -> Response {
    let auth = &state.config.auth;
    if !auth.github_enabled() {
        return AppError::NotFound.into_response();
    }
    let next = safe_next(query.next.as_deref());
    let flow = match Flow::new(next) {
        Ok(flow) => flow,
        Err(err) => return err.into_response(),
    };
    let authorize = format!(
        "{}/login/oauth/authorize?client_id={}&redirect_uri={}&scope={}&state={}&code_challenge={}\
         &code_challenge_method=S256&allow_signup=false",
        auth.github_url.trim_end_matches('/'),
        percent_encode(&auth.github_client_id),
        percent_encode(&redirect_uri(&state)),
        percent_encode(SCOPE),
        flow.state,
        flow.challenge(),
    );
    with_cookie(Redirect::to(&authorize).into_response(), &flow.cookie(state.https()))
}

#[derive(Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /auth/github/callback`: finishes a flow; signs in or goes back to `/login`.
pub async fn callback(
    State(state): State<Arc<AppState>>,
    parts: Parts,
    Query(query): Query<CallbackQuery>,
) -> Response {
    if !state.config.auth.github_enabled() {
        return AppError::NotFound.into_response();
    }
    let Some(flow) = cookie_value(&parts.headers, FLOW_COOKIE).and_then(Flow::from_cookie) else {
        return with_cookie(refused(GithubError::NoFlow, None), &clear_flow_cookie(state.https()));
    };
    let response = match finish(&state, &flow, query).await {
        Ok(user_id) => sign_in_response(&state, &user_id, Method::Github, &flow.next).await,
        Err(reason) => refused(reason, Some(&flow.next)),
    };
    // The browser forgets the flow whatever happened; a replayed flow cookie gets
    // nowhere, as GitHub's codes are single-use.
    with_cookie(response, &clear_flow_cookie(state.https()))
}

/// Back to the login page, which says GitHub sign-in failed; the reason is logged.
fn refused(reason: GithubError, next: Option<&str>) -> Response {
    tracing::warn!(%reason, "GitHub sign-in refused");
    let back = match next {
        Some(next) => format!("/login?error=github&next={}", percent_encode(next)),
        None => "/login?error=github".to_string(),
    };
    Redirect::to(&back).into_response()
}

/// Checks the callback against the flow, talks to GitHub, finds the user.
async fn finish(state: &AppState, flow: &Flow, query: CallbackQuery) -> Result<String, GithubError> {
    let given = query.state.unwrap_or_default();
    if !bool::from(given.as_bytes().ct_eq(flow.state.as_bytes())) {
        return Err(GithubError::StateMismatch);
    }
    if let Some(error) = query.error {
        return Err(GithubError::Denied(error));
    }
    let code = query.code.filter(|code| !code.is_empty()).ok_or(GithubError::NoCode)?;
    let client = GithubClient::new(&state.config.auth, redirect_uri(state));
    let verifier = flow.verifier.clone();
    let (token, account) = client
        .run(move |client| {
            let token = client.exchange(&code, &verifier)?;
            let account = client.account(&token)?;
            Ok((token, account))
        })
        .await?;
    if let Some(user_id) = resolve(state, account.clone(), None).await? {
        return Ok(user_id);
    }
    // Not linked yet: only now is the e-mail list worth asking for.
    let emails = client.run(move |client| client.emails(&token)).await?;
    let (login, id) = (account.login.clone(), account.id);
    resolve(state, account, Some(emails)).await?.ok_or(GithubError::Unknown { login, id })
}

/// What the users table says about a GitHub account.
enum Match {
    User(String),
    NotLinked,
    Disabled(String),
    LinkedElsewhere(String),
}

/// Maps the account to a user in one writer transaction (so two sign-ins cannot race
/// a link). Without `emails`, only an existing link counts.
async fn resolve(
    state: &AppState,
    account: Account,
    emails: Option<Vec<AccountEmail>>,
) -> Result<Option<String>, GithubError> {
    let found = state
        .write(move |tx| match_account(tx, &account, emails.as_deref()))
        .await
        .map_err(|err| GithubError::Storage(err.to_string()))?;
    match found {
        Match::User(user_id) => Ok(Some(user_id)),
        Match::NotLinked => Ok(None),
        Match::Disabled(email) => Err(GithubError::Disabled(email)),
        Match::LinkedElsewhere(email) => Err(GithubError::LinkedElsewhere(email)),
    }
}

fn match_account(conn: &Connection, account: &Account, emails: Option<&[AccountEmail]>) -> Result<Match, DbError> {
    if let Some(user) = users::by_github_id(conn, account.id)? {
        if user.disabled_at_ms.is_some() {
            return Ok(Match::Disabled(user.email));
        }
        // Keeps `github_login` current after a rename on GitHub.
        users::link_github(conn, &user.id, account.id, &account.login)?;
        return Ok(Match::User(user.id));
    }
    // An unverified address proves nothing: anyone can add any address to a GitHub
    // account. The primary goes first so the choice does not hang on GitHub's order.
    let mut verified: Vec<&AccountEmail> = emails.unwrap_or_default().iter().filter(|e| e.verified).collect();
    verified.sort_by_key(|email| !email.primary);
    for email in verified {
        let Some(user) = users::find_by_email(conn, &email.email)? else { continue };
        if user.disabled_at_ms.is_some() {
            return Ok(Match::Disabled(user.email));
        }
        if !users::link_github(conn, &user.id, account.id, &account.login)? {
            return Ok(Match::LinkedElsewhere(user.email));
        }
        return Ok(Match::User(user.id));
    }
    Ok(Match::NotLinked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_cookie_round_trips_and_rechecks_next() {
        let flow = Flow::new("/me/grants?x=1.2".into()).unwrap();
        assert_eq!(flow.state.len(), 43);
        assert_eq!(flow.verifier.len(), 43);
        let cookie = flow.cookie(true);
        let plain = flow.cookie(false);
        let value = cookie.strip_prefix("sightline_oauth=").unwrap().split(';').next().unwrap();
        let back = Flow::from_cookie(value).unwrap();
        assert_eq!((back.state, back.verifier, back.next), (flow.state, flow.verifier, flow.next));
        assert!(cookie.contains("; Path=/auth/github; HttpOnly; Secure; SameSite=Lax; Max-Age=600"));
        assert!(plain.contains("; Path=/auth/github; HttpOnly; SameSite=Lax; Max-Age=600"), "no Secure over HTTP");
        let evil = format!("a.b.{}", hex::encode("//evil.example"));
        assert_eq!(Flow::from_cookie(&evil).unwrap().next, "/");
        assert!(Flow::from_cookie("a.b").is_none());
        assert!(Flow::from_cookie("a.b.zz").is_none());
    }

    #[test]
    fn challenge_is_rfc_7636_s256() {
        // RFC 7636 Appendix B.
        let flow = Flow {
            state: String::new(),
            verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into(),
            next: String::new(),
        };
        assert_eq!(flow.challenge(), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }
}
