//! The demo's evaluation harness: the agent sessions behind the demo results database's
//! cells, run by a harness account whose hook token makes them `EVAL`, each naming its
//! cell, run and (for a multi-phase cell) phase, as `SIGHTLINE_EVAL_CELL`,
//! `SIGHTLINE_EVAL_RUN` and `SIGHTLINE_EVAL_PHASE` make the hook do; some with their
//! transcript. The eval engineer (`eve@demo.example`) then sees them on the eval
//! dashboard's cell, run and comparison pages.
//!
//! Invariant: every session sent here is `EVAL` (the token fixes it), so nothing of the
//! harness's reaches a developer figure.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use super::Server;
use super::activity;
use super::history::{post_events, upload_transcript};
use super::people::Person;

/// The most cells of each complete run given a session: enough to fill every harness and
/// model of its leaderboards.
const CELLS_PER_RUN: usize = 120;
/// Sessions that keep their transcript: one in this many.
const TRANSCRIPT_EVERY: usize = 3;

/// A cell of the results database that has a result.
struct Cell {
    cell_id: String,
    run_name: String,
    timestamp_ms: Option<i64>,
    latency_ms: i64,
    phases: Vec<String>,
}

fn cells(results: &Path) -> anyhow::Result<Vec<Cell>> {
    let conn = Connection::open_with_flags(results, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    // The complete runs (no cell still running): every harness and model's cells in turn,
    // so each leaderboard row has some.
    let mut stmt = conn.prepare(
        "SELECT cell_id, run_name, timestamp, latency_ms, harness_metadata FROM (
           SELECT r.*, row_number() OVER (PARTITION BY run_name ORDER BY repeat, task_id, harness, model) AS n
           FROM run_results r
           WHERE NOT EXISTS (SELECT 1 FROM run_state s WHERE s.run_name = r.run_name AND s.status = 'running'))
         WHERE n <= ?1 ORDER BY run_name, n",
    )?;
    let rows = stmt.query_map([CELLS_PER_RUN as i64], |row| {
        let metadata: Option<String> = row.get(4)?;
        let phases = metadata
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|value| value["phases"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|phase| phase["name"].as_str().map(str::to_string))
            .collect();
        let timestamp: Option<String> = row.get(2)?;
        Ok(Cell {
            cell_id: row.get(0)?,
            run_name: row.get(1)?,
            timestamp_ms: timestamp.as_deref().and_then(crate::model::parse_rfc3339_ms),
            latency_ms: row.get::<_, Option<i64>>(3)?.unwrap_or(600_000),
            phases,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// What was sent.
pub struct Linked {
    pub sessions: usize,
    pub cells: usize,
    pub transcripts: usize,
}

/// Sends an EVAL session for each of the first complete cells of `results` (one per phase
/// of a multi-phase cell) as `harness`, whose token fixes the run kind. A cell's session
/// runs at its result's time when that lies in the demo's history, else in the last days.
pub fn link(server: &Server, harness: &Person, results: &Path, now_ms: i64, days: i64) -> anyhow::Result<Linked> {
    let agent = Server::agent();
    let earliest = now_ms - days.max(2) * 86_400_000;
    let mut linked = Linked { sessions: 0, cells: 0, transcripts: 0 };
    for (index, cell) in cells(results)?.iter().enumerate() {
        let ran_at = cell
            .timestamp_ms
            .map(|end| end - cell.latency_ms)
            .filter(|start| (earliest..now_ms - 3_600_000).contains(start))
            .unwrap_or(now_ms - 86_400_000 - index as i64 * 600_000);
        let phases: Vec<Option<&str>> =
            if cell.phases.is_empty() { vec![None] } else { cell.phases.iter().map(|p| Some(p.as_str())).collect() };
        for (n, phase) in phases.iter().enumerate() {
            let start = ran_at + n as i64 * 120_000;
            // The harness's own agent, on the cell's model where that agent prices it.
            let parts = crate::model::eval_cell::parse_cell_id(&cell.cell_id).map_err(|err| anyhow::anyhow!(err))?;
            let agent_name = match parts.harness {
                "claude-code" => "claude_code",
                "codex-cli" | "codex" => "codex",
                _ => "opencode",
            };
            let mut session = activity::session(&activity::harness_habits(agent_name), start, "EVAL", "main");
            if let Some(model) = activity::model_named(session.agent, parts.model) {
                session.model = model;
                for event in session.events.iter_mut().filter(|event| event.get("model").is_some()) {
                    event["model"] = json!(model);
                }
            }
            let mut tag = json!({"cell_id": cell.cell_id, "run_name": cell.run_name});
            if let Some(phase) = phase {
                tag["phase"] = json!(phase);
            }
            let events: Vec<Value> = session
                .events
                .iter()
                .cloned()
                .map(|mut event| {
                    event["eval"] = tag.clone();
                    event
                })
                .collect();
            post_events(&agent, &server.ingest, &harness.hook_token, events)?;
            if linked.sessions.is_multiple_of(TRANSCRIPT_EVERY)
                && let Some(text) = activity::transcript(&session, start)
            {
                upload_transcript(
                    &agent,
                    &server.ingest,
                    &harness.hook_token,
                    session.agent,
                    &session.session_id,
                    &text,
                )?;
                linked.transcripts += 1;
            }
            linked.sessions += 1;
        }
        linked.cells += 1;
    }
    Ok(linked)
}
