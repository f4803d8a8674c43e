//! Whole-partition scans for the system's own derived figures: the continuous
//! aggregates' hourly usage, daily tools and daily sessions (`analytics::refresh`), and
//! the scoring scan of interactive steps in session order (`scoring::run`). None reads
//! metadata, so nothing is decompressed.

use rusqlite::{Connection, params};

use super::digest;
use super::increments::{SessionDay, active_by_person};
use crate::db::DbError;
use crate::model::Usage;

/// One group of interactive events of one hour, user, agent and model (model `""` when
/// the events had none): what the hourly usage aggregate is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HourlyUsage {
    pub bucket_start_ms: i64,
    pub user_id: String,
    pub agent_type: String,
    pub model: String,
    pub events: i64,
    pub prompts: i64,
    pub sessions_started: i64,
    pub usage: Usage,
    pub cost_nusd: i64,
}

/// The partition's `INTERACTIVE` events with `from_ms <= ts_ms < to_ms`, grouped by hour,
/// user, agent and model. CI and EVAL runs are left out here, at the source.
pub fn hourly_usage(conn: &Connection, from_ms: i64, to_ms: i64) -> Result<Vec<HourlyUsage>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT (ts_ms / 3600000) * 3600000 AS hour, user_id, agent_type, coalesce(model, ''), count(*),
                sum(type = 'prompt_submit'), sum(type = 'session_start'),
                sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_write_5m_tokens),
                sum(cache_write_1h_tokens), sum(reasoning_tokens), sum(cost_nusd)
         FROM events
         WHERE ts_ms >= ?1 AND ts_ms < ?2 AND run_kind = 'INTERACTIVE'
         GROUP BY hour, user_id, agent_type, coalesce(model, '')",
    )?;
    let rows = stmt.query_map(params![from_ms, to_ms], |row| {
        Ok(HourlyUsage {
            bucket_start_ms: row.get(0)?,
            user_id: row.get(1)?,
            agent_type: row.get(2)?,
            model: row.get(3)?,
            events: row.get(4)?,
            prompts: row.get(5)?,
            sessions_started: row.get(6)?,
            usage: Usage {
                input_tokens: row.get(7)?,
                output_tokens: row.get(8)?,
                cache_read_tokens: row.get(9)?,
                cache_write_5m_tokens: row.get(10)?,
                cache_write_1h_tokens: row.get(11)?,
                reasoning_tokens: row.get(12)?,
            },
            cost_nusd: row.get(13)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The tool calls of one day, user, agent, tool, tool server, skill and slash command
/// (`""` where an event named none): what the daily tools aggregate is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DailyTools {
    pub user_id: String,
    pub agent_type: String,
    pub tool_name: String,
    pub tool_server: String,
    pub skill: String,
    pub slash_command: String,
    pub calls: i64,
    pub errors: i64,
    pub denials: i64,
    pub duration_ms: i64,
    pub input_bytes: i64,
    pub output_bytes: i64,
}

/// The partition's `INTERACTIVE` finished tool calls (`tool_end`), grouped. A partition
/// holds one day, so the groups are that day's.
pub fn daily_tools(conn: &Connection) -> Result<Vec<DailyTools>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT user_id, agent_type, coalesce(tool_name, ''), coalesce(tool_server, ''), coalesce(tool_skill, ''),
                coalesce(tool_slash_command, ''), count(*), sum(tool_status IS 'error'), sum(tool_status IS 'denied'),
                coalesce(sum(tool_duration_ms), 0), coalesce(sum(tool_input_bytes), 0),
                coalesce(sum(tool_output_bytes), 0)
         FROM events
         WHERE type = 'tool_end' AND run_kind = 'INTERACTIVE'
         GROUP BY 1, 2, 3, 4, 5, 6",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(DailyTools {
            user_id: row.get(0)?,
            agent_type: row.get(1)?,
            tool_name: row.get(2)?,
            tool_server: row.get(3)?,
            skill: row.get(4)?,
            slash_command: row.get(5)?,
            calls: row.get(6)?,
            errors: row.get(7)?,
            denials: row.get(8)?,
            duration_ms: row.get(9)?,
            input_bytes: row.get(10)?,
            output_bytes: row.get(11)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One person's interactive day: what the daily sessions aggregate is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DailySessions {
    pub user_id: String,
    pub sessions: i64,
    /// The sum over the day's sessions of the gaps between their events, each gap counted
    /// up to [`ACTIVE_GAP_CAP_MS`] (a longer silence is a break, not work).
    pub active_ms: i64,
    /// Notifications by kind: permission, idle, elicitation, auth, other.
    pub notifications: [i64; 5],
    pub response_ms: i64,
    pub responses: i64,
    /// Events by permission mode: normal, plan, accept_edits, auto, dont_ask, bypass.
    pub modes: [i64; 6],
}

impl DailySessions {
    /// How many figures a person's day has.
    pub const FIGURES: usize = 15;
    /// Where the notifications and the modes lie among the figures.
    const NOTIFICATIONS: std::ops::Range<usize> = 2..7;
    const MODES: std::ops::Range<usize> = 9..15;

    /// The figures in the column order of `agg_sessions_daily` and `agg_person_days`:
    /// sessions, active time, notifications by kind, response time and responses, events
    /// by permission mode.
    pub fn figures(&self) -> [i64; Self::FIGURES] {
        let mut figures = [0; Self::FIGURES];
        figures[0] = self.sessions;
        figures[1] = self.active_ms;
        figures[Self::NOTIFICATIONS].copy_from_slice(&self.notifications);
        figures[7] = self.response_ms;
        figures[8] = self.responses;
        figures[Self::MODES].copy_from_slice(&self.modes);
        figures
    }

    /// The inverse of [`DailySessions::figures`].
    pub fn from_figures(user_id: String, figures: [i64; Self::FIGURES]) -> DailySessions {
        DailySessions {
            user_id,
            sessions: figures[0],
            active_ms: figures[1],
            notifications: figures[Self::NOTIFICATIONS].try_into().expect("five notification kinds"),
            response_ms: figures[7],
            responses: figures[8],
            modes: figures[Self::MODES].try_into().expect("six permission modes"),
        }
    }
}

/// Longest gap between two events of a session that counts as active time.
pub const ACTIVE_GAP_CAP_MS: i64 = 5 * 60_000;

/// The partition's `INTERACTIVE` events, per person (a partition holds one day), with
/// the active time summed from `sessions` (the same partition's [`session_days`]).
///
/// [`session_days`]: super::increments::session_days
pub fn daily_sessions(conn: &Connection, sessions: &[SessionDay]) -> Result<Vec<DailySessions>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT user_id, count(DISTINCT agent_type || char(0) || session_id),
                sum(type = 'notification' AND notification_kind IS 'permission'),
                sum(type = 'notification' AND notification_kind IS 'idle'),
                sum(type = 'notification' AND notification_kind IS 'elicitation'),
                sum(type = 'notification' AND notification_kind IS 'auth'),
                sum(type = 'notification' AND notification_kind IS 'other'),
                coalesce(sum(response_ms), 0), count(response_ms),
                sum(permission_mode IS 'normal'), sum(permission_mode IS 'plan'),
                sum(permission_mode IS 'accept_edits'), sum(permission_mode IS 'auto'),
                sum(permission_mode IS 'dont_ask'), sum(permission_mode IS 'bypass')
         FROM events WHERE run_kind = 'INTERACTIVE' GROUP BY user_id ORDER BY user_id",
    )?;
    let active = active_by_person(sessions);
    let people = stmt
        .query_map([], |row| {
            let user_id: String = row.get(0)?;
            Ok(DailySessions {
                active_ms: active.get(user_id.as_str()).copied().unwrap_or(0),
                user_id,
                sessions: row.get(1)?,
                notifications: [row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?],
                response_ms: row.get(7)?,
                responses: row.get(8)?,
                modes: [row.get(9)?, row.get(10)?, row.get(11)?, row.get(12)?, row.get(13)?, row.get(14)?],
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(people)
}

/// What scoring reads of one interactive event: its session, time, id, type and tool.
#[derive(Clone, Debug)]
pub struct StepRow {
    pub user_id: String,
    pub agent_type: String,
    pub session_id: String,
    pub ts_ms: i64,
    pub event_id: [u8; 16],
    pub event_type: String,
    pub notification_kind: Option<String>,
    pub tool_name: Option<String>,
    pub tool_status: Option<String>,
    pub tool_input_sha256: Option<[u8; 32]>,
    pub tool_target_hash: Option<[u8; 32]>,
    pub tool_action: Option<String>,
    pub tool_use_id: Option<String>,
}

/// Every `INTERACTIVE` event of the partition in session order (person, agent, session,
/// time, id), reduced to what scoring reads (no metadata, so nothing is decompressed).
pub fn for_each_interactive_step(conn: &Connection, mut each: impl FnMut(StepRow)) -> Result<(), DbError> {
    let mut stmt = conn.prepare(
        "SELECT user_id, agent_type, session_id, ts_ms, event_id, type, notification_kind, tool_name, tool_status,
                tool_input_sha256, tool_target_hash, tool_action, tool_use_id
         FROM events WHERE run_kind = 'INTERACTIVE' ORDER BY user_id, agent_type, session_id, ts_ms, event_id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: Vec<u8> = row.get(4)?;
        each(StepRow {
            user_id: row.get(0)?,
            agent_type: row.get(1)?,
            session_id: row.get(2)?,
            ts_ms: row.get(3)?,
            event_id: <[u8; 16]>::try_from(id.as_slice()).unwrap_or_default(),
            event_type: row.get(5)?,
            notification_kind: row.get(6)?,
            tool_name: row.get(7)?,
            tool_status: row.get(8)?,
            tool_input_sha256: digest(row, 9)?,
            tool_target_hash: digest(row, 10)?,
            tool_action: row.get(11)?,
            tool_use_id: row.get(12)?,
        });
    }
    Ok(())
}

/// One agent and model of a day, over every run kind (a vendor bills CI and EVAL runs
/// too): what cost reconciliation compares with the vendors' billing. Model `""` when
/// the events had none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DailyModelCost {
    pub agent_type: String,
    pub model: String,
    pub events: i64,
    /// Events that carried any token count: an agent whose events never do has no
    /// captured usage, so its spend cannot be recomputed.
    pub events_with_tokens: i64,
    pub cost_nusd: i64,
}

/// The partition's events grouped by agent and model (the partition is one day).
pub fn daily_model_costs(conn: &Connection) -> Result<Vec<DailyModelCost>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT agent_type, coalesce(model, ''), count(*),
                sum(input_tokens + output_tokens + cache_read_tokens + cache_write_5m_tokens
                    + cache_write_1h_tokens + reasoning_tokens > 0),
                sum(cost_nusd)
         FROM events GROUP BY agent_type, coalesce(model, '') ORDER BY 1, 2",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(DailyModelCost {
            agent_type: row.get(0)?,
            model: row.get(1)?,
            events: row.get(2)?,
            events_with_tokens: row.get(3)?,
            cost_nusd: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
