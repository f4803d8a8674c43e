//! `sightline bench compaction` and `bench redact`: storage and CPU measurements
//! that need no running server.

use std::time::Instant;

use clap::Args;

use crate::events::partitions::{self, Day};
use crate::events::writer::wal_path_of;

#[derive(Debug, Clone, Args)]
pub struct CompactionArgs {
    /// Events to generate into one partition.
    #[arg(long, default_value_t = 200_000)]
    pub events: usize,
    /// Work directory (default: a new temporary directory, removed afterwards).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct RedactArgs {
    /// Input size in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub bytes: usize,
    /// Repetitions; the report gives the median and the slowest.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
}

pub fn compaction(args: &CompactionArgs) -> anyhow::Result<i32> {
    let temp = tempdir_in(args.dir.as_deref())?;
    let data_dir = temp.as_path();
    let day = Day::of_ms(crate::clock::system_now_ms() - 10 * 86_400_000);
    let (mut conn, _) = partitions::open_for_write(data_dir, day)?;
    let started = Instant::now();
    let tx = conn.transaction()?;
    let mut developer = 0usize;
    for i in 0..args.events {
        if i % 500 == 0 {
            developer = fastrand::usize(..200);
        }
        let event = super::storage_events::realistic_event(day, i, developer);
        partitions::insert_event(&tx, &event, &format!("user-{developer:03}"), event.ts_ms + 2000, 1)?;
    }
    partitions::set_last_seq(&tx, 1)?;
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    drop(conn);
    let generated = started.elapsed();
    let store = crate::events::store::Store::at(data_dir);
    let report = store.rewriting("bench storage")?.compact(day, crate::clock::system_now_ms())?;
    let check = partitions::open_for_read(data_dir, day)?.ok_or_else(|| anyhow::anyhow!("partition vanished"))?;
    let readable = partitions::events_after_seq(&check, 0)?.len();
    let wal = std::fs::metadata(wal_path_of(&partitions::partition_path(data_dir, day))).map(|m| m.len()).unwrap_or(0);
    println!("generated {} events in {:.1} s", args.events, generated.as_secs_f64());
    println!(
        "partition file: {} -> {} bytes ({:.2}x); metadata column: {} -> {} bytes ({:.2}x); dictionary: {}",
        report.file_bytes_before,
        report.file_bytes_after,
        report.file_ratio(),
        report.metadata_bytes_before,
        report.metadata_bytes_after,
        report.metadata_ratio(),
        report.used_dictionary
    );
    println!(
        "bytes per event: {:.0} -> {:.0}; rows readable after compaction: {readable}; WAL left: {wal} bytes",
        report.file_bytes_before as f64 / args.events as f64,
        report.file_bytes_after as f64 / args.events as f64
    );
    Ok(if readable == args.events { 0 } else { 1 })
}

pub fn redact(args: &RedactArgs) -> anyhow::Result<i32> {
    let input = crate::redact::adversarial_input(args.bytes);
    let mut times = Vec::with_capacity(args.runs);
    let mut changed = 0;
    for _ in 0..args.runs.max(1) {
        let started = Instant::now();
        let out = crate::redact::redact_text(&input);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        changed = input.len() as i64 - out.len() as i64;
    }
    times.sort_by(f64::total_cmp);
    println!(
        "redact_text on {} bytes of adversarial input: median {:.1} ms, slowest {:.1} ms over {} runs (output shorter by {changed} bytes)",
        input.len(),
        times[times.len() / 2],
        times[times.len() - 1],
        times.len()
    );
    Ok(0)
}

/// A work directory that is removed on drop unless the caller named one.
pub struct WorkDir {
    path: std::path::PathBuf,
    remove: bool,
}

impl WorkDir {
    pub fn as_path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

pub(super) fn tempdir_in(dir: Option<&std::path::Path>) -> anyhow::Result<WorkDir> {
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            Ok(WorkDir { path: dir.to_path_buf(), remove: false })
        }
        None => {
            let path = std::env::temp_dir().join(format!("sightline-bench-{}", uuid::Uuid::new_v4().simple()));
            std::fs::create_dir_all(&path)?;
            Ok(WorkDir { path, remove: true })
        }
    }
}
