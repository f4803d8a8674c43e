//! Which adapters report, read from the sessions table for the administrator's
//! `/admin/adapters`: each agent and hook version with its sessions, people and machines;
//! each machine's last report; and the people whose telemetry went quiet (reported in
//! the 30 days before the last 7 and not since) or arrives without usage (events but
//! no tokens, so spend is invisible).
//!
//! It also says, per person and agent, whether data arrives by the hook, by the agent's
//! own OTLP export, or both (`sessions.otlp_events`).
//!
//! Invariants: reads session rows only, never raw events; every list is bounded.

use rusqlite::{Connection, params};

use crate::db::DbError;

const DAY_MS: i64 = 86_400_000;

/// The reads of this page, each over a window of recent sessions. Each names the index on
/// `last_event_ms`: grouped by person, SQLite preferred to walk the whole table in the
/// order of its (person, agent, session) key, so the page's cost grew with every session
/// ever kept (a year of the demo: 200 ms a view) rather than with the window.
const AGENT_VERSIONS_SQL: &str =
    "SELECT agent_type, agent_version, count(*), count(DISTINCT user_id), max(last_event_ms)
         FROM sessions INDEXED BY sessions_by_last_event WHERE last_event_ms >= ?1
         GROUP BY 1, 2 ORDER BY 1, 5 DESC LIMIT 200";
const LATEST_VERSION_SQL: &str = "SELECT l.agent_type, l.agent_version, u.email FROM (
             SELECT agent_type, agent_version, user_id,
                    row_number() OVER (PARTITION BY user_id, agent_type ORDER BY last_event_ms DESC) AS nth
             FROM sessions INDEXED BY sessions_by_last_event WHERE last_event_ms >= ?1) l
         JOIN users u ON u.id = l.user_id WHERE l.nth = 1 ORDER BY u.email";
const SOURCES_SQL: &str = "SELECT u.email, s.agent_type,
                sum(s.otlp_events = 0), sum(s.otlp_events = s.event_count AND s.otlp_events > 0),
                sum(s.otlp_events > 0 AND s.otlp_events < s.event_count), max(s.last_event_ms)
         FROM sessions s INDEXED BY sessions_by_last_event JOIN users u ON u.id = s.user_id
         WHERE s.last_event_ms >= ?1
         GROUP BY s.user_id, s.agent_type ORDER BY 6 DESC LIMIT 500";
const VERSIONS_SQL: &str = "SELECT agent_type, coalesce(cli_version, '(unknown)'), count(*), count(DISTINCT user_id),
                count(DISTINCT machine_id), max(last_event_ms)
         FROM sessions INDEXED BY sessions_by_last_event WHERE last_event_ms >= ?1
         GROUP BY 1, 2 ORDER BY 1, 6 DESC LIMIT 200";
const MACHINES_SQL: &str =
    "SELECT s.machine_id, u.email, s.agent_type, coalesce(s.cli_version, ''), coalesce(s.os, ''), max(s.last_event_ms)
         FROM sessions s INDEXED BY sessions_by_last_event JOIN users u ON u.id = s.user_id
         WHERE s.last_event_ms >= ?1 AND s.machine_id IS NOT NULL
         GROUP BY s.machine_id, s.user_id, s.agent_type ORDER BY 6 DESC LIMIT 500";
const STOPPED_SQL: &str = "SELECT u.email, group_concat(DISTINCT s.agent_type), max(s.last_event_ms), count(*)
         FROM sessions s INDEXED BY sessions_by_last_event JOIN users u ON u.id = s.user_id
         WHERE s.last_event_ms >= ?1 AND u.disabled_at_ms IS NULL
         GROUP BY s.user_id HAVING max(s.last_event_ms) < ?2
         ORDER BY 3 LIMIT 500";
const WITHOUT_USAGE_SQL: &str = "SELECT u.email, group_concat(DISTINCT s.agent_type), max(s.last_event_ms), count(*)
         FROM sessions s INDEXED BY sessions_by_last_event JOIN users u ON u.id = s.user_id
         WHERE s.last_event_ms >= ?1
         GROUP BY s.user_id
         HAVING sum(s.input_tokens + s.output_tokens + s.cache_read_tokens + s.cache_write_5m_tokens
                    + s.cache_write_1h_tokens + s.reasoning_tokens) = 0 AND sum(s.event_count) > 0
         ORDER BY 3 DESC LIMIT 500";

/// One agent and hook version in the last 30 days.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionLine {
    pub agent_type: String,
    pub cli_version: String,
    pub sessions: i64,
    pub people: i64,
    pub machines: i64,
    pub last_seen_ms: i64,
}

/// One version of an agent itself (not our hook) in the last 30 days, and who runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentVersionLine {
    pub agent_type: String,
    /// `None`: sessions whose source never said (Gemini CLI's and Claude Code's hooks).
    pub agent_version: Option<String>,
    pub sessions: i64,
    pub people: i64,
    /// The people whose latest session of the agent ran this version (at most 20).
    pub latest_for: Vec<String>,
    pub last_seen_ms: i64,
}

/// The agents' own versions in the last 30 days, newest first per agent.
pub fn agent_versions(conn: &Connection, now_ms: i64) -> Result<Vec<AgentVersionLine>, DbError> {
    let since = now_ms - 30 * DAY_MS;
    let mut stmt = conn.prepare(AGENT_VERSIONS_SQL)?;
    let mut lines: Vec<AgentVersionLine> = stmt
        .query_map([since], |row| {
            Ok(AgentVersionLine {
                agent_type: row.get(0)?,
                agent_version: row.get(1)?,
                sessions: row.get(2)?,
                people: row.get(3)?,
                latest_for: Vec::new(),
                last_seen_ms: row.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    // Each person's latest session of each agent, and the version it ran.
    let mut latest = conn.prepare(LATEST_VERSION_SQL)?;
    let rows = latest.query_map([since], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?, row.get::<_, String>(2)?))
    })?;
    for row in rows {
        let (agent, version, email) = row?;
        if let Some(line) = lines.iter_mut().find(|l| l.agent_type == agent && l.agent_version == version)
            && line.latest_for.len() < 20
        {
            line.latest_for.push(email);
        }
    }
    Ok(lines)
}

/// One machine's latest report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineLine {
    pub machine_id: String,
    pub email: String,
    pub agent_type: String,
    pub cli_version: String,
    pub os: String,
    pub last_seen_ms: i64,
}

/// How one person's agent reports (last 30 days): sessions by the hook only, by OTLP
/// only, and by both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLine {
    pub email: String,
    pub agent_type: String,
    pub hook_only: i64,
    pub otlp_only: i64,
    pub both: i64,
    pub last_seen_ms: i64,
}

impl SourceLine {
    /// The source in a word: `hook`, `OTLP` or `both`.
    pub fn source(&self) -> &'static str {
        match (self.hook_only > 0, self.otlp_only > 0, self.both > 0) {
            (_, _, true) | (true, true, _) => "both",
            (false, true, false) => "OTLP",
            _ => "hook",
        }
    }
}

/// Per person and agent, the sessions of the last 30 days by source, latest first
/// (at most 500).
pub fn sources(conn: &Connection, now_ms: i64) -> Result<Vec<SourceLine>, DbError> {
    let mut stmt = conn.prepare(SOURCES_SQL)?;
    let rows = stmt.query_map([now_ms - 30 * DAY_MS], |row| {
        Ok(SourceLine {
            email: row.get(0)?,
            agent_type: row.get(1)?,
            hook_only: row.get(2)?,
            otlp_only: row.get(3)?,
            both: row.get(4)?,
            last_seen_ms: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A person whose telemetry has a gap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GapLine {
    pub email: String,
    pub agents: String,
    pub last_seen_ms: i64,
    pub sessions: i64,
}

pub fn versions(conn: &Connection, now_ms: i64) -> Result<Vec<VersionLine>, DbError> {
    let mut stmt = conn.prepare(VERSIONS_SQL)?;
    let rows = stmt.query_map([now_ms - 30 * DAY_MS], |row| {
        Ok(VersionLine {
            agent_type: row.get(0)?,
            cli_version: row.get(1)?,
            sessions: row.get(2)?,
            people: row.get(3)?,
            machines: row.get(4)?,
            last_seen_ms: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The machines that reported in the last 90 days, latest first (at most 500).
pub fn machines(conn: &Connection, now_ms: i64) -> Result<Vec<MachineLine>, DbError> {
    let mut stmt = conn.prepare(MACHINES_SQL)?;
    let rows = stmt.query_map([now_ms - 90 * DAY_MS], |row| {
        Ok(MachineLine {
            machine_id: row.get(0)?,
            email: row.get(1)?,
            agent_type: row.get(2)?,
            cli_version: row.get(3)?,
            os: row.get(4)?,
            last_seen_ms: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// People who reported in the 30 days before the last 7 and not in the last 7.
pub fn stopped_reporting(conn: &Connection, now_ms: i64) -> Result<Vec<GapLine>, DbError> {
    let mut stmt = conn.prepare(STOPPED_SQL)?;
    let rows = stmt.query_map(params![now_ms - 37 * DAY_MS, now_ms - 7 * DAY_MS], gap)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// People whose sessions of the last 30 days carried events but not one token.
pub fn without_usage(conn: &Connection, now_ms: i64) -> Result<Vec<GapLine>, DbError> {
    let mut stmt = conn.prepare(WITHOUT_USAGE_SQL)?;
    let rows = stmt.query_map([now_ms - 30 * DAY_MS], gap)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn gap(row: &rusqlite::Row<'_>) -> rusqlite::Result<GapLine> {
    Ok(GapLine { email: row.get(0)?, agents: row.get(1)?, last_seen_ms: row.get(2)?, sessions: row.get(3)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every read walks the window by the time index, never the whole table by its key.
    #[test]
    fn each_read_walks_only_its_window_of_sessions() {
        let conn = crate::db::plans::main_db();
        for sql in [
            AGENT_VERSIONS_SQL,
            LATEST_VERSION_SQL,
            SOURCES_SQL,
            VERSIONS_SQL,
            MACHINES_SQL,
            STOPPED_SQL,
            WITHOUT_USAGE_SQL,
        ] {
            let args: &[&dyn rusqlite::ToSql] = if sql.contains("?2") { &[&0, &0] } else { &[&0] };
            let plan = crate::db::plans::plan(&conn, sql, args);
            assert!(
                plan.iter().any(|step| step.contains("USING INDEX sessions_by_last_event (last_event_ms>?)")),
                "{sql}: {plan:?}"
            );
            assert!(!plan.iter().any(|step| step.contains("sqlite_autoindex_sessions")), "{sql}: {plan:?}");
        }
    }
}
