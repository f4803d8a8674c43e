//! What a session told us of its git work: every (repository, branch, commit, named
//! pull request) it reported, at its start, each resume and its end, kept in
//! `session_git` for the GitHub App to link the session to pull requests on exact
//! evidence.
//!
//! Invariants: the repository is the remote reduced to `<host>/<owner>/<name>` in lower
//! case, so `git@github.com:Acme/Api.git` and `https://github.com/acme/api` are one
//! repository; a report is written once (its first time wins) and starts unchecked
//! (`link_checked = 0`) so the link step sees each report exactly once.

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::model::wire::GitContext;

/// One git context a session reported; `''` and `0` stand for what it did not say.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GitReport {
    pub repo: String,
    pub branch: String,
    pub commit: String,
    pub pr_number: i64,
}

impl GitReport {
    /// The report of one event's git context and the pull request its metadata named.
    /// None when it says nothing a link could use.
    pub fn from_event(git: Option<&GitContext>, metadata: Option<&str>) -> Option<GitReport> {
        let report = GitReport {
            repo: git.and_then(|g| g.remote.as_deref()).and_then(repository_of_remote).unwrap_or_default(),
            branch: git.and_then(|g| g.branch.clone()).unwrap_or_default(),
            commit: git.and_then(|g| g.commit.clone()).unwrap_or_default(),
            pr_number: metadata.and_then(named_pull_request).unwrap_or(0),
        };
        (!report.repo.is_empty() || !report.commit.is_empty()).then_some(report)
    }
}

/// `<host>/<owner>/<name>` of a git remote, lower case, or None for a remote that names
/// no such repository (a local path). Credentials, ports and `.git` are dropped.
pub fn repository_of_remote(remote: &str) -> Option<String> {
    let remote = remote.trim();
    let (host, path) = match remote.split_once("://") {
        Some((_, rest)) => {
            let (authority, path) = rest.split_once('/')?;
            let host = authority.rsplit('@').next()?.split(':').next()?;
            (host, path)
        }
        // scp-like: [user@]host:owner/name
        None => {
            let (authority, path) = remote.split_once(':')?;
            if authority.contains('/') {
                return None;
            }
            (authority.rsplit('@').next()?, path)
        }
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut segments = path.rsplit('/');
    let name = segments.next().filter(|s| !s.is_empty())?;
    let owner = segments.next().filter(|s| !s.is_empty())?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return None;
    }
    Some(format!("{host}/{owner}/{name}").to_ascii_lowercase())
}

/// The pull request a session names in its `session_start` metadata (`pull_request`:
/// a number, as the hook sets it from a CI run's `GITHUB_REF`).
fn named_pull_request(metadata: &str) -> Option<i64> {
    let value: serde_json::Value = serde_json::from_str(metadata).ok()?;
    value.get("pull_request")?.as_i64().filter(|n| *n > 0)
}

/// Records a session's reports inside the caller's transaction; a report already
/// there keeps its first time.
pub fn record(conn: &Connection, session_id: &str, reports: &[(GitReport, i64)]) -> Result<(), DbError> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO session_git (session_id, repo, branch, commit_sha, pr_number, first_reported_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT DO UPDATE SET first_reported_ms = min(first_reported_ms, excluded.first_reported_ms)",
    )?;
    for (report, ts_ms) in reports {
        insert.execute(params![session_id, report.repo, report.branch, report.commit, report.pr_number, ts_ms])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_reduce_to_one_repository() {
        for remote in [
            "git@github.com:Acme/Api.git",
            "https://github.com/acme/api",
            "https://github.com/acme/api.git/",
            "ssh://git@github.com:22/acme/api.git",
            "https://x-access-token@github.com/Acme/API",
        ] {
            assert_eq!(repository_of_remote(remote).as_deref(), Some("github.com/acme/api"), "{remote}");
        }
        assert_eq!(
            repository_of_remote("https://ghe.example.com/Platform/billing.git").as_deref(),
            Some("ghe.example.com/platform/billing")
        );
        for not_one in ["/home/me/repo", "../repo", "https://github.com/", "file:///srv/git/repo.git", ""] {
            assert_eq!(repository_of_remote(not_one), None, "{not_one}");
        }
    }

    #[test]
    fn a_report_needs_a_repository_or_a_commit() {
        let git = GitContext {
            branch: Some("feat/x".into()),
            remote: Some("git@github.com:a/b.git".into()),
            ..Default::default()
        };
        let report = GitReport::from_event(Some(&git), Some(r#"{"pull_request":12,"source":"startup"}"#)).unwrap();
        assert_eq!(
            report,
            GitReport { repo: "github.com/a/b".into(), branch: "feat/x".into(), commit: String::new(), pr_number: 12 }
        );
        let branch_only = GitContext { branch: Some("main".into()), ..Default::default() };
        assert_eq!(GitReport::from_event(Some(&branch_only), None), None);
        assert_eq!(GitReport::from_event(None, Some(r#"{"pull_request":"12"}"#)), None);
    }
}
