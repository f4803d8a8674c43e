//! `job_runs`: one row per run of a job, owned here.
//!
//! Invariants:
//! - At most one run of a job is `running` (a partial unique index): [`start`] answers
//!   with the running run instead of starting a second one.
//! - A run still `running` when the server starts was cut short by a crash or a kill:
//!   [`close_interrupted`] marks it `interrupted`, never `succeeded`.
//! - A refused run (the job is unavailable, or a one-shot asked over HTTP) is recorded
//!   with its reason, so history shows every attempt.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::db::DbError;

/// Who started a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Schedule,
    Http,
    Cli,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::Http => "http",
            Trigger::Cli => "cli",
        }
    }
}

/// How a run ended (or that it has not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Running,
    Succeeded,
    Failed,
    Refused,
    Interrupted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Running => "running",
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::Refused => "refused",
            Outcome::Interrupted => "interrupted",
        }
    }

    fn parse(text: &str) -> Outcome {
        match text {
            "running" => Outcome::Running,
            "succeeded" => Outcome::Succeeded,
            "failed" => Outcome::Failed,
            "refused" => Outcome::Refused,
            _ => Outcome::Interrupted,
        }
    }
}

/// One row of `job_runs`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobRun {
    pub id: String,
    pub job: String,
    pub trigger: String,
    pub started_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    pub outcome: Outcome,
    pub rows_touched: Option<i64>,
    pub error: Option<String>,
    /// One line on what the run found or did, where the job says more than a count
    /// (`reprice-events`: what would change, per agent and model).
    pub summary: Option<String>,
}

/// A started run, or the run that stops it from starting.
#[derive(Debug, PartialEq, Eq)]
pub enum Started {
    Started(String),
    /// A run of the same job is going.
    AlreadyRunning(String),
    /// A run of a job this one never runs beside is going (`JobSpec::excludes`).
    Blocked {
        job: &'static str,
        run_id: String,
    },
}

impl Started {
    /// Why a run did not start, in words for a 409 or the terminal; `None` if it started.
    pub fn refusal(&self, job: &str) -> Option<String> {
        match self {
            Started::Started(_) => None,
            Started::AlreadyRunning(run_id) => Some(format!("{job} is already running (run {run_id})")),
            Started::Blocked { job: other, run_id } => {
                Some(format!("{job} never runs while {other} runs, and {other} is running (run {run_id})"))
            }
        }
    }
}

/// Starts a run of `job` unless one is running, or a job it excludes is.
pub fn start(conn: &Connection, job: &str, trigger: Trigger, now_ms: i64) -> Result<Started, DbError> {
    let excludes = super::registry::find(job).map_or(&[][..], |spec| spec.excludes);
    for other in excludes {
        let running: Option<String> = conn
            .query_row("SELECT id FROM job_runs WHERE job = ?1 AND outcome = 'running'", [other], |row| row.get(0))
            .optional()?;
        if let Some(run_id) = running {
            return Ok(Started::Blocked { job: other, run_id });
        }
    }
    let id = uuid::Uuid::now_v7().to_string();
    let inserted = conn.execute(
        "INSERT INTO job_runs (id, job, trigger, started_at_ms, outcome) VALUES (?1, ?2, ?3, ?4, 'running')
         ON CONFLICT DO NOTHING",
        params![id, job, trigger.as_str(), now_ms],
    )?;
    if inserted == 1 {
        return Ok(Started::Started(id));
    }
    let running: String =
        conn.query_row("SELECT id FROM job_runs WHERE job = ?1 AND outcome = 'running'", [job], |row| row.get(0))?;
    Ok(Started::AlreadyRunning(running))
}

/// Ends a running run.
pub fn finish(
    conn: &Connection,
    run_id: &str,
    outcome: Outcome,
    rows_touched: Option<i64>,
    error: Option<&str>,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        // max(): a clock stepped back while it ran must not end it before it began.
        "UPDATE job_runs SET outcome = ?2, rows_touched = ?3, error = ?4, ended_at_ms = max(?5, started_at_ms)
         WHERE id = ?1 AND outcome = 'running'",
        params![run_id, outcome.as_str(), rows_touched, error, now_ms],
    )?;
    Ok(())
}

/// Records the one-line summary of a running run (before it is finished).
pub fn set_summary(conn: &Connection, run_id: &str, summary: &str) -> Result<(), DbError> {
    conn.execute("UPDATE job_runs SET summary = ?2 WHERE id = ?1 AND outcome = 'running'", params![run_id, summary])?;
    Ok(())
}

/// Ends a running run and checks it against the job's service level (`slo`); returns
/// the breach, if the run breached it.
pub fn finish_and_check(
    conn: &Connection,
    job: &super::registry::JobSpec,
    run_id: &str,
    outcome: Outcome,
    rows_touched: Option<i64>,
    error: Option<&str>,
    now_ms: i64,
) -> Result<Option<super::slo::Breach>, DbError> {
    finish(conn, run_id, outcome, rows_touched, error, now_ms)?;
    let run = conn.query_row(&format!("SELECT {RUN_COLUMNS} FROM job_runs WHERE id = ?1"), [run_id], read_run)?;
    super::slo::check(conn, job, &run)
}

/// Records a run that was refused before it started, with the reason.
pub fn record_refused(
    conn: &Connection,
    job: &str,
    trigger: Trigger,
    reason: &str,
    now_ms: i64,
) -> Result<String, DbError> {
    let id = uuid::Uuid::now_v7().to_string();
    conn.execute(
        "INSERT INTO job_runs (id, job, trigger, started_at_ms, ended_at_ms, outcome, error)
         VALUES (?1, ?2, ?3, ?4, ?4, 'refused', ?5)",
        params![id, job, trigger.as_str(), now_ms, reason],
    )?;
    Ok(id)
}

/// Marks every run still `running` as `interrupted` (at start-up); returns how many.
pub fn close_interrupted(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    Ok(conn.execute(
        "UPDATE job_runs SET outcome = 'interrupted', ended_at_ms = max(?1, started_at_ms),
                error = coalesce(error, 'the server stopped while it ran')
         WHERE outcome = 'running'",
        [now_ms],
    )?)
}

/// When the job's latest run started (any trigger), for the next scheduled time.
pub fn last_started(conn: &Connection, job: &str) -> Result<Option<i64>, DbError> {
    Ok(conn
        .query_row("SELECT max(started_at_ms) FROM job_runs WHERE job = ?1 AND outcome <> 'refused'", [job], |row| {
            row.get(0)
        })
        .optional()?
        .flatten())
}

/// When the job's latest successful run ended.
pub fn last_succeeded(conn: &Connection, job: &str) -> Result<Option<i64>, DbError> {
    Ok(conn
        .query_row("SELECT max(ended_at_ms) FROM job_runs WHERE job = ?1 AND outcome = 'succeeded'", [job], |row| {
            row.get(0)
        })
        .optional()?
        .flatten())
}

/// The latest runs, newest first: of one job, or of all.
pub fn history(conn: &Connection, job: Option<&str>, limit: usize) -> Result<Vec<JobRun>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS} FROM job_runs WHERE ?1 IS NULL OR job = ?1 ORDER BY started_at_ms DESC, id DESC LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![job, limit as i64], read_run)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

const RUN_COLUMNS: &str = "id, job, trigger, started_at_ms, ended_at_ms, outcome, rows_touched, error, summary";

fn read_run(row: &rusqlite::Row<'_>) -> rusqlite::Result<JobRun> {
    Ok(JobRun {
        id: row.get(0)?,
        job: row.get(1)?,
        trigger: row.get(2)?,
        started_at_ms: row.get(3)?,
        ended_at_ms: row.get(4)?,
        outcome: Outcome::parse(&row.get::<_, String>(5)?),
        rows_touched: row.get(6)?,
        error: row.get(7)?,
        summary: row.get(8)?,
    })
}

/// The runs that ended in `[from_ms, to_ms)`, for the service-level indicators.
pub fn ended_between(conn: &Connection, from_ms: i64, to_ms: i64) -> Result<Vec<JobRun>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS} FROM job_runs WHERE ended_at_ms >= ?1 AND ended_at_ms < ?2 AND outcome <> 'refused'"
    ))?;
    let rows = stmt.query_map(params![from_ms, to_ms], read_run)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn main_db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        conn
    }

    #[test]
    fn one_run_of_a_job_at_a_time_and_interrupted_runs_are_closed_at_start_up() {
        let conn = main_db();
        let Started::Started(first) = start(&conn, "run-deletions", Trigger::Schedule, 1_000).unwrap() else {
            panic!("the first run starts")
        };
        assert_eq!(
            start(&conn, "run-deletions", Trigger::Http, 2_000).unwrap(),
            Started::AlreadyRunning(first.clone())
        );
        assert!(matches!(start(&conn, "index-transcripts", Trigger::Cli, 2_000).unwrap(), Started::Started(_)));

        assert_eq!(close_interrupted(&conn, 3_000).unwrap(), 2, "both running runs were cut short");
        let runs = history(&conn, Some("run-deletions"), 10).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].outcome, runs[0].ended_at_ms), (Outcome::Interrupted, Some(3_000)));

        let Started::Started(second) = start(&conn, "run-deletions", Trigger::Cli, 4_000).unwrap() else {
            panic!("a new run starts after the interrupted one")
        };
        finish(&conn, &second, Outcome::Succeeded, Some(7), None, 5_000).unwrap();
        finish(&conn, &second, Outcome::Failed, None, Some("late"), 6_000).unwrap();
        let latest = &history(&conn, Some("run-deletions"), 1).unwrap()[0];
        assert_eq!(
            (latest.outcome, latest.rows_touched, latest.ended_at_ms),
            (Outcome::Succeeded, Some(7), Some(5_000))
        );
        assert_eq!(last_started(&conn, "run-deletions").unwrap(), Some(4_000));

        record_refused(&conn, "sweep-retention", Trigger::Http, "not built yet", 7_000).unwrap();
        assert_eq!(last_started(&conn, "sweep-retention").unwrap(), None, "a refusal is not a run");
        assert_eq!(history(&conn, None, 10).unwrap().len(), 4);
    }

    #[test]
    fn a_job_never_starts_beside_one_it_excludes_either_way() {
        let conn = main_db();
        for (first, second) in [
            ("reprice-events-apply", "reprice-events"),
            ("reprice-events", "reprice-events-apply"),
            ("compute-effectiveness", "compute-trajectory-scores"),
            ("compute-trajectory-scores", "compute-effectiveness"),
        ] {
            let Started::Started(going) = start(&conn, first, Trigger::Http, 1_000).unwrap() else { panic!() };
            let refused = start(&conn, second, Trigger::Schedule, 2_000).unwrap();
            assert_eq!(
                refused,
                Started::Blocked { job: super::super::registry::find(first).unwrap().name, run_id: going.clone() }
            );
            assert_eq!(
                refused.refusal(second).unwrap(),
                format!("{second} never runs while {first} runs, and {first} is running (run {going})")
            );
            assert!(
                history(&conn, Some(second), 10).unwrap().iter().all(|run| run.started_at_ms != 2_000),
                "nothing recorded for the refused one"
            );
            finish(&conn, &going, Outcome::Succeeded, None, None, 3_000).unwrap();
            let Started::Started(after) = start(&conn, second, Trigger::Schedule, 4_000).unwrap() else {
                panic!("{second} starts once {first} has ended")
            };
            finish(&conn, &after, Outcome::Succeeded, None, None, 5_000).unwrap();
        }
        // Jobs without a pair are not held back by one another.
        let Started::Started(_) = start(&conn, "run-deletions", Trigger::Http, 6_000).unwrap() else { panic!() };
        assert!(matches!(start(&conn, "sweep-scratch", Trigger::Http, 6_000).unwrap(), Started::Started(_)));
    }
}
