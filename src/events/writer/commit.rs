//! One group commit of the writer: each day's rows into its partition under a new commit
//! sequence, then the folds and the ledger in one `main.db` transaction, then the WAL
//! checks, with the time of each step recorded (`writer_step_duration_seconds`).
//!
//! Invariant: a request is answered only after both commits; a partition that fails
//! fails only the requests with events in it, and a `main.db` failure leaves the stored
//! rows for the ledger's reconcile.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use rusqlite::{Connection, TransactionBehavior};
use tokio::sync::oneshot;

use super::ledger::record_applied;
use super::{CommitFold, Joined, OpenPartition, Stored, WriteError, WriteOutcome, WriteRequest, WriterState};
use crate::db::DbError;
use crate::events::partitions::{self, Day};
use prometheus_client::metrics::histogram::Histogram;

/// The histograms of the commit's fixed steps, looked up once when the writer starts.
pub(super) struct StepTimers {
    partition_rows: Histogram,
    partition_commit: Histogram,
    main_commit: Histogram,
    wal_cap: Histogram,
}

impl StepTimers {
    pub(super) fn new(metrics: &crate::metrics::Metrics) -> StepTimers {
        StepTimers {
            partition_rows: metrics.writer_step("partition_rows"),
            partition_commit: metrics.writer_step("partition_commit"),
            main_commit: metrics.writer_step("main_commit"),
            wal_cap: metrics.writer_step("wal_cap"),
        }
    }
}

/// A fold with the histogram of its step (`fold_<name>`).
pub(super) struct TimedFold {
    fold: Arc<dyn CommitFold>,
    seconds: Histogram,
}

impl TimedFold {
    pub(super) fn new(fold: Arc<dyn CommitFold>, metrics: &crate::metrics::Metrics) -> TimedFold {
        TimedFold { seconds: metrics.writer_step(fold.step()), fold }
    }
}

fn observe(step: &Histogram, started: Instant) {
    step.observe(started.elapsed().as_secs_f64());
}

impl WriterState {
    pub(super) fn commit_group(
        &mut self,
        group: Vec<(WriteRequest, oneshot::Sender<Result<WriteOutcome, WriteError>>)>,
    ) {
        let started = Instant::now();
        let result = self.commit_requests(group.iter().map(|(request, _)| request).collect());
        self.metrics.commit_latency.observe(started.elapsed().as_secs_f64());
        match result {
            Ok(per_request) => {
                for ((_, reply), outcome) in group.into_iter().zip(per_request) {
                    let _ = reply.send(outcome);
                }
            }
            Err(err) => {
                tracing::error!(error = %err, "event commit failed");
                for (_, reply) in group {
                    let _ = reply.send(Err(WriteError::Unavailable(err.to_string())));
                }
            }
        }
    }

    /// Commits a group; returns one outcome per request. A partition that fails
    /// fails only the requests with events in it; a main.db failure fails all and
    /// leaves the stored rows for `reconcile_all`.
    pub(super) fn commit_requests(
        &mut self,
        requests: Vec<&WriteRequest>,
    ) -> Result<Vec<Result<WriteOutcome, WriteError>>, DbError> {
        if self.needs_reconcile {
            self.reconcile_all()?;
        }
        let received_ms = self.config.clock.now_ms();
        let mut by_day: BTreeMap<Day, Vec<(usize, usize)>> = BTreeMap::new();
        for (r, request) in requests.iter().enumerate() {
            for (e, event) in request.events.iter().enumerate() {
                by_day.entry(Day::of_ms(event.ts_ms)).or_default().push((r, e));
            }
        }
        let mut inserted: Vec<Vec<bool>> = requests.iter().map(|r| vec![false; r.events.len()]).collect();
        let mut failed: Vec<Option<String>> = vec![None; requests.len()];
        let mut committed: Vec<(Day, i64)> = Vec::new();
        for (day, refs) in by_day {
            match self.commit_partition(day, &refs, &requests, received_ms) {
                Ok((seq, flags)) => {
                    for ((r, e), flag) in refs.iter().zip(flags) {
                        inserted[*r][*e] = flag;
                    }
                    committed.push((day, seq));
                }
                Err(err) => {
                    tracing::error!(%day, error = %err, "partition commit failed");
                    for (r, _) in refs {
                        failed[r] = Some(err.to_string());
                    }
                }
            }
        }
        if !committed.is_empty() {
            let mut stored = Vec::new();
            for (r, request) in requests.iter().enumerate() {
                for (e, event) in request.events.iter().enumerate() {
                    if inserted[r][e] {
                        stored.push(Stored {
                            user_id: &request.user_id,
                            event,
                            known_model: Some(request.known_models[e]),
                            client: Some(&request.client),
                            redactions: request.redactions.get(e),
                        });
                    }
                }
            }
            let otlp: Vec<(&str, &crate::model::wire::Event)> = requests
                .iter()
                .flat_map(|request| request.events.iter().map(move |event| (request.user_id.as_str(), event)))
                .filter(|(_, event)| event.is_otlp())
                .collect();
            // Reports not stored that carry git context (a hook's session start joined to
            // the export's, which has none): the sessions fold fills what is missing.
            let joined: Vec<Joined<'_>> = requests
                .iter()
                .enumerate()
                .flat_map(|(r, request)| {
                    let inserted = &inserted[r];
                    request.events.iter().enumerate().filter_map(move |(e, event)| {
                        let context = event.event_type == crate::model::EventType::SessionStart && event.git.is_some();
                        (!inserted[e] && context).then_some(Joined { user_id: &request.user_id, event })
                    })
                })
                .collect();
            let unknown = match self.commit_main(&stored, &joined, &committed, &otlp) {
                Ok(unknown) => unknown,
                Err(err) => {
                    self.needs_reconcile = true;
                    return Err(err);
                }
            };
            // Newly stored events only, so replays do not inflate it.
            self.metrics.unknown_model_events.inc_by(unknown);
            let started = Instant::now();
            for (day, _) in &committed {
                self.cap_wal(Some(*day));
            }
            self.cap_wal(None);
            observe(&self.timers.wal_cap, started);
        }
        Ok(inserted
            .into_iter()
            .zip(failed)
            .map(|(flags, failure)| match failure {
                Some(reason) => Err(WriteError::Unavailable(reason)),
                None => Ok(WriteOutcome { inserted: flags }),
            })
            .collect())
    }

    pub(super) fn partition(&mut self, day: Day) -> Result<&mut OpenPartition, DbError> {
        if !self.partitions.contains_key(&day) {
            let (conn, last_seq) = partitions::open_for_write(&self.config.data_dir, day)?;
            self.partitions.insert(day, OpenPartition { conn, last_seq, last_used: Instant::now() });
        }
        let partition = self.partitions.get_mut(&day).expect("inserted above");
        partition.last_used = Instant::now();
        Ok(partition)
    }

    pub(super) fn commit_partition(
        &mut self,
        day: Day,
        refs: &[(usize, usize)],
        requests: &[&WriteRequest],
        received_ms: i64,
    ) -> Result<(i64, Vec<bool>), DbError> {
        let (rows_seconds, commit_seconds) = (self.timers.partition_rows.clone(), self.timers.partition_commit.clone());
        // Per event: its join key when it may be the other source's report of a stored call
        // or request (an OTLP event, or any event of a session that sent OTLP, this group
        // included), and whether it is its session's first OTLP (record the keys stored before).
        let mut first_otlp: std::collections::HashSet<(&str, crate::model::AgentType, &str)> = Default::default();
        let joins: Vec<(super::join::Join, bool)> = refs
            .iter()
            .map(|(r, e)| {
                let (request, event) = (requests[*r], &requests[*r].events[*e]);
                let session = (request.user_id.as_str(), event.agent_type, event.session_id.as_str());
                let known = self.otlp_sessions.contains(&request.user_id, event) || first_otlp.contains(&session);
                let first = event.is_otlp() && !known;
                if first {
                    first_otlp.insert(session);
                }
                let key = if known || first { super::join::Join::of(event) } else { super::join::Join::None };
                (key, first)
            })
            .collect();
        let partition = match self.partition(day) {
            Ok(partition) => partition,
            Err(err) => {
                self.partitions.remove(&day);
                return Err(err);
            }
        };
        let seq = partition.last_seq + 1;
        let result = (|| {
            let started = Instant::now();
            let tx = partition.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut flags = Vec::with_capacity(refs.len());
            for ((r, e), (join_key, first_otlp)) in refs.iter().zip(&joins) {
                let request = requests[*r];
                let event = &request.events[*e];
                if *first_otlp {
                    partitions::record_session_join_keys(&tx, &request.user_id, event.agent_type, &event.session_id)?;
                }
                let user_id = &request.user_id;
                // Keys are kept, and twins looked for, only where both sources report: the
                // first report of the second source records the keys of the session's rows.
                let both = match join_key {
                    super::join::Join::None => false,
                    _ if event.is_otlp() => partitions::hook_reports(&tx, event, user_id)?,
                    _ => {
                        if !partitions::hook_reports(&tx, event, user_id)? {
                            partitions::record_session_join_keys(&tx, user_id, event.agent_type, &event.session_id)?;
                        }
                        true
                    }
                };
                let twin = match join_key {
                    _ if !both => None,
                    super::join::Join::None => None,
                    super::join::Join::Key(key) => partitions::other_report(&tx, event, user_id, key)?,
                    super::join::Join::Near(window_ms) => {
                        partitions::other_report_near(&tx, event, user_id, *window_ms)?
                    }
                };
                if let Some(stored) = twin {
                    if !event.is_otlp() {
                        partitions::fill_from(&tx, &stored, event)?;
                    }
                    if matches!(join_key, super::join::Join::Near(_)) {
                        partitions::mark_paired(&tx, event, user_id, &stored)?;
                    }
                    flags.push(false);
                    continue;
                }
                let inserted = partitions::insert_event(&tx, event, user_id, received_ms, seq)?;
                if inserted
                    && both
                    && let super::join::Join::Key(key) = join_key
                {
                    partitions::record_join_key(&tx, event, user_id, key)?;
                }
                if inserted && !event.is_otlp() && both {
                    let id = event.event_id.as_bytes();
                    partitions::mark_hook_reports(&tx, user_id, event.agent_type, &event.session_id, id)?;
                }
                flags.push(inserted);
            }
            partitions::set_last_seq(&tx, seq)?;
            observe(&rows_seconds, started);
            let started = Instant::now();
            tx.commit()?;
            observe(&commit_seconds, started);
            Ok::<_, DbError>(flags)
        })();
        match result {
            Ok(flags) => {
                partition.last_seq = seq;
                Ok((seq, flags))
            }
            Err(err) => {
                // The connection may be in an unknown state after an I/O error;
                // reopen on next use.
                self.partitions.remove(&day);
                Err(err)
            }
        }
    }

    /// Folds the stored events and records the commits in the ledger, in one
    /// main.db transaction; returns the fold's count of unknown-model events.
    pub(super) fn commit_main(
        &mut self,
        stored: &[Stored<'_>],
        joined: &[Joined<'_>],
        committed: &[(Day, i64)],
        otlp: &[(&str, &crate::model::wire::Event)],
    ) -> Result<u64, DbError> {
        let now_ms = self.config.clock.now_ms();
        let tx = self.main.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let unknown = fold_all(&self.folds, &tx, stored, joined, now_ms)?;
        for (user_id, event) in otlp {
            self.otlp_sessions.note(&tx, user_id, &[*event], now_ms)?;
        }
        for (day, seq) in committed {
            record_applied(&tx, *day, *seq)?;
        }
        let started = Instant::now();
        tx.commit()?;
        observe(&self.timers.main_commit, started);
        Ok(unknown)
    }
}

/// Applies each fold in turn, timing each; answers the sum of their unknown-model counts.
pub(super) fn fold_all(
    folds: &[TimedFold],
    main: &Connection,
    stored: &[Stored<'_>],
    joined: &[Joined<'_>],
    now_ms: i64,
) -> Result<u64, DbError> {
    let mut unknown = 0;
    for TimedFold { fold, seconds } in folds {
        let started = Instant::now();
        unknown += fold.fold(main, stored, joined, now_ms)?;
        observe(seconds, started);
    }
    Ok(unknown)
}
