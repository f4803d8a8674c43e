//! Session ↔ pull-request links (`session_pr_links`), made only on exact evidence,
//! never by time alone:
//! - `commit`: a commit the session reported (at its start, a resume or its end) is one
//!   of the pull request's commits;
//! - `named`: a CI run named the pull request (its `session_start` metadata, set by the
//!   hook from `GITHUB_REF`) in the same repository; only CI runs name one;
//! - `branch`: the session's repository is the pull request's head repository and its
//!   branch the head branch (not the repository's default branch); the session's person
//!   is the pull request's author or one of its commit authors (a person with a session
//!   linked to it by `commit`); and the branch was reported within the pull request's
//!   life on that branch: after the previous pull request from the same head branch
//!   closed, and before this one closed. A branch name used again (`fix-tests`, months
//!   later or by someone else) never gathers other people's or older work.
//!
//! Links are tried at ingest ([`LinkFold`], in the writer's transaction, for each new
//! report) and backfilled when a pull request's event arrives ([`backfill`]).
//! Invariant: a link keeps the strongest evidence seen (commit, then named, then branch).

use rusqlite::{Connection, Transaction, params};

use crate::db::DbError;
use crate::events::writer::{CommitFold, Joined, Stored};

/// The git reports not yet tried against the pull requests, and marking them tried. Both
/// run on every writer commit, so the partial index of the few unchecked reports is named,
/// not left to the planner: without statistics SQLite scanned every report ever made (11
/// ms a commit on the demo year). INDEXED BY fails loudly if the index goes.
const UNCHECKED_SQL: &str = "SELECT g.session_id, g.repo, g.branch, g.commit_sha,
    CASE WHEN s.run_kind = 'CI' THEN g.pr_number ELSE 0 END, g.first_reported_ms, s.user_id
  FROM session_git g INDEXED BY session_git_unchecked JOIN sessions s ON s.id = g.session_id
  WHERE g.link_checked = 0";
const MARK_CHECKED_SQL: &str =
    "UPDATE session_git INDEXED BY session_git_unchecked SET link_checked = 1 WHERE link_checked = 0";

/// The SQL that adds a link or strengthens its evidence.
const LINK_SQL: &str =
    "INSERT INTO session_pr_links (session_id, pr_id, evidence, linked_at_ms) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (session_id, pr_id) DO UPDATE SET evidence = excluded.evidence
  WHERE (CASE excluded.evidence WHEN 'commit' THEN 3 WHEN 'named' THEN 2 ELSE 1 END)
      > (CASE session_pr_links.evidence WHEN 'commit' THEN 3 WHEN 'named' THEN 2 ELSE 1 END)";

/// When the previous pull request from the same head branch (of `p`, in `r`) closed
/// before `p` was opened, or -1 when there was none: branch evidence for `p` starts after
/// it. One still open when `p` opened (another base branch) does not count: both took the
/// branch's work.
const PREVIOUS_CLOSE: &str = "coalesce((SELECT max(coalesce(q.closed_at_ms, q.merged_at_ms))
      FROM pull_requests q JOIN repos rq ON rq.id = q.repo_id
      WHERE q.head_ref = p.head_ref AND q.id <> p.id AND q.created_at_ms < p.created_at_ms
        AND coalesce(q.closed_at_ms, q.merged_at_ms) <= p.created_at_ms
        AND lower(coalesce(q.head_repo, rq.full_name)) = lower(coalesce(p.head_repo, r.full_name))), -1)";

/// Whether the person `?4` may have worked on `p`: its author, or the person of a
/// session linked to it by a commit.
const CONTRIBUTOR: &str =
    "(p.user_id = ?4 OR EXISTS (SELECT 1 FROM session_pr_links c JOIN sessions cs ON cs.id = c.session_id
      WHERE c.pr_id = p.id AND c.evidence = 'commit' AND cs.user_id = ?4))";

/// `<host>/` of the configured GitHub, the prefix of the repositories sessions report.
pub fn host_prefix(github_url: &str) -> String {
    let host = github_url.split_once("://").map_or(github_url, |(_, rest)| rest);
    let host = host.split('/').next().unwrap_or(host).split(':').next().unwrap_or(host);
    format!("{}/", host.to_ascii_lowercase())
}

/// Links every session report not yet checked; answers the merged pull requests that
/// gained a link (their rollups are due).
pub fn link_unchecked(conn: &Connection, host_prefix: &str, now_ms: i64) -> Result<Vec<String>, DbError> {
    let mut unchecked = conn.prepare_cached(UNCHECKED_SQL)?;
    let reports = unchecked
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, String>(6)?,
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
    let mut by_branch = conn.prepare_cached(&format!(
        "SELECT p.id FROM pull_requests p JOIN repos r ON r.id = p.repo_id
         WHERE p.head_ref = ?2 AND lower(coalesce(p.head_repo, r.full_name)) = ?1
           AND p.head_ref IS NOT coalesce(r.default_branch, '')
           AND ?3 <= coalesce(p.closed_at_ms, p.merged_at_ms, 9223372036854775807)
           AND ?3 > {PREVIOUS_CLOSE}
           AND {CONTRIBUTOR}"
    ))?;
    let mut link = conn.prepare_cached(LINK_SQL)?;
    let mut touched = Vec::new();
    for (session_id, repo, branch, commit, pr_number, reported_ms, user_id) in &reports {
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
            for pr in
                by_branch.query_map(params![full_name, branch, reported_ms, user_id], |r| r.get::<_, String>(0))?
            {
                found.push((pr?, "branch"));
            }
        }
        for (pr, evidence) in found {
            if link.execute(params![session_id, pr, evidence, now_ms])? > 0 {
                touched.push(pr);
            }
        }
    }
    conn.prepare_cached(MARK_CHECKED_SQL)?.execute([])?;
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

/// The CI sessions that named a pull request (repository, number). `pr_number > 0` lets
/// the partial index of the reports that name one serve it (every other report has 0);
/// without it the planner read every report of the repository.
const NAMED_SQL: &str = "SELECT DISTINCT g.session_id FROM session_git g INDEXED BY session_git_by_pr_number
     JOIN sessions s ON s.id = g.session_id
     WHERE g.repo = ?1 AND g.pr_number = ?2 AND g.pr_number > 0 AND s.run_kind = 'CI'";

/// Links every session with evidence for one pull request (after its event); answers
/// how many links it added or strengthened.
pub fn backfill(tx: &Transaction<'_>, pr_id: &str, host_prefix: &str, now_ms: i64) -> Result<usize, DbError> {
    let Some(pr) = super::pulls::get(tx, pr_id)? else { return Ok(0) };
    let head_repo =
        format!("{host_prefix}{}", pr.head_repo.as_deref().unwrap_or(&pr.repo_full_name).to_ascii_lowercase());
    let base_repo = format!("{host_prefix}{}", pr.repo_full_name.to_ascii_lowercase());
    let default_branch = super::pulls::default_branch(tx, &pr.repo_id)?.unwrap_or_default();
    let closed = pr.closed_at_ms.or(pr.merged_at_ms).unwrap_or(i64::MAX);
    let mut link = tx.prepare_cached(LINK_SQL)?;
    let mut changed = 0;
    let mut by_commit = tx.prepare_cached(
        "SELECT DISTINCT g.session_id FROM pr_commits c JOIN session_git g ON g.commit_sha = c.sha WHERE c.pr_id = ?1",
    )?;
    let committed: Vec<String> = by_commit.query_map([pr_id], |r| r.get(0))?.collect::<Result<_, _>>()?;
    for session in committed {
        changed += link.execute(params![session, pr_id, "commit", now_ms])?;
    }
    let mut by_number = tx.prepare_cached(NAMED_SQL)?;
    let named: Vec<String> =
        by_number.query_map(params![base_repo, pr.number], |r| r.get(0))?.collect::<Result<_, _>>()?;
    for session in named {
        changed += link.execute(params![session, pr_id, "named", now_ms])?;
    }
    if pr.head_ref != default_branch {
        // The previous pull request of the branch closed before: read once, not once per
        // report of the branch (a branch name reused by hundreds of pull requests made
        // that a scan of them per report).
        let previous_close: i64 = tx
            .prepare_cached(&format!(
                "SELECT {PREVIOUS_CLOSE} FROM pull_requests p JOIN repos r ON r.id = p.repo_id WHERE p.id = ?1"
            ))?
            .query_row([pr_id], |r| r.get(0))?;
        // After the commit links above, so that a commit author's other sessions count.
        let mut by_branch = tx.prepare_cached(&format!(
            "SELECT DISTINCT g.session_id FROM session_git g JOIN sessions s ON s.id = g.session_id
             JOIN pull_requests p ON p.id = ?4
             WHERE g.repo = ?1 AND g.branch = ?2 AND g.first_reported_ms <= ?3
               AND g.first_reported_ms > ?5
               AND {}",
            CONTRIBUTOR.replace("?4", "s.user_id")
        ))?;
        let on_branch: Vec<String> = by_branch
            .query_map(params![head_repo, pr.head_ref, closed, pr_id, previous_close], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for session in on_branch {
            changed += link.execute(params![session, pr_id, "branch", now_ms])?;
        }
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
    fn step(&self) -> &'static str {
        "fold_links"
    }

    fn fold(
        &self,
        main: &Connection,
        _stored: &[Stored<'_>],
        _joined: &[Joined<'_>],
        now_ms: i64,
    ) -> Result<u64, DbError> {
        for pr in link_unchecked(main, &self.host_prefix, now_ms)? {
            super::rollups::compute(main, &pr, now_ms)?;
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements of every writer commit read the unchecked reports through their
    /// partial index, not by a scan of all of them (the cost grew with history).
    #[test]
    fn the_commit_path_reads_only_the_unchecked_reports() {
        let conn = crate::db::plans::main_db();
        for sql in [UNCHECKED_SQL, MARK_CHECKED_SQL] {
            let plan = crate::db::plans::plan(&conn, sql, []);
            assert!(plan.iter().any(|step| step.contains("USING INDEX session_git_unchecked")), "{sql}: {plan:?}");
            assert!(
                !plan.iter().any(|step| step.trim_end() == "SCAN g" || step.trim_end() == "SCAN session_git"),
                "{plan:?}"
            );
        }
    }

    /// A pull request's webhook reads the reports that name it through their partial
    /// index, never every report of the repository (at 2,000 developers that scan, with
    /// the branch's per-report look-up of earlier pull requests, was most of the writer's
    /// time in a webhook flood).
    #[test]
    fn a_pull_requests_named_sessions_are_read_by_index() {
        let plan = crate::db::plans::plan(&crate::db::plans::main_db(), NAMED_SQL, params!["github.com/a/b", 7]);
        assert!(plan.iter().any(|step| step.contains("session_git_by_pr_number (repo=? AND pr_number=?)")), "{plan:?}");
    }

    const DAY: i64 = 86_400_000;

    /// Three people, one repository; `prs` are (author, branch, opened day, closed day or
    /// open); `sessions` are (person, branch, reported day). Branch names come from a
    /// small set, so they are used again across people and time.
    fn world(prs: &[(u8, u8, i64, Option<i64>)], sessions: &[(u8, u8, i64)]) -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        for person in 0..3 {
            conn.execute(
                "INSERT INTO users (id, email, name, created_at_ms) VALUES (?1, ?1, ?1, 0)",
                [format!("u{person}")],
            )
            .unwrap();
        }
        conn.execute(
            "INSERT INTO repos (id, full_name, default_branch, created_at_ms) VALUES ('r', 'acme/shop', 'main', 0)",
            [],
        )
        .unwrap();
        for (i, (author, branch, opened, closed)) in prs.iter().enumerate() {
            conn.execute(
                "INSERT INTO pull_requests (id, repo_id, number, title, user_id, state, base_ref, head_ref,
                   created_at_ms, updated_at_ms, closed_at_ms, merged_at_ms)
                 VALUES (?1, 'r', ?2, 't', ?3, ?4, 'main', ?5, ?6, ?6, ?7, ?7)",
                params![
                    format!("pr{i}"),
                    i as i64 + 1,
                    format!("u{author}"),
                    if closed.is_some() { "merged" } else { "open" },
                    format!("b{branch}"),
                    opened * DAY,
                    closed.map(|c| c * DAY + 1)
                ],
            )
            .unwrap();
        }
        for (i, (person, branch, day)) in sessions.iter().enumerate() {
            conn.execute(
                "INSERT INTO sessions (id, user_id, agent_type, agent_session_id, first_event_ms, last_event_ms)
                 VALUES (?1, ?2, 'claude_code', ?1, ?3, ?3)",
                params![format!("s{i}"), format!("u{person}"), day * DAY + 10],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO session_git (session_id, repo, branch, commit_sha, pr_number, first_reported_ms)
                 VALUES (?1, 'github.com/acme/shop', ?2, '', 0, ?3)",
                params![format!("s{i}"), format!("b{branch}"), day * DAY + 10],
            )
            .unwrap();
        }
        conn
    }

    proptest::proptest! {
        /// Whatever the reuse of branch names across people and time, a branch link joins
        /// a session only to a pull request of its own person, reported within that pull
        /// request's life on the branch; and every such session is linked. Links made at
        /// ingest and by the backfill after a pull request's event agree.
        #[test]
        fn no_branch_link_joins_a_session_to_work_it_could_not_have_done(
            raw_prs in proptest::collection::vec((0u8..3, 0u8..3, 0i64..60, proptest::option::of(0i64..30)), 1..8),
            sessions in proptest::collection::vec((0u8..3, 0u8..3, 0i64..100), 1..16),
        ) {
            // One pull request per branch at a time, as GitHub allows: each opens after
            // the previous one from its branch closed.
            let mut prs: Vec<(u8, u8, i64, Option<i64>)> = Vec::new();
            for (author, branch, gap, length) in raw_prs {
                let after = prs.iter().filter(|p| p.1 == branch).map(|p| p.3.unwrap_or(i64::MAX / DAY)).max();
                if after == Some(i64::MAX / DAY) {
                    continue; // an open one is still there
                }
                let opened = after.unwrap_or(0) + 1 + gap;
                prs.push((author, branch, opened, length.map(|l| opened + l)));
            }
            let expected = |session: &(u8, u8, i64)| -> Vec<String> {
                let (person, branch, day) = *session;
                let reported = day * DAY + 10;
                prs.iter().enumerate().filter(|(i, p)| {
                    let previous = prs.iter().enumerate()
                        .filter(|(j, q)| q.1 == p.1 && j != i && q.2 < p.2 && q.3.is_some_and(|c| c * DAY < p.2 * DAY))
                        .filter_map(|(_, q)| q.3.map(|c| c * DAY + 1)).max().unwrap_or(-1);
                    p.0 == person && p.1 == branch && reported > previous
                        && p.3.is_none_or(|c| reported <= c * DAY + 1)
                }).map(|(i, _)| format!("pr{i}")).collect()
            };
            let links_of = |conn: &Connection| -> Vec<Vec<String>> {
                (0..sessions.len()).map(|i| {
                    let mut stmt = conn.prepare("SELECT pr_id FROM session_pr_links WHERE session_id = ?1 ORDER BY pr_id").unwrap();
                    stmt.query_map([format!("s{i}")], |r| r.get(0)).unwrap().collect::<Result<Vec<String>, _>>().unwrap()
                }).collect()
            };
            let want: Vec<Vec<String>> = sessions.iter().map(|s| { let mut e = expected(s); e.sort(); e }).collect();

            let at_ingest = world(&prs, &sessions);
            link_unchecked(&at_ingest, "github.com/", 0).unwrap();
            proptest::prop_assert_eq!(&links_of(&at_ingest), &want);

            let mut backfilled = world(&prs, &sessions);
            let tx = backfilled.transaction().unwrap();
            for i in 0..prs.len() {
                backfill(&tx, &format!("pr{i}"), "github.com/", 0).unwrap();
            }
            tx.commit().unwrap();
            proptest::prop_assert_eq!(&links_of(&backfilled), &want);
        }
    }

    /// Someone who committed to a pull request is one of its authors: their sessions on
    /// its branch count, a stranger's on the same branch do not.
    #[test]
    fn a_commit_author_of_the_pull_request_counts_as_its_author() {
        let conn = world(&[(0, 0, 1, None)], &[(1, 0, 2), (2, 0, 2)]);
        conn.execute("INSERT INTO sessions (id, user_id, agent_type, agent_session_id, first_event_ms, last_event_ms) VALUES ('c', 'u1', 'codex', 'c', 0, 0)", []).unwrap();
        conn.execute(
            "INSERT INTO session_pr_links (session_id, pr_id, evidence, linked_at_ms) VALUES ('c', 'pr0', 'commit', 0)",
            [],
        )
        .unwrap();
        link_unchecked(&conn, "github.com/", 0).unwrap();
        let linked: Vec<String> = conn
            .prepare("SELECT session_id FROM session_pr_links WHERE evidence = 'branch' ORDER BY session_id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(linked, ["s0"], "u1 committed to pr0; u2 did not");
    }

    #[test]
    fn the_host_of_github_or_an_enterprise_server() {
        assert_eq!(host_prefix("https://github.com"), "github.com/");
        assert_eq!(host_prefix("https://GHE.example.com:8443/"), "ghe.example.com/");
        assert_eq!(host_prefix("http://127.0.0.1:9999"), "127.0.0.1/");
    }
}
