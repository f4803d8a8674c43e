//! The event writer: one thread that owns every write connection to the event
//! partitions and the session tables of `main.db`, and commits concurrent ingest
//! batches together (group commit).
//!
//! Invariants:
//! - A caller is answered only after COMMIT of both the partition(s) and main.db
//!   (`synchronous=FULL`): an `Ok` means the data survives power loss.
//! - Order per group: each touched partition commits its rows under a new commit
//!   sequence, then main.db applies the [`CommitFold`]s (handed in at start-up) to the
//!   newly inserted rows and records that sequence in `event_partitions.applied_seq`, in
//!   one transaction (`commit.rs`). SQLite commits of two files are not atomic together,
//!   so after a crash (or a failed main.db commit) the ledger (`ledger.rs`) folds every
//!   commit above `applied_seq` before any new write: each stored event is counted
//!   exactly once.
//! - The WAL never checkpoints inside a commit (the background checkpointer does);
//!   past the hard cap the writer truncates it itself, so it cannot grow unbounded.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};
use tokio::sync::{mpsc, oneshot};

mod commit;
mod fold;
mod join;
mod ledger;
mod wal;

pub use fold::{CommitFold, Joined, Stored};
pub use join::forget_person as forget_otlp_sessions;

use crate::db::{Checkpointing, DbError, Durability};
use crate::events::partitions::{self, Day};
use crate::metrics::Metrics;
use crate::model::wire::{ClientInfo, Event};

/// One ingest batch for one user, already validated, priced and redacted.
#[derive(Debug)]
pub struct WriteRequest {
    pub user_id: String,
    pub client: ClientInfo,
    pub events: Vec<Event>,
    /// Per event: whether the price table knew its model.
    pub known_models: Vec<bool>,
    /// Per event: the secrets its metadata had redacted, by rule (empty when none).
    pub redactions: Vec<crate::redact::Hits>,
}

/// Per event of the request: true if newly stored, false if it was a duplicate.
#[derive(Debug)]
pub struct WriteOutcome {
    pub inserted: Vec<bool>,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    #[error("the writer is shutting down")]
    ShuttingDown,
}

#[derive(Clone, Debug)]
pub struct WriterConfig {
    pub data_dir: PathBuf,
    /// Stop adding batches to a group past this many events.
    pub max_group_events: usize,
    /// WAL size past which the writer checkpoints (TRUNCATE) itself.
    pub wal_hard_cap_bytes: u64,
    /// Queued requests before `write` waits (back-pressure).
    pub queue_capacity: usize,
    /// "Now" for receipt times and session updates (the server's clock).
    pub clock: crate::clock::Clock,
}

/// A change to `main.db` outside event ingest (a transcript pointer, a deletion), run on
/// the writer's connection in a transaction of its own.
pub type MainChange = Box<dyn FnOnce(&rusqlite::Transaction<'_>) -> Result<(), DbError> + Send>;

enum Job {
    Write(WriteRequest, oneshot::Sender<Result<WriteOutcome, WriteError>>),
    Main(MainChange, oneshot::Sender<Result<(), WriteError>>),
    /// Close the day's partition and remove its file (retention).
    DropPartition(Day, oneshot::Sender<Result<bool, WriteError>>),
    Shutdown(oneshot::Sender<()>),
}

/// Handle to the writer thread. Clones share the one thread (the transcript indexer
/// keeps one to record what it indexed).
#[derive(Clone)]
pub struct EventWriter {
    sender: mpsc::Sender<Job>,
    queue_depth: Arc<AtomicI64>,
}

impl EventWriter {
    /// Starts the writer thread, first folding any commits a crash left unapplied.
    /// Returns once the writer is ready or failed to start.
    pub fn start(
        config: WriterConfig,
        folds: Vec<Arc<dyn CommitFold>>,
        metrics: Arc<Metrics>,
    ) -> Result<EventWriter, DbError> {
        let (sender, receiver) = mpsc::channel(config.queue_capacity.max(1));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let queue_depth = Arc::new(AtomicI64::new(0));
        let depth = queue_depth.clone();
        metrics.watch_queue_depth(queue_depth.clone(), config.queue_capacity.max(1));
        std::thread::Builder::new()
            .name("event-writer".into())
            .spawn(move || {
                let mut state = match WriterState::open(config, folds, metrics, depth) {
                    Ok(state) => state,
                    Err(err) => {
                        let _ = ready_tx.send(Err(err));
                        return;
                    }
                };
                if let Err(err) = state.reconcile_all() {
                    let _ = ready_tx.send(Err(err));
                    return;
                }
                let _ = ready_tx.send(Ok(()));
                state.run(receiver);
            })
            .map_err(|source| DbError::Io { context: "cannot start the writer thread".into(), source })?;
        ready_rx.recv().map_err(|_| DbError::Io {
            context: "writer thread died at start".into(),
            source: std::io::Error::other("no reply"),
        })??;
        Ok(EventWriter { sender, queue_depth })
    }

    /// Queues a batch and waits for its commit.
    pub async fn write(&self, request: WriteRequest) -> Result<WriteOutcome, WriteError> {
        let (reply, answer) = oneshot::channel();
        self.queue_depth.fetch_add(1, Ordering::Relaxed);
        if self.sender.send(Job::Write(request, reply)).await.is_err() {
            self.queue_depth.fetch_sub(1, Ordering::Relaxed);
            return Err(WriteError::ShuttingDown);
        }
        answer.await.unwrap_or(Err(WriteError::ShuttingDown))
    }

    /// Runs `change` in its own `main.db` transaction on the writer thread (the one
    /// writer of that file) and waits for its commit.
    pub async fn change_main(&self, change: MainChange) -> Result<(), WriteError> {
        let (reply, answer) = oneshot::channel();
        if self.sender.send(Job::Main(change, reply)).await.is_err() {
            return Err(WriteError::ShuttingDown);
        }
        answer.await.unwrap_or(Err(WriteError::ShuttingDown))
    }

    /// Runs `work` in its own `main.db` transaction on the writer thread and returns
    /// its value once committed. A value the closure returns is only seen if the
    /// transaction committed (an access decision and its audit row stand or fall together).
    pub async fn transact<T, F>(&self, work: F) -> Result<T, WriteError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Transaction<'_>) -> Result<T, DbError> + Send + 'static,
    {
        let (value_tx, value_rx) = oneshot::channel();
        self.change_main(Box::new(move |tx| {
            let value = work(tx)?;
            let _ = value_tx.send(value);
            Ok(())
        }))
        .await?;
        value_rx.await.map_err(|_| WriteError::Unavailable("the transaction returned nothing".into()))
    }

    /// [`EventWriter::change_main`] for a plain thread (the transcript indexer) that has
    /// no runtime to await on. Must not be called from inside the async runtime.
    pub fn change_main_blocking(&self, change: MainChange) -> Result<(), WriteError> {
        let (reply, answer) = oneshot::channel();
        if self.sender.blocking_send(Job::Main(change, reply)).is_err() {
            return Err(WriteError::ShuttingDown);
        }
        answer.blocking_recv().unwrap_or(Err(WriteError::ShuttingDown))
    }

    /// Closes a day's partition if it is open and removes its file and ledger entry
    /// (`sweep-retention`); answers whether there was a file. Blocking, like
    /// [`EventWriter::change_main_blocking`]. Only a holder of the store's rewrite lock
    /// may ask (`events::store`): the writer does it on the holder's behalf.
    pub fn drop_partition_blocking(&self, _rewrite: &super::store::Rewrite<'_>, day: Day) -> Result<bool, WriteError> {
        let (reply, answer) = oneshot::channel();
        if self.sender.blocking_send(Job::DropPartition(day, reply)).is_err() {
            return Err(WriteError::ShuttingDown);
        }
        answer.blocking_recv().unwrap_or(Err(WriteError::ShuttingDown))
    }

    /// Commits everything queued, checkpoints, and stops the thread.
    pub async fn shutdown(&self) {
        let (done, wait) = oneshot::channel();
        if self.sender.send(Job::Shutdown(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    pub fn queue_depth(&self) -> i64 {
        self.queue_depth.load(Ordering::Relaxed)
    }
}

struct OpenPartition {
    conn: Connection,
    last_seq: i64,
    last_used: Instant,
}

struct WriterState {
    config: WriterConfig,
    main: Connection,
    partitions: HashMap<Day, OpenPartition>,
    needs_reconcile: bool,
    /// Applied in turn to each commit (the sessions fold first: the others build on it).
    folds: Vec<commit::TimedFold>,
    timers: commit::StepTimers,
    metrics: Arc<Metrics>,
    queue_depth: Arc<AtomicI64>,
    /// When the writer may next try to truncate a WAL past its cap (`wal.rs`): a try
    /// that a long reader defeated is not repeated on every commit.
    next_cap_try: Instant,
    /// Sessions that sent OTLP lately: their hook events are joined with OTLP's (`join.rs`).
    otlp_sessions: join::OtlpSessions,
}

/// Partitions idle this long are closed (late events reopen them).
const PARTITION_IDLE: Duration = Duration::from_secs(600);

impl WriterState {
    fn open(
        config: WriterConfig,
        folds: Vec<Arc<dyn CommitFold>>,
        metrics: Arc<Metrics>,
        queue_depth: Arc<AtomicI64>,
    ) -> Result<Self, DbError> {
        let main = crate::db::open(&config.data_dir.join("main.db"), Durability::PowerSafe, Checkpointing::Background)?;
        let otlp_sessions = join::OtlpSessions::load(&main, config.clock.now_ms())?;
        Ok(WriterState {
            config,
            main,
            partitions: HashMap::new(),
            needs_reconcile: false,
            folds: folds.into_iter().map(|fold| commit::TimedFold::new(fold, &metrics)).collect(),
            timers: commit::StepTimers::new(&metrics),
            metrics,
            queue_depth,
            next_cap_try: Instant::now(),
            otlp_sessions,
        })
    }

    fn run(&mut self, mut receiver: mpsc::Receiver<Job>) {
        while let Some(job) = receiver.blocking_recv() {
            let mut group = Vec::new();
            let mut shutdown = None;
            let mut events = 0;
            match job {
                Job::Write(request, reply) => {
                    events += request.events.len();
                    group.push((request, reply));
                }
                Job::Main(change, reply) => {
                    let _ = reply.send(self.change_main(change));
                    continue;
                }
                Job::DropPartition(day, reply) => {
                    let _ = reply.send(self.drop_partition(day));
                    continue;
                }
                Job::Shutdown(done) => shutdown = Some(done),
            }
            while shutdown.is_none() && events < self.config.max_group_events {
                match receiver.try_recv() {
                    Ok(Job::Write(request, reply)) => {
                        events += request.events.len();
                        group.push((request, reply));
                    }
                    Ok(Job::Main(change, reply)) => {
                        let _ = reply.send(self.change_main(change));
                    }
                    Ok(Job::DropPartition(day, reply)) => {
                        let _ = reply.send(self.drop_partition(day));
                    }
                    Ok(Job::Shutdown(done)) => shutdown = Some(done),
                    Err(_) => break,
                }
            }
            self.queue_depth.fetch_sub(group.len() as i64, Ordering::Relaxed);
            if !group.is_empty() {
                self.commit_group(group);
            }
            if let Some(done) = shutdown {
                // Requests still queued behind the shutdown are committed too.
                receiver.close();
                while let Ok(job) = receiver.try_recv() {
                    match job {
                        Job::Write(request, reply) => {
                            self.queue_depth.fetch_sub(1, Ordering::Relaxed);
                            self.commit_group(vec![(request, reply)]);
                        }
                        Job::Main(change, reply) => {
                            let _ = reply.send(self.change_main(change));
                        }
                        Job::DropPartition(day, reply) => {
                            let _ = reply.send(self.drop_partition(day));
                        }
                        Job::Shutdown(_) => {}
                    }
                }
                self.checkpoint_all();
                let _ = done.send(());
                return;
            }
            self.close_idle_partitions();
        }
        self.checkpoint_all();
    }

    fn change_main(&mut self, change: MainChange) -> Result<(), WriteError> {
        let result = (|| {
            let tx = self.main.transaction_with_behavior(TransactionBehavior::Immediate)?;
            change(&tx)?;
            tx.commit()?;
            Ok::<_, DbError>(())
        })();
        // A stream of changes without events (a webhook flood) grows main.db's WAL as
        // ingest does: readers come and go all the time, so a passive checkpoint never
        // lets it start over, and only the cap shrinks it.
        self.cap_wal(None);
        result.map_err(|err| WriteError::Unavailable(err.to_string()))
    }

    fn drop_partition(&mut self, day: Day) -> Result<bool, WriteError> {
        self.partitions.remove(&day);
        partitions::remove(&self.config.data_dir, &self.main, day)
            .map_err(|err| WriteError::Unavailable(err.to_string()))
    }

    fn close_idle_partitions(&mut self) {
        self.partitions.retain(|_, partition| partition.last_used.elapsed() < PARTITION_IDLE);
    }
}

pub use wal::wal_path_of;
