//! The server's clock jumping back an hour (an NTP step, a VM restored from a snapshot),
//! on the real server with the test's clock: ingest keeps answering and stores what the
//! hooks send (their clocks did not move), the aggregates keep refreshing and stay equal
//! to a `GROUP BY` over the events (the 15-second refresh used to wait an hour for the
//! clock to catch up), a job run over HTTP is recorded whole (its end not before its
//! start), and a token minted before the jump is refused until its holder signs in or
//! refreshes, which works at once.

use crate::common;

use std::time::Duration;

use common::inprocess::InProcess;
use common::*;
use serde_json::json;

#[test]
fn a_clock_that_jumps_back_an_hour_loses_nothing_and_stalls_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_path_buf();
    let token = user_with_token(&data_dir, "dev@example.com");
    add_user(&data_dir, "admin@example.com", "ADMIN");
    let running = InProcess::start(&data_dir, &token);
    let server = &running.server;
    let main = server.main_db();
    let exact = || crate::analytics::stored(&main) == crate::analytics::from_raw_events(&data_dir);
    let now = running.clock.now_ms();
    assert_eq!(server.post_events(&token, &envelope(session_events("before", now - 7_200_000, 20))).0, 200);
    running.clock.advance_ms(15_000);
    wait_until(Duration::from_secs(10), "the refresh before the jump", || {
        !crate::analytics::stored(&main).is_empty() && exact()
    });
    let admin = access_token(server, "admin@example.com");
    let run = |job: &str| post_json(&format!("{}/admin/jobs/{job}/run", server.web), &admin, &json!({}));
    assert_eq!(run("sweep-abandoned").0, 202);

    running.clock.advance_ms(-3_600_000);
    // The hooks' clocks did not move: their events are an hour ahead of the server's.
    let (status, body) = server.post_events(&token, &envelope(session_events("after", now + 20_000, 20)));
    assert_eq!((status, body["accepted"].clone()), (200, json!(20)), "{body}");
    assert_eq!(count_stored_events(&data_dir), 40, "nothing lost");
    running.clock.advance_ms(15_000);
    wait_until(Duration::from_secs(20), "the refresh after the jump", exact);
    let counted: i64 = main.query_row("SELECT sum(event_count) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(counted, 40);

    // An access token minted before the jump is "not yet valid" now: its holder refreshes
    // or signs in again, and the new one works.
    assert_eq!(run("sweep-scratch").0, 401);
    let (status, grant) = password_grant(&server.web, "admin@example.com", TEST_PASSWORD);
    assert_eq!(status, 200, "sign-in works after the jump: {grant}");
    let admin = grant["access_token"].as_str().unwrap().to_string();
    let (status, started) = post_json(&format!("{}/admin/jobs/sweep-scratch/run", server.web), &admin, &json!({}));
    assert_eq!(status, 202, "{started}");
    wait_until(Duration::from_secs(10), "the run after the jump ends", || {
        main.query_row("SELECT count(*) FROM job_runs WHERE job = 'sweep-scratch' AND outcome = 'succeeded'", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap()
            == 1
    });
    let backwards: i64 =
        main.query_row("SELECT count(*) FROM job_runs WHERE ended_at_ms < started_at_ms", [], |r| r.get(0)).unwrap();
    let runs: Vec<String> = main
        .prepare(
            "SELECT job || ' ' || started_at_ms || ' ' || coalesce(ended_at_ms, 0) || ' ' || outcome FROM job_runs",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(backwards, 0, "no run ends before it starts: {runs:?}");
}
