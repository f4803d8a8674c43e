//! `compute-trajectory-scores` (and `rescore-trajectory`): one pass over the day
//! partitions that hold the due sessions, in session order, scoring each session when
//! its last day has been read, and writing the scores in batches through the caller's
//! main.db change (the writer thread in the server, a transaction from the CLI).
//!
//! A session's stored transcript is read only when it can change a score: when a shell
//! call after the last edit would otherwise be judged by its program's name
//! (`commands`). Nothing of it is kept.
//!
//! Invariant: a session is scored from all its interactive events at once (a session
//! crossing midnight is held until its last day); a stop between batches leaves the
//! written ones scored and the rest due. A transcript that cannot be read leaves the
//! session scored from its events alone.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::commands::Commands;
use super::registry::TRAJECTORY_VERSION;
use super::store;
use super::trajectory::{self, Step, StepTool, TestsEvidence, Trajectory};
use crate::db::DbError;
use crate::events::days::{self, Day};
use crate::events::partitions::StepRow;
use crate::events::writer::MainChange;
use crate::model::{EventType, NotificationKind, ToolStatus};
use crate::sessions::scored::{self, ToScore};

/// Sessions written per main.db change.
const BATCH: usize = 2_000;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub sessions: usize,
    pub events: u64,
    pub days: usize,
    /// Transcripts read for the command lines of shell calls.
    pub transcripts: usize,
    pub elapsed: Duration,
}

/// One line for `job_runs.summary` and the command line.
pub fn describe(report: &Report) -> String {
    let seconds = report.elapsed.as_secs_f64();
    let rate = if seconds > 0.0 { report.sessions as f64 / seconds } else { 0.0 };
    format!(
        "{} sessions scored from {} events over {} days and {} transcripts in {:.1} s ({:.0} sessions/s)",
        report.sessions, report.events, report.days, report.transcripts, seconds, rate
    )
}

/// Scores one session: from its events, and again with its transcript's command lines
/// when it has a transcript and a shell call was judged by its program's name.
fn score_session(data_dir: &Path, session: &ToScore, steps: Vec<Step>, report: &mut Report) -> Trajectory {
    let Some(relative) = session.transcript_path.as_deref() else { return trajectory::score(steps) };
    let from_events = trajectory::score(steps.clone());
    if from_events.tests_evidence != TestsEvidence::ProgramName {
        return from_events;
    }
    match crate::transcripts::store::read(data_dir, relative) {
        Ok(text) => {
            report.transcripts += 1;
            let messages = crate::transcripts::parse::parse(&session.agent_type, &text);
            trajectory::score_with(steps, &Commands::of_transcript(&messages))
        }
        Err(err) => {
            tracing::warn!(session = %session.id, error = %err, "transcript unreadable: scored from events alone");
            from_events
        }
    }
}

fn step_of(row: StepRow) -> Option<Step> {
    let kind = EventType::parse(&row.event_type)?;
    Some(Step {
        ts_ms: row.ts_ms,
        id: row.event_id,
        kind,
        notification: row.notification_kind.as_deref().and_then(NotificationKind::parse),
        tool: row.tool_name.map(|name| StepTool {
            name,
            action: row.tool_action.unwrap_or_else(|| "other".into()),
            status: row.tool_status.as_deref().and_then(ToolStatus::parse),
            input: row.tool_input_sha256,
            target: row.tool_target_hash,
            use_id: row.tool_use_id,
        }),
    })
}

/// Scores the due sessions (every ended interactive one when `all`).
pub fn compute(
    data_dir: &Path,
    reads: &Connection,
    change_main: &dyn Fn(MainChange) -> Result<(), DbError>,
    now_ms: i64,
    all: bool,
) -> Result<Report, DbError> {
    let started = Instant::now();
    let due = scored::due(reads, TRAJECTORY_VERSION, all)?;
    let mut report = Report::default();
    if due.is_empty() {
        report.elapsed = started.elapsed();
        return Ok(report);
    }
    let index: HashMap<(String, String, String), usize> = due
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.user_id.clone(), s.agent_type.clone(), s.agent_session_id.clone()), i))
        .collect();
    let first_day = Day::of_ms(due.iter().map(|s| s.first_event_ms).min().unwrap_or(0));
    let last_day = Day::of_ms(due.iter().map(|s| s.last_event_ms).max().unwrap_or(0));
    let mut buffers: HashMap<usize, Vec<Step>> = HashMap::new();
    let mut done = vec![false; due.len()];
    // Sessions by the day their events end, to score them once that day is read.
    let mut ending: HashMap<Day, Vec<usize>> = HashMap::new();
    for (i, session) in due.iter().enumerate() {
        ending.entry(Day::of_ms(session.last_event_ms)).or_default().push(i);
    }
    let mut pending: Vec<(ToScore, Trajectory)> = Vec::new();
    let flush = |pending: &mut Vec<(ToScore, Trajectory)>| -> Result<(), DbError> {
        if pending.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(pending);
        change_main(Box::new(move |tx| {
            let mut hours = std::collections::BTreeSet::new();
            for (session, t) in &batch {
                store::write_trajectory(tx, &session.id, t, now_ms)?;
                scored::set_trajectory(tx, session, TRAJECTORY_VERSION, t.friction, t.shape.as_str())?;
                hours.insert(session.first_event_ms.div_euclid(3_600_000) * 3_600_000);
            }
            // The daily aggregate carries friction: its days are due for a refresh.
            crate::sessions::fold::mark_dirty_hours(tx, &hours, now_ms)?;
            Ok(())
        }))
    };
    for day in days::list_days(data_dir)?.into_iter().filter(|d| (first_day..=last_day).contains(d)) {
        if let Some(reader) = days::read(data_dir, day)? {
            report.days += 1;
            reader.interactive_steps(|row| {
                let key = (row.user_id.clone(), row.agent_type.clone(), row.session_id.clone());
                if let Some(&i) = index.get(&key)
                    && let Some(step) = step_of(row)
                {
                    report.events += 1;
                    buffers.entry(i).or_default().push(step);
                }
            })?;
        }
        for i in ending.remove(&day).unwrap_or_default() {
            let scored = score_session(data_dir, &due[i], buffers.remove(&i).unwrap_or_default(), &mut report);
            pending.push((due[i].clone(), scored));
            done[i] = true;
            report.sessions += 1;
        }
        if pending.len() >= BATCH {
            flush(&mut pending)?;
        }
    }
    // Sessions whose last day has no partition (retention removed it): what is left.
    for (i, session) in due.iter().enumerate().filter(|(i, _)| !done[*i]) {
        let scored = score_session(data_dir, session, buffers.remove(&i).unwrap_or_default(), &mut report);
        pending.push((session.clone(), scored));
        report.sessions += 1;
    }
    flush(&mut pending)?;
    report.elapsed = started.elapsed();
    Ok(report)
}
