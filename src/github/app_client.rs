//! Calls to GitHub's REST API as the GitHub App: an RS256 app JWT (issued 60 s in the
//! past, valid 9 minutes, `iss` the App id, as GitHub's "Generating a JSON Web Token
//! for a GitHub App" asks), traded for an installation access token
//! (`POST /app/installations/{id}/access_tokens`), which the calls then carry.
//!
//! Invariants: blocking (ureq) — callers run it off the async workers; no `Debug`, since
//! it holds the private key; an answer's error text never quotes the body's values. When
//! GitHub answers that a rate limit is reached (403 or 429 with `x-ratelimit-remaining:
//! 0`, or with `Retry-After`), no request leaves this host (the server, or one command)
//! until the time it named (at least a minute, as GitHub's "Rate limits for the REST API"
//! asks), and every call meanwhile fails at once saying so: requests made while limited
//! can get the App banned.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Config;

const MAX_ANSWER_BYTES: u64 = 10 << 20;
const API_VERSION: &str = "2022-11-28";
/// The least wait after a rate limit that names no time.
const DEFAULT_REST_SECS: i64 = 60;

/// Until when (Unix ms) no request goes to GitHub, after a rate limit; 0 when free. The
/// host owns it (the server's `AppState::github_resting_until_ms`; a command's own), so
/// every client of one host rests together and no process-wide state is kept here.
pub type RestingUntil = Arc<AtomicI64>;

/// The prefix of every rate-limit error, for callers that stop a pass on it.
pub const RATE_LIMITED: &str = "GitHub's rate limit";

/// Whether an error of this module is GitHub's rate limit (retry after the rest, not now).
pub fn is_rate_limited(error: &str) -> bool {
    error.starts_with(RATE_LIMITED)
}

/// How long GitHub asked us to wait, from a limited answer's headers, in seconds.
fn rest_secs(headers: &ureq::http::HeaderMap, now_s: i64) -> Option<i64> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(after) = header("retry-after").and_then(|v| v.parse::<i64>().ok()) {
        return Some(after.max(1));
    }
    if header("x-ratelimit-remaining") == Some("0") {
        let reset = header("x-ratelimit-reset").and_then(|v| v.parse::<i64>().ok());
        return Some(reset.map_or(DEFAULT_REST_SECS, |reset| (reset - now_s).max(1)));
    }
    None
}

pub struct AppClient {
    resting_until_ms: RestingUntil,
    agent: ureq::Agent,
    api: String,
    app_id: String,
    key: EncodingKey,
}

#[derive(Serialize)]
struct AppClaims<'a> {
    iat: i64,
    exp: i64,
    iss: &'a str,
}

#[derive(Deserialize)]
struct InstallationToken {
    token: String,
}

#[derive(Deserialize)]
struct Installation {
    id: i64,
}

/// An installation's token, for the calls made on its behalf.
pub struct Installed<'c> {
    client: &'c AppClient,
    token: String,
}

impl AppClient {
    /// The App's client, or None when `github.app_id` is not set; an error names what
    /// is wrong with the key.
    pub fn from_config(config: &Config, resting_until_ms: &RestingUntil) -> Result<Option<AppClient>, String> {
        if !config.github.app_enabled() {
            return Ok(None);
        }
        let path = &config.github.private_key_path;
        // jsonwebtoken signs with ring's RSA (constant-time), before the first app_jwt.
        crate::auth::jwt::ring_provider::install();
        let pem = std::fs::read(path).map_err(|err| format!("github.private_key_path {path}: {err}"))?;
        let key = EncodingKey::from_rsa_pem(&pem)
            .map_err(|err| format!("github.private_key_path {path} is not an RSA private key (PEM): {err}"))?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(config.github.api_timeout_secs)))
            .max_redirects(0)
            .user_agent(concat!("sightline/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Ok(Some(AppClient {
            resting_until_ms: resting_until_ms.clone(),
            agent,
            api: config.auth.github_api(),
            app_id: config.github.app_id.clone(),
            key,
        }))
    }

    /// The app JWT for `now_s` (Unix seconds).
    pub fn app_jwt(&self, now_s: i64) -> Result<String, String> {
        let claims = AppClaims { iat: now_s - 60, exp: now_s + 540, iss: &self.app_id };
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &self.key).map_err(|err| err.to_string())
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        bearer: &str,
        body: Option<&Value>,
        accept: &str,
    ) -> Result<(u16, String), String> {
        let url = format!("{}{path}", self.api);
        let now_ms = crate::clock::system_now_ms();
        let resting_until = self.resting_until_ms.load(Ordering::SeqCst);
        if now_ms < resting_until {
            return Err(format!(
                "{RATE_LIMITED}: resting {} s more before calling GitHub again; {method} {path} not sent",
                (resting_until - now_ms + 999) / 1000
            ));
        }
        let request = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("Accept", accept)
            .header("Authorization", format!("Bearer {bearer}"))
            .header("X-GitHub-Api-Version", API_VERSION);
        let sent = match body {
            Some(body) => self.agent.run(
                request
                    .header("Content-Type", "application/json")
                    .body(serde_json::to_vec(body).map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?,
            ),
            None => self.agent.run(request.body(Vec::new()).map_err(|e| e.to_string())?),
        };
        let mut answer = sent.map_err(|err| format!("cannot reach {url}: {err}"))?;
        let status = answer.status().as_u16();
        if matches!(status, 403 | 429)
            && let Some(rest) = rest_secs(answer.headers(), now_ms / 1000)
        {
            self.resting_until_ms.fetch_max(now_ms + rest * 1000, Ordering::SeqCst);
            return Err(format!("{RATE_LIMITED}: {method} {path} answered {status}; try again in {rest} s"));
        }
        let text = answer
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .map_err(|err| format!("{method} {url}: {err}"))?;
        Ok((status, text))
    }

    fn json<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        bearer: &str,
        body: Option<&Value>,
    ) -> Result<T, String> {
        let (status, text) = self.call(method, path, bearer, body, "application/vnd.github+json")?;
        if !(200..300).contains(&status) {
            return Err(format!("{method} {path} answered {status}"));
        }
        serde_json::from_str(&text).map_err(|err| {
            format!(
                "{method} {path}: not the expected answer ({:?} error at line {} column {})",
                err.classify(),
                err.line(),
                err.column()
            )
        })
    }

    /// A token for one installation.
    pub fn installation(&self, installation_id: i64, now_s: i64) -> Result<Installed<'_>, String> {
        let jwt = self.app_jwt(now_s)?;
        let answer: InstallationToken =
            self.json("POST", &format!("/app/installations/{installation_id}/access_tokens"), &jwt, None)?;
        Ok(Installed { client: self, token: answer.token })
    }

    /// The installation on a repository (`owner/name`).
    pub fn repository_installation(&self, full_name: &str, now_s: i64) -> Result<Installed<'_>, String> {
        let jwt = self.app_jwt(now_s)?;
        let found: Installation = self.json("GET", &format!("/repos/{full_name}/installation"), &jwt, None)?;
        self.installation(found.id, now_s)
    }

    /// The installation on an organisation.
    pub fn organisation_installation(&self, org: &str, now_s: i64) -> Result<Installed<'_>, String> {
        let jwt = self.app_jwt(now_s)?;
        let found: Installation = self.json("GET", &format!("/orgs/{org}/installation"), &jwt, None)?;
        self.installation(found.id, now_s)
    }
}

impl Installed<'_> {
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, String> {
        self.client.json("GET", path, &self.token, None)
    }

    /// Every page of a list (`per_page=100`, following `page=` until a short page).
    pub fn get_all<T: DeserializeOwned>(&self, path: &str) -> Result<Vec<T>, String> {
        let mut out = Vec::new();
        let separator = if path.contains('?') { '&' } else { '?' };
        for page in 1..=100 {
            let items: Vec<T> = self.get(&format!("{path}{separator}per_page=100&page={page}"))?;
            let short = items.len() < 100;
            out.extend(items);
            if short {
                break;
            }
        }
        Ok(out)
    }

    /// A file's raw content, or None when there is no such file (404).
    pub fn raw_file(&self, full_name: &str, path: &str, git_ref: &str) -> Result<Option<String>, String> {
        let encoded: String = form_urlencoded::byte_serialize(git_ref.as_bytes()).collect();
        let api_path = format!("/repos/{full_name}/contents/{path}?ref={encoded}");
        let (status, text) =
            self.client.call("GET", &api_path, &self.token, None, "application/vnd.github.raw+json")?;
        match status {
            200 => Ok(Some(text)),
            404 => Ok(None),
            other => Err(format!("GET {api_path} answered {other}")),
        }
    }

    pub fn post<T: DeserializeOwned>(&self, path: &str, body: &Value) -> Result<T, String> {
        self.client.json("POST", path, &self.token, Some(body))
    }

    /// A PATCH whose status the caller decides about (an edit of a deleted comment is a
    /// 404, to be posted again, not an error).
    pub fn patch_status(&self, path: &str, body: &Value) -> Result<u16, String> {
        Ok(self.client.call("PATCH", path, &self.token, Some(body), "application/vnd.github+json")?.0)
    }
}
