//! The transcript index from the command line (`index-transcripts`,
//! `backfill-redaction`, `delete-user`, `bench search`): taking the index writer from
//! a running server's indexer, and indexing what waits, with a progress bar.

use std::time::{Duration, Instant};

use tantivy::{IndexWriter, TantivyDocument};

use super::index::{IndexError, TranscriptIndex};
use super::indexing::{self, BATCH_SESSIONS, DrainReport};
use super::store;

/// How long to wait for another process (a server's indexer) to release the writer.
const WRITER_WAIT: Duration = Duration::from_secs(60);

/// Takes the index writer, waiting up to a minute for another process to release it.
pub fn take_writer(index: &TranscriptIndex) -> Result<IndexWriter<TantivyDocument>, IndexError> {
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

pub fn progress_bar(total: i64, what: &str) -> indicatif::ProgressBar {
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
            let now_ms = crate::clock::system_now_ms();
            crate::db::side_door::write(conn, |tx| {
                for done in &indexed {
                    store::mark_indexed(tx, done, now_ms)?;
                }
                Ok(())
            })
        },
        |done| bar.set_position(done as u64),
    )?;
    bar.finish_and_clear();
    writer.wait_merging_threads()?;
    Ok(IndexRun { report, elapsed: started.elapsed(), index_bytes: index.disk_bytes() })
}
