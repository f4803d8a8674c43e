//! The parts of GitHub's webhook payloads we read (GitHub's "Webhook events and
//! payloads"), for `pull_request`, `check_run`, `pull_request_review` and `push`.
//!
//! Invariant: only what we use is named, and every member GitHub may leave out or set
//! to null is an `Option`, so a payload of an older or newer GitHub still parses; a
//! payload without what we cannot do without (a repository, a number) is an error that
//! names the member.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Account {
    pub login: Option<String>,
    pub id: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct Repository {
    pub id: Option<i64>,
    pub full_name: String,
    pub default_branch: Option<String>,
    /// Push payloads name the default branch here too (older payloads only here).
    pub master_branch: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Installation {
    pub id: i64,
}

#[derive(Debug, Deserialize)]
pub struct Ref {
    #[serde(rename = "ref")]
    pub name: String,
    pub sha: Option<String>,
    pub repo: Option<RefRepository>,
}

#[derive(Debug, Deserialize)]
pub struct RefRepository {
    pub full_name: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct PullRequest {
    pub id: Option<i64>,
    pub number: i64,
    pub title: Option<String>,
    pub body: Option<String>,
    pub user: Option<Account>,
    pub state: Option<String>,
    #[serde(default)]
    pub draft: Option<bool>,
    pub merged: Option<bool>,
    pub merged_at: Option<String>,
    pub closed_at: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub merge_commit_sha: Option<String>,
    pub head: Ref,
    pub base: Ref,
    pub additions: Option<i64>,
    pub deletions: Option<i64>,
    pub changed_files: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct PullRequestEvent {
    pub action: String,
    pub pull_request: PullRequest,
    pub repository: Repository,
    pub installation: Option<Installation>,
}

#[derive(Debug, Deserialize)]
pub struct CheckRunPullRequest {
    pub number: i64,
    /// The pull request's base; its repository may be another one than the check run's
    /// (a fork and its upstream both running the App).
    pub base: Option<CheckRunBase>,
}

#[derive(Debug, Deserialize)]
pub struct CheckRunBase {
    pub repo: Option<CheckRunRepo>,
}

#[derive(Debug, Deserialize)]
pub struct CheckRunRepo {
    pub id: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct CheckRun {
    pub id: i64,
    pub name: Option<String>,
    pub head_sha: Option<String>,
    pub status: Option<String>,
    pub conclusion: Option<String>,
    pub completed_at: Option<String>,
    #[serde(default)]
    pub pull_requests: Vec<CheckRunPullRequest>,
}

#[derive(Debug, Deserialize)]
pub struct CheckRunEvent {
    pub action: String,
    pub check_run: CheckRun,
    pub repository: Repository,
}

#[derive(Debug, Deserialize)]
pub struct Review {
    pub id: i64,
    pub user: Option<Account>,
    pub state: Option<String>,
    pub commit_id: Option<String>,
    pub submitted_at: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ReviewEvent {
    pub action: String,
    pub review: Review,
    pub pull_request: PullRequest,
    pub repository: Repository,
}

#[derive(Debug, Deserialize)]
pub struct Commit {
    pub id: String,
    pub message: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct PushEvent {
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub after: Option<String>,
    #[serde(default)]
    pub deleted: bool,
    #[serde(default)]
    pub commits: Vec<Commit>,
    pub repository: Repository,
}

/// A payload of `event`, or why it is not one (naming the member, as serde_path_to_error
/// finds it).
pub fn parse<T: serde::de::DeserializeOwned>(event: &str, body: &[u8]) -> Result<T, String> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let path = err.path().to_string();
        format!("{event} payload: {} at {path}", err.inner())
    })
}

/// Milliseconds of an ISO 8601 time as GitHub writes it (`2026-11-24T10:00:00Z`), or of
/// a Unix time in seconds (push payloads' repository times are numbers).
pub fn time_ms(text: Option<&str>) -> Option<i64> {
    let text = text?;
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}
