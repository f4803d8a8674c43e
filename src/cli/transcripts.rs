//! Operator verbs for stored transcripts: `index-transcripts` (index what is new, or
//! `--rebuild` the whole index from the stored files) and `backfill-redaction`
//! (re-redact stored event metadata and transcripts under older rules, then index the
//! transcripts again). Both run
//! in-process against the data directory, beside a running server if there is one.

use clap::Args;

use super::ConfigArgs;
use crate::events::reredact;
use crate::transcripts::offline::{IndexRun, index_stored, progress_bar};
use crate::transcripts::{backfill, store};

#[derive(Debug, Args)]
pub struct IndexArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Drop every document and index all stored transcripts again.
    #[arg(long)]
    pub rebuild: bool,
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

pub fn index_transcripts(args: &IndexArgs) -> anyhow::Result<i32> {
    let (conn, config) = super::open_main_with_logging(&args.config)?;
    print_index_run(&index_stored(&conn, &config.data_dir, args.rebuild, true)?);
    Ok(0)
}

pub fn backfill_redaction(args: &ConfigArgs) -> anyhow::Result<i32> {
    let (conn, config) = super::open_main_with_logging(args)?;
    let started = std::time::Instant::now();
    let bar =
        progress_bar(reredact::partitions_behind(&config.data_dir, &conn)? as i64, "event partitions redacted again");
    let store = crate::events::store::Store::at(&config.data_dir);
    let events = store.rewriting("sightline backfill-redaction")?.reredact_all(
        &conn,
        crate::clock::system_now_ms(),
        |done| bar.set_position(done.partitions),
    )?;
    bar.finish_and_clear();
    println!(
        "redacted the events of {} partitions again under rules version {} in {:.1} s ({} of {} rows changed)",
        events.partitions,
        crate::redact::RULES_VERSION,
        started.elapsed().as_secs_f64(),
        events.rows_changed,
        events.rows_read
    );
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
