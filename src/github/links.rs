//! Session ↔ pull-request links (`session_pr_links`), made only on exact evidence,
//! never by time alone:
//! - `commit`: a commit the session reported (at its start, a resume or its end) is one
//!   of the pull request's commits;
//! - `named`: a CI run named the pull request (its `session_start` metadata, set by the
//!   hook from `GITHUB_REF`) in the same repository; only CI runs name one;
//! - `branch`: the session's repository is the pull request's head repository and its
//!   branch the head branch (not the repository's default branch), reported before the
//!   pull request was closed.
//!
//! Links are tried at ingest ([`LinkFold`], in the writer's transaction, for each new
//! report) and backfilled when a pull request's event arrives ([`backfill`]).
//! Invariant: a link keeps the strongest evidence seen (commit, then named, then branch).

use rusqlite::{Connection, Transaction, params};

use crate::db::DbError;
use crate::events::writer::{CommitFold, Stored};

/// The SQL that adds a link or strengthens its evidence.
const LINK_SQL: &str =
    "INSERT INTO session_pr_links (session_id, pr_id, evidence, linked_at_ms) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (session_id, pr_id) DO UPDATE SET evidence = excluded.evidence
  WHERE (CASE excluded.evidence WHEN 'commit' THEN 3 WHEN 'named' THEN 2 ELSE 1 END)
      > (CASE session_pr_links.evidence WHEN 'commit' THEN 3 WHEN 'named' THEN 2 ELSE 1 END)";

/// `<host>/` of the configured GitHub, the prefix of the repositories sessions report.
pub fn host_prefix(github_url: &str) -> String {
    let host = github_url.split_once("://").map_or(github_url, |(_, rest)| rest);
    let host = host.split('/').next().unwrap_or(host).split(':').next().unwrap_or(host);
    format!("{}/", host.to_ascii_lowercase())
}

/// Links every session report not yet checked; answers the merged pull requests that
/// gained a link (their rollups are due).
pub fn link_unchecked(conn: &Connection, host_prefix: &str, now_ms: i64) -> Result<Vec<String>, DbError> {
    let mut unchecked = conn.prepare_cached(
        "SELECT g.session_id, g.repo, g.branch, g.commit_sha,
           CASE WHEN s.run_kind = 'CI' THEN g.pr_number ELSE 0 END, g.first_reported_ms
         FROM session_git g JOIN sessions s ON s.id = g.session_id WHERE g.link_checked = 0",
    )?;
    let reports = unchecked
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    if reports.is_empty() {
        return Ok(Vec::new());
    }
    let mut by_commit = conn.prepare_cached("SELECT pr_id FROM pr_commits WHERE sha = ?1")?;
    let mut by_number = conn.prepare_cached(
        "SELECT p.id FROM pull_requests p JOIN repos r ON r.id = p.repo_id WHERE r.full_name = ?1 AND p.number = ?2",
    )?;
    let mut by_branch = conn.prepare_cached(
        "SELECT p.id FROM pull_requests p JOIN repos r ON r.id = p.repo_id
         WHERE p.head_ref = ?2 AND lower(coalesce(p.head_repo, r.full_name)) = ?1
           AND p.head_ref IS NOT coalesce(r.default_branch, '')
           AND ?3 <= coalesce(p.closed_at_ms, p.merged_at_ms, 9223372036854775807)",
    )?;
    let mut link = conn.prepare_cached(LINK_SQL)?;
    let mut touched = Vec::new();
    for (session_id, repo, branch, commit, pr_number, reported_ms) in &reports {
        let full_name = repo.strip_prefix(host_prefix).unwrap_or("");
        let mut found: Vec<(String, &str)> = Vec::new();
        if !commit.is_empty() {
            for pr in by_commit.query_map([commit], |r| r.get::<_, String>(0))? {
                found.push((pr?, "commit"));
            }
        }
        if !full_name.is_empty() && *pr_number > 0 {
            for pr in by_number.query_map(params![full_name, pr_number], |r| r.get::<_, String>(0))? {
                found.push((pr?, "named"));
            }
        }
        if !full_name.is_empty() && !branch.is_empty() {
            for pr in by_branch.query_map(params![full_name, branch, reported_ms], |r| r.get::<_, String>(0))? {
                found.push((pr?, "branch"));
            }
        }
        for (pr, evidence) in found {
            if link.execute(params![session_id, pr, evidence, now_ms])? > 0 {
                touched.push(pr);
            }
        }
    }
    conn.execute("UPDATE session_git SET link_checked = 1 WHERE link_checked = 0", [])?;
    touched.sort();
    touched.dedup();
    merged_only(conn, touched)
}

fn merged_only(conn: &Connection, prs: Vec<String>) -> Result<Vec<String>, DbError> {
    let mut merged = conn.prepare_cached("SELECT state = 'merged' FROM pull_requests WHERE id = ?1")?;
    let mut out = Vec::new();
    for pr in prs {
        if merged.query_row([&pr], |r| r.get::<_, bool>(0))? {
            out.push(pr);
        }
    }
    Ok(out)
}

/// Links every session with evidence for one pull request (after its event); answers
/// how many links it added or strengthened.
pub fn backfill(tx: &Transaction<'_>, pr_id: &str, host_prefix: &str, now_ms: i64) -> Result<usize, DbError> {
    let Some(pr) = super::pulls::get(tx, pr_id)? else { return Ok(0) };
    let head_repo =
        format!("{host_prefix}{}", pr.head_repo.as_deref().unwrap_or(&pr.repo_full_name).to_ascii_lowercase());
    let base_repo = format!("{host_prefix}{}", pr.repo_full_name.to_ascii_lowercase());
    let default_branch = super::pulls::default_branch(tx, &pr.repo_id)?.unwrap_or_default();
    let closed = pr.closed_at_ms.or(pr.merged_at_ms).unwrap_or(i64::MAX);
    let mut sessions: Vec<(String, &str)> = Vec::new();
    let mut by_commit = tx.prepare_cached(
        "SELECT DISTINCT g.session_id FROM pr_commits c JOIN session_git g ON g.commit_sha = c.sha WHERE c.pr_id = ?1",
    )?;
    for s in by_commit.query_map([pr_id], |r| r.get::<_, String>(0))? {
        sessions.push((s?, "commit"));
    }
    let mut by_number = tx.prepare_cached(
        "SELECT DISTINCT g.session_id FROM session_git g JOIN sessions s ON s.id = g.session_id
         WHERE g.repo = ?1 AND g.pr_number = ?2 AND s.run_kind = 'CI'",
    )?;
    for s in by_number.query_map(params![base_repo, pr.number], |r| r.get::<_, String>(0))? {
        sessions.push((s?, "named"));
    }
    if pr.head_ref != default_branch {
        let mut by_branch = tx.prepare_cached(
            "SELECT DISTINCT session_id FROM session_git WHERE repo = ?1 AND branch = ?2 AND first_reported_ms <= ?3",
        )?;
        for s in by_branch.query_map(params![head_repo, pr.head_ref, closed], |r| r.get::<_, String>(0))? {
            sessions.push((s?, "branch"));
        }
    }
    let mut link = tx.prepare_cached(LINK_SQL)?;
    let mut changed = 0;
    for (session, evidence) in sessions {
        changed += link.execute(params![session, pr_id, evidence, now_ms])?;
    }
    Ok(changed)
}

/// The link step of ingest, run by the writer right after the sessions fold, in the
/// same transaction: every new git report is tried against the known pull requests,
/// and a merged pull request that gains a session has its rollup recomputed.
pub struct LinkFold {
    pub host_prefix: String,
}

impl CommitFold for LinkFold {
    fn fold(&self, main: &Connection, _stored: &[Stored<'_>], now_ms: i64) -> Result<u64, DbError> {
        for pr in link_unchecked(main, &self.host_prefix, now_ms)? {
            super::rollups::compute(main, &pr, now_ms)?;
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_of_github_or_an_enterprise_server() {
        assert_eq!(host_prefix("https://github.com"), "github.com/");
        assert_eq!(host_prefix("https://GHE.example.com:8443/"), "ghe.example.com/");
        assert_eq!(host_prefix("http://127.0.0.1:9999"), "127.0.0.1/");
    }
}
