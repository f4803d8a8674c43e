//! `jira_issues` (owned here): each issue a pull request names, as Jira last said it was,
//! with its business value; a key Jira did not know is kept as not found, so the ROI page
//! can tell "no value" from "not synced".

use rusqlite::{Connection, params};

use super::client::Fetched;
use crate::db::DbError;

/// What a sync stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stored {
    pub found: usize,
    pub with_value: usize,
    pub not_found: usize,
}

impl Stored {
    /// The keys written, for `job_runs`.
    pub fn rows(&self) -> i64 {
        (self.found + self.not_found) as i64
    }

    pub fn describe(&self) -> String {
        format!(
            "{} Jira issues synced ({} with a business value), {} keys Jira does not know",
            self.found, self.with_value, self.not_found
        )
    }
}

/// Writes what a fetch found at `now_ms`.
pub fn upsert(conn: &Connection, fetched: &Fetched, now_ms: i64) -> Result<Stored, DbError> {
    let mut write = conn.prepare_cached(
        "INSERT INTO jira_issues (key, found, summary, status, business_value, fetched_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (key) DO UPDATE SET found = excluded.found, summary = excluded.summary,
             status = excluded.status, business_value = excluded.business_value,
             fetched_at_ms = excluded.fetched_at_ms",
    )?;
    for issue in &fetched.issues {
        write.execute(params![
            issue.key.to_ascii_uppercase(),
            true,
            issue.summary,
            issue.status,
            issue.business_value,
            now_ms
        ])?;
    }
    // A key Jira no longer knows keeps what was last read of it, marked not found (the
    // ROI page counts only found issues).
    let mut missing = conn.prepare_cached(
        "INSERT INTO jira_issues (key, found, summary, fetched_at_ms) VALUES (?1, 0, '', ?2)
         ON CONFLICT (key) DO UPDATE SET found = 0, fetched_at_ms = excluded.fetched_at_ms",
    )?;
    for key in &fetched.not_found {
        missing.execute(params![key.to_ascii_uppercase(), now_ms])?;
    }
    Ok(Stored {
        found: fetched.issues.len(),
        with_value: fetched.issues.iter().filter(|issue| issue.business_value.is_some()).count(),
        not_found: fetched.not_found.len(),
    })
}
