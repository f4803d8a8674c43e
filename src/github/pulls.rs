//! The pull-request store: `repos`, `pull_requests` and what hangs off them
//! (`pr_commits`, `pr_check_runs`, `pr_reviews`, `default_branch_commits`). All SQL on
//! those tables lives here.
//!
//! Invariants: a pull request's id is `<owner>/<name>#<number>` in lower case, so every
//! event about it finds the same row; an older snapshot (by GitHub's `updated_at`) never
//! overwrites a newer one, so deliveries applied out of order leave the newest state;
//! counts derived from check runs and reviews are recomputed from their rows, never
//! incremented, so a redelivered event cannot count twice.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::payload::{self, PullRequest, Repository};
use crate::db::DbError;

pub fn pr_id(full_name: &str, number: i64) -> String {
    format!("{}#{number}", full_name.to_ascii_lowercase())
}

/// The repository's row id, created on first sight; its name, GitHub id and default
/// branch follow the newest payload. A repository is found by its GitHub id first, so a
/// renamed or transferred one keeps its row, and its pull requests move to the new name
/// (their ids follow, and every row that refers to them, by `ON UPDATE CASCADE`).
pub fn ensure_repo(tx: &Transaction<'_>, repo: &Repository, now_ms: i64) -> Result<String, DbError> {
    let default_branch = repo.default_branch.as_deref().or(repo.master_branch.as_deref());
    let by_github_id: Option<(String, String)> = match repo.id {
        Some(github_id) => tx
            .query_row("SELECT id, full_name FROM repos WHERE github_id = ?1", [github_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?,
        None => None,
    };
    let existing = match by_github_id {
        Some((id, old_name)) => {
            if !old_name.eq_ignore_ascii_case(&repo.full_name) {
                rename_repo(tx, &id, &repo.full_name)?;
            }
            Some(id)
        }
        None => {
            tx.query_row("SELECT id FROM repos WHERE full_name = ?1", [&repo.full_name], |r| r.get(0)).optional()?
        }
    };
    let id = match existing {
        Some(id) => id,
        None => {
            let id = uuid::Uuid::now_v7().to_string();
            tx.execute(
                "INSERT INTO repos (id, full_name, created_at_ms) VALUES (?1, ?2, ?3)",
                params![id, repo.full_name, now_ms],
            )?;
            id
        }
    };
    tx.execute(
        "UPDATE repos SET full_name = ?2, default_branch = coalesce(?3, default_branch),
           github_id = coalesce(?4, github_id) WHERE id = ?1",
        params![id, repo.full_name, default_branch, repo.id],
    )?;
    Ok(id)
}

/// Moves a repository (and its pull requests' ids) to a new name. A stale row that
/// still holds the new name (seen before under it, or another repository's old name) is
/// renamed out of the way to `<name>~<id>`.
fn rename_repo(tx: &Transaction<'_>, repo_id: &str, new_name: &str) -> Result<(), DbError> {
    tx.execute(
        "UPDATE pull_requests SET id = id || '~' || repo_id
         WHERE repo_id IN (SELECT id FROM repos WHERE full_name = ?1 AND id <> ?2)",
        params![new_name, repo_id],
    )?;
    tx.execute(
        "UPDATE repos SET full_name = full_name || '~' || id WHERE full_name = ?1 AND id <> ?2",
        params![new_name, repo_id],
    )?;
    tx.execute("UPDATE repos SET full_name = ?2 WHERE id = ?1", params![repo_id, new_name])?;
    tx.execute(
        "UPDATE pull_requests SET id = lower(?2) || '#' || number WHERE repo_id = ?1",
        params![repo_id, new_name],
    )?;
    Ok(())
}

pub fn default_branch(conn: &Connection, repo_id: &str) -> Result<Option<String>, DbError> {
    Ok(conn.query_row("SELECT default_branch FROM repos WHERE id = ?1", [repo_id], |r| r.get(0)).optional()?.flatten())
}

/// What a pull-request snapshot says beyond the payload: found by our own rules.
pub struct Derived {
    pub issue_key: Option<String>,
    pub reverts_number: Option<i64>,
}

/// Writes a snapshot of a pull request unless a newer one is stored; answers whether
/// it was written.
pub fn upsert(
    tx: &Transaction<'_>,
    repo_id: &str,
    repo_full_name: &str,
    pr: &PullRequest,
    derived: &Derived,
) -> Result<bool, DbError> {
    let merged_at_ms = payload::time_ms(pr.merged_at.as_deref());
    let state = match (pr.state.as_deref(), pr.merged.unwrap_or(false) || merged_at_ms.is_some()) {
        (_, true) => "merged",
        (Some("closed"), false) => "closed",
        _ => "open",
    };
    let created_at_ms = payload::time_ms(pr.created_at.as_deref()).unwrap_or(0);
    let updated_at_ms = payload::time_ms(pr.updated_at.as_deref()).unwrap_or(created_at_ms);
    let author = pr.user.as_ref();
    let author_id = author.and_then(|a| a.id);
    let user_id: Option<String> = match author_id {
        Some(id) => tx.query_row("SELECT id FROM users WHERE github_id = ?1", [id], |r| r.get(0)).optional()?,
        None => None,
    };
    let written = tx.execute(
        "INSERT INTO pull_requests (id, repo_id, number, github_id, title, author_login, author_github_id, user_id,
           state, is_draft, base_ref, head_ref, head_repo, head_sha, additions, deletions, changed_files,
           created_at_ms, updated_at_ms, merged_at_ms, closed_at_ms, merge_commit_sha, issue_key, reverts_number)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
           ?22, ?23, ?24)
         ON CONFLICT (id) DO UPDATE SET
           github_id = excluded.github_id, title = excluded.title, author_login = excluded.author_login,
           author_github_id = excluded.author_github_id, user_id = excluded.user_id, state = excluded.state,
           is_draft = excluded.is_draft, base_ref = excluded.base_ref, head_ref = excluded.head_ref,
           head_repo = excluded.head_repo, head_sha = excluded.head_sha, additions = excluded.additions,
           deletions = excluded.deletions, changed_files = excluded.changed_files,
           created_at_ms = excluded.created_at_ms, updated_at_ms = excluded.updated_at_ms,
           merged_at_ms = excluded.merged_at_ms, closed_at_ms = excluded.closed_at_ms,
           merge_commit_sha = excluded.merge_commit_sha, issue_key = excluded.issue_key,
           reverts_number = excluded.reverts_number
         WHERE excluded.updated_at_ms >= pull_requests.updated_at_ms",
        params![
            pr_id(repo_full_name, pr.number),
            repo_id,
            pr.number,
            pr.id,
            pr.title.as_deref().unwrap_or(""),
            author.and_then(|a| a.login.as_deref()),
            author_id,
            user_id,
            state,
            pr.draft.unwrap_or(false),
            pr.base.name,
            pr.head.name,
            pr.head.repo.as_ref().and_then(|r| r.full_name.as_deref()),
            pr.head.sha.as_deref().map(str::to_ascii_lowercase),
            pr.additions.unwrap_or(0),
            pr.deletions.unwrap_or(0),
            pr.changed_files.unwrap_or(0),
            created_at_ms,
            updated_at_ms,
            merged_at_ms,
            payload::time_ms(pr.closed_at.as_deref()),
            pr.merge_commit_sha.as_deref().map(str::to_ascii_lowercase),
            derived.issue_key,
            derived.reverts_number,
        ],
    )?;
    Ok(written == 1)
}

/// A stored pull request, as the links, rollups and pages read it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredPr {
    pub id: String,
    pub repo_id: String,
    pub repo_full_name: String,
    pub number: i64,
    pub title: String,
    pub state: String,
    pub is_draft: bool,
    pub base_ref: String,
    pub head_ref: String,
    pub head_repo: Option<String>,
    pub head_sha: Option<String>,
    pub additions: i64,
    pub deletions: i64,
    pub created_at_ms: i64,
    pub merged_at_ms: Option<i64>,
    pub closed_at_ms: Option<i64>,
    pub merge_commit_sha: Option<String>,
    pub issue_key: Option<String>,
    pub reverts_number: Option<i64>,
    pub reverted_by_number: Option<i64>,
    pub check_failures_count: i64,
    pub ci_decision: Option<String>,
    pub review_decision: Option<String>,
    pub review_rounds: i64,
    pub bot_comment_id: Option<i64>,
    pub user_id: Option<String>,
}

pub(super) const PR_COLUMNS: &str =
    "p.id, p.repo_id, r.full_name, p.number, p.title, p.state, p.is_draft, p.base_ref, p.head_ref,
    p.head_repo, p.head_sha, p.additions, p.deletions, p.created_at_ms, p.merged_at_ms, p.closed_at_ms,
    p.merge_commit_sha, p.issue_key, p.reverts_number, p.reverted_by_number, p.check_failures_count,
    p.ci_decision, p.review_decision, p.review_rounds, p.bot_comment_id, p.user_id";

pub(super) fn read_pr(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredPr> {
    Ok(StoredPr {
        id: row.get(0)?,
        repo_id: row.get(1)?,
        repo_full_name: row.get(2)?,
        number: row.get(3)?,
        title: row.get(4)?,
        state: row.get(5)?,
        is_draft: row.get(6)?,
        base_ref: row.get(7)?,
        head_ref: row.get(8)?,
        head_repo: row.get(9)?,
        head_sha: row.get(10)?,
        additions: row.get(11)?,
        deletions: row.get(12)?,
        created_at_ms: row.get(13)?,
        merged_at_ms: row.get(14)?,
        closed_at_ms: row.get(15)?,
        merge_commit_sha: row.get(16)?,
        issue_key: row.get(17)?,
        reverts_number: row.get(18)?,
        reverted_by_number: row.get(19)?,
        check_failures_count: row.get(20)?,
        ci_decision: row.get(21)?,
        review_decision: row.get(22)?,
        review_rounds: row.get(23)?,
        bot_comment_id: row.get(24)?,
        user_id: row.get(25)?,
    })
}

pub fn get(conn: &Connection, id: &str) -> Result<Option<StoredPr>, DbError> {
    let sql = format!("SELECT {PR_COLUMNS} FROM pull_requests p JOIN repos r ON r.id = p.repo_id WHERE p.id = ?1");
    Ok(conn.query_row(&sql, [id], read_pr).optional()?)
}

/// Open pull requests of a repository whose head is `branch` of that same repository
/// (pushes to it are theirs; a fork's pull request with a head of the same name is not).
pub fn open_with_head(conn: &Connection, repo_id: &str, branch: &str) -> Result<Vec<String>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT p.id FROM pull_requests p JOIN repos r ON r.id = p.repo_id
         WHERE p.repo_id = ?1 AND p.head_ref = ?2 AND p.state = 'open'
           AND lower(coalesce(p.head_repo, r.full_name)) = lower(r.full_name)",
    )?;
    let rows = stmt.query_map(params![repo_id, branch], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The pull requests a person wrote or worked on (a session of theirs is linked), newest first.
pub fn of_person(conn: &Connection, user_id: &str, limit: usize) -> Result<Vec<StoredPr>, DbError> {
    let sql = format!(
        "SELECT {PR_COLUMNS} FROM pull_requests p JOIN repos r ON r.id = p.repo_id
         WHERE p.user_id = ?1 OR p.id IN (
           SELECT l.pr_id FROM session_pr_links l JOIN sessions s ON s.id = l.session_id WHERE s.user_id = ?1)
         ORDER BY p.created_at_ms DESC, p.id LIMIT ?2"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![user_id, limit as i64], read_pr)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn add_commits(tx: &Transaction<'_>, pr_id: &str, shas: &[String]) -> Result<(), DbError> {
    let mut insert = tx.prepare_cached("INSERT INTO pr_commits (pr_id, sha) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?;
    for sha in shas {
        insert.execute(params![pr_id, sha.to_ascii_lowercase()])?;
    }
    Ok(())
}

pub fn add_default_branch_commits(
    tx: &Transaction<'_>,
    repo_id: &str,
    shas: &[String],
    now_ms: i64,
) -> Result<(), DbError> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO default_branch_commits (repo_id, sha, pushed_at_ms) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
    )?;
    for sha in shas {
        insert.execute(params![repo_id, sha.to_ascii_lowercase(), now_ms])?;
    }
    Ok(())
}

/// The merged pull request of a repository that a commit belongs to (its merge commit
/// or one of its own), for revert commits.
pub fn merged_with_commit(tx: &Transaction<'_>, repo_id: &str, sha: &str) -> Result<Option<String>, DbError> {
    Ok(tx
        .query_row(
            "SELECT p.id FROM pull_requests p WHERE p.repo_id = ?1 AND p.state = 'merged'
               AND (p.merge_commit_sha = ?2 OR EXISTS (SELECT 1 FROM pr_commits c WHERE c.pr_id = p.id AND c.sha = ?2))
             ORDER BY p.merged_at_ms DESC LIMIT 1",
            params![repo_id, sha.to_ascii_lowercase()],
            |r| r.get(0),
        )
        .optional()?)
}

/// Marks a pull request reverted: by pull request `by_number`, or by a commit (0).
pub fn mark_reverted(tx: &Transaction<'_>, pr_id: &str, by_number: i64) -> Result<bool, DbError> {
    Ok(tx.execute(
        "UPDATE pull_requests SET reverted_by_number = ?2 WHERE id = ?1 AND reverted_by_number IS NULL",
        params![pr_id, by_number],
    )? == 1)
}

mod checks;
mod comments;
mod reads;

pub use checks::{record_check_run, record_review};
pub use comments::{
    clear_comments_due, comment_done, commented, comments_due, mark_comment_due, mark_person_comments_due,
};
pub use reads::{DecidedLink, MergedOutcome, decided_links, landed_commits, merged_outcomes, of_session, own_share};

/// Every issue key pull requests name (upper case, each once), for `sync-jira`.
pub fn issue_keys(conn: &Connection) -> Result<Vec<String>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT DISTINCT upper(issue_key) FROM pull_requests WHERE issue_key IS NOT NULL AND issue_key <> '' ORDER BY 1",
    )?;
    let rows = stmt.query_map([], |row| row.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
