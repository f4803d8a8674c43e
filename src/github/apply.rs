//! What each webhook event does to the store, inside the worker's transaction:
//! - `pull_request`: upsert (a draft-only transition, `ready_for_review` or
//!   `converted_to_draft`, does not: the draft flag follows on the next push or close),
//!   its head commit, issue key and revert link; links backfilled; on merge, the rollup;
//! - `check_run`: the run recorded on each pull request it names, failures and CI
//!   decision recomputed;
//! - `pull_request_review`: the review recorded (or dismissed), decision and rounds
//!   recomputed;
//! - `push`: commits on a branch belong to the open pull requests with that head; on the
//!   default branch they are recorded, and a revert commit marks what it reverts.
//!
//! Invariant: every change is a pure function of the payload and the stored rows, so a
//! delivery applied twice (it never is: see `deliveries`) would change nothing more.

use regex::Regex;
use rusqlite::Transaction;

use super::payload::{self, CheckRunEvent, PullRequestEvent, PushEvent, ReviewEvent};
use super::{links, pulls, rollups};
use crate::db::DbError;

/// The rules the worker applies events with (from the configuration).
pub struct Rules {
    pub host_prefix: String,
    pub issue_key: Regex,
}

#[derive(Debug, PartialEq)]
pub enum Outcome {
    Applied,
    Ignored(String),
}

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The payload is not what the event promises: retrying cannot help.
    #[error("{0}")]
    Payload(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

fn ignored(why: impl Into<String>) -> Result<Outcome, ApplyError> {
    Ok(Outcome::Ignored(why.into()))
}

pub fn apply(
    tx: &Transaction<'_>,
    event: &str,
    body: &[u8],
    rules: &Rules,
    now_ms: i64,
) -> Result<Outcome, ApplyError> {
    match event {
        "pull_request" => pull_request(tx, payload::parse(event, body).map_err(ApplyError::Payload)?, rules, now_ms),
        "check_run" => check_run(tx, payload::parse(event, body).map_err(ApplyError::Payload)?, now_ms),
        "pull_request_review" => review(tx, payload::parse(event, body).map_err(ApplyError::Payload)?, now_ms),
        "push" => push(tx, payload::parse(event, body).map_err(ApplyError::Payload)?, rules, now_ms),
        other => ignored(format!("event {other} is not one Sightline uses")),
    }
}

/// The issue key: the first match in the title, then the head branch, then the body.
pub fn issue_key(pattern: &Regex, title: &str, branch: &str, body: &str) -> Option<String> {
    [title, branch, body].into_iter().find_map(|text| pattern.find(text).map(|m| m.as_str().to_string()))
}

/// The pull request a revert pull request reverts: GitHub's revert button writes
/// "Reverts owner/name#N" in the body; people write "Reverts #N".
pub fn reverts_number(title: &str, body: &str, repo_full_name: &str) -> Option<i64> {
    let pattern = Regex::new(r"(?i)\breverts\s+(?:([\w.-]+/[\w.-]+))?#(\d+)").expect("a valid pattern");
    let found = pattern.captures_iter(body).find_map(|c| {
        let same_repo = c.get(1).is_none_or(|r| r.as_str().eq_ignore_ascii_case(repo_full_name));
        same_repo.then(|| c[2].parse().ok()).flatten()
    });
    found.or_else(|| {
        let title_pattern = Regex::new(r#"^Revert ".*\(#(\d+)\)"$"#).expect("a valid pattern");
        title_pattern.captures(title).and_then(|c| c[1].parse().ok())
    })
}

/// The commits a revert commit's message says it reverts ("This reverts commit <sha>.").
pub fn reverted_commits(message: &str) -> Vec<String> {
    let pattern = Regex::new(r"(?i)this reverts commit ([0-9a-f]{7,64})").expect("a valid pattern");
    pattern.captures_iter(message).map(|c| c[1].to_ascii_lowercase()).collect()
}

fn pull_request(
    tx: &Transaction<'_>,
    event: PullRequestEvent,
    rules: &Rules,
    now_ms: i64,
) -> Result<Outcome, ApplyError> {
    if matches!(event.action.as_str(), "ready_for_review" | "converted_to_draft") {
        return ignored(format!("{}: a draft-only transition does not upsert", event.action));
    }
    let repo = &event.repository;
    let pr = &event.pull_request;
    let repo_id = pulls::ensure_repo(tx, repo, now_ms)?;
    let title = pr.title.as_deref().unwrap_or("");
    let body = pr.body.as_deref().unwrap_or("");
    let derived = pulls::Derived {
        issue_key: issue_key(&rules.issue_key, title, &pr.head.name, body),
        reverts_number: reverts_number(title, body, &repo.full_name),
    };
    let id = pulls::pr_id(&repo.full_name, pr.number);
    if !pulls::upsert(tx, &repo_id, &repo.full_name, pr, &derived)? {
        return ignored("an older snapshot than the one stored");
    }
    if let Some(sha) = &pr.head.sha {
        pulls::add_commits(tx, &id, std::slice::from_ref(sha))?;
    }
    links::backfill(tx, &id, &rules.host_prefix, now_ms)?;
    let stored = pulls::get(tx, &id)?.ok_or_else(|| ApplyError::Payload("the pull request vanished".into()))?;
    if stored.state == "merged" {
        if let Some(reverted) = stored.reverts_number {
            let reverted_id = pulls::pr_id(&repo.full_name, reverted);
            if pulls::mark_reverted(tx, &reverted_id, stored.number)? {
                rollups::compute(tx, &reverted_id, now_ms)?;
            }
        }
        rollups::compute(tx, &id, now_ms)?;
    }
    Ok(Outcome::Applied)
}

fn check_run(tx: &Transaction<'_>, event: CheckRunEvent, now_ms: i64) -> Result<Outcome, ApplyError> {
    if event.check_run.pull_requests.is_empty() {
        return ignored("the check run names no pull request");
    }
    pulls::ensure_repo(tx, &event.repository, now_ms)?;
    let mut known = 0;
    let repo_github_id = event.repository.id;
    for named in &event.check_run.pull_requests {
        let base_repo = named.base.as_ref().and_then(|b| b.repo.as_ref()).and_then(|r| r.id);
        if base_repo.is_some() && repo_github_id.is_some() && base_repo != repo_github_id {
            continue; // a pull request of another repository with the same head
        }
        let id = pulls::pr_id(&event.repository.full_name, named.number);
        let Some(pr) = pulls::get(tx, &id)? else { continue };
        known += 1;
        pulls::record_check_run(tx, &id, &event.check_run)?;
        if pr.state == "merged" {
            rollups::compute(tx, &id, now_ms)?;
        }
    }
    if known == 0 {
        return ignored("the check run names no pull request Sightline knows");
    }
    Ok(Outcome::Applied)
}

fn review(tx: &Transaction<'_>, event: ReviewEvent, now_ms: i64) -> Result<Outcome, ApplyError> {
    let repo_id = pulls::ensure_repo(tx, &event.repository, now_ms)?;
    let id = pulls::pr_id(&event.repository.full_name, event.pull_request.number);
    if pulls::get(tx, &id)?.is_none() {
        // The review's payload carries the pull request: store it first.
        let derived = pulls::Derived { issue_key: None, reverts_number: None };
        pulls::upsert(tx, &repo_id, &event.repository.full_name, &event.pull_request, &derived)?;
    }
    let dismissed = event.action == "dismissed";
    pulls::record_review(tx, &id, &event.review, dismissed)?;
    if pulls::get(tx, &id)?.is_some_and(|pr| pr.state == "merged") {
        rollups::compute(tx, &id, now_ms)?;
    }
    Ok(Outcome::Applied)
}

fn push(tx: &Transaction<'_>, event: PushEvent, rules: &Rules, now_ms: i64) -> Result<Outcome, ApplyError> {
    let Some(branch) = event.git_ref.strip_prefix("refs/heads/") else {
        return ignored(format!("a push to {} (not a branch)", event.git_ref));
    };
    if event.deleted {
        return ignored(format!("branch {branch} deleted"));
    }
    let repo_id = pulls::ensure_repo(tx, &event.repository, now_ms)?;
    let mut shas: Vec<String> = event.commits.iter().map(|c| c.id.to_ascii_lowercase()).collect();
    if let Some(after) = event.after.as_deref().filter(|a| a.bytes().any(|b| b != b'0')) {
        shas.push(after.to_ascii_lowercase());
    }
    shas.sort();
    shas.dedup();
    for pr in pulls::open_with_head(tx, &repo_id, branch)? {
        pulls::add_commits(tx, &pr, &shas)?;
        links::backfill(tx, &pr, &rules.host_prefix, now_ms)?;
    }
    let default = pulls::default_branch(tx, &repo_id)?;
    if default.as_deref() == Some(branch) {
        pulls::add_default_branch_commits(tx, &repo_id, &shas, now_ms)?;
        for commit in &event.commits {
            for reverted in reverted_commits(commit.message.as_deref().unwrap_or("")) {
                if let Some(pr) = pulls::merged_with_commit(tx, &repo_id, &reverted)?
                    && pulls::mark_reverted(tx, &pr, 0)?
                {
                    rollups::compute(tx, &pr, now_ms)?;
                }
            }
        }
    }
    Ok(Outcome::Applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_keys_come_from_title_then_branch_then_body() {
        let pattern = Regex::new(r"\b[A-Z][A-Z0-9]{1,9}-[0-9]{1,7}\b").unwrap();
        assert_eq!(issue_key(&pattern, "PAY-12: fix rounding", "feat/OPS-3", "see WEB-9"), Some("PAY-12".into()));
        assert_eq!(issue_key(&pattern, "fix rounding", "feat/OPS-3-x", "see WEB-9"), Some("OPS-3".into()));
        assert_eq!(issue_key(&pattern, "fix", "fix", "Closes WEB-9."), Some("WEB-9".into()));
        assert_eq!(issue_key(&pattern, "utf-8 fix", "x", "sha-256"), None);
    }

    #[test]
    fn revert_links_as_github_and_people_write_them() {
        assert_eq!(reverts_number(r#"Revert "Add X""#, "Reverts acme/api#41", "Acme/API"), Some(41));
        assert_eq!(reverts_number("Undo", "This reverts #7 which broke prod", "acme/api"), Some(7));
        assert_eq!(reverts_number("Undo", "Reverts other/repo#7", "acme/api"), None, "another repository");
        assert_eq!(reverts_number(r#"Revert "Add X (#12)""#, "", "acme/api"), Some(12));
        assert_eq!(reverts_number("Add X", "Refers to #12", "acme/api"), None);
        assert_eq!(
            reverted_commits("Revert \"Add X\"\n\nThis reverts commit 0123456789ABCDEF0123456789abcdef01234567."),
            vec!["0123456789abcdef0123456789abcdef01234567".to_string()]
        );
    }
}
