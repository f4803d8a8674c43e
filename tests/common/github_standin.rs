//! A loopback stand-in for GitHub laid out as a GitHub Enterprise Server (web flow at
//! the root, REST API under `/api/v3`), speaking the OAuth web flow and the two REST
//! reads Sightline's sign-in uses, in GitHub's shapes: docs.github.com "Authorizing
//! OAuth apps" (authorize redirect, `POST /login/oauth/access_token` with PKCE),
//! "Troubleshooting OAuth app access token request errors" (a 200 carrying
//! `{"error", "error_description", "error_uri"}`), REST "Get the authenticated user"
//! and "List email addresses for the authenticated user".
//!
//! The test plays the person: [`GithubStandIn::approve_as`] says who is signed in to
//! "GitHub", and the test follows the authorize redirect itself; the stand-in then
//! redirects to the app's `redirect_uri` with a one-time code, which the token
//! endpoint accepts only with the registered client credentials, the same
//! `redirect_uri`, and a `code_verifier` whose S256 digest is the recorded challenge.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde_json::json;

pub const CLIENT_ID: &str = "Ov23liStandInClient01";
pub const CLIENT_SECRET: &str = "3f1c0d6e9b2a47c58e0f1a2b3c4d5e6f70819a2b";

/// A GitHub account: id, login and its e-mail addresses `(email, primary, verified)`.
#[derive(Clone, Debug)]
pub struct Account {
    pub id: i64,
    pub login: String,
    pub emails: Vec<(String, bool, bool)>,
}

/// An authorization the person granted, waiting for its code to be exchanged.
struct Grant {
    redirect_uri: String,
    challenge: Option<String>,
    account_id: i64,
}

#[derive(Default)]
pub struct Hub {
    pub accounts: BTreeMap<i64, Account>,
    /// Who is signed in to "GitHub" and approves the next authorization.
    pub signed_in: Option<i64>,
    /// The person clicks "Cancel" instead of "Authorize".
    pub deny: bool,
    /// Every authorize request's query, as received.
    pub authorize_requests: Vec<BTreeMap<String, String>>,
    /// Every token request: its `Accept` header and its form without the secret.
    pub token_requests: Vec<(String, BTreeMap<String, String>)>,
    /// Token answers' `error` codes, in order (`None` for a token issued).
    pub token_outcomes: Vec<Option<String>>,
    /// Every REST request: path and the headers we check.
    pub api_requests: Vec<(String, BTreeMap<String, String>)>,
    codes: BTreeMap<String, Grant>,
    tokens: BTreeMap<String, i64>,
}

pub struct GithubStandIn {
    pub url: String,
    pub hub: Arc<Mutex<Hub>>,
}

/// Unpadded base64url (RFC 4648 §5), as PKCE's S256 uses it.
pub fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut held = 0;
    let mut out = String::new();
    for &byte in bytes {
        bits = (bits << 8) | u32::from(byte);
        held += 8;
        while held >= 6 {
            held -= 6;
            out.push(ALPHABET[((bits >> held) & 63) as usize] as char);
        }
    }
    if held > 0 {
        out.push(ALPHABET[((bits << (6 - held)) & 63) as usize] as char);
    }
    out
}

pub fn s256(verifier: &str) -> String {
    base64url(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref())
}

fn random_hex(bytes: usize) -> String {
    (0..bytes.div_ceil(16)).map(|_| uuid::Uuid::new_v4().simple().to_string()).collect::<String>()[..bytes * 2]
        .to_string()
}

fn found(location: String) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn authorize(State(hub): State<Arc<Mutex<Hub>>>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let mut hub = hub.lock().unwrap();
    hub.authorize_requests.push(query.clone());
    let field = |name: &str| query.get(name).cloned().unwrap_or_default();
    if field("client_id") != CLIENT_ID {
        return (StatusCode::NOT_FOUND, "Not Found").into_response();
    }
    let (redirect_uri, state) = (field("redirect_uri"), field("state"));
    if hub.deny {
        return found(format!(
            "{redirect_uri}?error=access_denied&error_description=The+user+has+denied+your+application+access.\
             &error_uri=https%3A%2F%2Fdocs.github.com%2Fapps%2Fmanaging-oauth-apps%2Ftroubleshooting-authorization-request-errors%2F%23access-denied&state={state}"
        ));
    }
    let Some(account_id) = hub.signed_in else {
        return (StatusCode::OK, "Sign in to GitHub").into_response();
    };
    // GitHub accepts only S256; a challenge without it is an error at GitHub too.
    let challenge = query.get("code_challenge").cloned();
    if challenge.is_some() && field("code_challenge_method") != "S256" {
        return (StatusCode::BAD_REQUEST, "unsupported code_challenge_method").into_response();
    }
    let code = random_hex(10);
    hub.codes.insert(code.clone(), Grant { redirect_uri: redirect_uri.clone(), challenge, account_id });
    found(format!("{redirect_uri}?code={code}&state={state}"))
}

fn token_error(code: &str, description: &str, anchor: &str) -> serde_json::Value {
    json!({
        "error": code,
        "error_description": description,
        "error_uri": format!("https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#{anchor}"),
    })
}

async fn access_token(
    State(hub): State<Arc<Mutex<Hub>>>,
    headers: HeaderMap,
    Form(form): Form<BTreeMap<String, String>>,
) -> Response {
    let mut hub = hub.lock().unwrap();
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let mut recorded = form.clone();
    recorded.remove("client_secret");
    hub.token_requests.push((accept.clone(), recorded));
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    // The code is spent by any attempt, right or wrong, as at GitHub.
    let grant = hub.codes.remove(&field("code"));
    let answer = if field("client_id") != CLIENT_ID || field("client_secret") != CLIENT_SECRET {
        Err(token_error(
            "incorrect_client_credentials",
            "The client_id and/or client_secret passed are incorrect.",
            "incorrect-client-credentials",
        ))
    } else {
        match grant {
            None => Err(token_error(
                "bad_verification_code",
                "The code passed is incorrect or expired.",
                "bad-verification-code",
            )),
            Some(grant) if grant.redirect_uri != field("redirect_uri") => Err(token_error(
                "redirect_uri_mismatch",
                "The redirect_uri MUST match the registered callback URL for this application.",
                "redirect-uri-mismatch2",
            )),
            Some(grant) if grant.challenge.as_ref().is_some_and(|c| *c != s256(&field("code_verifier"))) => {
                Err(token_error(
                    "bad_verification_code",
                    "The code passed is incorrect or expired.",
                    "bad-verification-code",
                ))
            }
            Some(grant) => Ok(grant.account_id),
        }
    };
    let body = match answer {
        Ok(account_id) => {
            let token = format!("gho_{}", &random_hex(18)[..36]);
            hub.tokens.insert(token.clone(), account_id);
            hub.token_outcomes.push(None);
            json!({"access_token": token, "token_type": "bearer", "scope": "read:user,user:email"})
        }
        Err(error) => {
            hub.token_outcomes.push(error["error"].as_str().map(str::to_string));
            error
        }
    };
    if accept.contains("application/json") {
        // GitHub answers 200 even when it refuses the code.
        Json(body).into_response()
    } else {
        let pairs: Vec<String> =
            body.as_object().unwrap().iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect();
        ([(header::CONTENT_TYPE, "application/x-www-form-urlencoded")], pairs.join("&")).into_response()
    }
}

/// The account behind `Authorization: Bearer|token …`, recording the request.
fn authenticated(hub: &mut Hub, path: &str, headers: &HeaderMap) -> Option<Account> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let seen = ["user-agent", "accept", "x-github-api-version"].iter().map(|n| (n.to_string(), text(n))).collect();
    hub.api_requests.push((path.to_string(), seen));
    let authorization = text("authorization");
    let token = authorization.strip_prefix("Bearer ").or_else(|| authorization.strip_prefix("token ")).unwrap_or("");
    hub.tokens.get(token).and_then(|id| hub.accounts.get(id)).cloned()
}

fn bad_credentials() -> Response {
    let body =
        json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"});
    (StatusCode::UNAUTHORIZED, Json(body)).into_response()
}

async fn user(State(hub): State<Arc<Mutex<Hub>>>, headers: HeaderMap) -> Response {
    let mut hub = hub.lock().unwrap();
    let Some(account) = authenticated(&mut hub, "/api/v3/user", &headers) else {
        return bad_credentials();
    };
    // `email` is the public profile address (may be null or unverified): not for matching.
    Json(json!({
        "login": account.login,
        "id": account.id,
        "node_id": "MDQ6VXNlcjE=",
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", account.id),
        "html_url": format!("https://github.example.com/{}", account.login),
        "type": "User",
        "site_admin": false,
        "name": "The Octocat",
        "company": null,
        "email": account.emails.first().map(|e| e.0.clone()),
        "created_at": "2011-01-25T18:44:36Z",
    }))
    .into_response()
}

async fn emails(State(hub): State<Arc<Mutex<Hub>>>, headers: HeaderMap) -> Response {
    let mut hub = hub.lock().unwrap();
    let Some(account) = authenticated(&mut hub, "/api/v3/user/emails", &headers) else {
        return bad_credentials();
    };
    let list: Vec<_> = account
        .emails
        .iter()
        .map(|(email, primary, verified)| {
            json!({"email": email, "primary": primary, "verified": verified,
                   "visibility": if *primary { json!("private") } else { json!(null) }})
        })
        .collect();
    Json(list).into_response()
}

impl GithubStandIn {
    pub fn start() -> GithubStandIn {
        let hub = Arc::new(Mutex::new(Hub::default()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = hub.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let app = Router::new()
                    .route("/login/oauth/authorize", get(authorize))
                    .route("/login/oauth/access_token", post(access_token))
                    .route("/api/v3/user", get(user))
                    .route("/api/v3/user/emails", get(emails))
                    .with_state(shared);
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        GithubStandIn { url, hub }
    }

    /// Adds (or replaces) an account.
    pub fn put_account(&self, id: i64, login: &str, emails: &[(&str, bool, bool)]) {
        let emails = emails.iter().map(|(e, p, v)| (e.to_string(), *p, *v)).collect();
        self.hub.lock().unwrap().accounts.insert(id, Account { id, login: login.to_string(), emails });
    }

    /// The person signed in to "GitHub", who approves the next authorization.
    pub fn approve_as(&self, id: i64) {
        let mut hub = self.hub.lock().unwrap();
        hub.signed_in = Some(id);
        hub.deny = false;
    }
}
