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
    include_str!("../../migrations/0043_hardening.sql"),
    include_str!("../../migrations/0044_sign_in_hardening.sql"),
    include_str!("../../migrations/0045_metrics_indexes.sql"),
    include_str!("../../migrations/0046_unpriced_volume.sql"),
    include_str!("../../migrations/0047_adapter_drift.sql"),
];

pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings `main.db` to the latest version. Returns the version it found.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<i64, DbError> {
    without_foreign_keys(conn, |conn| migrate_in(conn, path))
}

/// Runs `f` with foreign-key enforcement off, as SQLite's procedure for schema changes
/// asks: a step that makes a table again (migrations 32 and 42) must neither cascade a
/// parent's implicit delete into its children nor have its rename rewrite their
/// `REFERENCES`. Each ladder step proves afterwards that no reference dangles
/// (`PRAGMA foreign_key_check`, in its transaction); enforcement is back on after.
fn without_foreign_keys<T>(
    conn: &mut Connection,
    f: impl FnOnce(&mut Connection) -> Result<T, DbError>,
) -> Result<T, DbError> {
    conn.pragma_update(None, "foreign_keys", false)?;
    let outcome = f(conn);
    conn.pragma_update(None, "foreign_keys", true)?;
    outcome
}

/// Fails when a row names a parent that is not there.
fn check_foreign_keys(conn: &Connection) -> Result<(), DbError> {
    let dangling: i64 = conn.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |row| row.get(0))?;
    if dangling > 0 {
        return Err(DbError::Io {
            context: "migrating main.db".into(),
            source: std::io::Error::other(format!("{dangling} rows would name a parent that is not there")),
        });
    }
    Ok(())
}

fn migrate_in(conn: &mut Connection, path: &Path) -> Result<i64, DbError> {
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
        if found < latest {
            check_foreign_keys(&tx)?;
        }
    }
    tx.pragma_update(None, "user_version", latest)?;
    tx.commit()?;
    Ok(found)
}

/// Applies the ladder only, never the one-step schema: what an old database goes
/// through. Used by the test that proves both paths agree.
pub fn migrate_by_ladder(conn: &mut Connection) -> Result<(), DbError> {
    without_foreign_keys(conn, |conn| {
        let tx = conn.transaction()?;
        for step in MIGRATIONS {
            tx.execute_batch(step)?;
        }
        check_foreign_keys(&tx)?;
        tx.pragma_update(None, "user_version", latest_version())?;
        tx.commit()?;
        Ok(())
    })
}

/// Whether a database is at this binary's version (readiness).
pub fn is_current(conn: &Connection) -> Result<bool, DbError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    Ok(version == latest_version())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Migration 42 makes `auth_tokens` again: a service account's OTLP token and its
    /// `otlp_service_tokens` row survive it, still tied to `auth_tokens`, with enforcement
    /// on again after.
    #[test]
    fn making_a_table_again_keeps_its_children_and_their_references() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        {
            let tx = conn.transaction().unwrap();
            for step in &MIGRATIONS[..41] {
                tx.execute_batch(step).unwrap();
            }
            tx.pragma_update(None, "user_version", 41).unwrap();
            tx.execute_batch(
                "INSERT INTO users (id, email, name, org_role, created_at_ms) VALUES ('u1', 'a@example.com', 'A', 'ADMIN', 0);
                 INSERT INTO auth_tokens (id, user_id, kind, token_sha256, created_at_ms, expires_at_ms)
                     VALUES ('t1', 'u1', 'otlp', x'01', 0, 1);
                 INSERT INTO otlp_service_tokens (token_id, name, created_by, created_at_ms) VALUES ('t1', 'collector', 'u1', 0);",
            )
            .unwrap();
            tx.commit().unwrap();
        }
        assert_eq!(migrate(&mut conn, Path::new(":memory:")).unwrap(), 41);
        let kept: i64 = conn.query_row("SELECT count(*) FROM otlp_service_tokens", [], |row| row.get(0)).unwrap();
        assert_eq!(kept, 1);
        let sql: String = conn
            .query_row("SELECT sql FROM sqlite_schema WHERE name = 'otlp_service_tokens'", [], |row| row.get(0))
            .unwrap();
        assert!(sql.contains("REFERENCES auth_tokens(id)"), "{sql}");
        let enforced: bool = conn.query_row("PRAGMA foreign_keys", [], |row| row.get(0)).unwrap();
        assert!(enforced);
        conn.execute("INSERT INTO auth_tokens (id, user_id, kind, token_sha256, created_at_ms, expires_at_ms) VALUES ('t2', 'u1', 'eval', x'02', 0, 1)", []).unwrap();
        conn.execute("DELETE FROM auth_tokens WHERE id = 't1'", []).unwrap();
        let cascaded: i64 = conn.query_row("SELECT count(*) FROM otlp_service_tokens", [], |row| row.get(0)).unwrap();
        assert_eq!(cascaded, 0, "the reference still cascades");
    }
}
