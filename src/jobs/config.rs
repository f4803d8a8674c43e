//! `job_config`: an operator's schedule of the tier-1 jobs (a cron pattern in UTC, and
//! whether the job runs at all), owned here.
//!
//! Invariants: only tier-1 jobs (`job_config` tier) can be configured; a pattern is
//! validated before it is stored, so a stored schedule always parses; a job without a
//! row runs on its registry default.

use rusqlite::{Connection, OptionalExtension, params};

use super::registry::{JobSpec, Tier};
use super::schedule::Schedule;
use crate::db::DbError;

/// The schedule a job runs on now, and where it comes from.
#[derive(Clone, Debug)]
pub struct Effective {
    pub schedule: Schedule,
    pub enabled: bool,
    /// True when an operator set it (`job_config`), false for the registry default.
    pub configured: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} is not a job_config job: its schedule is fixed (only the seven tier-1 jobs can be configured)")]
    NotConfigurable(&'static str),
    #[error("{0}")]
    BadCron(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<rusqlite::Error> for ConfigError {
    fn from(err: rusqlite::Error) -> Self {
        ConfigError::Db(err.into())
    }
}

/// The schedule `job` runs on: the operator's, or the registry default.
pub fn effective(conn: &Connection, job: &JobSpec) -> Result<Effective, DbError> {
    let stored: Option<(String, bool)> = conn
        .query_row("SELECT cron, enabled FROM job_config WHERE job = ?1", [job.name], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    let effective = match stored {
        Some((pattern, enabled)) => match Schedule::cron(&pattern) {
            Ok(schedule) => Effective { schedule, enabled, configured: true },
            // Not reachable through `set`; a hand-edited row falls back to the default.
            Err(_) => Effective { schedule: job.schedule.schedule(), enabled, configured: true },
        },
        None => Effective { schedule: job.schedule.schedule(), enabled: job.enabled_by_default, configured: false },
    };
    Ok(effective)
}

/// Sets a tier-1 job's cron pattern and/or enabled flag (what is not given keeps its
/// current value); returns the schedule it runs on now.
pub fn set(
    conn: &Connection,
    job: &JobSpec,
    cron: Option<&str>,
    enabled: Option<bool>,
    now_ms: i64,
) -> Result<Effective, ConfigError> {
    if job.tier != Tier::Configurable {
        return Err(ConfigError::NotConfigurable(job.name));
    }
    let current = effective(conn, job)?;
    let pattern = match cron {
        Some(pattern) => {
            Schedule::cron(pattern).map_err(ConfigError::BadCron)?;
            pattern.to_string()
        }
        None => match &current.schedule {
            Schedule::Cron { pattern, .. } => pattern.clone(),
            _ => unreachable!("tier-1 jobs run on cron patterns"),
        },
    };
    let enabled = enabled.unwrap_or(current.enabled);
    conn.execute(
        "INSERT INTO job_config (job, cron, enabled, updated_at_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (job) DO UPDATE SET cron = excluded.cron, enabled = excluded.enabled,
                                         updated_at_ms = excluded.updated_at_ms",
        params![job.name, pattern, enabled, now_ms],
    )?;
    Ok(effective(conn, job)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::registry::find;

    #[test]
    fn operators_set_tier_one_schedules_and_nothing_else() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        let retention = find("sweep-retention").unwrap();
        let default = effective(&conn, retention).unwrap();
        assert_eq!(
            (default.schedule.describe(), default.enabled, default.configured),
            ("cron 0 2 * * * (UTC)".into(), true, false)
        );

        let set_now = set(&conn, retention, Some("15 4 * * *"), None, 1).unwrap();
        assert_eq!(
            (set_now.schedule.describe(), set_now.enabled, set_now.configured),
            ("cron 15 4 * * * (UTC)".into(), true, true)
        );
        let disabled = set(&conn, retention, None, Some(false), 2).unwrap();
        assert_eq!(
            (disabled.schedule.describe(), disabled.enabled),
            ("cron 15 4 * * * (UTC)".into(), false),
            "the pattern is kept"
        );

        let err = set(&conn, retention, Some("every night"), None, 3).unwrap_err();
        assert!(err.to_string().contains("\"every night\" is not a cron pattern"), "{err}");
        assert_eq!(effective(&conn, retention).unwrap().schedule.describe(), "cron 15 4 * * * (UTC)", "nothing stored");
        let err = set(&conn, find("run-deletions").unwrap(), Some("0 * * * *"), None, 4).unwrap_err();
        assert!(err.to_string().starts_with("run-deletions is not a job_config job"), "{err}");
    }
}
