//! A loopback stand-in for GitHub's REST API as a GitHub App uses it, on GitHub's
//! paths and in its shapes (docs.github.com REST: "Create an installation access token
//! for an app", "Get a repository installation for the authenticated app", "Get an
//! organization installation for the authenticated app", "Get repository content"
//! with the raw media type, "Create an issue comment", "Update an issue comment", "List
//! teams", "List team members"), and GitHub's App authentication: the app JWT must be
//! RS256, signed by the App's key, `iss` the App id, and live at most 10 minutes; every
//! other call must carry an installation token this stand-in issued.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use axum::{Json, Router};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

pub const APP_ID: &str = "918273";

/// A team: slug, name, parent slug, and its members' ids and logins.
pub type Team = (String, String, Option<String>, Vec<(i64, String)>);

#[derive(Default)]
pub struct Hub {
    /// `(repo full name, path, ref)` → raw content.
    pub files: BTreeMap<(String, String, String), String>,
    /// Comment id → (repo, issue number, body).
    pub comments: BTreeMap<i64, (String, i64, String)>,
    pub teams: Vec<Team>,
    /// Every call: method and path (query included).
    pub calls: Vec<String>,
    /// While set, every call is refused as GitHub refuses a client over its rate limit.
    pub limited: Option<Limit>,
    tokens: Vec<String>,
    next_comment: i64,
}

/// GitHub's two refusals of a client over a rate limit ("Rate limits for the REST API"):
/// the primary limit (403 with `x-ratelimit-remaining: 0` and the reset time in Unix
/// seconds) and a secondary one (429 with `Retry-After` in seconds).
#[derive(Clone, Copy, Debug)]
pub enum Limit {
    Primary { reset_in_secs: i64 },
    Secondary { retry_after_secs: i64 },
}

pub struct AppStandIn {
    pub url: String,
    pub hub: Arc<Mutex<Hub>>,
    _runtime: tokio::runtime::Runtime,
}

type Shared = (Arc<Mutex<Hub>>, Arc<DecodingKey>);

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"message": message, "documentation_url": "https://docs.github.com/rest"}))).into_response()
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    headers.get("authorization")?.to_str().ok()?.strip_prefix("Bearer ").map(str::to_string)
}

/// The app JWT check GitHub makes.
fn app_jwt_ok(key: &DecodingKey, headers: &HeaderMap) -> bool {
    let Some(token) = bearer(headers) else { return false };
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_issuer(&[APP_ID]);
    validation.set_required_spec_claims(&["exp", "iat", "iss"]);
    match jsonwebtoken::decode::<Value>(&token, key, &validation) {
        Ok(data) => {
            let (iat, exp) = (data.claims["iat"].as_i64().unwrap_or(0), data.claims["exp"].as_i64().unwrap_or(0));
            exp > iat && exp - iat <= 600
        }
        Err(_) => false,
    }
}

fn installation_ok(hub: &Hub, headers: &HeaderMap) -> bool {
    bearer(headers).is_some_and(|t| hub.tokens.contains(&t))
}

impl AppStandIn {
    pub fn start(public_key_pem: &[u8]) -> AppStandIn {
        // The stand-in verifies with jsonwebtoken in this process too: ring's provider, as
        // the server's (it may run before the server's client signs anything).
        sightline::auth::jwt::ring_provider::install();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let hub = Arc::new(Mutex::new(Hub { next_comment: 500, ..Hub::default() }));
        let key = Arc::new(DecodingKey::from_rsa_pem(public_key_pem).unwrap());
        let state: Shared = (hub.clone(), key);
        let app = Router::new()
            .route("/app/installations/{id}/access_tokens", post(access_token))
            .route("/repos/{owner}/{repo}/installation", get(installation))
            .route("/orgs/{org}/installation", get(installation_of_org))
            .route("/repos/{owner}/{repo}/contents/{*path}", get(contents))
            .route("/repos/{owner}/{repo}/issues/{number}/comments", post(create_comment))
            .route("/repos/{owner}/{repo}/issues/comments/{id}", patch(update_comment))
            .route("/orgs/{org}/teams", get(list_teams))
            .route("/orgs/{org}/teams/{slug}/members", get(list_members))
            .layer(axum::middleware::from_fn_with_state(hub.clone(), record))
            .with_state(state);
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        runtime.spawn(async move { axum::serve(listener, app).await.unwrap() });
        AppStandIn { url, hub, _runtime: runtime }
    }
}

async fn record(
    State(hub): State<Arc<Mutex<Hub>>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let line = format!("{} {}", request.method(), request.uri());
    let limited = {
        let mut hub = hub.lock().unwrap();
        hub.calls.push(line);
        hub.limited
    };
    let message = json!({"message": "API rate limit exceeded for installation.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"});
    match limited {
        Some(Limit::Primary { reset_in_secs }) => {
            let reset = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
                + reset_in_secs;
            let headers = [
                ("x-ratelimit-limit", "5000".to_string()),
                ("x-ratelimit-remaining", "0".to_string()),
                ("x-ratelimit-used", "5000".to_string()),
                ("x-ratelimit-reset", reset.to_string()),
                ("x-ratelimit-resource", "core".to_string()),
            ];
            (StatusCode::FORBIDDEN, headers, Json(message)).into_response()
        }
        Some(Limit::Secondary { retry_after_secs }) => {
            (StatusCode::TOO_MANY_REQUESTS, [("retry-after", retry_after_secs.to_string())], Json(message))
                .into_response()
        }
        None => next.run(request).await,
    }
}

async fn access_token(State((hub, key)): State<Shared>, Path(id): Path<i64>, headers: HeaderMap) -> Response {
    if !app_jwt_ok(&key, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "A JSON web token could not be decoded");
    }
    if id != super::github_payloads::INSTALLATION {
        return refuse(StatusCode::NOT_FOUND, "Not Found");
    }
    let token = format!("ghs_{}", uuid::Uuid::new_v4().simple());
    hub.lock().unwrap().tokens.push(token.clone());
    (StatusCode::CREATED, Json(json!({"token": token, "expires_at": "2099-01-01T00:00:00Z",
        "permissions": {"contents": "read", "pull_requests": "write", "members": "read"}, "repository_selection": "all"})))
        .into_response()
}

async fn installation(State((_, key)): State<Shared>, headers: HeaderMap) -> Response {
    if !app_jwt_ok(&key, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "A JSON web token could not be decoded");
    }
    Json(json!({"id": super::github_payloads::INSTALLATION, "app_id": APP_ID.parse::<i64>().unwrap(), "target_type": "Organization"}))
        .into_response()
}

async fn installation_of_org(state: State<Shared>, headers: HeaderMap) -> Response {
    installation(state, headers).await
}

async fn contents(
    State((hub, _)): State<Shared>,
    Path((owner, repo, path)): Path<(String, String, String)>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let hub = hub.lock().unwrap();
    if !installation_ok(&hub, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let raw = headers.get("accept").and_then(|a| a.to_str().ok()) == Some("application/vnd.github.raw+json");
    let key = (format!("{owner}/{repo}"), path, query.get("ref").cloned().unwrap_or_else(|| "main".into()));
    match (hub.files.get(&key), raw) {
        (Some(text), true) => text.clone().into_response(),
        (Some(_), false) => refuse(StatusCode::NOT_ACCEPTABLE, "this stand-in serves the raw media type only"),
        (None, _) => refuse(StatusCode::NOT_FOUND, "Not Found"),
    }
}

async fn create_comment(
    State((hub, _)): State<Shared>,
    Path((owner, repo, number)): Path<(String, String, i64)>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let mut hub = hub.lock().unwrap();
    if !installation_ok(&hub, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let Some(text) = body["body"].as_str() else { return refuse(StatusCode::UNPROCESSABLE_ENTITY, "body is required") };
    hub.next_comment += 1;
    let id = hub.next_comment;
    hub.comments.insert(id, (format!("{owner}/{repo}"), number, text.to_string()));
    (StatusCode::CREATED, Json(json!({"id": id, "body": text, "user": {"login": "sightline[bot]", "type": "Bot"}})))
        .into_response()
}

async fn update_comment(
    State((hub, _)): State<Shared>,
    Path((owner, repo, id)): Path<(String, String, i64)>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let mut hub = hub.lock().unwrap();
    if !installation_ok(&hub, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let Some(text) = body["body"].as_str() else { return refuse(StatusCode::UNPROCESSABLE_ENTITY, "body is required") };
    match hub.comments.get_mut(&id) {
        Some(comment) if comment.0 == format!("{owner}/{repo}") => {
            comment.2 = text.to_string();
            Json(json!({"id": id, "body": text})).into_response()
        }
        _ => refuse(StatusCode::NOT_FOUND, "Not Found"),
    }
}

fn page<T: Clone>(items: &[T], query: &BTreeMap<String, String>) -> Vec<T> {
    let per_page: usize = query.get("per_page").and_then(|p| p.parse().ok()).unwrap_or(30).min(100);
    let page: usize = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1).max(1);
    items.iter().skip((page - 1) * per_page).take(per_page).cloned().collect()
}

async fn list_teams(
    State((hub, _)): State<Shared>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let hub = hub.lock().unwrap();
    if !installation_ok(&hub, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let teams: Vec<Value> = hub
        .teams
        .iter()
        .enumerate()
        .map(|(i, (slug, name, parent, _))| {
            json!({"id": 100 + i, "node_id": format!("T_{i}"), "slug": slug, "name": name, "privacy": "closed",
                   "parent": parent.as_ref().map(|p| json!({"slug": p, "name": p}))})
        })
        .collect();
    Json(page(&teams, &query)).into_response()
}

async fn list_members(
    State((hub, _)): State<Shared>,
    Path((_org, slug)): Path<(String, String)>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let hub = hub.lock().unwrap();
    if !installation_ok(&hub, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    let Some(team) = hub.teams.iter().find(|t| t.0 == slug) else { return refuse(StatusCode::NOT_FOUND, "Not Found") };
    let members: Vec<Value> =
        team.3.iter().map(|(id, login)| json!({"login": login, "id": id, "type": "User"})).collect();
    Json(page(&members, &query)).into_response()
}
