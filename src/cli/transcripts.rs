//! Operator verbs for stored transcripts: `index-transcripts` (index what is new, or
//! `--rebuild` the whole index from the stored files) and `backfill-redaction`
//! (re-redact transcripts stored under older rules, then index them again). Both run
//! in-process against the data directory, beside a running server if there is one.

use std::time::{Duration, Instant};

use clap::Args;
use tantivy::{IndexWriter, TantivyDocument};

use super::{ConfigArgs, load_config};
use crate::app::serve::prepare_main_db;
use crate::config::Overrides;
use crate::db::{self, Checkpointing, Durability};
use crate::transcripts::index::{IndexError, TranscriptIndex};
use crate::transcripts::indexing::{self, BATCH_SESSIONS, DrainReport};

use crate::transcripts::{backfill, store};

#[derive(Debug, Args)]
pub struct IndexArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Drop every document and index all stored transcripts again.
    #[arg(long)]
    pub rebuild: bool,
}

/// How long to wait for another process (a server's indexer) to release the writer.
const WRITER_WAIT: Duration = Duration::from_secs(60);

/// Takes the index writer, waiting up to a minute for another process to release it.
pub(super) fn take_writer(index: &TranscriptIndex) -> Result<IndexWriter<TantivyDocument>, IndexError> {
    let started = Instant::now();
    loop {
        match index.writer(2, 200 << 20) {
            Err(IndexError::Busy(_)) if started.elapsed() < WRITER_WAIT => {
                std::thread::sleep(Duration::from_millis(500))
            }
            other => return other,
        }
    }
}

fn progress_bar(total: i64, what: &str) -> indicatif::ProgressBar {
    indicatif::ProgressBar::new(total.max(0) as u64).with_style(
        indicatif::ProgressStyle::with_template(&format!("{{bar:40}} {{pos}}/{{len}} {what}"))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    )
}

/// What one `index-transcripts` run did.
pub struct IndexRun {
    pub report: DrainReport,
    pub elapsed: Duration,
    pub index_bytes: u64,
}

/// Indexes what waits (everything, with `rebuild` or a new index): the work of
/// `index-transcripts`, also timed by `bench search`.
pub fn index_stored(
    conn: &rusqlite::Connection,
    data_dir: &std::path::Path,
    rebuild: bool,
    show_progress: bool,
) -> anyhow::Result<IndexRun> {
    let started = Instant::now();
    let opened = TranscriptIndex::open(data_dir)?;
    let index = opened.index;
    let mut writer = take_writer(&index)?;
    if rebuild || opened.fresh {
        writer.delete_all_documents()?;
        writer.commit()?;
        store::mark_all_unindexed(conn)?;
    }
    let bar = if show_progress {
        progress_bar(store::unindexed_count(conn)?, "transcripts indexed")
    } else {
        indicatif::ProgressBar::hidden()
    };
    let report = indexing::drain(
        &index,
        &mut writer,
        data_dir,
        || store::unindexed(conn, BATCH_SESSIONS),
        |indexed| {
            let tx = conn.unchecked_transaction()?;
            let now_ms = crate::clock::system_now_ms();
            for done in &indexed {
                store::mark_indexed(&tx, &done.session_id, &done.upload_sha256, done.message_count, now_ms)?;
            }
            Ok(tx.commit()?)
        },
        |done| bar.set_position(done as u64),
    )?;
    bar.finish_and_clear();
    writer.wait_merging_threads()?;
    Ok(IndexRun { report, elapsed: started.elapsed(), index_bytes: index.disk_bytes() })
}

fn print_index_run(run: &IndexRun) {
    let report = run.report;
    println!(
        "indexed {} transcripts ({} messages{}) in {:.1} s; the index takes {} bytes",
        report.sessions,
        report.messages,
        if report.unreadable > 0 { format!(", {} unreadable, see the log", report.unreadable) } else { String::new() },
        run.elapsed.as_secs_f64(),
        run.index_bytes
    );
}

fn open_main(config: &ConfigArgs) -> anyhow::Result<(rusqlite::Connection, crate::config::Config)> {
    let config = load_config(config, Overrides::default())?;
    crate::logging::init(&config.log);
    prepare_main_db(&config)?;
    let conn = db::open(&config.main_db_path(), Durability::PowerSafe, Checkpointing::Automatic)?;
    Ok((conn, config))
}

pub fn index_transcripts(args: &IndexArgs) -> anyhow::Result<i32> {
    let (conn, config) = open_main(&args.config)?;
    print_index_run(&index_stored(&conn, &config.data_dir, args.rebuild, true)?);
    Ok(0)
}

pub fn backfill_redaction(args: &ConfigArgs) -> anyhow::Result<i32> {
    let (conn, config) = open_main(args)?;
    let bar =
        progress_bar(store::redacted_before_count(&conn, crate::redact::RULES_VERSION)?, "transcripts redacted again");
    let report = backfill::reredact_all(&conn, &config.data_dir, |done| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    println!(
        "redacted {} transcripts again under rules version {} ({} changed)",
        report.transcripts,
        crate::redact::RULES_VERSION,
        report.changed
    );
    print_index_run(&index_stored(&conn, &config.data_dir, false, true)?);
    Ok(0)
}
