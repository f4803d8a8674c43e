//! `billing_lines`, `cost_drift` and `billing_sources` (owned here): what the vendors
//! billed, the drift against the recomputed cost, and which days each source last
//! covered. A run replaces its window of days for each vendor it asked, in the one
//! transaction it is given; the pages read these tables only (small: days × models).

use rusqlite::{Connection, params};

use super::Vendor;
use super::drift::{DriftRow, Status};
use super::run::Reconciliation;
use crate::db::DbError;

/// What a run stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stored {
    pub lines: usize,
    pub drift_rows: usize,
    pub summary: String,
}

/// Writes `run` at `now_ms`, replacing the window's earlier figures of each vendor asked.
pub fn replace(conn: &Connection, run: &Reconciliation, now_ms: i64) -> Result<Stored, DbError> {
    let mut stored = Stored::default();
    let mut parts = Vec::new();
    for vendor in &run.vendors {
        let name = vendor.vendor.as_str();
        let window = params![name, run.from_day, run.to_day];
        conn.execute("DELETE FROM billing_lines WHERE vendor = ?1 AND day >= ?2 AND day < ?3", window)?;
        conn.execute("DELETE FROM cost_drift WHERE vendor = ?1 AND day >= ?2 AND day < ?3", window)?;
        let mut line_insert = conn.prepare_cached(
            "INSERT INTO billing_lines (vendor, day, workspace, model, description, billed_nusd)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (line, model) in &vendor.lines {
            line_insert.execute(params![name, line.day, line.workspace, model, line.description, line.billed_nusd])?;
        }
        let mut drift_insert = conn.prepare_cached(
            "INSERT INTO cost_drift (vendor, day, model, recomputed_nusd, billed_nusd, drift_nusd, status,
                                     uncaptured_agents, reconciled_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for row in &vendor.drift {
            drift_insert.execute(params![
                name,
                row.day,
                row.model,
                row.recomputed_nusd,
                row.billed_nusd,
                row.drift_nusd,
                row.status.as_str(),
                row.uncaptured_agents,
                now_ms
            ])?;
        }
        conn.execute(
            "INSERT INTO billing_sources (vendor, from_day, to_day, reconciled_at_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (vendor) DO UPDATE SET from_day = excluded.from_day, to_day = excluded.to_day,
                 reconciled_at_ms = excluded.reconciled_at_ms",
            params![name, run.from_day, run.to_day, now_ms],
        )?;
        stored.lines += vendor.lines.len();
        stored.drift_rows += vendor.drift.len();
        let billed: i64 = vendor.lines.iter().map(|(line, _)| line.billed_nusd).sum();
        let recomputed: i64 = vendor.drift.iter().map(|row| row.recomputed_nusd).sum();
        let breaches = vendor.drift.iter().filter(|row| row.status == Status::Breach).count();
        parts.push(format!(
            "{name}: {} billed, {} recomputed, {breaches} pricing breaches",
            crate::model::usd(billed),
            crate::model::usd(recomputed)
        ));
    }
    for vendor in &run.null_sources {
        parts.push(format!("{}: not configured (null source)", vendor.as_str()));
    }
    stored.summary = format!("{} to {} (exclusive): {}", run.from_day, run.to_day, parts.join("; "));
    Ok(stored)
}

/// The drift rows of `[from_day, to_day)`, latest day first, then vendor and model.
pub fn drift_rows(conn: &Connection, from_day: &str, to_day: &str) -> Result<Vec<DriftRow>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT day, vendor, model, recomputed_nusd, billed_nusd, drift_nusd, status, uncaptured_agents
         FROM cost_drift WHERE day >= ?1 AND day < ?2 ORDER BY day DESC, vendor, model LIMIT 2000",
    )?;
    let rows = stmt.query_map(params![from_day, to_day], |row| {
        let vendor: String = row.get(1)?;
        let status: String = row.get(6)?;
        Ok(DriftRow {
            day: row.get(0)?,
            vendor: Vendor::parse(&vendor).unwrap_or(Vendor::Anthropic),
            model: row.get(2)?,
            recomputed_nusd: row.get(3)?,
            billed_nusd: row.get(4)?,
            drift_nusd: row.get(5)?,
            status: Status::parse(&status).unwrap_or(Status::Breach),
            uncaptured_agents: row.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One vendor's figures over a window: the organisation-level claim.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VendorTotal {
    pub vendor: String,
    pub days: i64,
    pub recomputed_nusd: i64,
    /// Billed for the models' tokens (what drift compares).
    pub billed_tokens_nusd: i64,
    /// Billed for everything else (web search, code execution, other line items).
    pub billed_other_nusd: i64,
    pub breaches: i64,
    pub uncaptured: i64,
    pub unattributed: i64,
}

/// Per vendor, over `[from_day, to_day)`.
pub fn totals(conn: &Connection, from_day: &str, to_day: &str) -> Result<Vec<VendorTotal>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT d.vendor, count(DISTINCT d.day), sum(d.recomputed_nusd), sum(d.billed_nusd),
                sum(d.status = 'breach'), sum(d.status = 'uncaptured'), sum(d.status = 'unattributed'),
                coalesce((SELECT sum(l.billed_nusd) FROM billing_lines l
                          WHERE l.vendor = d.vendor AND l.model = '' AND l.day >= ?1 AND l.day < ?2), 0)
         FROM cost_drift d WHERE d.day >= ?1 AND d.day < ?2 GROUP BY d.vendor ORDER BY d.vendor",
    )?;
    let rows = stmt.query_map(params![from_day, to_day], |row| {
        Ok(VendorTotal {
            vendor: row.get(0)?,
            days: row.get(1)?,
            recomputed_nusd: row.get(2)?,
            billed_tokens_nusd: row.get(3)?,
            breaches: row.get(4)?,
            uncaptured: row.get(5)?,
            unattributed: row.get(6)?,
            billed_other_nusd: row.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Each vendor's last run: (vendor, from_day, to_day, reconciled_at_ms).
pub fn sources(conn: &Connection) -> Result<Vec<(String, String, String, i64)>, DbError> {
    let mut stmt =
        conn.prepare_cached("SELECT vendor, from_day, to_day, reconciled_at_ms FROM billing_sources ORDER BY vendor")?;
    let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
