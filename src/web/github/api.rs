//! The GitHub side of sign-in: the code exchange (`POST /login/oauth/access_token`)
//! and two REST reads (`GET /user`, `GET /user/emails`), as blocking ureq calls that
//! [`GithubClient::run`] puts on a blocking thread.
//!
//! Invariants: every call is time-limited and its answer size-capped; a `200` that
//! carries `{"error": …}` — GitHub's way of refusing a code — is a failure; redirects
//! are not followed (a token is never carried to another address); the error texts
//! made here never contain the client secret, the code, the verifier or a token.

use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::GithubError;
use crate::config::Auth;

const TIMEOUT: Duration = Duration::from_secs(15);
/// Far above a real answer (a user with hundreds of e-mail addresses fits).
const MAX_ANSWER_BYTES: u64 = 1 << 20;
/// GitHub's REST API refuses requests without a User-Agent.
const USER_AGENT: &str = "sightline";
const API_VERSION: &str = "2022-11-28";

/// `GET /user`, the fields we use.
#[derive(Clone, Debug, Deserialize)]
pub struct Account {
    pub id: i64,
    pub login: String,
}

/// One entry of `GET /user/emails`.
#[derive(Clone, Debug, Deserialize)]
pub struct AccountEmail {
    pub email: String,
    #[serde(default)]
    pub primary: bool,
    #[serde(default)]
    pub verified: bool,
}

/// The token endpoint's JSON answer: a token, or GitHub's `{"error", …}`.
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    error: Option<String>,
}

/// Reads a JSON answer of at most [`MAX_ANSWER_BYTES`]. The error text says where
/// the shape went wrong, not serde's message, which can quote the body's values.
fn read_json<T: DeserializeOwned>(answer: &mut ureq::http::Response<ureq::Body>) -> Result<T, String> {
    let text =
        answer.body_mut().with_config().limit(MAX_ANSWER_BYTES).read_to_string().map_err(|err| err.to_string())?;
    serde_json::from_str(&text)
        .map_err(|err| format!("{:?} error at line {} column {}", err.classify(), err.line(), err.column()))
}

/// What one sign-in needs to talk to GitHub. No `Debug`: it holds the client secret.
#[derive(Clone)]
pub struct GithubClient {
    agent: ureq::Agent,
    web: String,
    api: String,
    client_id: String,
    client_secret: String,
    redirect_uri: String,
}

impl GithubClient {
    pub fn new(auth: &Auth, redirect_uri: String) -> GithubClient {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(TIMEOUT))
            .max_redirects(0)
            .user_agent(USER_AGENT)
            .build()
            .new_agent();
        GithubClient {
            agent,
            web: auth.github_url.trim_end_matches('/').to_string(),
            api: auth.github_api(),
            client_id: auth.github_client_id.clone(),
            client_secret: auth.github_client_secret.0.clone(),
            redirect_uri,
        }
    }

    /// Runs blocking GitHub calls off the async workers.
    pub async fn run<T, F>(&self, work: F) -> Result<T, GithubError>
    where
        T: Send + 'static,
        F: FnOnce(&GithubClient) -> Result<T, GithubError> + Send + 'static,
    {
        let client = self.clone();
        tokio::task::spawn_blocking(move || work(&client))
            .await
            .unwrap_or_else(|join| Err(GithubError::Api(format!("GitHub call task failed: {join}"))))
    }

    /// Trades the authorization code (and the PKCE verifier) for an access token.
    pub fn exchange(&self, code: &str, verifier: &str) -> Result<String, GithubError> {
        let url = format!("{}/login/oauth/access_token", self.web);
        let mut answer = self
            .agent
            .post(&url)
            .header("Accept", "application/json")
            .send_form([
                ("client_id", self.client_id.as_str()),
                ("client_secret", self.client_secret.as_str()),
                ("code", code),
                ("redirect_uri", self.redirect_uri.as_str()),
                ("code_verifier", verifier),
            ])
            .map_err(|err| GithubError::Exchange(format!("cannot reach {url}: {err}")))?;
        let status = answer.status().as_u16();
        let body: TokenAnswer = read_json(&mut answer)
            .map_err(|err| GithubError::Exchange(format!("{url} answered {status}, not a token answer: {err}")))?;
        match body {
            TokenAnswer { error: Some(error), .. } => {
                Err(GithubError::Exchange(format!("{url} answered {status} with error {error:?}")))
            }
            TokenAnswer { access_token: Some(token), .. } if status == 200 && !token.is_empty() => Ok(token),
            _ => Err(GithubError::Exchange(format!("{url} answered {status} without a token"))),
        }
    }

    pub fn account(&self, token: &str) -> Result<Account, GithubError> {
        self.get(token, "/user")
    }

    /// Needs the `user:email` scope; lists private addresses too, with `verified`.
    pub fn emails(&self, token: &str) -> Result<Vec<AccountEmail>, GithubError> {
        self.get(token, "/user/emails")
    }

    fn get<T: DeserializeOwned>(&self, token: &str, path: &str) -> Result<T, GithubError> {
        let url = format!("{}{path}", self.api);
        let mut answer = self
            .agent
            .get(&url)
            .header("Authorization", format!("Bearer {token}"))
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", API_VERSION)
            .call()
            .map_err(|err| GithubError::Api(format!("cannot reach {url}: {err}")))?;
        let status = answer.status().as_u16();
        if status != 200 {
            return Err(GithubError::Api(format!("GET {url} answered {status}")));
        }
        read_json(&mut answer).map_err(|err| GithubError::Api(format!("GET {url}: unexpected answer: {err}")))
    }
}
