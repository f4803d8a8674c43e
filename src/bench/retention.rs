//! `sightline bench retention`: the `sweep-retention` job over a year and more of day
//! partitions, generated into a work directory: how long the sweep takes, how many files
//! it removed whole and trimmed, and how many rows went.
//!
//! The organisation keeps 365 days; one team (a tenth of the developers) keeps 180, so
//! the sweep both removes whole files (days past 365) and deletes rows (the team's,
//! between 180 and 365 days old): the two paths a real sweep takes.

use std::time::Instant;

use clap::Args;
use rusqlite::Connection;

use crate::db::DbError;
use crate::deletion::retention;
use crate::deletion::runner::DeletionTarget;
use crate::events::partitions::{self, Day};
use crate::events::writer::MainChange;

#[derive(Debug, Clone, Args)]
pub struct RetentionArgs {
    /// Day partitions to generate, the newest yesterday.
    #[arg(long, default_value_t = 400)]
    pub days: i64,
    /// Events in each day.
    #[arg(long, default_value_t = 5_000)]
    pub events_per_day: usize,
    /// Work directory (default: a new temporary directory, removed afterwards).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
}

const DEVELOPERS: usize = 200;
const DAY_MS: i64 = 86_400_000;

/// The operator's target, on the work directory's own main.db (no server, no
/// transcripts: the benchmark stores none).
struct BenchTarget<'a> {
    main: &'a Connection,
}

impl DeletionTarget for BenchTarget<'_> {
    fn change_main(&self, change: MainChange) -> Result<(), DbError> {
        let tx = self.main.unchecked_transaction()?;
        change(&tx)?;
        Ok(tx.commit()?)
    }

    fn forget_transcript(&self, session_id: &str) -> Result<(), String> {
        Err(format!("the retention benchmark stores no transcripts, yet session {session_id} has one"))
    }

    fn drop_partition(&self, rewrite: &crate::events::store::Rewrite<'_>, day: Day) -> Result<bool, DbError> {
        rewrite.drop_day(self.main, day)
    }
}

pub fn run(args: &RetentionArgs) -> anyhow::Result<i32> {
    let temp = super::storage::tempdir_in(args.dir.as_deref())?;
    let data_dir = temp.as_path();
    let mut main = crate::db::open(
        &data_dir.join("main.db"),
        crate::db::Durability::PowerSafe,
        crate::db::Checkpointing::Automatic,
    )?;
    crate::db::migrations::migrate(&mut main, &data_dir.join("main.db"))?;
    main.execute_batch(
        "INSERT INTO teams (id, slug, name, retention_days, created_at_ms) VALUES ('team-brief', 'brief', 'Brief', 180, 0);",
    )?;
    for developer in (0..DEVELOPERS).step_by(10) {
        let user = format!("user-{developer:03}");
        main.execute(
            "INSERT INTO users (id, email, name, org_role, created_at_ms) VALUES (?1, ?1 || '@example.com', ?1, 'MEMBER', 0)",
            [&user],
        )?;
        main.execute("INSERT INTO team_members (team_id, user_id, added_at_ms) VALUES ('team-brief', ?1, 0)", [&user])?;
    }
    let now_ms = crate::clock::system_now_ms();
    let started = Instant::now();
    for back in 1..=args.days {
        let day = Day::of_ms(now_ms - back * DAY_MS);
        let (mut conn, _) = partitions::open_for_write(data_dir, day)?;
        let tx = conn.transaction()?;
        for i in 0..args.events_per_day {
            let developer = (i / 25) % DEVELOPERS;
            let event = super::storage_events::realistic_event(day, i, developer);
            partitions::insert_event(&tx, &event, &format!("user-{developer:03}"), event.ts_ms + 2000, 1)?;
        }
        partitions::set_last_seq(&tx, 1)?;
        tx.commit()?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    let total = args.days as usize * args.events_per_day;
    println!("generated {} day partitions, {total} events, in {:.1} s", args.days, started.elapsed().as_secs_f64());

    let target = BenchTarget { main: &main };
    let store = crate::events::store::Store::at(data_dir);
    let started = Instant::now();
    let report = retention::sweep(&main, &store.rewriting("bench retention")?, &target, 365)?;
    let took = started.elapsed();
    let left: i64 = partitions::list_days(data_dir)?
        .into_iter()
        .filter_map(|day| partitions::open_for_read(data_dir, day).ok().flatten())
        .map(|conn| partitions::count_events(&conn).unwrap_or(0))
        .sum();
    println!(
        "sweep-retention (365 days; a team of {} developers at 180): {:.2} s; {} files removed whole, {} trimmed, {} events deleted, {left} kept",
        DEVELOPERS / 10,
        took.as_secs_f64(),
        report.partitions_dropped,
        report.partitions_trimmed,
        report.events_deleted,
    );
    Ok(if left + report.events_deleted as i64 == total as i64 { 0 } else { 1 })
}
