//! The job scheduler inside the real server, on a manual clock: `run-deletions` fires at
//! its 6-hour slots (not at a first start), each run is recorded in `job_runs`, and a run
//! a crash left `running` is closed as interrupted when the server starts.

use crate::common;

use std::time::Duration;

use common::inprocess::InProcess;
use common::*;

fn runs(data_dir: &std::path::Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    conn.prepare("SELECT job, trigger, outcome FROM job_runs ORDER BY started_at_ms, id")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The runs of `run-deletions` only (the scheduler runs other jobs at their own slots).
fn deletion_runs(data_dir: &std::path::Path) -> Vec<(String, String, String)> {
    runs(data_dir).into_iter().filter(|(job, _, _)| job == "run-deletions").collect()
}

#[test]
fn run_deletions_fires_at_its_slots_and_runs_a_crash_left_open_are_closed_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_path_buf();
    let token = user_with_token(&data_dir, "dev@example.com");
    // A run left `running` by a crash of an earlier server.
    sightline(&["migrate", "--data-dir", data_dir.to_str().unwrap()]);
    rusqlite::Connection::open(data_dir.join("main.db"))
        .unwrap()
        .execute(
            "INSERT INTO job_runs (id, job, trigger, started_at_ms, outcome) VALUES ('crashed', 'run-deletions', 'schedule', 1, 'running')",
            [],
        )
        .unwrap();

    let server = InProcess::start(&data_dir, &token);
    // The last run "started" at 1 ms after the epoch: the 6-hour slots since then have
    // passed, so the scheduler catches up once, not once per slot.
    wait_until(Duration::from_secs(10), "the interrupted run closed and one catch-up run", || {
        deletion_runs(&data_dir).len() == 2
    });
    std::thread::sleep(Duration::from_secs(2));
    let after_catch_up = deletion_runs(&data_dir);
    assert_eq!(after_catch_up.len(), 2, "{after_catch_up:?}");
    assert_eq!(after_catch_up[0], ("run-deletions".into(), "schedule".into(), "interrupted".into()));
    assert_eq!(after_catch_up[1], ("run-deletions".into(), "schedule".into(), "succeeded".into()));

    // `/metrics` shows each job the server runs: no standing breach, and when it last
    // succeeded (run-deletions' breaches are critical).
    let metrics =
        agent().get(&format!("{}/metrics", server.server.ingest)).call().unwrap().into_body().read_to_string().unwrap();
    assert!(metrics.contains("sightline_job_breach{job_name=\"run-deletions\",severity=\"critical\"} 0"), "{metrics}");
    assert!(
        metrics
            .contains("sightline_job_last_success_timestamp_seconds{job_name=\"run-deletions\",severity=\"critical\"}"),
        "{metrics}"
    );
    assert!(metrics.contains("sightline_job_breach{job_name=\"reconcile-cost\",severity=\"warning\"} 0"), "{metrics}");
    // A failed run with its breach (as `jobs run` beside the server records them) shows at
    // the next scrape.
    rusqlite::Connection::open(data_dir.join("main.db"))
        .unwrap()
        .execute_batch(
            "INSERT INTO job_runs (id, job, trigger, started_at_ms, ended_at_ms, outcome, error)
                 VALUES ('bad', 'backfill-redaction', 'cli', 5, 6, 'failed', 'disk full');
             INSERT INTO job_alerts (id, job, run_id, at_ms, severity, reason)
                 VALUES ('a1', 'backfill-redaction', 'bad', 6, 'warning', 'failed: disk full');",
        )
        .unwrap();
    let metrics =
        agent().get(&format!("{}/metrics", server.server.ingest)).call().unwrap().into_body().read_to_string().unwrap();
    assert!(
        metrics.contains("sightline_job_breach{job_name=\"backfill-redaction\",severity=\"warning\"} 1"),
        "{metrics}"
    );

    // Nothing more until the next slot; then exactly one more run.
    server.clock.advance_ms(6 * 3_600_000);
    wait_until(Duration::from_secs(10), "the next slot's run", || deletion_runs(&data_dir).len() == 3);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(deletion_runs(&data_dir).len(), 3, "one run per slot");

    // `jobs history`, newest first; an unknown job is an error that says so.
    let history = sightline(&["jobs", "history", "--data-dir", data_dir.to_str().unwrap(), "run-deletions"]);
    assert!(history.status.success(), "{}", stderr(&history));
    let text = stdout(&history);
    let lines: Vec<Vec<&str>> = text.lines().map(|line| line.split('\t').collect()).collect();
    assert_eq!(lines[0], ["started", "job", "trigger", "outcome", "took", "rows", "error"]);
    let outcomes: Vec<&str> = lines[1..].iter().map(|line| line[3]).collect();
    assert_eq!(outcomes, ["succeeded", "succeeded", "interrupted"], "{text}");
    assert_eq!(lines[3][6], "the server stopped while it ran");
    let unknown = sightline(&["jobs", "history", "--data-dir", data_dir.to_str().unwrap(), "run-deletion"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("there is no job named \"run-deletion\""), "{}", stderr(&unknown));
}

#[test]
fn jobs_run_records_its_run_and_refuses_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_str().unwrap();
    let ran = sightline(&["jobs", "run", "--data-dir", data_dir, "run-deletions"]);
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(stdout(&ran).starts_with("run-deletions succeeded in "), "{}", stdout(&ran));

    // Without billing credentials both sources are the null source: it says so and succeeds.
    let reconciled = sightline(&["jobs", "run", "--data-dir", data_dir, "reconcile-cost"]);
    assert!(reconciled.status.success(), "{}", stderr(&reconciled));
    assert!(stdout(&reconciled).contains("anthropic: not configured (null source)"), "{}", stdout(&reconciled));
    assert!(stdout(&reconciled).contains("openai: not configured (null source)"), "{}", stdout(&reconciled));
    let unknown = sightline(&["jobs", "run", "--data-dir", data_dir, "sweep-everything"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("there is no job named \"sweep-everything\""), "{}", stderr(&unknown));

    assert_eq!(
        runs(dir.path()),
        vec![
            ("run-deletions".into(), "cli".into(), "succeeded".into()),
            ("reconcile-cost".into(), "cli".into(), "succeeded".into()),
        ],
        "the unknown name records nothing"
    );
    // A run of the same job that is going (here: one a crash left open) blocks another.
    rusqlite::Connection::open(dir.path().join("main.db"))
        .unwrap()
        .execute(
            "INSERT INTO job_runs (id, job, trigger, started_at_ms, outcome) VALUES ('going', 'run-deletions', 'schedule', 1, 'running')",
            [],
        )
        .unwrap();
    let blocked = sightline(&["jobs", "run", "--data-dir", data_dir, "run-deletions"]);
    assert_eq!(blocked.status.code(), Some(2));
    assert!(stderr(&blocked).contains("run-deletions is already running (run going)"), "{}", stderr(&blocked));
}

#[test]
fn sweep_scratch_removes_what_has_expired_and_keeps_what_has_not() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path();
    sightline(&["migrate", "--data-dir", data_dir.to_str().unwrap()]);
    let now = now_ms();
    let day = 86_400_000;
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    for (code, user_code, expires) in
        [(b"old-code".to_vec(), "BCDF-GHJK", now - 2 * day), (b"new-code".to_vec(), "LMNP-QRST", now + 600_000)]
    {
        conn.execute(
            "INSERT INTO device_authorizations (device_code_sha256, user_code, client_id, created_at_ms, expires_at_ms, interval_secs)
             VALUES (?1, ?2, 'sightline-cli', ?3, ?3, 5)",
            rusqlite::params![code, user_code, expires],
        )
        .unwrap();
    }
    // A transcript upload abandoned two days ago, and one in progress (staging folders
    // are `<session>-<sha256 of the whole upload>`).
    let incoming = data_dir.join("transcripts/incoming/someone");
    let (stale, fresh) =
        (incoming.join(format!("s1-{}", "a".repeat(64))), incoming.join(format!("s2-{}", "b".repeat(64))));
    for folder in [&stale, &fresh] {
        std::fs::create_dir_all(folder).unwrap();
        std::fs::write(folder.join("0"), b"chunk").unwrap();
    }
    let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    std::fs::File::open(&stale).unwrap().set_modified(two_days_ago).unwrap();

    let ran = sightline(&["jobs", "run", "--data-dir", data_dir.to_str().unwrap(), "sweep-scratch"]);
    assert!(ran.status.success(), "{}", stderr(&ran));
    let codes: Vec<String> = conn
        .prepare("SELECT user_code FROM device_authorizations")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(codes, ["LMNP-QRST"], "only the long-expired code goes");
    assert!(!stale.exists(), "the abandoned upload is removed");
    assert!(fresh.join("0").exists(), "the upload in progress is kept");
    assert!(stdout(&ran).starts_with("sweep-scratch succeeded in "), "{}", stdout(&ran));
}

/// `end_at_ms` and `end_reason` of a session row.
fn end_of(conn: &rusqlite::Connection, session: &str) -> (Option<i64>, Option<String>, i64) {
    conn.query_row(
        "SELECT ended_at_ms, end_reason, last_event_ms FROM sessions WHERE agent_session_id = ?1",
        [session],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )
    .unwrap()
}

#[test]
fn sweep_abandoned_closes_quiet_sessions_at_their_last_event_and_a_later_event_reopens_them() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_path_buf();
    let token = user_with_token(&data_dir, "dev@example.com");
    let server = InProcess::start(&data_dir, &token);
    let now = server.clock.now_ms();
    let quiet = session_events("quiet", now - 3 * 3_600_000, 6);
    let busy = session_events("busy", now - 5 * 60_000, 6);
    let mut finished = session_events("finished", now - 4 * 3_600_000, 5);
    finished.push(event("session_end", "finished", now - 4 * 3_600_000 + 10));
    for events in [quiet, busy, finished] {
        assert_eq!(server.server.post_events(&token, &envelope(events)).0, 200);
    }
    let before: Vec<Vec<i64>> =
        ["quiet", "busy"].iter().map(|s| session_aggregates(&server.server.main_db(), s)).collect();

    // The next 10-minute slot runs the sweep (default quiet time: 60 minutes).
    server.clock.advance_ms(10 * 60_000);
    wait_until(Duration::from_secs(10), "a sweep-abandoned run", || {
        runs(&data_dir).iter().any(|(job, _, outcome)| job == "sweep-abandoned" && outcome == "succeeded")
    });
    let conn = server.server.main_db();
    let (ended, reason, last) = end_of(&conn, "quiet");
    assert_eq!((ended, reason.as_deref()), (Some(last), Some("abandoned")), "closed at its last event");
    assert_eq!(end_of(&conn, "busy").1, None, "a session heard from 15 minutes ago stays open");
    assert_eq!(end_of(&conn, "finished").1.as_deref(), Some("ended"), "an ended session keeps its reason");
    let after: Vec<Vec<i64>> = ["quiet", "busy"].iter().map(|s| session_aggregates(&conn, s)).collect();
    assert_eq!(before, after, "the sweep changes no figure of a session");
    let rows: i64 = conn
        .query_row(
            "SELECT rows_touched FROM job_runs WHERE job = 'sweep-abandoned' AND outcome = 'succeeded'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(rows, 1);

    // The agent speaks again: the session is open again. Its end, later, ends it.
    let now = server.clock.now_ms();
    assert_eq!(server.server.post_events(&token, &envelope(vec![event("prompt_submit", "quiet", now)])).0, 200);
    assert_eq!(end_of(&conn, "quiet"), (None, None, now));
    assert_eq!(server.server.post_events(&token, &envelope(vec![event("session_end", "quiet", now + 5)])).0, 200);
    assert_eq!(end_of(&conn, "quiet"), (Some(now + 5), Some("ended".into()), now + 5));

    // An hour later `busy` is abandoned too; an event from before its last one (a late
    // upload of old history) does not reopen it.
    server.clock.advance_ms(70 * 60_000);
    wait_until(Duration::from_secs(10), "busy abandoned", || end_of(&conn, "busy").1.as_deref() == Some("abandoned"));
    let (ended, _, last) = end_of(&conn, "busy");
    let late = event("tool_end", "busy", last - 60_000);
    assert_eq!(server.server.post_events(&token, &envelope(vec![late])).0, 200);
    assert_eq!(end_of(&conn, "busy"), (ended, Some("abandoned".into()), last));
}

/// Rows in the partition of the day of `ts_ms` (None: no file).
fn partition_rows(data_dir: &std::path::Path, ts_ms: i64) -> Option<i64> {
    let day = sightline::events::partitions::Day::of_ms(ts_ms);
    let path = sightline::events::partitions::partition_path(data_dir, day);
    path.exists().then(|| {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row("SELECT count(*) FROM events", [], |row| row.get(0))
            .unwrap()
    })
}

#[test]
fn sweep_retention_drops_whole_days_trims_the_rest_by_owner_and_takes_the_transcripts_of_swept_sessions() {
    use common::transcripts::{Transcript, Turn, hits, library_hits, row_id, upload, user_id, wait_searchable};
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_path_buf();
    let dev = user_with_token(&data_dir, "dev@example.com");
    let brief = user_with_token(&data_dir, "brief@example.com");
    let path = data_dir.to_str().unwrap();
    // The team's retention (1 day) overrides the organisation's (400) for its members.
    for args in [
        &["team", "add", "--data-dir", path, "--slug", "brief", "--name", "Brief", "--retention-days", "1"][..],
        &["team", "add-member", "--data-dir", path, "--team", "brief", "--email", "brief@example.com"][..],
    ] {
        let out = sightline(args);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let server = InProcess::start(&data_dir, &dev);
    let now = server.clock.now_ms();
    let two_days_ago = now - 2 * 86_400_000;
    for (token, session, at) in
        [(&dev, "old", two_days_ago), (&dev, "recent", now), (&brief, "b-old", two_days_ago), (&brief, "b-new", now)]
    {
        assert_eq!(server.server.post_events(token, &envelope(session_events(session, at, 6))).0, 200);
    }
    for (session, word, at) in [("old", "zanzibar", two_days_ago), ("recent", "quokka", now)] {
        let said = format!("tell me about {word}");
        let turns = [Turn::User(&said), Turn::Assistant("here it is")];
        let transcript = Transcript {
            agent: "claude_code",
            session,
            model: "claude-sonnet-4-5-20250929",
            start_ms: at,
            turns: &turns,
        };
        assert_eq!(upload(&server.server, &dev, "claude_code", session, &transcript.text()).0, 200);
    }
    let (old_id, recent_id) = (row_id(&data_dir, "claude_code", "old"), row_id(&data_dir, "claude_code", "recent"));
    wait_searchable(&server.server, &dev, &[&old_id, &recent_id]);
    assert_eq!(hits(&server.server, &dev, "zanzibar").len(), 1, "searchable before the sweep");
    let conn = server.server.main_db();
    let figures_before: Vec<Vec<i64>> =
        ["old", "recent", "b-old", "b-new"].iter().map(|s| session_aggregates(&conn, s)).collect();
    assert_eq!((partition_rows(&data_dir, two_days_ago), partition_rows(&data_dir, now)), (Some(12), Some(12)));

    // What the console's preview says the sweep 399 days on will remove, per retention:
    // the organisation's (dev: the old day's 6 events and its transcript) and the team's
    // (brief: both days' 6), which the run below removes exactly.
    let later = now + 399 * 86_400_000;
    use sightline::deletion::retention_preview::preview;
    use sightline::events::days::Counted;
    let mut counted = Counted::default();
    let lines = |counted: &mut Counted| -> Vec<(i64, Vec<String>, i64, i64, i64, i64)> {
        let preview = preview(&conn, &data_dir, 400, later, counted).unwrap();
        preview.into_iter().map(|l| (l.days, l.teams, l.people, l.events, l.partitions, l.transcripts)).collect()
    };
    let first = lines(&mut counted);
    assert_eq!(first, vec![(1, vec!["brief".to_string()], 1, 12, 2, 0), (400, vec![], 1, 6, 1, 1)]);
    assert_eq!(lines(&mut counted), first, "counted again from what was kept, the same");
    // A day written since is counted again: 6 more of dev's events two days ago.
    assert_eq!(server.server.post_events(&dev, &envelope(session_events("old-2", two_days_ago, 6))).0, 200);
    let grown = lines(&mut counted);
    assert_eq!(grown, vec![(1, vec!["brief".to_string()], 1, 12, 2, 0), (400, vec![], 1, 12, 1, 1)]);
    assert_eq!(lines(&mut Counted::default()), grown, "as a fresh count says");

    // 399 days on: the organisation's 400 days end a day ago, the team's 1 day 398 days
    // ago. The 02:00 slot has passed, so the sweep runs once.
    server.clock.advance_ms(399 * 86_400_000);
    wait_until(Duration::from_secs(30), "a sweep-retention run", || {
        runs(&data_dir).iter().any(|(job, _, outcome)| job == "sweep-retention" && outcome != "running")
    });
    let run: (String, Option<i64>, Option<String>) = conn
        .query_row("SELECT outcome, rows_touched, error FROM job_runs WHERE job = 'sweep-retention'", [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .unwrap();
    // 18 events of the dropped day (12, and the 6 sent after the first preview), brief's
    // 6 of today, and one transcript.
    assert_eq!(run, ("succeeded".to_string(), Some(25), None));
    assert_eq!(partition_rows(&data_dir, two_days_ago), None, "every row of that day is past retention: the file goes");
    let ledger: i64 = conn
        .query_row(
            "SELECT count(*) FROM event_partitions WHERE day = ?1",
            [sightline::events::partitions::Day::of_ms(two_days_ago).to_string()],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(ledger, 0, "and its ledger entry");
    assert_eq!(partition_rows(&data_dir, now), Some(6), "today keeps dev's rows and loses brief's");
    let owners: Vec<String> = rusqlite::Connection::open(sightline::events::partitions::partition_path(
        &data_dir,
        sightline::events::partitions::Day::of_ms(now),
    ))
    .unwrap()
    .prepare("SELECT DISTINCT session_id FROM events")
    .unwrap()
    .query_map([], |row| row.get(0))
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap();
    assert_eq!(owners, ["recent"]);

    // The session rows outlive their raw events, figures unchanged.
    let figures_after: Vec<Vec<i64>> =
        ["old", "recent", "b-old", "b-new"].iter().map(|s| session_aggregates(&conn, s)).collect();
    assert_eq!(figures_before, figures_after);
    // The swept session's transcript is gone: file, index row, pointer and documents.
    assert!(!data_dir.join(sightline::transcripts::store::relative_path(&old_id)).exists());
    let (pointer, index_rows): (Option<String>, i64) = conn
        .query_row(
            "SELECT transcript_path, (SELECT count(*) FROM transcript_index WHERE session_id = ?1) FROM sessions WHERE id = ?1",
            [&old_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!((pointer, index_rows), (None, 0));
    // (Read from the index itself: a year on, the test's credentials have expired.)
    let owner = user_id(&data_dir, "dev@example.com");
    assert!(library_hits(&data_dir, &owner, "zanzibar").is_empty(), "its documents are gone");
    assert_eq!(library_hits(&data_dir, &owner, "quokka").len(), 1, "the kept session's are not");
}
