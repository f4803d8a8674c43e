//! Repricing stored events under the price tables in force (docs/cost.md): the
//! `reprice-events` report (per agent and model: events, how many would change, cost
//! before and after; writes nothing) and `reprice-events-apply`, which rewrites only the
//! rows whose cost differs and moves each session's total by exactly the difference.
//!
//! Invariants: a partition's changes are first written to main.db in one transaction
//! (the new cost of each changed event in `reprice_pending`, owned here, together with
//! the sessions' deltas and the hours to refresh), then applied to the partition, then
//! the pending rows are dropped. A run stopped anywhere leaves either nothing, or pending
//! rows the next run applies before anything else, so a session's total is never moved
//! twice and never left behind; re-running over repriced rows changes nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use rusqlite::{Connection, params};
use serde::Serialize;

use crate::db::DbError;
use crate::events::days::{self, Day, DayReader};
use crate::events::partitions::PricedRow;
use crate::events::store::Rewrite;
use crate::events::writer::MainChange;
use crate::model::AgentType;
use crate::pricing::PriceBook;

/// One agent and model of a report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RepriceLine {
    pub agent: String,
    pub model: String,
    /// Events with token usage or a cost.
    pub events: u64,
    /// Of them, those whose cost differs under the tables in force.
    pub changed: u64,
    pub cost_before_nusd: i64,
    pub cost_after_nusd: i64,
}

/// What a report found, or an apply did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RepriceReport {
    /// By agent, then model (`(none)` for events without one).
    pub lines: Vec<RepriceLine>,
    /// Rows rewritten in partitions (an apply only; a resumed day counts here too).
    pub rows_rewritten: u64,
}

impl RepriceReport {
    pub fn changed(&self) -> u64 {
        self.lines.iter().map(|line| line.changed).sum()
    }

    /// One line per agent and model that changes, for `job_runs` and the terminal.
    pub fn summary(&self) -> String {
        let changing: Vec<String> = self
            .lines
            .iter()
            .filter(|line| line.changed > 0)
            .map(|line| {
                format!(
                    "{}/{}: {} of {} events, ${:.4} -> ${:.4}",
                    line.agent,
                    line.model,
                    line.changed,
                    line.events,
                    crate::model::nusd_to_usd(line.cost_before_nusd),
                    crate::model::nusd_to_usd(line.cost_after_nusd)
                )
            })
            .collect();
        if changing.is_empty() {
            "no stored cost differs under the price tables in force".into()
        } else {
            changing.join("; ")
        }
    }
}

/// A changed event: its new cost, and the session it counts in.
struct Change {
    event_id: Vec<u8>,
    session: (String, String, String),
    delta: i64,
    cost_nusd: i64,
}

/// Prices one day's rows and adds them to `lines`; returns the rows that differ.
fn changes_of(
    day: &DayReader,
    book: &PriceBook,
    lines: &mut BTreeMap<(String, String), RepriceLine>,
) -> Result<Vec<Change>, DbError> {
    let mut changes = Vec::new();
    day.priced_rows(|row: PricedRow| {
        let after = match AgentType::parse(&row.agent_type) {
            Some(agent) => book.price(agent, row.model.as_deref(), &row.usage).cost_nusd,
            // Not an agent this build knows: left as it is.
            None => row.cost_nusd,
        };
        let model = row.model.clone().unwrap_or_else(|| "(none)".into());
        let line = lines.entry((row.agent_type.clone(), model.clone())).or_insert_with(|| RepriceLine {
            agent: row.agent_type.clone(),
            model,
            ..RepriceLine::default()
        });
        line.events += 1;
        line.cost_before_nusd += row.cost_nusd;
        line.cost_after_nusd += after;
        if after != row.cost_nusd {
            line.changed += 1;
            changes.push(Change {
                event_id: row.event_id,
                session: (row.user_id, row.agent_type, row.session_id),
                delta: after - row.cost_nusd,
                cost_nusd: after,
            });
        }
    })?;
    Ok(changes)
}

/// `reprice-events`: what the tables in force would change. Reads only.
pub fn report(data_dir: &Path, book: &PriceBook) -> Result<RepriceReport, DbError> {
    let mut lines = BTreeMap::new();
    for day in days::list_days(data_dir)? {
        if let Some(reader) = days::read(data_dir, day)? {
            changes_of(&reader, book, &mut lines)?;
        }
    }
    Ok(RepriceReport { lines: lines.into_values().collect(), rows_rewritten: 0 })
}

/// Has the aggregates rebuild the given days (by their start) from their partitions:
/// `analytics::partials::force_rebuild`, handed in by the caller (analytics reads
/// sessions, so sessions does not name it).
pub type RebuildDays = fn(&Connection, &BTreeSet<i64>, i64) -> Result<(), DbError>;

/// `reprice-events-apply`: finishes what a stopped run left, then reprices every
/// partition. `reads` sees what `change_main` commits. The report's lines are the
/// differences found (before the rewrite).
pub fn apply(
    rewrite: &Rewrite<'_>,
    reads: &Connection,
    book: &PriceBook,
    change_main: &dyn Fn(MainChange) -> Result<(), DbError>,
    rebuild: RebuildDays,
    now_ms: i64,
) -> Result<RepriceReport, DbError> {
    let mut report = RepriceReport::default();
    for day in pending_days(reads)? {
        report.rows_rewritten += finish_day(rewrite, reads, day, change_main, rebuild, now_ms)?;
    }
    let mut lines = BTreeMap::new();
    for day in days::list_days(rewrite.data_dir())? {
        let Some(editor) = rewrite.edit(day)? else { continue };
        let changes = changes_of(&editor, book, &mut lines)?;
        drop(editor);
        if changes.is_empty() {
            continue;
        }
        change_main(Box::new(move |tx| record_pending(tx, day, &changes)))?;
        report.rows_rewritten += finish_day(rewrite, reads, day, change_main, rebuild, now_ms)?;
    }
    report.lines = lines.into_values().collect();
    Ok(report)
}

/// Step one, in main.db: the new costs and the sessions' deltas.
fn record_pending(tx: &Connection, day: Day, changes: &[Change]) -> Result<(), DbError> {
    let mut pending =
        tx.prepare("INSERT OR REPLACE INTO reprice_pending (day, event_id, cost_nusd) VALUES (?1, ?2, ?3)")?;
    let mut by_session: HashMap<&(String, String, String), i64> = HashMap::new();
    for change in changes {
        pending.execute(params![day.to_string(), change.event_id, change.cost_nusd])?;
        *by_session.entry(&change.session).or_default() += change.delta;
    }
    let mut session = tx.prepare(
        "UPDATE sessions SET cost_nusd = cost_nusd + ?4 WHERE user_id = ?1 AND agent_type = ?2 AND agent_session_id = ?3",
    )?;
    for ((user, agent, id), delta) in by_session {
        session.execute(params![user, agent, id, delta])?;
    }
    // The aggregates learn of the new costs once they are in the partition (step three
    // has the day rebuilt).
    Ok(())
}

/// Steps two and three: the day's pending costs into its partition, then the pending
/// rows dropped. Returns the rows rewritten.
fn finish_day(
    rewrite: &Rewrite<'_>,
    reads: &Connection,
    day: Day,
    change_main: &dyn Fn(MainChange) -> Result<(), DbError>,
    rebuild: RebuildDays,
    now_ms: i64,
) -> Result<u64, DbError> {
    let mut stmt = reads.prepare("SELECT event_id, cost_nusd FROM reprice_pending WHERE day = ?1")?;
    let costs: Vec<(Vec<u8>, i64)> =
        stmt.query_map([day.to_string()], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<Result<_, _>>()?;
    // A day retention removed meanwhile has no rows left to set.
    let rewritten = match rewrite.edit(day)? {
        Some(editor) => editor.set_costs(&costs)?,
        None => 0,
    };
    let day_text = day.to_string();
    let day_start_ms = day.start_ms();
    change_main(Box::new(move |tx| {
        tx.execute("DELETE FROM reprice_pending WHERE day = ?1", [day_text])?;
        // The day's stored costs changed under its folded aggregates: rebuild it.
        rebuild(tx, &BTreeSet::from([day_start_ms]), now_ms)
    }))?;
    Ok(rewritten)
}

fn pending_days(reads: &Connection) -> Result<Vec<Day>, DbError> {
    let mut stmt = reads.prepare("SELECT DISTINCT day FROM reprice_pending ORDER BY day")?;
    let days: Vec<String> = stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    Ok(days.iter().filter_map(|day| Day::parse(day)).collect())
}
