//! `sightline bench reprice`: `reprice-events` and `reprice-events-apply` over generated
//! history (docs/cost.md: the apply's target is under 30 minutes). Events are generated into
//! day partitions and priced with the embedded tables, with their sessions in main.db;
//! then an operator's table raises Sonnet 4.5's input and output prices, so every priced
//! turn of the history differs. Reports the report's and the apply's durations and rows
//! per second, and checks that the sessions' totals still equal their events' costs.

use std::collections::HashMap;
use std::time::Instant;

use clap::Args;

use crate::events::partitions::{self, Day};
use crate::events::writer::MainChange;
use crate::pricing::PriceBook;
use crate::sessions::reprice;

#[derive(Debug, Clone, Args)]
pub struct RepriceArgs {
    /// Events to generate (about one in ten is a priced turn).
    #[arg(long, default_value_t = 1_000_000)]
    pub events: usize,
    /// Days they span.
    #[arg(long, default_value_t = 30)]
    pub days: usize,
    /// Work directory (default: a new temporary directory, removed afterwards).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
}

const DEVELOPERS: usize = 200;
const DAY_MS: i64 = 86_400_000;
/// Sonnet 4.5 in the embedded table, and in the operator's.
const SONNET_EMBEDDED: &str = r#""prices": {"input": "3", "output": "15", "cache_read": "0.30""#;
const SONNET_OPERATOR: &str = r#""prices": {"input": "4", "output": "20", "cache_read": "0.30""#;

pub fn run(args: &RepriceArgs) -> anyhow::Result<i32> {
    let temp = super::storage::tempdir_in(args.dir.as_deref())?;
    let data_dir = temp.as_path();
    let main_path = data_dir.join("main.db");
    let mut main = crate::db::open(&main_path, crate::db::Durability::PowerSafe, crate::db::Checkpointing::Automatic)?;
    crate::db::migrations::migrate(&mut main, &main_path)?;
    let embedded = PriceBook::embedded()?;
    let started = Instant::now();
    let per_day = args.events.div_ceil(args.days.max(1));
    let now_ms = crate::clock::system_now_ms();
    let mut sessions: HashMap<(String, String), i64> = HashMap::new();
    for back in 1..=args.days as i64 {
        let day = Day::of_ms(now_ms - back * DAY_MS);
        let (mut conn, _) = partitions::open_for_write(data_dir, day)?;
        let tx = conn.transaction()?;
        for i in 0..per_day {
            let developer = (i / 25) % DEVELOPERS;
            let mut event = super::storage_events::realistic_event(day, i, developer);
            event.cost_nusd = embedded.price(event.agent_type, event.model.as_deref(), &event.usage).cost_nusd;
            let user = format!("user-{developer:03}");
            *sessions.entry((user.clone(), format!("{day}-{}", event.session_id))).or_default() += event.cost_nusd;
            event.session_id = format!("{day}-{}", event.session_id);
            partitions::insert_event(&tx, &event, &user, event.ts_ms + 2000, 1)?;
        }
        partitions::set_last_seq(&tx, 1)?;
        tx.commit()?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    let tx = main.transaction()?;
    for developer in 0..DEVELOPERS {
        tx.execute(
            "INSERT INTO users (id, email, name, org_role, created_at_ms) VALUES (?1, ?1 || '@example.com', ?1, 'MEMBER', 0)",
            [format!("user-{developer:03}")],
        )?;
    }
    for ((user, session), cost) in &sessions {
        tx.execute(
            "INSERT INTO sessions (id, user_id, agent_type, agent_session_id, first_event_ms, last_event_ms, cost_nusd)
             VALUES (?1, ?2, 'claude_code', ?3, 0, 0, ?4)",
            rusqlite::params![uuid::Uuid::now_v7().to_string(), user, session, cost],
        )?;
    }
    tx.commit()?;
    let total = per_day * args.days;
    println!(
        "generated {total} events in {} day partitions and {} sessions in {:.1} s",
        args.days,
        sessions.len(),
        started.elapsed().as_secs_f64()
    );

    let table = crate::pricing::embedded_table_json(crate::model::AgentType::ClaudeCode);
    let (head, sonnet_4_5) =
        table.split_once(r#""id": "claude-sonnet-4-5""#).ok_or_else(|| anyhow::anyhow!("no claude-sonnet-4-5"))?;
    let operator =
        format!("{head}\"id\": \"claude-sonnet-4-5\"{}", sonnet_4_5.replacen(SONNET_EMBEDDED, SONNET_OPERATOR, 1));
    std::fs::create_dir_all(crate::pricing::overrides_dir(data_dir))?;
    std::fs::write(crate::pricing::overrides_dir(data_dir).join("price-table.claude_code.v1.json"), operator)?;
    let book = PriceBook::load(data_dir)?;

    let started = Instant::now();
    let report = reprice::report(data_dir, &book)?;
    let report_secs = started.elapsed().as_secs_f64();
    println!(
        "reprice-events: {:.1} s ({:.0} events/s); {} of them would change",
        report_secs,
        total as f64 / report_secs,
        report.changed()
    );
    let change_main = |change: MainChange| {
        let tx = main.unchecked_transaction()?;
        change(&tx)?;
        Ok(tx.commit()?)
    };
    let started = Instant::now();
    let store = crate::events::store::Store::at(data_dir);
    let rewrite = store.rewriting("bench reprice")?;
    let applied =
        reprice::apply(&rewrite, &main, &book, &change_main, crate::analytics::partials::force_rebuild, now_ms)?;
    let apply_secs = started.elapsed().as_secs_f64();
    println!(
        "reprice-events-apply: {:.1} s ({:.0} events/s scanned, {:.0} rows/s rewritten); {} rows rewritten",
        apply_secs,
        total as f64 / apply_secs,
        applied.rows_rewritten as f64 / apply_secs,
        applied.rows_rewritten
    );
    let sessions_total: i64 = main.query_row("SELECT sum(cost_nusd) FROM sessions", [], |row| row.get(0))?;
    let mut events_total = 0i64;
    for day in partitions::list_days(data_dir)? {
        if let Some(conn) = partitions::open_for_read(data_dir, day)? {
            events_total += conn.query_row("SELECT sum(cost_nusd) FROM events", [], |row| row.get::<_, i64>(0))?;
        }
    }
    println!(
        "sessions' total ${:.2}, events' total ${:.2}",
        crate::model::nusd_to_usd(sessions_total),
        crate::model::nusd_to_usd(events_total)
    );
    Ok(if sessions_total == events_total && applied.rows_rewritten == report.changed() { 0 } else { 1 })
}
