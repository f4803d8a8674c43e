//! Outcome scores: what became of the work. `compute-effectiveness` gives each
//! interactive session linked to a decided pull request an `effectiveness` score;
//! `compute-subject-scores` scores the pull requests themselves.
//!
//! Effectiveness of one pull request: 0 if it was closed unmerged or later reverted;
//! otherwise `1 / (1 + 0.25 × failed checks + 0.25 × extra review rounds)` (rounds beyond
//! the first), so a clean merge is 1 and every failed check or extra round costs a
//! little. A session's effectiveness is the mean over the decided pull requests it is
//! linked to; its label names them.
//!
//! Invariant: the scores are recomputed whole each run (a revert or a late check run
//! changes them), at the current version; only interactive sessions are scored.

use std::collections::BTreeMap;

use rusqlite::{Connection, params};

use super::registry::{self, Scorer};
use crate::db::DbError;
use crate::github::pulls::{self, DecidedLink};

pub fn pr_effectiveness(merged: bool, reverted: bool, check_failures: i64, review_rounds: i64) -> f64 {
    if !merged || reverted {
        return 0.0;
    }
    1.0 / (1.0 + 0.25 * check_failures.max(0) as f64 + 0.25 * (review_rounds - 1).max(0) as f64)
}

fn put(
    conn: &Connection,
    subject_type: &str,
    subject_id: &str,
    scorer: &Scorer,
    value: f64,
    label: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, period_start_ms, value, label, source,
           created_at_ms)
         VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, ?8)
         ON CONFLICT (subject_type, subject_id, scorer_name, scorer_version, period_start_ms) DO UPDATE SET
           value = excluded.value, label = excluded.label, created_at_ms = excluded.created_at_ms",
    )?
    .execute(params![subject_type, subject_id, scorer.name, scorer.version, value, label, scorer.source.as_str(), now_ms])?;
    Ok(())
}

/// Writes every linked session's effectiveness; answers how many sessions.
pub fn compute_effectiveness(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    let mut by_session: BTreeMap<String, Vec<DecidedLink>> = BTreeMap::new();
    for link in pulls::decided_links(conn)? {
        by_session.entry(link.session_id.clone()).or_default().push(link);
    }
    for (session, links) in &by_session {
        let value = links
            .iter()
            .map(|l| pr_effectiveness(l.merged, l.reverted, l.check_failures, l.review_rounds))
            .sum::<f64>()
            / links.len() as f64;
        let label = links.iter().map(|l| l.pr_id.as_str()).take(3).collect::<Vec<_>>().join(", ");
        put(conn, "session", session, &registry::EFFECTIVENESS, value, &label, now_ms)?;
    }
    Ok(by_session.len())
}

/// Skills and tool servers are scored over this many days, ending at the day's start.
pub const SUBJECT_WINDOW_DAYS: i64 = 30;
/// Fewest calls, and fewest people, a skill or tool server needs to be scored.
const MIN_CALLS: i64 = 10;
const MIN_PEOPLE: i64 = 5;

/// Writes the merged pull requests' own scores, and the failure rate of each skill and
/// tool server over the last 30 days (one row per window, `period_start_ms` its start);
/// answers how many subjects it scored.
pub fn compute_subject_scores(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    const DAY_MS: i64 = 86_400_000;
    let to_ms = now_ms.div_euclid(DAY_MS) * DAY_MS;
    let from_ms = to_ms - SUBJECT_WINDOW_DAYS * DAY_MS;
    let mut scored = 0;
    for (by_skill, subject) in [(true, "skill"), (false, "tool_server")] {
        for calls in crate::analytics::tools::calls_by_subject(conn, by_skill, from_ms, to_ms)? {
            if calls.calls < MIN_CALLS || calls.people < MIN_PEOPLE {
                continue;
            }
            let rate = (calls.errors + calls.denials) as f64 / calls.calls as f64;
            let label = format!("{} calls by {} people", calls.calls, calls.people);
            conn.prepare_cached(
                "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, period_start_ms, value, label,
                   source, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (subject_type, subject_id, scorer_name, scorer_version, period_start_ms) DO UPDATE SET
                   value = excluded.value, label = excluded.label, created_at_ms = excluded.created_at_ms",
            )?
            .execute(params![
                subject,
                calls.name,
                registry::FAILURE_RATE.name,
                registry::FAILURE_RATE.version,
                from_ms,
                rate,
                label,
                registry::FAILURE_RATE.source.as_str(),
                now_ms
            ])?;
            scored += 1;
        }
    }
    let merged = pulls::merged_outcomes(conn)?;
    for pr in &merged {
        let value = pr_effectiveness(true, pr.reverted, pr.check_failures, pr.review_rounds);
        let label = if pr.reverted { "reverted" } else { "merged" };
        put(conn, "pull_request", &pr.pr_id, &registry::PR_EFFECTIVENESS, value, label, now_ms)?;
        if let Some(nusd) = pr.cost_per_line_nusd {
            put(conn, "pull_request", &pr.pr_id, &registry::PR_COST_PER_LINE, nusd as f64 / 1e9, "USD", now_ms)?;
        }
    }
    Ok(scored + merged.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_and_tool_servers_are_scored_only_when_five_people_use_them() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        let now: i64 = 40 * 86_400_000 + 5_000;
        let day: i64 = 39 * 86_400_000;
        let insert = |user: &str, server: &str, skill: &str, calls: i64, errors: i64, denials: i64| {
            conn.execute(
                "INSERT INTO agg_tools_daily VALUES (?1, ?2, 'claude_code', 'claude_code:T', ?3, ?4, '', ?5, ?6, ?7, 0, 0, 0)",
                params![day, user, server, skill, calls, errors, denials],
            )
            .unwrap();
        };
        for person in ["a", "b", "c", "d", "e"] {
            insert(person, "", "pdf", 4, 1, 0);
        }
        for person in ["a", "b", "c"] {
            insert(person, "github", "", 10, 5, 5);
        }
        assert_eq!(compute_subject_scores(&conn, now).unwrap(), 1, "the skill only: three people use the server");
        let (value, label, period): (f64, String, i64) = conn
            .query_row(
                "SELECT value, label, period_start_ms FROM scores WHERE subject_type = 'skill' AND subject_id = 'pdf'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((value, label.as_str(), period), (0.25, "20 calls by 5 people", 10 * 86_400_000_i64));
    }

    #[test]
    fn effectiveness_of_a_pull_request() {
        assert_eq!(pr_effectiveness(true, false, 0, 1), 1.0, "a clean merge, one round");
        assert_eq!(pr_effectiveness(true, false, 0, 0), 1.0, "merged without review");
        assert_eq!(pr_effectiveness(true, false, 2, 3), 0.5, "two failed checks and two extra rounds");
        assert_eq!(pr_effectiveness(true, true, 0, 1), 0.0, "reverted");
        assert_eq!(pr_effectiveness(false, false, 0, 1), 0.0, "closed unmerged");
    }
}
