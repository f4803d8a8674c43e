//! A day's newly committed interactive events as additions to the aggregates: hourly
//! usage, daily tools and the person-day sums add up; a session's active time is
//! extended from its last folded event, or, when an event arrived out of order, counted
//! again from the session's events in the partition.
//!
//! Invariant: the additions plus what was folded before equal a rebuild of the day from
//! its partition (the refresh tests hold both paths to the same figures).

use std::collections::BTreeMap;

use crate::db::DbError;
use crate::events::partitions::{
    ACTIVE_GAP_CAP_MS, AggregateRow, DailySessions, DailyTools, HourlyUsage, SessionDay, active_ms,
};

const HOUR_MS: i64 = 3_600_000;

const NOTIFICATION_KINDS: [&str; 5] = ["permission", "idle", "elicitation", "auth", "other"];
const PERMISSION_MODES: [&str; 6] = ["normal", "plan", "accept_edits", "auto", "dont_ask", "bypass"];

/// A day's figures in the aggregates' shapes: what its new events add ([`add_up`]), or,
/// read whole from its partition, the day's own (`analytics::refresh`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DayFigures {
    pub usage: Vec<HourlyUsage>,
    pub tools: Vec<DailyTools>,
    /// Per person (sessions and active time included).
    pub people: Vec<DailySessions>,
    /// Per session: its last event and active time.
    pub sessions: Vec<SessionDay>,
}

/// Where a session stood before these events, and its whole list of times when needed.
pub trait SessionHistory {
    /// (last event's time, active time) as last folded, or `None` for a new session.
    fn folded(&mut self, user_id: &str, agent_type: &str, session_id: &str) -> Result<Option<(i64, i64)>, DbError>;
    /// Every event time of the session in the day, as the partition holds it now.
    fn times(&mut self, user_id: &str, agent_type: &str, session_id: &str) -> Result<Vec<i64>, DbError>;
}

pub fn add_up(rows: &[AggregateRow], history: &mut dyn SessionHistory) -> Result<DayFigures, DbError> {
    let mut usage: BTreeMap<(i64, &str, &str, &str), HourlyUsage> = BTreeMap::new();
    let mut tools: BTreeMap<[&str; 6], DailyTools> = BTreeMap::new();
    let mut people: BTreeMap<&str, DailySessions> = BTreeMap::new();
    let mut times: BTreeMap<(&str, &str, &str), Vec<i64>> = BTreeMap::new();
    for row in rows {
        let hour = row.ts_ms.div_euclid(HOUR_MS) * HOUR_MS;
        let group = usage.entry((hour, &row.user_id, &row.agent_type, &row.model)).or_insert_with(|| HourlyUsage {
            bucket_start_ms: hour,
            user_id: row.user_id.clone(),
            agent_type: row.agent_type.clone(),
            model: row.model.clone(),
            ..HourlyUsage::default()
        });
        group.events += 1;
        group.prompts += i64::from(row.event_type == "prompt_submit");
        group.sessions_started += i64::from(row.event_type == "session_start");
        group.usage.add(&row.usage);
        group.cost_nusd += row.cost_nusd;

        if row.event_type == "tool_end" {
            let key = [
                row.user_id.as_str(),
                &row.agent_type,
                &row.tool_name,
                &row.tool_server,
                &row.tool_skill,
                &row.tool_slash_command,
            ];
            let calls = tools.entry(key).or_insert_with(|| DailyTools {
                user_id: row.user_id.clone(),
                agent_type: row.agent_type.clone(),
                tool_name: row.tool_name.clone(),
                tool_server: row.tool_server.clone(),
                skill: row.tool_skill.clone(),
                slash_command: row.tool_slash_command.clone(),
                ..DailyTools::default()
            });
            calls.calls += 1;
            calls.errors += i64::from(row.tool_status.as_deref() == Some("error"));
            calls.denials += i64::from(row.tool_status.as_deref() == Some("denied"));
            calls.duration_ms += row.tool_duration_ms;
            calls.input_bytes += row.tool_input_bytes;
            calls.output_bytes += row.tool_output_bytes;
        }

        let person = people
            .entry(&row.user_id)
            .or_insert_with(|| DailySessions { user_id: row.user_id.clone(), ..DailySessions::default() });
        if row.event_type == "notification"
            && let Some(kind) =
                NOTIFICATION_KINDS.iter().position(|kind| row.notification_kind.as_deref() == Some(kind))
        {
            person.notifications[kind] += 1;
        }
        if let Some(response_ms) = row.response_ms {
            person.response_ms += response_ms;
            person.responses += 1;
        }
        if let Some(mode) = PERMISSION_MODES.iter().position(|mode| row.permission_mode.as_deref() == Some(mode)) {
            person.modes[mode] += 1;
        }
        times.entry((&row.user_id, &row.agent_type, &row.session_id)).or_default().push(row.ts_ms);
    }

    let mut sessions = Vec::with_capacity(times.len());
    for ((user_id, agent_type, session_id), mut new_times) in times {
        new_times.sort_unstable();
        let (first_new, last_new) = (new_times[0], new_times[new_times.len() - 1]);
        let (last_ts_ms, active, added_sessions, added_active) =
            match history.folded(user_id, agent_type, session_id)? {
                None => {
                    let active = active_ms(&new_times);
                    (last_new, active, 1, active)
                }
                Some((last, before)) if first_new >= last => {
                    let active = before + (first_new - last).clamp(0, ACTIVE_GAP_CAP_MS) + active_ms(&new_times);
                    (last_new, active, 0, active - before)
                }
                Some((last, before)) => {
                    // An event older than the last one folded: count the session again.
                    let all = history.times(user_id, agent_type, session_id)?;
                    let active = active_ms(&all);
                    (all.last().copied().unwrap_or(last).max(last), active, 0, active - before)
                }
            };
        // Every session's person has a row: the session's events made it above.
        if let Some(person) = people.get_mut(user_id) {
            person.sessions += added_sessions;
            person.active_ms += added_active;
        }
        sessions.push(SessionDay {
            user_id: user_id.to_string(),
            agent_type: agent_type.to_string(),
            session_id: session_id.to_string(),
            last_ts_ms,
            active_ms: active,
        });
    }
    Ok(DayFigures {
        usage: usage.into_values().collect(),
        tools: tools.into_values().collect(),
        people: people.into_values().collect(),
        sessions,
    })
}
