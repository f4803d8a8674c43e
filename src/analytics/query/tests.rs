//! The query layer against hand-written aggregate rows in a migrated in-memory main.db:
//! subjects (a person, a team tree, the organisation), each person counted once, period
//! arithmetic and the cache-hit ratio.

use rusqlite::{Connection, params};

use super::*;

const HOUR: i64 = 3_600_000;

fn main_db() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
    conn.execute_batch(
        "INSERT INTO users (id, email, name, created_at_ms) VALUES ('ada', 'ada@x', 'Ada', 0), ('bo', 'bo@x', 'Bo', 0), ('cy', 'cy@x', 'Cy', 0);
         INSERT INTO teams (id, slug, name, parent_id, created_at_ms) VALUES ('shop', 'shop', 'Shop', NULL, 0),
             ('pay', 'pay', 'Payments', 'shop', 0), ('ops', 'ops', 'Ops', NULL, 0);
         INSERT INTO team_members (team_id, user_id, added_at_ms) VALUES ('shop', 'ada', 0), ('pay', 'ada', 0), ('pay', 'bo', 0), ('ops', 'cy', 0);",
    )
    .unwrap();
    conn
}

/// An hour of usage: (hour, user, agent, model) and (cost, input tokens, cache reads).
fn usage(
    conn: &Connection,
    (hour, user, agent, model): (i64, &str, &str, &str),
    (cost, input, cached): (i64, i64, i64),
) {
    // Through the owner, so the hour's day gets the same figures.
    let row = crate::events::partitions::HourlyUsage {
        bucket_start_ms: hour,
        user_id: user.into(),
        agent_type: agent.into(),
        model: model.into(),
        events: 2,
        prompts: 1,
        sessions_started: 1,
        usage: crate::model::Usage {
            input_tokens: input,
            output_tokens: 10,
            cache_read_tokens: cached,
            ..Default::default()
        },
        cost_nusd: cost,
    };
    crate::analytics::usage::add_rows(conn, &[row]).unwrap();
}

#[test]
fn totals_and_breakdowns_read_the_subjects_rows_of_the_period() {
    let conn = main_db();
    let day = 20_000 * DAY_MS;
    usage(&conn, (day + HOUR, "ada", "claude_code", "opus"), (500, 100, 300));
    usage(&conn, (day + 2 * HOUR, "ada", "codex", "gpt-5"), (200, 100, 0));
    usage(&conn, (day + 3 * HOUR, "bo", "claude_code", "opus"), (50, 10, 0));
    usage(&conn, (day + 4 * HOUR, "cy", "claude_code", "sonnet"), (7, 10, 0));
    usage(&conn, (day - HOUR, "ada", "claude_code", "opus"), (1_000, 0, 0)); // the day before
    let period = Period::last_days(day + 5 * HOUR, 1);
    assert_eq!(period, Period { from_ms: day, to_ms: day + DAY_MS });
    assert_eq!(period.previous(), Period { from_ms: day - DAY_MS, to_ms: day });

    let ada = totals(&conn, &Subject::Person("ada".into()), period).unwrap();
    assert_eq!((ada.cost_nusd, ada.events, ada.usage.input_tokens), (700, 4, 200));
    assert_eq!(ada.cache_hit_ratio(), Some(300.0 / 500.0));
    assert_eq!(totals(&conn, &Subject::Person("ada".into()), period.previous()).unwrap().cost_nusd, 1_000);
    // A team covers the teams below it, each person once (Ada is in Shop and Payments).
    assert_eq!(totals(&conn, &Subject::Team("shop".into()), period).unwrap().cost_nusd, 750);
    assert_eq!(totals(&conn, &Subject::Team("pay".into()), period).unwrap().cost_nusd, 750);
    assert_eq!(totals(&conn, &Subject::Team("ops".into()), period).unwrap().cost_nusd, 7);
    assert_eq!(totals(&conn, &Subject::Organisation, period).unwrap().cost_nusd, 757);
    assert_eq!(totals(&conn, &Subject::Team("nobody".into()), period).unwrap(), Figures::default());

    let by_agent = breakdown(&conn, &Subject::Person("ada".into()), period, By::Agent).unwrap();
    let costs: Vec<(&str, i64)> = by_agent.iter().map(|(agent, f)| (agent.as_str(), f.cost_nusd)).collect();
    assert_eq!(costs, [("claude_code", 500), ("codex", 200)], "the costliest first");
    let by_day = breakdown(
        &conn,
        &Subject::Person("ada".into()),
        Period { from_ms: day - DAY_MS, to_ms: day + DAY_MS },
        By::Day,
    )
    .unwrap();
    let days: Vec<(String, i64)> = by_day.into_iter().map(|(d, f)| (d, f.cost_nusd)).collect();
    assert_eq!(days, [((day - DAY_MS).to_string(), 1_000), (day.to_string(), 700)], "days in order");
}

#[test]
fn tools_and_activity_count_each_person_once() {
    let conn = main_db();
    let day = 20_000 * DAY_MS;
    for (user, tool, calls) in [("ada", "Bash", 10), ("ada", "Read", 30), ("bo", "Bash", 5)] {
        conn.execute(
            "INSERT INTO agg_tools_daily VALUES (?1, ?2, 'claude_code', ?3, '', '', '', ?4, 1, 2, 100, 0, 0)",
            params![day, user, tool, calls],
        )
        .unwrap();
    }
    // Ada's day is stored once per team she is in.
    for (user, team) in [("ada", "shop"), ("ada", "pay"), ("bo", "pay")] {
        conn.execute(
            "INSERT INTO agg_sessions_daily VALUES (?1, ?2, ?3, 3, 60000, 4, 0, 0, 0, 0, 3000, 2, 0, 0, 0, 0, 0, 0, 0, 0)",
            params![day, user, team],
        )
        .unwrap();
    }
    let period = Period::last_days(day, 1);
    let tools = top_tools(&conn, &Subject::Team("shop".into()), period, 10).unwrap();
    let calls: Vec<(&str, i64)> = tools.iter().map(|t| (t.tool.as_str(), t.calls)).collect();
    assert_eq!(calls, [("Read", 30), ("Bash", 15)]);
    assert_eq!(top_tools(&conn, &Subject::Person("bo".into()), period, 1).unwrap().len(), 1);

    let shop = activity(&conn, &Subject::Team("shop".into()), period).unwrap();
    assert_eq!((shop.session_days, shop.active_ms, shop.permission_prompts), (6, 120_000, 8), "Ada once, Bo once");
    assert_eq!(activity(&conn, &Subject::Organisation, period).unwrap(), shop);
    assert_eq!(activity(&conn, &Subject::Person("ada".into()), period).unwrap().session_days, 3);
}

#[test]
fn bands_need_five_people_and_name_only_where_one_stands() {
    assert_eq!(band(&[1, 2, 3, 4], 4), None, "four people: no comparison");
    let five = [10, 20, 30, 40, 50];
    assert_eq!(band(&five, 50), Some("in the top tenth"));
    assert_eq!(band(&five, 40), Some("in the top quarter"));
    assert_eq!(band(&five, 30), Some("in the middle half"));
    assert_eq!(band(&five, 20), Some("in the bottom quarter"));
    assert_eq!(band(&five, 10), Some("in the bottom tenth"));
    assert_eq!(band(&[7; 6], 7), Some("in the bottom tenth"), "ties: nobody is below");

    let conn = main_db();
    let day = 20_000 * DAY_MS;
    usage(&conn, (day, "ada", "claude_code", "opus"), (500, 0, 0));
    usage(&conn, (day + HOUR, "ada", "codex", "gpt-5"), (200, 0, 0));
    usage(&conn, (day, "bo", "claude_code", "opus"), (50, 0, 0));
    let mut spend = per_person(&conn, Period::last_days(day, 1), Measure::Spend).unwrap();
    spend.sort();
    assert_eq!(spend, [("ada".to_string(), 700), ("bo".to_string(), 50)]);
    let by = breakdown(&conn, &Subject::Person("ada".into()), Period::last_days(day, 1), By::AgentModel).unwrap();
    assert_eq!(by[0].0, "claude_code\topus");
}
