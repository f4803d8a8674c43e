//! Operator verbs for deletion requests: `run-deletions` (work through the open
//! requests now; the server does it every 6 hours) and `deletion request --user` /
//! `deletion list`. They run in-process against the data directory, beside a running
//! server if there is one.
//!
//! Invariants: the CLI's target writes `main.db` from its own connection in IMMEDIATE
//! transactions (waiting on the server writer's lock, never breaking it) and takes the
//! transcript index's one writer only when a transcript needs forgetting, waiting for
//! a running server's indexer to release it; it keeps it until the run ends (the
//! server's indexer retries meanwhile).

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use rusqlite::Connection;
use tantivy::{IndexWriter, TantivyDocument};

use super::ConfigArgs;
use crate::auth::users;
use crate::db::DbError;
use crate::deletion::runner::{self, DeletionTarget};
use crate::deletion::{self, DeletionRequest};
use crate::events::store::Rewrite;
use crate::events::writer::MainChange;
use crate::transcripts::index::TranscriptIndex;
use crate::transcripts::offline::take_writer;
use crate::transcripts::{indexing, store};

#[derive(Debug, Subcommand)]
pub enum DeletionCommand {
    /// Ask for a user's data to be deleted (idempotent: an open request is shown as it is).
    /// `run-deletions`, or the server within 6 hours, carries it out.
    Request {
        #[command(flatten)]
        config: ConfigArgs,
        /// The user's e-mail address.
        #[arg(long)]
        user: String,
    },
    /// List the deletion requests not yet completed.
    List {
        #[command(flatten)]
        config: ConfigArgs,
    },
}

fn open_main(config: &ConfigArgs) -> anyhow::Result<(Connection, PathBuf)> {
    let (conn, config) = super::open_main_with_logging(config)?;
    Ok((conn, config.data_dir))
}

/// The CLI's target: its own `main.db` connection and, once needed, the index writer.
pub struct CliTarget<'a> {
    conn: &'a Connection,
    data_dir: PathBuf,
    index: RefCell<Option<(TranscriptIndex, IndexWriter<TantivyDocument>)>>,
}

impl<'a> CliTarget<'a> {
    pub fn new(conn: &'a Connection, data_dir: &Path) -> Self {
        CliTarget { conn, data_dir: data_dir.to_path_buf(), index: RefCell::new(None) }
    }

    fn open_index(&self) -> anyhow::Result<(TranscriptIndex, IndexWriter<TantivyDocument>)> {
        let opened = TranscriptIndex::open(&self.data_dir)?;
        if opened.fresh {
            // An index made here is empty: queue every stored transcript, as a server
            // starting on it would, or the survivors' transcripts would stay unsearchable.
            store::mark_all_unindexed(self.conn)?;
        }
        let writer = take_writer(&opened.index)?;
        Ok((opened.index, writer))
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Releases the index writer once its merges are done (a merge is what drops the
    /// deleted documents from the segment files).
    pub fn close(self) -> anyhow::Result<()> {
        if let Some((_, writer)) = self.index.into_inner() {
            writer.wait_merging_threads()?;
        }
        Ok(())
    }
}

impl DeletionTarget for CliTarget<'_> {
    fn change_main(&self, change: MainChange) -> Result<(), DbError> {
        crate::db::side_door::write(self.conn, change)
    }

    fn forget_transcript(&self, session_id: &str) -> Result<(), String> {
        let mut slot = self.index.borrow_mut();
        if slot.is_none() {
            *slot = Some(self.open_index().map_err(|err| err.to_string())?);
        }
        let Some((index, writer)) = slot.as_mut() else { return Err("the transcript index is not open".into()) };
        indexing::forget(index, writer, &self.data_dir, session_id).map_err(|err| err.to_string())
    }

    /// Beside a running server, the writer may still hold the day open; a late event it
    /// writes there is past retention anyway, and the next sweep takes it.
    fn drop_partition(&self, rewrite: &Rewrite<'_>, day: crate::events::partitions::Day) -> Result<bool, DbError> {
        rewrite.drop_day(self.conn, day)
    }
}

pub fn run_deletions(args: &ConfigArgs) -> anyhow::Result<i32> {
    let (conn, data_dir) = open_main(args)?;
    let target = CliTarget::new(&conn, &data_dir);
    let store = crate::events::store::Store::at(&data_dir);
    let report = runner::run(&conn, &store.rewriting("sightline run-deletions")?, &target)?;
    target.close()?;
    println!(
        "completed {} deletion requests: {} sessions, {} events, {} transcripts removed",
        report.requests_completed, report.sessions_deleted, report.events_deleted, report.transcripts_removed
    );
    let open = deletion::open_requests(&conn)?;
    for request in &open {
        println!("still open: {} (user {})", request.id, request.user_id);
    }
    for (request, error) in &report.failed {
        eprintln!("request {request} stopped: {error}; run again to resume it");
    }
    Ok(if report.failed.is_empty() { 0 } else { 1 })
}

fn print_request(out: &mut impl Write, email: &str, request: &DeletionRequest) -> std::io::Result<()> {
    writeln!(
        out,
        "{}  {:<32}  {:<9}  requested {}  {} sessions, {} events deleted",
        request.id,
        email,
        request.status,
        crate::model::rfc3339_ms(request.requested_at_ms),
        request.sessions_deleted,
        request.events_deleted
    )
}

pub fn deletion(command: DeletionCommand) -> anyhow::Result<i32> {
    match command {
        DeletionCommand::Request { config, user } => {
            let (conn, _) = open_main(&config)?;
            let subject = users::by_email(&conn, &user)?;
            let request = crate::db::side_door::write(&conn, |tx| {
                deletion::request(tx, &subject.id, deletion::OPERATOR, crate::clock::system_now_ms())
            })?;
            print_request(&mut std::io::stdout().lock(), &subject.email, &request)?;
            Ok(0)
        }
        DeletionCommand::List { config } => {
            let (conn, _) = open_main(&config)?;
            let mut out = std::io::stdout().lock();
            for request in deletion::open_requests(&conn)? {
                let email = users::by_id(&conn, &request.user_id)?.map(|user| user.email).unwrap_or_default();
                print_request(&mut out, &email, &request)?;
            }
            Ok(0)
        }
    }
}
