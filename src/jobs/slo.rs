//! Job service levels (docs/jobs.md, "Alert when"): after a run ends, its duration and the
//! job's failures in a row are checked against the job's thresholds, and a breach is
//! stored in `job_alerts` (through `slo::breaches`, which owns it) with its severity. Delivery to people comes with
//! the alerts issue; `jobs list` shows a job's latest breach while it stands.
//!
//! Invariants: a refused run is not a run (it neither fails nor breaks a streak); a
//! breach names what was breached, in words an operator can act on.

use rusqlite::{Connection, OptionalExtension};

use super::registry::JobSpec;
use super::runs::{JobRun, Outcome};
use crate::db::DbError;

/// One stored breach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    pub job: String,
    pub run_id: String,
    pub at_ms: i64,
    pub severity: &'static str,
    pub reason: String,
}

/// Checks an ended run of `job` against its thresholds; stores and returns the breach.
pub fn check(conn: &Connection, job: &JobSpec, run: &JobRun) -> Result<Option<Breach>, DbError> {
    let Some(ended_ms) = run.ended_at_ms else { return Ok(None) };
    let mut reasons = Vec::new();
    if job.alert.any_failure && run.outcome == Outcome::Failed {
        reasons.push(format!("failed: {}", run.error.as_deref().unwrap_or("no reason given")));
    }
    if let Some(limit) = job.alert.max_duration {
        let took_ms = ended_ms - run.started_at_ms;
        if took_ms > limit.as_millis() as i64 {
            reasons.push(format!(
                "took {:.1} min, over its {} min limit",
                took_ms as f64 / 60_000.0,
                limit.as_secs() / 60
            ));
        }
    }
    if job.alert.spend_cap && run.summary.as_deref().is_some_and(|s| s.contains(crate::scoring::judge::CAP_REACHED)) {
        reasons.push("stopped at its daily spending cap".to_string());
    }
    if let Some(limit) = job.alert.consecutive_failures {
        let streak = failures_in_a_row(conn, job.name)?;
        if streak >= limit {
            reasons.push(format!("{streak} failures in a row (the limit is {limit})"));
        }
    }
    if reasons.is_empty() {
        return Ok(None);
    }
    let breach = Breach {
        job: job.name.to_string(),
        run_id: run.id.clone(),
        at_ms: ended_ms,
        severity: job.alert.severity.as_str(),
        reason: reasons.join("; "),
    };
    store(conn, &breach)?;
    Ok(Some(breach))
}

/// A scheduled run of `job` that had not started by its slot plus the job's target
/// completion: a breach stored once per slot (its `run_id` is `missed-<slot>`), for jobs
/// whose thresholds ask (`missed_run`). `slot` is the scheduled time still waiting.
pub fn missed(conn: &Connection, job: &JobSpec, slot_ms: i64, now_ms: i64) -> Result<Option<Breach>, DbError> {
    let grace_ms = job.target.map_or(0, |target| target.as_millis() as i64);
    if !job.alert.missed_run || now_ms <= slot_ms + grace_ms {
        return Ok(None);
    }
    let run_id = format!("missed-{slot_ms}");
    if crate::slo::breaches::exists(conn, job.name, &run_id)? {
        return Ok(None);
    }
    let breach = Breach {
        job: job.name.to_string(),
        reason: format!(
            "missed its run due at {}: not started within its {} min target",
            crate::model::rfc3339_ms(slot_ms),
            grace_ms / 60_000
        ),
        run_id,
        at_ms: now_ms,
        severity: job.alert.severity.as_str(),
    };
    store(conn, &breach)?;
    Ok(Some(breach))
}

fn store(conn: &Connection, breach: &Breach) -> Result<(), DbError> {
    let row = crate::slo::breaches::BreachRow {
        job: breach.job.clone(),
        run_id: breach.run_id.clone(),
        at_ms: breach.at_ms,
        severity: breach.severity.to_string(),
        reason: breach.reason.clone(),
    };
    crate::slo::breaches::record(conn, &row)
}

/// Failed runs since the job's last run that did not fail (refusals do not count).
fn failures_in_a_row(conn: &Connection, job: &str) -> Result<u32, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT outcome FROM job_runs WHERE job = ?1 AND outcome NOT IN ('refused', 'running')
         ORDER BY started_at_ms DESC, id DESC",
    )?;
    let mut rows = stmt.query([job])?;
    let mut streak = 0;
    while let Some(row) = rows.next()? {
        if row.get::<_, String>(0)? != "failed" {
            break;
        }
        streak += 1;
    }
    Ok(streak)
}

/// The job's latest breach if it came from its latest ended run (the breach stands).
pub fn standing(conn: &Connection, job: &str) -> Result<Option<Breach>, DbError> {
    let latest: Option<String> = conn
        .query_row(
            "SELECT id FROM job_runs WHERE job = ?1 AND outcome NOT IN ('refused', 'running')
             ORDER BY started_at_ms DESC, id DESC LIMIT 1",
            [job],
            |row| row.get(0),
        )
        .optional()?;
    let Some(run_id) = latest else { return Ok(None) };
    Ok(crate::slo::breaches::of_run(conn, job, &run_id)?.map(|row| Breach {
        job: row.job,
        run_id: row.run_id,
        at_ms: row.at_ms,
        severity: if row.severity == "critical" { "critical" } else { "warning" },
        reason: row.reason,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::registry::find;
    use crate::jobs::runs::{self, Started, Trigger};

    fn ended(conn: &Connection, job: &str, at: i64, took: i64, outcome: Outcome) -> JobRun {
        let Started::Started(id) = runs::start(conn, job, Trigger::Schedule, at).unwrap() else { panic!() };
        let error = (outcome == Outcome::Failed).then_some("disk full");
        runs::finish(conn, &id, outcome, None, error, at + took).unwrap();
        runs::history(conn, Some(job), 1).unwrap().remove(0)
    }

    #[test]
    fn breaches_follow_each_jobs_thresholds() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        // run-deletions: any failure, critical.
        let deletions = find("run-deletions").unwrap();
        let run = ended(&conn, "run-deletions", 0, 1_000, Outcome::Failed);
        let breach = check(&conn, deletions, &run).unwrap().unwrap();
        assert_eq!((breach.severity, breach.reason.as_str()), ("critical", "failed: disk full"));
        assert_eq!(standing(&conn, "run-deletions").unwrap(), Some(breach));
        let run = ended(&conn, "run-deletions", 10_000, 1_000, Outcome::Succeeded);
        assert_eq!(check(&conn, deletions, &run).unwrap(), None);
        assert_eq!(standing(&conn, "run-deletions").unwrap(), None, "a good run ends the standing breach");

        // sweep-abandoned: over 2 minutes, or 3 failures in a row; refusals do not count.
        let abandoned = find("sweep-abandoned").unwrap();
        let slow = ended(&conn, "sweep-abandoned", 0, 150_000, Outcome::Succeeded);
        assert_eq!(check(&conn, abandoned, &slow).unwrap().unwrap().reason, "took 2.5 min, over its 2 min limit");
        for i in 1..=2 {
            let failed = ended(&conn, "sweep-abandoned", i * 1_000_000, 1_000, Outcome::Failed);
            assert_eq!(check(&conn, abandoned, &failed).unwrap(), None, "failure {i} of 3");
        }
        runs::record_refused(&conn, "sweep-abandoned", Trigger::Http, "busy", 2_500_000).unwrap();
        let third = ended(&conn, "sweep-abandoned", 3_000_000, 1_000, Outcome::Failed);
        assert_eq!(check(&conn, abandoned, &third).unwrap().unwrap().reason, "3 failures in a row (the limit is 3)");
    }

    /// docs/jobs.md: `evaluate-alerts` alerts on a missed run, `judge-sessions` on spend.
    #[test]
    fn a_missed_evaluation_and_a_judge_at_its_cap_are_breaches() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        let evaluate = find("evaluate-alerts").unwrap();
        let slot = 1_795_482_000_000; // 2026-11-24T01:00:00Z
        assert_eq!(missed(&conn, evaluate, slot, slot + 5 * 60_000).unwrap(), None, "within its 5 min target");
        let breach = missed(&conn, evaluate, slot, slot + 8 * 3_600_000).unwrap().unwrap();
        assert_eq!(
            breach.reason,
            "missed its run due at 2026-11-24T01:00:00.000Z: not started within its 5 min target"
        );
        assert_eq!(missed(&conn, evaluate, slot, slot + 9 * 3_600_000).unwrap(), None, "once per slot");
        assert_eq!(missed(&conn, find("sweep-retention").unwrap(), slot, slot + 9 * 3_600_000).unwrap(), None);

        let judge = find("judge-sessions").unwrap();
        let Started::Started(id) = runs::start(&conn, "judge-sessions", Trigger::Schedule, 0).unwrap() else {
            panic!()
        };
        let summary = format!("12 sessions judged for $5.0000{}", crate::scoring::judge::CAP_REACHED);
        runs::finish(&conn, &id, Outcome::Succeeded, None, None, 1_000).unwrap();
        let mut run = runs::history(&conn, Some("judge-sessions"), 1).unwrap().remove(0);
        run.summary = Some(summary);
        assert_eq!(check(&conn, judge, &run).unwrap().unwrap().reason, "stopped at its daily spending cap");
        run.summary = Some("3 sessions judged for $0.0100".into());
        assert_eq!(check(&conn, judge, &run).unwrap(), None);
    }
}
