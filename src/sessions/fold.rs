//! Sessions: the central fact table, owned here. Events fold into a session
//! additively through [`Deltas`], the same fold for the ingest hot path and for
//! start-up recovery, so both count an event the same way.
//!
//! Invariants: only newly inserted events are folded (the writer decides that), and
//! every aggregate is commutative — sums, minimum, maximum, set union, "latest
//! session_start wins" — so a reordered batch yields the same row. A session is keyed
//! by (user, agent_type, agent session id): two people's sessions never merge.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};

use super::git::GitReport;
use crate::db::DbError;
use crate::events::writer::{CommitFold, Joined, Stored};
use crate::model::eval_cell::EvalTag;
use crate::model::wire::{ClientInfo, Event, GitContext};
use crate::model::{AgentType, EventType, RunKind, ToolStatus, Usage};
use crate::pricing::PriceBook;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    pub user_id: String,
    pub agent_type: AgentType,
    pub session_id: String,
}

/// What a set of events adds to one session.
#[derive(Clone, Debug, Default)]
pub struct SessionDelta {
    pub run_kind: Option<RunKind>,
    pub first_event_ms: i64,
    pub last_event_ms: i64,
    pub started_at_ms: Option<i64>,
    pub ended_at_ms: Option<i64>,
    pub event_count: i64,
    /// Events from the agent's own OTLP export (the rest came from the hook).
    pub otlp_events: i64,
    pub prompt_count: i64,
    pub tool_call_count: i64,
    pub tool_error_count: i64,
    pub denial_count: i64,
    pub notification_count: i64,
    pub subagent_count: i64,
    pub compact_count: i64,
    pub usage: Usage,
    pub cost_nusd: i64,
    pub client_cost_nusd: i64,
    pub unknown_model_events: i64,
    pub total_response_ms: i64,
    pub response_sample_count: i64,
    pub max_autonomy_rank: Option<u8>,
    pub git: Option<(i64, GitContext)>,
    /// Every git context reported (start, resume, end), with its first time.
    pub git_reports: BTreeMap<GitReport, i64>,
    pub models: BTreeMap<String, i64>,
    pub client: Option<ClientInfo>,
    /// The agent's version its latest event that named one said.
    pub agent_version: Option<String>,
    /// The evaluation cell the session's events name (the first one wins).
    pub eval: Option<EvalTag>,
}

#[derive(Clone, Debug, Default)]
pub struct UnknownModelDelta {
    pub first_seen_ms: i64,
    pub last_seen_ms: i64,
    pub event_count: i64,
    /// The tokens that have no price, by kind.
    pub usage: Usage,
    /// What the agent said they cost, where it says.
    pub client_cost_nusd: i64,
}

/// Everything one writer commit adds to main.db.
#[derive(Debug, Default)]
pub struct Deltas {
    pub sessions: HashMap<SessionKey, SessionDelta>,
    pub dirty_hours: BTreeSet<i64>,
    pub unknown_models: HashMap<(AgentType, String), UnknownModelDelta>,
}

const HOUR_MS: i64 = 3_600_000;

impl Deltas {
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Folds one newly inserted event. `known_model` says whether the price table
    /// knew the event's model; only events with token usage can be unpriced.
    pub fn add(&mut self, user_id: &str, event: &Event, known_model: bool, client: Option<&ClientInfo>) {
        let key = SessionKey {
            user_id: user_id.to_string(),
            agent_type: event.agent_type,
            session_id: event.session_id.clone(),
        };
        let delta = self.sessions.entry(key).or_insert_with(|| SessionDelta {
            first_event_ms: event.ts_ms,
            last_event_ms: event.ts_ms,
            ..SessionDelta::default()
        });
        delta.run_kind = Some(delta.run_kind.map_or(event.run_kind, |kind| kind.merge(event.run_kind)));
        delta.first_event_ms = delta.first_event_ms.min(event.ts_ms);
        delta.last_event_ms = delta.last_event_ms.max(event.ts_ms);
        delta.event_count += 1;
        delta.otlp_events += i64::from(event.is_otlp());
        let tool_status = event.tool.as_ref().and_then(|tool| tool.status);
        match event.event_type {
            EventType::SessionStart => {
                delta.started_at_ms = Some(delta.started_at_ms.map_or(event.ts_ms, |t| t.min(event.ts_ms)));
                if let Some(report) = GitReport::from_event(event.git.as_ref(), event.metadata.as_deref()) {
                    let first = delta.git_reports.entry(report).or_insert(event.ts_ms);
                    *first = (*first).min(event.ts_ms);
                }
                if let Some(git) = &event.git {
                    let newer = delta.git.as_ref().is_none_or(|(ts, _)| event.ts_ms >= *ts);
                    if newer {
                        delta.git = Some((event.ts_ms, git.clone()));
                    }
                }
            }
            EventType::SessionEnd => {
                delta.ended_at_ms = Some(delta.ended_at_ms.map_or(event.ts_ms, |t| t.max(event.ts_ms)));
                // The end's git context says what the session produced (its last commit,
                // a branch it made); the session's own git context stays its start's.
                if let Some(report) = GitReport::from_event(event.git.as_ref(), None) {
                    let first = delta.git_reports.entry(report).or_insert(event.ts_ms);
                    *first = (*first).min(event.ts_ms);
                }
            }
            EventType::PromptSubmit => delta.prompt_count += 1,
            EventType::ToolEnd => {
                delta.tool_call_count += 1;
                match tool_status {
                    Some(ToolStatus::Error) => delta.tool_error_count += 1,
                    Some(ToolStatus::Denied) => delta.denial_count += 1,
                    _ => {}
                }
            }
            EventType::Notification => delta.notification_count += 1,
            EventType::SubagentEnd => delta.subagent_count += 1,
            EventType::Compact => delta.compact_count += 1,
            EventType::ToolStart | EventType::TurnEnd => {}
        }
        delta.usage.add(&event.usage);
        delta.cost_nusd += event.cost_nusd;
        delta.client_cost_nusd += event.client_cost_nusd.unwrap_or(0);
        if let Some(response_ms) = event.response_ms {
            delta.total_response_ms += response_ms;
            delta.response_sample_count += 1;
        }
        if let Some(mode) = event.permission_mode {
            let rank = mode.autonomy_rank();
            delta.max_autonomy_rank = Some(delta.max_autonomy_rank.map_or(rank, |r| r.max(rank)));
        }
        if let Some(model) = &event.model {
            *delta.models.entry(model.clone()).or_insert(0) += 1;
        }
        if delta.eval.is_none() && event.eval.is_some() {
            delta.eval = event.eval.clone();
        }
        if let Some(version) = &event.agent_version {
            delta.agent_version = Some(version.clone());
        }
        if client.is_some() {
            delta.client = client.cloned();
        }
        let priced = !event.usage.is_zero();
        if priced && !known_model {
            delta.unknown_model_events += 1;
            let model = event.model.clone().unwrap_or_default();
            let entry = self.unknown_models.entry((event.agent_type, model)).or_insert(UnknownModelDelta {
                first_seen_ms: event.ts_ms,
                last_seen_ms: event.ts_ms,
                event_count: 0,
                usage: Usage::default(),
                client_cost_nusd: 0,
            });
            entry.first_seen_ms = entry.first_seen_ms.min(event.ts_ms);
            entry.last_seen_ms = entry.last_seen_ms.max(event.ts_ms);
            entry.event_count += 1;
            entry.usage.add(&event.usage);
            entry.client_cost_nusd += event.client_cost_nusd.unwrap_or(0);
        }
        self.dirty_hours.insert(event.ts_ms.div_euclid(HOUR_MS) * HOUR_MS);
    }
}

const UPSERT_SQL: &str = "INSERT INTO sessions (
    id, user_id, agent_type, agent_session_id, run_kind, first_event_ms, last_event_ms, started_at_ms,
    ended_at_ms, event_count, prompt_count, tool_call_count, tool_error_count, denial_count,
    notification_count, subagent_count, compact_count, input_tokens, output_tokens, cache_read_tokens,
    cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd, client_cost_nusd,
    unknown_model_events, total_response_ms, response_sample_count, max_autonomy_rank, git_ts_ms,
    git_branch, git_commit, git_remote, git_dirty, machine_id, cli_version, os, end_reason, otlp_events,
    eval_cell_id, eval_run, eval_phase, eval_harness, agent_version)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
    ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37,
    CASE WHEN ?9 IS NULL THEN NULL ELSE 'ended' END, ?38, ?39, ?40, ?41, ?39 IS NOT NULL, ?42)
  ON CONFLICT (user_id, agent_type, agent_session_id) DO UPDATE SET
    -- A session's run kind is its first batch's: a later event (a collector's, say) never
    -- turns a person's interactive session into an evaluation or CI run.
    first_event_ms = min(sessions.first_event_ms, excluded.first_event_ms),
    last_event_ms = max(sessions.last_event_ms, excluded.last_event_ms),
    started_at_ms = min(coalesce(sessions.started_at_ms, excluded.started_at_ms),
                        coalesce(excluded.started_at_ms, sessions.started_at_ms)),
    -- An abandoned session that hears from its agent again is open again (or ended, if
    -- what it heard is its end); otherwise the latest end wins.
    ended_at_ms = CASE
        WHEN sessions.end_reason = 'abandoned' AND excluded.last_event_ms > sessions.ended_at_ms
            THEN excluded.ended_at_ms
        ELSE max(coalesce(sessions.ended_at_ms, excluded.ended_at_ms),
                 coalesce(excluded.ended_at_ms, sessions.ended_at_ms)) END,
    end_reason = CASE
        WHEN excluded.end_reason IS NOT NULL THEN 'ended'
        WHEN sessions.end_reason = 'abandoned' AND excluded.last_event_ms > sessions.ended_at_ms THEN NULL
        ELSE sessions.end_reason END,
    event_count = sessions.event_count + excluded.event_count,
    otlp_events = sessions.otlp_events + excluded.otlp_events,
    prompt_count = sessions.prompt_count + excluded.prompt_count,
    tool_call_count = sessions.tool_call_count + excluded.tool_call_count,
    tool_error_count = sessions.tool_error_count + excluded.tool_error_count,
    denial_count = sessions.denial_count + excluded.denial_count,
    notification_count = sessions.notification_count + excluded.notification_count,
    subagent_count = sessions.subagent_count + excluded.subagent_count,
    compact_count = sessions.compact_count + excluded.compact_count,
    input_tokens = sessions.input_tokens + excluded.input_tokens,
    output_tokens = sessions.output_tokens + excluded.output_tokens,
    cache_read_tokens = sessions.cache_read_tokens + excluded.cache_read_tokens,
    cache_write_5m_tokens = sessions.cache_write_5m_tokens + excluded.cache_write_5m_tokens,
    cache_write_1h_tokens = sessions.cache_write_1h_tokens + excluded.cache_write_1h_tokens,
    reasoning_tokens = sessions.reasoning_tokens + excluded.reasoning_tokens,
    cost_nusd = sessions.cost_nusd + excluded.cost_nusd,
    client_cost_nusd = sessions.client_cost_nusd + excluded.client_cost_nusd,
    unknown_model_events = sessions.unknown_model_events + excluded.unknown_model_events,
    total_response_ms = sessions.total_response_ms + excluded.total_response_ms,
    response_sample_count = sessions.response_sample_count + excluded.response_sample_count,
    max_autonomy_rank = max(coalesce(sessions.max_autonomy_rank, excluded.max_autonomy_rank),
                            coalesce(excluded.max_autonomy_rank, sessions.max_autonomy_rank)),
    git_branch = CASE WHEN excluded.git_ts_ms >= coalesce(sessions.git_ts_ms, excluded.git_ts_ms)
                      THEN excluded.git_branch ELSE sessions.git_branch END,
    git_commit = CASE WHEN excluded.git_ts_ms >= coalesce(sessions.git_ts_ms, excluded.git_ts_ms)
                      THEN excluded.git_commit ELSE sessions.git_commit END,
    git_remote = CASE WHEN excluded.git_ts_ms >= coalesce(sessions.git_ts_ms, excluded.git_ts_ms)
                      THEN excluded.git_remote ELSE sessions.git_remote END,
    git_dirty = CASE WHEN excluded.git_ts_ms >= coalesce(sessions.git_ts_ms, excluded.git_ts_ms)
                     THEN excluded.git_dirty ELSE sessions.git_dirty END,
    git_ts_ms = max(coalesce(sessions.git_ts_ms, excluded.git_ts_ms),
                    coalesce(excluded.git_ts_ms, sessions.git_ts_ms)),
    machine_id = coalesce(excluded.machine_id, sessions.machine_id),
    cli_version = coalesce(excluded.cli_version, sessions.cli_version),
    agent_version = coalesce(excluded.agent_version, sessions.agent_version),
    os = coalesce(excluded.os, sessions.os),
    -- A session names one cell: the first it named stays, with its run and phase; only an
    -- EVAL session is linked (the events that reach here were sent with a harness's token).
    eval_run = CASE WHEN sessions.eval_cell_id IS NULL AND sessions.run_kind = 'EVAL'
                    THEN excluded.eval_run ELSE sessions.eval_run END,
    eval_phase = CASE WHEN sessions.eval_cell_id IS NULL AND sessions.run_kind = 'EVAL'
                      THEN excluded.eval_phase ELSE sessions.eval_phase END,
    eval_harness = CASE WHEN sessions.eval_cell_id IS NULL AND sessions.run_kind = 'EVAL'
                        THEN excluded.eval_harness ELSE sessions.eval_harness END,
    eval_cell_id = CASE WHEN sessions.run_kind = 'EVAL'
                        THEN coalesce(sessions.eval_cell_id, excluded.eval_cell_id) ELSE sessions.eval_cell_id END
  RETURNING id";

/// Writes the deltas inside the caller's main.db transaction.
pub fn apply(conn: &Connection, deltas: &Deltas, now_ms: i64) -> Result<(), DbError> {
    let mut upsert = conn.prepare_cached(UPSERT_SQL)?;
    let mut add_model = conn.prepare_cached(
        "INSERT INTO session_models (session_id, model, event_count) VALUES (?1, ?2, ?3)
         ON CONFLICT (session_id, model) DO UPDATE SET event_count = event_count + excluded.event_count",
    )?;
    for (key, delta) in &deltas.sessions {
        let git = delta.git.as_ref();
        let client = delta.client.as_ref();
        // Only an evaluation run is linked to a cell (a new session's kind is its batch's).
        let linked = delta.eval.as_ref().filter(|_| delta.run_kind == Some(RunKind::Eval));
        let session_row_id: String = upsert.query_row(
            params![
                uuid::Uuid::now_v7().to_string(),
                key.user_id,
                key.agent_type.as_str(),
                key.session_id,
                delta.run_kind.unwrap_or(RunKind::Interactive).as_str(),
                delta.first_event_ms,
                delta.last_event_ms,
                delta.started_at_ms,
                delta.ended_at_ms,
                delta.event_count,
                delta.prompt_count,
                delta.tool_call_count,
                delta.tool_error_count,
                delta.denial_count,
                delta.notification_count,
                delta.subagent_count,
                delta.compact_count,
                delta.usage.input_tokens,
                delta.usage.output_tokens,
                delta.usage.cache_read_tokens,
                delta.usage.cache_write_5m_tokens,
                delta.usage.cache_write_1h_tokens,
                delta.usage.reasoning_tokens,
                delta.cost_nusd,
                delta.client_cost_nusd,
                delta.unknown_model_events,
                delta.total_response_ms,
                delta.response_sample_count,
                delta.max_autonomy_rank,
                git.map(|(ts, _)| *ts),
                git.and_then(|(_, g)| g.branch.as_deref()),
                git.and_then(|(_, g)| g.commit.as_deref()),
                git.and_then(|(_, g)| g.remote.as_deref()),
                git.and_then(|(_, g)| g.dirty),
                client.map(|c| c.machine_id.as_str()),
                client.map(|c| c.cli_version.as_str()),
                client.map(|c| c.os.as_str()),
                delta.otlp_events,
                linked.map(|tag| tag.cell_id.as_str()),
                linked.and_then(|tag| tag.run_name.as_deref()),
                linked.and_then(|tag| tag.phase.as_deref()),
                delta.agent_version.as_deref(),
            ],
            |row| row.get(0),
        )?;
        for (model, count) in &delta.models {
            add_model.execute(params![session_row_id, model, count])?;
        }
        if !delta.git_reports.is_empty() {
            let reports: Vec<(GitReport, i64)> = delta.git_reports.iter().map(|(r, ts)| (r.clone(), *ts)).collect();
            super::git::record(conn, &session_row_id, &reports)?;
        }
    }
    mark_dirty_hours(conn, &deltas.dirty_hours, now_ms)?;
    let mut unknown = conn.prepare_cached(
        "INSERT INTO unknown_models (agent_type, model, first_seen_ms, last_seen_ms, event_count, input_tokens,
           output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, client_cost_nusd)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (agent_type, model) DO UPDATE SET
           first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
           last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
           event_count = event_count + excluded.event_count,
           input_tokens = input_tokens + excluded.input_tokens,
           output_tokens = output_tokens + excluded.output_tokens,
           cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
           cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
           reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
           client_cost_nusd = client_cost_nusd + excluded.client_cost_nusd",
    )?;
    for ((agent, model), delta) in &deltas.unknown_models {
        let usage = &delta.usage;
        unknown.execute(params![
            agent.as_str(),
            model,
            delta.first_seen_ms,
            delta.last_seen_ms,
            delta.event_count,
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_5m_tokens + usage.cache_write_1h_tokens,
            usage.reasoning_tokens,
            delta.client_cost_nusd
        ])?;
    }
    Ok(())
}

/// The sessions fold the event writer applies to every commit (handed to
/// `crate::events::writer::EventWriter::start`). It holds the price table only to price again
/// the events a crash left unfolded.
pub struct SessionFold {
    pub prices: Arc<PriceBook>,
}

impl CommitFold for SessionFold {
    fn step(&self) -> &'static str {
        "fold_sessions"
    }

    fn fold(
        &self,
        main: &Connection,
        stored: &[Stored<'_>],
        joined: &[Joined<'_>],
        now_ms: i64,
    ) -> Result<u64, DbError> {
        let mut deltas = Deltas::default();
        for row in stored {
            let known = row.known_model.unwrap_or_else(|| {
                self.prices.price(row.event.agent_type, row.event.model.as_deref(), &row.event.usage).known_model
            });
            deltas.add(row.user_id, row.event, known, row.client);
        }
        apply(main, &deltas, now_ms)?;
        fill_git(main, joined)?;
        Ok(deltas.unknown_models.values().map(|d| d.event_count).sum::<i64>() as u64)
    }
}

/// Gives a session the git context of a start report that was joined to its other
/// source's (the export's start arrived first and has none): each column only where it
/// is empty, so a later report fills what an earlier one lacked and never erases; the
/// report is recorded for pull-request links as a stored start's is.
fn fill_git(main: &Connection, joined: &[Joined<'_>]) -> Result<(), DbError> {
    let mut fill = main.prepare_cached(
        "UPDATE sessions SET git_ts_ms = coalesce(git_ts_ms, ?4), git_branch = coalesce(git_branch, ?5),
           git_commit = coalesce(git_commit, ?6), git_remote = coalesce(git_remote, ?7),
           git_dirty = coalesce(git_dirty, ?8)
         WHERE user_id = ?1 AND agent_type = ?2 AND agent_session_id = ?3
         RETURNING id",
    )?;
    for Joined { user_id, event } in joined {
        let Some(git) = event.git.as_ref().filter(|_| event.event_type == EventType::SessionStart) else { continue };
        let id: Option<String> = fill
            .query_row(
                params![
                    user_id,
                    event.agent_type.as_str(),
                    event.session_id,
                    event.ts_ms,
                    git.branch,
                    git.commit,
                    git.remote,
                    git.dirty
                ],
                |row| row.get(0),
            )
            .optional()?;
        let report = GitReport::from_event(Some(git), event.metadata.as_deref());
        if let (Some(id), Some(report)) = (id, report) {
            super::git::record(main, &id, &[(report, event.ts_ms)])?;
        }
    }
    Ok(())
}

/// Marks hours whose figures changed, for the aggregate refresh.
pub(crate) fn mark_dirty_hours(conn: &Connection, hours: &BTreeSet<i64>, now_ms: i64) -> Result<(), DbError> {
    let mut mark_dirty = conn.prepare_cached(
        "INSERT INTO aggregate_dirty_buckets (bucket_start_ms, marked_at_ms) VALUES (?1, ?2)
         ON CONFLICT (bucket_start_ms) DO UPDATE
         SET marked_at_ms = max(excluded.marked_at_ms, aggregate_dirty_buckets.marked_at_ms + 1)",
    )?;
    // A renewed mark always changes, so a refresh that read the hour before this change
    // does not clear it (analytics::refresh clears a mark only if it is unchanged).
    for hour in hours {
        mark_dirty.execute(params![hour, now_ms])?;
    }
    Ok(())
}
