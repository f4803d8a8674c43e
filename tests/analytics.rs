//! The continuous aggregates stay exact (issue 16): after random ingests through the real
//! server (interactive, CI and EVAL runs, replayed batches, late events) and a deletion
//! request carried out, a refresh leaves `agg_usage_hourly` equal to a `GROUP BY` over the
//! raw `INTERACTIVE` events, row for row, and so do `agg_tools_daily` and
//! `agg_sessions_daily`; a refresh stopped before its commit leaves the marks for the
//! next, a mark renewed during a refresh survives it, and a real server killed (SIGKILL)
//! while its refresh works through a backlog comes back exact.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::json;
use sightline::analytics::refresh;
use sightline::events::partitions;

pub(crate) type Row = (i64, String, String, String);

/// The aggregate as stored.
pub(crate) fn stored(conn: &rusqlite::Connection) -> BTreeMap<Row, Vec<i64>> {
    let mut stmt = conn
        .prepare(
            "SELECT bucket_start_ms, user_id, agent_type, model, events, prompts, sessions_started, input_tokens,
                    output_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens,
                    reasoning_tokens, cost_nusd FROM agg_usage_hourly",
        )
        .unwrap();
    stmt.query_map([], |row| {
        Ok((
            (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?),
            (4..14).map(|i| row.get(i)).collect::<Result<Vec<i64>, _>>()?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// The same figures computed straight from every partition's raw events.
pub(crate) fn from_raw_events(data_dir: &Path) -> BTreeMap<Row, Vec<i64>> {
    let mut expected = BTreeMap::new();
    for day in partitions::list_days(data_dir).unwrap() {
        let conn = rusqlite::Connection::open(partitions::partition_path(data_dir, day)).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT (ts_ms / 3600000) * 3600000, user_id, agent_type, coalesce(model, ''), count(*),
                        sum(type = 'prompt_submit'), sum(type = 'session_start'), sum(input_tokens),
                        sum(output_tokens), sum(cache_read_tokens), sum(cache_write_5m_tokens),
                        sum(cache_write_1h_tokens), sum(reasoning_tokens), sum(cost_nusd)
                 FROM events WHERE run_kind = 'INTERACTIVE' GROUP BY 1, 2, 3, 4",
            )
            .unwrap();
        for row in stmt
            .query_map([], |row| {
                Ok((
                    (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?),
                    (4..14).map(|i| row.get(i)).collect::<Result<Vec<i64>, _>>()?,
                ))
            })
            .unwrap()
        {
            let (key, figures) = row.unwrap();
            expected.insert(key, figures);
        }
    }
    expected
}

/// Rows of `sql` as (key columns joined by a tab, the remaining integer columns).
fn keyed(conn: &rusqlite::Connection, sql: &str, keys: usize, figures: usize) -> BTreeMap<String, Vec<i64>> {
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], |row| {
        let key = (0..keys)
            .map(|i| row.get::<_, rusqlite::types::Value>(i).map(|value| format!("{value:?}")))
            .collect::<Result<Vec<_>, _>>()?
            .join("\t");
        Ok((key, (keys..keys + figures).map(|i| row.get(i)).collect::<Result<Vec<i64>, _>>()?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

const TOOL_FIGURES: &str = "calls, errors, denials, duration_ms, input_bytes, output_bytes";

/// The daily tools aggregate as stored.
fn stored_tools(conn: &rusqlite::Connection) -> BTreeMap<String, Vec<i64>> {
    let sql = format!(
        "SELECT day_start_ms, user_id, agent_type, tool_name, tool_server, skill, slash_command, {TOOL_FIGURES}
         FROM agg_tools_daily"
    );
    keyed(conn, &sql, 7, 6)
}

/// The same, straight from the raw events.
fn tools_from_raw_events(data_dir: &Path) -> BTreeMap<String, Vec<i64>> {
    let mut expected = BTreeMap::new();
    for day in partitions::list_days(data_dir).unwrap() {
        let conn = rusqlite::Connection::open(partitions::partition_path(data_dir, day)).unwrap();
        let sql = format!(
            "SELECT {}, user_id, agent_type, coalesce(tool_name, ''), coalesce(tool_server, ''),
                    coalesce(tool_skill, ''), coalesce(tool_slash_command, ''), count(*),
                    sum(tool_status IS 'error'), sum(tool_status IS 'denied'), coalesce(sum(tool_duration_ms), 0),
                    coalesce(sum(tool_input_bytes), 0), coalesce(sum(tool_output_bytes), 0)
             FROM events WHERE type = 'tool_end' AND run_kind = 'INTERACTIVE' GROUP BY 2, 3, 4, 5, 6, 7",
            day.start_ms()
        );
        expected.extend(keyed(&conn, &sql, 7, 6));
    }
    expected
}

/// The daily sessions aggregate as stored, keyed by day, user e-mail and team slug.
fn stored_sessions(conn: &rusqlite::Connection) -> BTreeMap<String, Vec<i64>> {
    keyed(
        conn,
        "SELECT a.day_start_ms, u.email, coalesce(t.slug, ''), sessions, active_ms, notifications_permission,
                notifications_idle, notifications_elicitation, notifications_auth, notifications_other,
                response_ms, responses, mode_normal, mode_plan, mode_accept_edits, mode_auto, mode_dont_ask,
                mode_bypass
         FROM agg_sessions_daily a JOIN users u ON u.id = a.user_id LEFT JOIN teams t ON t.id = a.team_id",
        3,
        15,
    )
}

/// A person's distinct (agent, session) pairs of a day.
type Sessions = std::collections::BTreeSet<(String, String)>;

/// The same, computed here from the raw events, event by event.
fn sessions_from_raw_events(
    data_dir: &Path,
    main: &rusqlite::Connection,
    teams: &[(&str, &str)],
) -> BTreeMap<String, Vec<i64>> {
    let email_of = |user: &str| -> String {
        main.query_row("SELECT email FROM users WHERE id = ?1", [user], |row| row.get(0)).unwrap()
    };
    let mut expected = BTreeMap::new();
    for day in partitions::list_days(data_dir).unwrap() {
        let conn = rusqlite::Connection::open(partitions::partition_path(data_dir, day)).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT user_id, agent_type, session_id, ts_ms, type, notification_kind, response_ms, permission_mode
                 FROM events WHERE run_kind = 'INTERACTIVE'",
            )
            .unwrap();
        type Raw = (String, String, String, i64, String, Option<String>, Option<i64>, Option<String>);
        let mut events: Vec<Raw> = stmt
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        events.sort();
        let mut people: BTreeMap<String, (Sessions, Vec<i64>)> = BTreeMap::new();
        for (i, (user, agent, session, ts, kind, notification, response, mode)) in events.iter().enumerate() {
            let (sessions, figures) = people.entry(user.clone()).or_insert_with(|| (Default::default(), vec![0; 14]));
            sessions.insert((agent.clone(), session.clone()));
            if i > 0 && (&events[i - 1].0, &events[i - 1].1, &events[i - 1].2) == (user, agent, session) {
                figures[0] += (ts - events[i - 1].3).min(5 * 60_000);
            }
            if kind == "notification" {
                let at = ["permission", "idle", "elicitation", "auth", "other"];
                figures[1 + at.iter().position(|k| Some(*k) == notification.as_deref()).unwrap()] += 1;
            }
            if let Some(ms) = response {
                figures[6] += ms;
                figures[7] += 1;
            }
            let modes = ["normal", "plan", "accept_edits", "auto", "dont_ask", "bypass"];
            if let Some(at) = modes.iter().position(|m| Some(*m) == mode.as_deref()) {
                figures[8 + at] += 1;
            }
        }
        for (user, (sessions, figures)) in people {
            let email = email_of(&user);
            let mut in_teams: Vec<&str> = teams.iter().filter(|(e, _)| *e == email).map(|(_, t)| *t).collect();
            if in_teams.is_empty() {
                in_teams.push("");
            }
            for team in in_teams {
                let mut row = vec![sessions.len() as i64];
                row.extend(&figures);
                expected.insert(format!("Integer({})\tText({email:?})\tText({team:?})", day.start_ms()), row);
            }
        }
    }
    expected
}

fn main_db(data_dir: &Path) -> rusqlite::Connection {
    sightline::db::open(
        &data_dir.join("main.db"),
        sightline::db::Durability::PowerSafe,
        sightline::db::Checkpointing::Automatic,
    )
    .unwrap()
}

#[test]
fn the_hourly_usage_aggregate_equals_a_group_by_over_the_raw_interactive_events() {
    let mut server = TestServer::spawn();
    let (data_dir, ada) = (server.data_dir.clone(), server.token.clone());
    let bo = user_with_token(&data_dir, "bo@example.com");
    let path = data_dir.to_str().unwrap().to_string();
    for (slug, name) in [("apps", "Apps"), ("web", "Web")] {
        assert!(sightline(&["team", "add", "--data-dir", &path, "--slug", slug, "--name", name]).status.success());
        let added =
            sightline(&["team", "add-member", "--data-dir", &path, "--team", slug, "--email", "dev@example.com"]);
        assert!(added.status.success(), "{}", stderr(&added));
    }
    let now = now_ms();
    fastrand::seed(16);
    let mut sent = Vec::new();
    for batch in 0..40 {
        let token = if batch % 3 == 0 { &bo } else { &ada };
        let session = format!("s-{}", fastrand::u32(0..12));
        // Up to three days back (late events land in hours already refreshed below).
        let start = now - fastrand::i64(0..72 * 3_600_000);
        let mut events = session_events(&session, start, fastrand::usize(1..12));
        let kind = ["INTERACTIVE", "INTERACTIVE", "INTERACTIVE", "CI", "EVAL"][fastrand::usize(0..5)];
        for event in &mut events {
            event["run_kind"] = json!(kind);
            let modes = ["normal", "plan", "accept_edits", "auto", "dont_ask", "bypass"];
            if fastrand::bool() {
                event["permission_mode"] = json!(modes[fastrand::usize(0..modes.len())]);
            }
            if event["type"] == "tool_end" {
                event["tool"]["status"] = json!(["success", "error", "denied"][fastrand::usize(0..3)]);
                event["tool"]["duration_ms"] = json!(fastrand::i64(1..5_000));
            }
        }
        let body = envelope(events);
        assert_eq!(server.post_events(token, &body).0, 200);
        sent.push((token.clone(), body));
        if batch % 7 == 6 {
            // Every few batches a refresh, so later batches add to days already folded
            // (the refresh reads only their new commits), some of them out of order.
            let conn = main_db(&data_dir);
            refresh::refresh(&data_dir, &conn, &commit_on(&conn), usize::MAX).unwrap();
            assert_eq!(stored(&conn), from_raw_events(&data_dir), "after batch {batch}");
            assert_eq!(stored_tools(&conn), tools_from_raw_events(&data_dir), "after batch {batch}");
            let teams = [("dev@example.com", "apps"), ("dev@example.com", "web")];
            let people = sessions_from_raw_events(&data_dir, &conn, &teams);
            assert_eq!(stored_sessions(&conn), people, "sessions and active time after batch {batch}");
            let bo_id = user_id_of(&conn, "bo@example.com");
            assert!(stored(&conn).keys().any(|(_, user, _, _)| *user == bo_id), "Bo has interactive hours");
        }
    }
    // Replays change nothing; they are duplicates.
    for (token, body) in sent.iter().step_by(4) {
        assert_eq!(server.post_events(token, body).0, 200);
    }
    server.terminate();
    // Bo asks for deletion; the runner takes his events and marks his hours.
    let path = path.as_str();
    assert!(sightline(&["deletion", "request", "--data-dir", path, "--user", "bo@example.com"]).status.success());
    assert!(sightline(&["run-deletions", "--data-dir", path]).status.success());

    let conn = main_db(&data_dir);
    // A refresh stopped before its commit (the change fails, as a kill would leave it)
    // writes nothing and leaves every mark.
    let marks_before = refresh::dirty_hours(&conn, usize::MAX).unwrap();
    assert!(!marks_before.is_empty());
    let dying = |_change: sightline::events::writer::MainChange| -> Result<(), sightline::db::DbError> {
        Err(sightline::db::DbError::Io { context: "killed".into(), source: std::io::Error::other("kill -9") })
    };
    assert!(refresh::refresh(&data_dir, &conn, &dying, usize::MAX).is_err());
    assert_eq!(refresh::dirty_hours(&conn, usize::MAX).unwrap(), marks_before);

    let report = refresh::refresh(&data_dir, &conn, &commit_on(&conn), usize::MAX).unwrap();
    assert_eq!(report.hours, marks_before.len());
    let expected = from_raw_events(&data_dir);
    assert!(!expected.is_empty());
    assert_eq!(stored(&conn), expected, "row for row");
    let tools = tools_from_raw_events(&data_dir);
    assert!(!tools.is_empty());
    assert_eq!(stored_tools(&conn), tools, "the daily tools aggregate too");
    let teams = [("dev@example.com", "apps"), ("dev@example.com", "web")];
    let people = sessions_from_raw_events(&data_dir, &conn, &teams);
    assert!(people.keys().any(|key| key.contains("\"web\"")), "Ada counts in both her teams");
    assert_eq!(stored_sessions(&conn), people, "the daily sessions aggregate too");
    let mode_total: i64 = people.values().map(|figures| figures[9..15].iter().sum::<i64>()).sum();
    let active_total: i64 = people.values().map(|figures| figures[1]).sum();
    assert!(mode_total > 0 && active_total > 0, "modes and active time are counted");
    let totals =
        tools.values().fold([0; 3], |sum, figures| [sum[0] + figures[1], sum[1] + figures[2], sum[2] + figures[3]]);
    assert!(totals.iter().all(|total| *total > 0), "errors, denials and time all counted: {totals:?}");
    assert!(stored(&conn).keys().all(|(_, user, _, _)| *user != user_id_of(&conn, "bo@example.com")), "Bo is gone");
    assert_eq!(refresh::lag_ms(&conn, now_ms()).unwrap(), 0, "nothing left to refresh");
}

#[test]
fn a_mark_renewed_during_a_refresh_survives_it() {
    let server = TestServer::spawn();
    let (data_dir, token) = (server.data_dir.clone(), server.token.clone());
    let now = now_ms();
    assert_eq!(server.post_events(&token, &envelope(session_events("a", now, 3))).0, 200);
    let conn = main_db(&data_dir);
    let renewing = |change: sightline::events::writer::MainChange| -> Result<(), sightline::db::DbError> {
        // While the hour is recomputed, another event of it arrives.
        assert_eq!(server.post_events(&token, &envelope(vec![event("prompt_submit", "a", now + 10)])).0, 200);
        commit_on(&conn)(change)
    };
    refresh::refresh(&data_dir, &conn, &renewing, 1).unwrap();
    assert_eq!(refresh::dirty_hours(&conn, 10).unwrap().len(), 1, "the renewed mark is still there");
    refresh::refresh(&data_dir, &conn, &commit_on(&conn), usize::MAX).unwrap();
    assert_eq!(stored(&conn), from_raw_events(&data_dir));
    assert_eq!(stored(&conn).values().map(|figures| figures[0]).sum::<i64>(), 4, "all four events counted");
}

fn user_id_of(conn: &rusqlite::Connection, email: &str) -> String {
    conn.query_row("SELECT id FROM users WHERE email = ?1", [email], |row| row.get(0)).unwrap()
}

#[test]
fn the_server_refreshes_the_aggregates_on_its_scheduler_and_exports_the_lag() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_path_buf();
    let token = user_with_token(&data_dir, "dev@example.com");
    let server = common::inprocess::InProcess::start(&data_dir, &token);
    let now = server.clock.now_ms();
    assert_eq!(server.server.post_events(&token, &envelope(session_events("a", now - 7_200_000, 8))).0, 200);
    // The refresh runs every 15 seconds of the server's clock.
    server.clock.advance_ms(15_000);
    let conn = main_db(&data_dir);
    wait_until(std::time::Duration::from_secs(10), "the refresh", || {
        !stored(&conn).is_empty() && refresh::dirty_hours(&conn, 10).unwrap().is_empty()
    });
    assert_eq!(stored(&conn), from_raw_events(&data_dir));
    let metrics =
        agent().get(&format!("{}/metrics", server.server.ingest)).call().unwrap().into_body().read_to_string().unwrap();
    assert!(metrics.contains("sightline_aggregate_refresh_lag_seconds 0"), "{metrics}");
}

/// A real server killed (SIGKILL) while its refresh works through a backlog of dirty
/// hours, then started again: the restart's refresh finishes, and every aggregate equals
/// its recomputation from the raw events. The kill lands at several points of the
/// backlog's refresh (it runs at start, and the backlog spans weeks of hours).
#[test]
fn a_server_killed_while_it_refreshes_comes_back_exact() {
    let mut server = TestServer::spawn();
    let (data_dir, token) = (server.data_dir.clone(), server.token.clone());
    let now = now_ms();
    fastrand::seed(9);
    for round in 0..3u64 {
        // A backlog: events in a thousand different hours of the last 60 days.
        for batch in 0..10 {
            let events: Vec<_> = (0..100)
                .flat_map(|i| {
                    let at = now - fastrand::i64(0..60 * 86_400_000);
                    session_events(&format!("r{round}-b{batch}-{i}"), at, 4)
                })
                .collect();
            assert_eq!(server.post_events(&token, &envelope(events)).0, 200);
        }
        server.kill9();
        server.start(); // its refresh starts at once, on the backlog
        std::thread::sleep(std::time::Duration::from_millis(150 + 250 * round));
        server.kill9();
        server.start();
    }
    let conn = main_db(&data_dir);
    wait_until(std::time::Duration::from_secs(60), "the refresh after the kills", || {
        refresh::dirty_hours(&conn, 1).unwrap().is_empty()
    });
    server.terminate();
    assert_eq!(stored(&conn), from_raw_events(&data_dir));
    assert_eq!(stored_tools(&conn), tools_from_raw_events(&data_dir));
    assert_eq!(
        stored(&conn).values().map(|figures| figures[0]).sum::<i64>(),
        3 * 10 * 100 * 4,
        "every event counted once"
    );
}
