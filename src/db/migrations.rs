//! The schema of `main.db`: `schema.sql` is the full current schema, `migrations/`
//! the append-only ladder that leads an older database to it, one transaction per
//! start-up, versioned by `PRAGMA user_version`.
//!
//! Invariants: a new database is created from `schema.sql` and stamped with the
//! latest version; an existing one climbs the ladder; a database newer than this
//! binary is refused, never downgraded. `tests/schema.rs` proves the ladder from an
//! empty file yields exactly `schema.sql`.

use std::path::Path;

use rusqlite::Connection;

use super::DbError;

/// The current full schema.
pub const SCHEMA_SQL: &str = include_str!("../../schema.sql");

/// The ladder: entry `i` takes a database from version `i` to `i + 1`. Append only.
pub const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_initial.sql"),
    include_str!("../../migrations/0002_transcript_index.sql"),
    include_str!("../../migrations/0003_identity.sql"),
    include_str!("../../migrations/0004_metadata_redaction.sql"),
    include_str!("../../migrations/0005_jobs.sql"),
    include_str!("../../migrations/0006_job_alerts.sql"),
    include_str!("../../migrations/0007_session_end_reason.sql"),
    include_str!("../../migrations/0008_reprice.sql"),
    include_str!("../../migrations/0009_usage_hourly.sql"),
    include_str!("../../migrations/0010_tools_daily.sql"),
    include_str!("../../migrations/0011_sessions_daily.sql"),
    include_str!("../../migrations/0012_session_sharing.sql"),
    include_str!("../../migrations/0013_github.sql"),
    include_str!("../../migrations/0014_scoring.sql"),
    include_str!("../../migrations/0015_friction_daily.sql"),
    include_str!("../../migrations/0016_redactions_daily.sql"),
    include_str!("../../migrations/0017_alerts.sql"),
    include_str!("../../migrations/0018_alert_deliveries.sql"),
    include_str!("../../migrations/0019_job_slo_alerts.sql"),
    include_str!("../../migrations/0020_alert_console.sql"),
    include_str!("../../migrations/0021_sli_daily.sql"),
    include_str!("../../migrations/0022_jira_issues.sql"),
    include_str!("../../migrations/0023_cost_reconciliation.sql"),
    include_str!("../../migrations/0024_projections.sql"),
    include_str!("../../migrations/0025_branch_links_need_a_contributor.sql"),
    include_str!("../../migrations/0026_session_mode.sql"),
    include_str!("../../migrations/0027_backups.sql"),
    include_str!("../../migrations/0028_incremental_aggregates.sql"),
    include_str!("../../migrations/0029_usage_daily.sql"),
    include_str!("../../migrations/0030_session_git_by_pr_number.sql"),
    include_str!("../../migrations/0031_tools_daily_by_kind.sql"),
    include_str!("../../migrations/0032_otlp_tokens.sql"),
    include_str!("../../migrations/0033_otlp_sessions.sql"),
    include_str!("../../migrations/0034_session_sources.sql"),
    include_str!("../../migrations/0035_session_reported.sql"),
    include_str!("../../migrations/0036_otlp_identities.sql"),
    include_str!("../../migrations/0037_people_console.sql"),
    include_str!("../../migrations/0038_session_titles.sql"),
    include_str!("../../migrations/0039_score_bands.sql"),
    include_str!("../../migrations/0040_token_run_kind.sql"),
    include_str!("../../migrations/0041_session_eval_cell.sql"),
    include_str!("../../migrations/0042_eval_tokens.sql"),
];

pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings `main.db` to the latest version. Returns the version it found.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<i64, DbError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let found: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let latest = latest_version();
    if found > latest {
        return Err(DbError::TooNew { path: path.to_path_buf(), found, supported: latest });
    }
    let has_tables: bool =
        tx.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table')", [], |row| row.get(0))?;
    if found == 0 && !has_tables {
        tx.execute_batch(SCHEMA_SQL)?;
    } else {
        for step in &MIGRATIONS[found as usize..] {
            tx.execute_batch(step)?;
        }
    }
    tx.pragma_update(None, "user_version", latest)?;
    tx.commit()?;
    Ok(found)
}

/// Applies the ladder only, never the one-step schema: what an old database goes
/// through. Used by the test that proves both paths agree.
pub fn migrate_by_ladder(conn: &mut Connection) -> Result<(), DbError> {
    let tx = conn.transaction()?;
    for step in MIGRATIONS {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "user_version", latest_version())?;
    tx.commit()?;
    Ok(())
}

/// Whether a database is at this binary's version (readiness).
pub fn is_current(conn: &Connection) -> Result<bool, DbError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    Ok(version == latest_version())
}
