//! The server's indexer: one thread that owns every use of the index writer, fed by a
//! queue. An upload that completes sends [`Work::Drain`], so its transcript is searchable
//! seconds later; the thread also drains at start. The job scheduler asks for a drain
//! every few minutes (which catches anything a notification missed) and runs the
//! `index-transcripts` job through [`Indexer::drain_now`], which answers how many
//! sessions it indexed.
//!
//! Invariants: the writer is taken per piece of work and released when the queue is
//! empty, so `sightline index-transcripts` can run beside a server; when another process
//! holds it, the work is retried, never dropped. Rows are marked indexed through the
//! main.db writer (the one writer of that file).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

use super::{IndexError, TranscriptIndex};
use crate::db::{DbError, MainPool};
use crate::events::writer::EventWriter;
use crate::transcripts::indexing::{self, BATCH_SESSIONS};
use crate::transcripts::store;

/// How long to wait before trying again when another process holds the index writer.
const BUSY_RETRY: Duration = Duration::from_secs(2);

enum Work {
    /// Index every stored transcript waiting for it.
    Drain,
    /// Index every stored transcript waiting for it, then answer how many sessions.
    DrainAndAnswer(oneshot::Sender<Result<usize, String>>),
    /// Remove a session's documents and file, then answer.
    Forget(String, oneshot::Sender<Result<(), String>>),
    Stop,
}

/// Handle to the indexer thread.
#[derive(Clone)]
pub struct Indexer {
    sender: Sender<Work>,
    /// Set at shutdown: a drain in progress stops after its current batch.
    stopping: Arc<AtomicBool>,
}

impl Indexer {
    /// Starts the indexer thread. With `fresh` (the index was just created), every
    /// stored transcript is queued for indexing first.
    pub fn start(
        index: Arc<TranscriptIndex>,
        data_dir: PathBuf,
        readers: MainPool,
        writer: EventWriter,
        clock: crate::clock::Clock,
        fresh: bool,
    ) -> Result<(Indexer, JoinHandle<()>), DbError> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let stopping = Arc::new(AtomicBool::new(false));
        let worker = Worker { index, data_dir, readers, writer, clock, stopping: stopping.clone() };
        let thread = std::thread::Builder::new()
            .name("transcript-indexer".into())
            .spawn(move || worker.run(receiver, fresh))
            .map_err(|source| DbError::Io { context: "cannot start the transcript indexer".into(), source })?;
        Ok((Indexer { sender, stopping }, thread))
    }

    /// Asks for the transcripts waiting for the index to be indexed now.
    pub fn notify(&self) {
        let _ = self.sender.send(Work::Drain);
    }

    /// Indexes every stored transcript waiting for it now, and answers how many
    /// sessions it indexed (the `index-transcripts` job in the server).
    pub async fn drain_now(&self) -> Result<usize, String> {
        let (reply, answer) = oneshot::channel();
        self.sender.send(Work::DrainAndAnswer(reply)).map_err(|_| "the indexer has stopped")?;
        answer.await.map_err(|_| "the indexer has stopped".to_string())?
    }

    /// Removes a session's index documents and stored transcript (the privacy runner's
    /// deletion hook), and waits until both are gone.
    pub async fn forget(&self, session_id: &str) -> Result<(), String> {
        let (reply, answer) = oneshot::channel();
        self.sender.send(Work::Forget(session_id.to_string(), reply)).map_err(|_| "the indexer has stopped")?;
        answer.await.map_err(|_| "the indexer has stopped".to_string())?
    }

    /// Stops the thread after the batch it is indexing (what is left waits for the next
    /// start, still marked unindexed).
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = self.sender.send(Work::Stop);
    }
}

struct Worker {
    index: Arc<TranscriptIndex>,
    data_dir: PathBuf,
    readers: MainPool,
    writer: EventWriter,
    clock: crate::clock::Clock,
    stopping: Arc<AtomicBool>,
}

impl Worker {
    fn run(self, receiver: Receiver<Work>, fresh: bool) {
        if fresh {
            let requeued = self.writer.change_main_blocking(Box::new(|tx| store::mark_all_unindexed(tx).map(|_| ())));
            if let Err(err) = requeued {
                tracing::error!(error = %err, "cannot queue stored transcripts for the new index");
            }
        }
        let mut drain_due = true;
        let mut forgets = Vec::new();
        let mut answers: Vec<oneshot::Sender<Result<usize, String>>> = Vec::new();
        loop {
            if drain_due || !forgets.is_empty() {
                match self.work(drain_due, &mut forgets) {
                    Ok(sessions) => {
                        drain_due = false;
                        answers.drain(..).for_each(|answer| drop(answer.send(Ok(sessions))));
                    }
                    Err(IndexError::Busy(_)) => std::thread::sleep(BUSY_RETRY),
                    Err(err) => {
                        tracing::error!(error = %err, "transcript indexing failed; retrying later");
                        drain_due = false;
                        answers.drain(..).for_each(|answer| drop(answer.send(Err(err.to_string()))));
                    }
                }
            }
            let first = if drain_due || !forgets.is_empty() {
                match receiver.try_recv() {
                    Ok(work) => work,
                    Err(_) => continue,
                }
            } else {
                match receiver.recv() {
                    Ok(work) => work,
                    Err(_) => return,
                }
            };
            for work in std::iter::once(first).chain(receiver.try_iter()) {
                match work {
                    Work::Drain => drain_due = true,
                    Work::DrainAndAnswer(answer) => {
                        drain_due = true;
                        answers.push(answer);
                    }
                    Work::Forget(session, reply) => forgets.push((session, reply)),
                    Work::Stop => return,
                }
            }
        }
    }

    /// Takes the writer, does the queued forgets and (if due) a drain, releases it;
    /// answers how many sessions it indexed.
    fn work(
        &self,
        drain: bool,
        forgets: &mut Vec<(String, oneshot::Sender<Result<(), String>>)>,
    ) -> Result<usize, IndexError> {
        // Taking the writer starts Tantivy's indexing threads and arena; most periodic
        // drains find nothing waiting, so look first.
        let waiting = drain && store::unindexed_count(&*self.readers.get().map_err(DbError::from)?)? > 0;
        if forgets.is_empty() && !waiting {
            return Ok(0);
        }
        let mut sessions = 0;
        let mut writer = self.index.writer(1, 50 << 20)?;
        for (session, reply) in forgets.drain(..) {
            let done = indexing::forget(&self.index, &mut writer, &self.data_dir, &session);
            let _ = reply.send(done.map_err(|err| err.to_string()));
        }
        if waiting {
            let report = indexing::drain(
                &self.index,
                &mut writer,
                &self.data_dir,
                || {
                    if self.stopping.load(Ordering::SeqCst) {
                        return Ok(Vec::new());
                    }
                    store::unindexed(&*self.readers.get()?, BATCH_SESSIONS)
                },
                |indexed| {
                    let now_ms = self.clock.now_ms();
                    self.writer
                        .change_main_blocking(Box::new(move |tx| {
                            indexed.iter().try_for_each(|done| store::mark_indexed(tx, done, now_ms))
                        }))
                        .map_err(|err| DbError::Io {
                            context: "cannot record indexed transcripts".into(),
                            source: std::io::Error::other(err.to_string()),
                        })
                },
                |_| {},
            )?;
            sessions = report.sessions;
            if report.sessions > 0 {
                tracing::info!(sessions = report.sessions, messages = report.messages, "indexed transcripts");
            }
        }
        // Tantivy's arena and the parsed messages are freed with the writer; give the
        // pages back rather than keep the peak of the largest transcript for good.
        drop(writer);
        crate::memory::return_freed_memory();
        Ok(sessions)
    }
}
