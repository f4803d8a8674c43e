//! The incremental refresh against the whole-day rebuild: folding a day commit by
//! commit (out-of-order events, sessions across refreshes) leaves the same aggregates
//! as rebuilding it from its partition; a rebuild forced while a refresh reads wins over
//! that refresh; a late event for a day whose session days were pruned rebuilds it.

use std::collections::BTreeSet;
use std::path::Path;

use proptest::prelude::*;
use rusqlite::Connection;

use super::partials;
use super::refresh::{dirty_hours, refresh};
use crate::db::{Checkpointing, DbError, Durability};
use crate::events::partitions::{self, Day};
use crate::events::writer::MainChange;
use crate::model::wire::{EventLimits, parse_event};

const DAY_MS: i64 = 86_400_000;
/// 2026-11-20T00:00:00Z.
const DAY_ONE_MS: i64 = 1_795_132_800_000;

/// One generated event: person, session, minute of the day, kind and a variant.
type Spec = (u8, u8, u16, u8, u8);

struct Store {
    dir: tempfile::TempDir,
    main: Connection,
}

impl Store {
    fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("main.db");
        let mut main = crate::db::open(&path, Durability::PowerSafe, Checkpointing::Automatic).unwrap();
        crate::db::migrations::migrate(&mut main, &path).unwrap();
        Store { dir, main }
    }

    fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// One partition commit of `events` on the day starting at `day_ms`, its hours marked.
    fn commit(&self, day_ms: i64, events: &[Spec]) {
        let day = Day::of_ms(day_ms);
        let (conn, last_seq) = partitions::open_for_write(self.data_dir(), day).unwrap();
        let seq = last_seq + 1;
        let tx = conn.unchecked_transaction().unwrap();
        let mut hours = BTreeSet::new();
        for (i, (person, session, minute, kind, variant)) in events.iter().enumerate() {
            let ts = day_ms + i64::from(*minute) * 60_000 + (seq * 7 + i as i64) % 1000;
            let kind_name =
                ["prompt_submit", "tool_end", "notification", "session_start", "turn_end"][usize::from(*kind % 5)];
            let mut json = serde_json::json!({
                "event_id": uuid::Uuid::now_v7().to_string(),
                "type": kind_name,
                "ts": crate::model::rfc3339_ms(ts),
                "agent_type": "claude_code",
                "session_id": format!("s{session}"),
            });
            if *variant % 5 != 0 {
                let mode = ["normal", "plan", "accept_edits", "bypass"][usize::from(*variant % 4)];
                json["permission_mode"] = serde_json::json!(mode);
            }
            match *kind % 5 {
                0 => json["response_ms"] = serde_json::json!(100 + i64::from(*variant)),
                1 => {
                    let (tool, status) = (
                        ["claude_code:Bash", "claude_code:Edit"][usize::from(*variant % 2)],
                        ["success", "error", "denied"][usize::from(*variant % 3)],
                    );
                    json["tool"] = serde_json::json!({"name": tool, "status": status,
                        "duration_ms": i64::from(*variant) * 10, "input_bytes": 40, "output_bytes": 7});
                }
                2 => {
                    let notification = ["permission", "idle", "auth"][usize::from(*variant % 3)];
                    json["notification_kind"] = serde_json::json!(notification);
                }
                4 => {
                    json["model"] = serde_json::json!("claude-sonnet-4-5-20250929");
                    json["usage"] = serde_json::json!({"input_tokens": 10 + i64::from(*variant), "output_tokens": 5});
                }
                _ => {}
            }
            let raw = serde_json::value::to_raw_value(&json).unwrap();
            let parsed = parse_event(&raw, &EventLimits::default(), ts).unwrap();
            partitions::insert_event(&tx, &parsed.event, &format!("user-{person}"), ts, seq).unwrap();
            hours.insert(ts.div_euclid(3_600_000) * 3_600_000);
        }
        partitions::set_last_seq(&tx, seq).unwrap();
        tx.commit().unwrap();
        crate::sessions::fold::mark_dirty_hours(&self.main, &hours, DAY_ONE_MS).unwrap();
    }

    fn refresh(&self) {
        refresh(self.data_dir(), &self.main, &|change| commit_on(&self.main, change), usize::MAX).unwrap();
    }

    /// Every aggregate row the pages read, as text.
    fn aggregates(&self) -> Vec<String> {
        // The daily usage is its hours' sum, whichever way it was written.
        let sums = |sql: &str| -> Vec<Vec<i64>> {
            let mut stmt = self.main.prepare(sql).unwrap();
            stmt.query_map([], |row| (0..11).map(|i| row.get(i)).collect()).unwrap().map(Result::unwrap).collect()
        };
        let figures = "sum(events), sum(prompts), sum(sessions_started), sum(input_tokens), sum(output_tokens),
            sum(cache_read_tokens), sum(cache_write_5m_tokens), sum(cache_write_1h_tokens), sum(reasoning_tokens),
            sum(cost_nusd)";
        assert_eq!(
            sums(&format!(
                "SELECT bucket_start_ms / 86400000, {figures} FROM agg_usage_daily
                 GROUP BY bucket_start_ms, user_id, agent_type, model ORDER BY bucket_start_ms, user_id, agent_type, model"
            )),
            sums(&format!(
                "SELECT bucket_start_ms / 86400000, {figures} FROM agg_usage_hourly
                 GROUP BY bucket_start_ms / 86400000, user_id, agent_type, model
                 ORDER BY bucket_start_ms / 86400000, user_id, agent_type, model"
            )),
            "agg_usage_daily is not the sum of agg_usage_hourly"
        );
        let mut rows = Vec::new();
        for table in ["agg_usage_hourly", "agg_usage_daily", "agg_tools_daily", "agg_sessions_daily"] {
            let mut stmt = self.main.prepare(&format!("SELECT * FROM {table}")).unwrap();
            let columns = stmt.column_count();
            let mut read = stmt.query([]).unwrap();
            while let Some(row) = read.next().unwrap() {
                let cells: Vec<String> =
                    (0..columns).map(|i| format!("{:?}", row.get::<_, rusqlite::types::Value>(i).unwrap())).collect();
                rows.push(format!("{table} {}", cells.join(" ")));
            }
        }
        rows.sort();
        rows
    }

    /// The aggregates as a rebuild of every day from its partition leaves them.
    fn rebuilt(&self) -> Vec<String> {
        let tx = self.main.unchecked_transaction().unwrap();
        partials::force_rebuild_all(&tx, DAY_ONE_MS).unwrap();
        tx.commit().unwrap();
        self.refresh();
        self.aggregates()
    }
}

fn commit_on(conn: &Connection, change: MainChange) -> Result<(), DbError> {
    let tx = conn.unchecked_transaction()?;
    change(&tx)?;
    Ok(tx.commit()?)
}

fn spec() -> impl Strategy<Value = Spec> {
    (0u8..3, 0u8..4, 0u16..1440, any::<u8>(), any::<u8>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Commits on two days, refreshed after some of them: the figures folded commit by
    /// commit equal those of a rebuild, whatever order the events' times came in.
    #[test]
    fn folding_commit_by_commit_equals_rebuilding_the_day(
        commits in prop::collection::vec((any::<bool>(), any::<bool>(), prop::collection::vec(spec(), 1..6)), 1..12),
    ) {
        let store = Store::new();
        for (second_day, refresh_after, events) in &commits {
            store.commit(DAY_ONE_MS + if *second_day { DAY_MS } else { 0 }, events);
            if *refresh_after {
                store.refresh();
            }
        }
        store.refresh();
        prop_assert!(dirty_hours(&store.main, 10).unwrap().is_empty());
        let folded = store.aggregates();
        prop_assert!(!folded.is_empty());
        prop_assert_eq!(folded, store.rebuilt());
    }
}

#[test]
fn a_rebuild_forced_while_a_refresh_reads_wins_over_that_refresh() {
    let store = Store::new();
    store.commit(DAY_ONE_MS, &[(0, 0, 60, 0, 0), (0, 0, 61, 1, 1)]);
    store.refresh();
    store.commit(DAY_ONE_MS, &[(0, 0, 62, 4, 2)]);
    // Between the refresh's read and its commit, a deletion rewrites the day.
    let forcing = |change: MainChange| {
        let tx = store.main.unchecked_transaction()?;
        partials::force_rebuild(&tx, &BTreeSet::from([DAY_ONE_MS]), DAY_ONE_MS + 5)?;
        tx.commit()?;
        commit_on(&store.main, change)
    };
    refresh(store.data_dir(), &store.main, &forcing, usize::MAX).unwrap();
    let after = partials::watermark(&store.main, DAY_ONE_MS).unwrap();
    assert_eq!(after.folded_seq, None, "the raced refresh did not record its read");
    assert!(!dirty_hours(&store.main, 10).unwrap().is_empty(), "the day is still to do");
    store.refresh();
    assert_eq!(partials::watermark(&store.main, DAY_ONE_MS).unwrap().folded_seq, Some(2));
    let folded = store.aggregates();
    assert_eq!(folded, store.rebuilt());
}

#[test]
fn a_late_event_for_a_day_whose_session_days_were_pruned_rebuilds_it() {
    let store = Store::new();
    store.commit(DAY_ONE_MS, &[(1, 2, 600, 0, 0), (1, 2, 601, 1, 0)]);
    store.refresh();
    let later = DAY_ONE_MS + (partials::SESSION_DAYS_KEPT + 1) * DAY_MS;
    store.commit(later, &[(1, 3, 10, 0, 0)]);
    store.refresh();
    assert_eq!(partials::watermark(&store.main, DAY_ONE_MS).unwrap().folded_seq, None, "pruned");
    let session_days: i64 = store
        .main
        .query_row("SELECT count(*) FROM agg_session_days WHERE day_start_ms = ?1", [DAY_ONE_MS], |row| row.get(0))
        .unwrap();
    assert_eq!(session_days, 0);
    // The same session comes back on the old day, out of order: the day is read whole.
    store.commit(DAY_ONE_MS, &[(1, 2, 599, 0, 1)]);
    store.refresh();
    assert!(dirty_hours(&store.main, 10).unwrap().is_empty());
    // Still older than the kept window: the next late event rebuilds the day again.
    assert_eq!(partials::watermark(&store.main, DAY_ONE_MS).unwrap().folded_seq, None);
    let sessions: i64 = store
        .main
        .query_row(
            "SELECT sessions FROM agg_sessions_daily WHERE day_start_ms = ?1 AND user_id = 'user-1'",
            [DAY_ONE_MS],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(sessions, 1, "one session, not counted again as new");
    let folded = store.aggregates();
    assert_eq!(folded, store.rebuilt());
}
