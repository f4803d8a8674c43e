//! The real binary's operator verbs: output, exit codes and error messages.

use crate::common;

use common::*;

#[test]
fn config_default_prints_the_annotated_file_that_parses_to_the_defaults() {
    let out = sightline(&["config", "default"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("SIGHTLINE_INGEST_ADDR") && text.contains("ingest = \"127.0.0.1:4000\""), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sightline.toml");
    std::fs::write(&file, &text).unwrap();
    let shown = sightline(&["config", "show", "--config", file.to_str().unwrap()]);
    assert!(shown.status.success(), "{}", stderr(&shown));
}

#[test]
fn a_bad_config_file_stops_with_the_key_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[listen]\ningest = \"not an address\"\n").unwrap();
    let out = sightline(&["serve", "--config", file.to_str().unwrap(), "--data-dir", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.toml"), "{}", stderr(&out));
}

#[test]
fn user_add_validates_and_refuses_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let bad = sightline(&["user", "add", "--data-dir", data, "--email", "not-an-email", "--name", "X"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("not-an-email"), "{}", stderr(&bad));
    let role =
        sightline(&["user", "add", "--data-dir", data, "--email", "a@example.com", "--name", "A", "--role", "king"]);
    assert!(stderr(&role).contains("king"), "{}", stderr(&role));
    assert!(
        sightline(&["user", "add", "--data-dir", data, "--email", "a@example.com", "--name", "A"]).status.success()
    );
    let again = sightline(&["user", "add", "--data-dir", data, "--email", "A@example.com", "--name", "A"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already exists"), "{}", stderr(&again));
    let list = sightline(&["user", "list", "--data-dir", data]);
    assert_eq!(stdout(&list).lines().count(), 2, "{}", stdout(&list));
}

#[test]
fn token_create_prints_the_secret_once_and_stores_only_its_hash() {
    let dir = tempfile::tempdir().unwrap();
    let token = user_with_token(dir.path(), "t@example.com");
    assert!(token.starts_with("slh_hook_"), "{token}");
    let conn = rusqlite::Connection::open(dir.path().join("main.db")).unwrap();
    let (stored, expires, created): (Vec<u8>, i64, i64) = conn
        .query_row("SELECT token_sha256, expires_at_ms, created_at_ms FROM auth_tokens", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(stored, sightline::auth::tokens::digest(&token).to_vec());
    assert_eq!(expires - created, 365 * 86_400_000);
    let dump: String = conn
        .query_row("SELECT group_concat(quote(token_sha256) || id || coalesce(label, '')) FROM auth_tokens", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(!dump.contains(&token));
    let unknown = sightline(&[
        "token",
        "create",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--user",
        "x@example.com",
        "--kind",
        "hook",
    ]);
    assert!(stderr(&unknown).contains("x@example.com"), "{}", stderr(&unknown));
    let kind = sightline(&[
        "token",
        "create",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--user",
        "t@example.com",
        "--kind",
        "root",
    ]);
    assert!(stderr(&kind).contains("root"), "{}", stderr(&kind));
}

#[test]
fn healthcheck_exits_0_with_a_running_server_and_1_without() {
    let mut server = TestServer::spawn();
    let data = server.data_dir.to_str().unwrap().to_string();
    assert_eq!(sightline(&["healthcheck", "--data-dir", &data]).status.code(), Some(0));
    assert_eq!(sightline(&["healthcheck", "--url", &server.ingest]).status.code(), Some(0));
    server.terminate();
    let down = sightline(&["healthcheck", "--data-dir", &data]);
    assert_eq!(down.status.code(), Some(1));
    assert!(stderr(&down).contains("unhealthy"));
    assert_eq!(sightline(&["healthcheck", "--url", "http://127.0.0.1:9"]).status.code(), Some(1));
}

#[test]
fn a_taken_port_is_reported_with_the_listener_name() {
    let blocker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = blocker.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = sightline(&[
        "serve",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--ingest-addr",
        "127.0.0.1:0",
        "--web-addr",
        &port,
        "--github-addr",
        "127.0.0.1:0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("listen.web"), "{}", stderr(&out));
}

#[test]
fn compact_compresses_old_partitions_and_they_stay_readable() {
    let server = TestServer::spawn();
    let old = now_ms() - 9 * 86_400_000;
    let mut events = session_events("s-old", old, 300);
    for (i, e) in events.iter_mut().enumerate() {
        e["metadata"] =
            serde_json::json!({"hook_event": "PostToolUse", "cwd_hash": format!("{:016x}", i % 7), "offset": i});
    }
    assert_eq!(server.post_events(&server.token, &envelope(events)).1["accepted"], 300);
    let data = server.data_dir.to_str().unwrap();
    let out = sightline(&["compact", "--data-dir", data]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("300 rows"), "{}", stdout(&out));
    let base = format!("{}/v1/me/sessions/claude_code/s-old/events?limit=1000", server.ingest);
    let (status, page) = get_auth(&base, &server.token);
    assert_eq!(status, 200);
    let events = page["events"].as_array().unwrap();
    assert_eq!(events.len(), 300);
    assert_eq!(events[5]["metadata"]["offset"], 5, "metadata decompresses after compaction");
    assert_eq!(stdout(&sightline(&["compact", "--data-dir", data])).trim(), "nothing to compact");
    let missing = sightline(&["compact", "--data-dir", data, "--day", "1999-01-01"]);
    assert!(stderr(&missing).contains("1999-01-01"));
}

#[test]
fn jobs_list_names_all_twenty_jobs_and_jobs_set_changes_a_tier_one_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_str().unwrap();
    let list = || {
        let out = sightline(&["jobs", "list", "--data-dir", data_dir]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let text = list();
    let lines: Vec<Vec<String>> = text.lines().map(|line| line.split('\t').map(str::to_string).collect()).collect();
    assert_eq!(lines.len(), 21, "a header and 20 jobs: {text}");
    assert_eq!(
        lines[0],
        ["job", "tier", "schedule", "enabled", "target", "available", "last run", "next run", "alert"]
    );
    let row = |name: &str| lines.iter().find(|line| line[0] == name).unwrap().clone();
    assert_eq!(row("run-deletions")[1..7], ["fixed", "every 6 h", "yes", "< 2 min", "yes", "—"]);
    assert!(row("run-deletions")[7].ends_with(":00:00.000Z"), "the next 6-hour slot: {:?}", row("run-deletions"));
    assert_eq!(row("judge-sessions")[2..6], ["cron 30 6 * * * (UTC)", "no", "< 30 min", "yes"], "seeded disabled");
    assert_eq!(row("evaluate-alerts")[5], "yes");
    assert_eq!(
        row("reconcile-cost")[1..6],
        ["one-shot", "cron 0 7 * * * (UTC)", "no", "< 15 min", "yes"],
        "daily only when SIGHTLINE_BILLING_RECONCILIATION_ENABLED=true"
    );
    assert_eq!(row("sync-jira")[5], "yes");
    let tiers = |tier: &str| lines.iter().filter(|line| line[1] == tier).count();
    assert_eq!((tiers("job_config"), tiers("fixed"), tiers("one-shot")), (8, 8, 4));

    let set = sightline(&["jobs", "set", "--data-dir", data_dir, "index-transcripts", "--cron", "15 4 * * *"]);
    assert!(set.status.success(), "{}", stderr(&set));
    assert_eq!(stdout(&set).trim(), "index-transcripts: cron 15 4 * * * (UTC), enabled");
    let bad = sightline(&["jobs", "set", "--data-dir", data_dir, "index-transcripts", "--cron", "at dawn"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("\"at dawn\" is not a cron pattern"), "{}", stderr(&bad));
    let fixed = sightline(&["jobs", "set", "--data-dir", data_dir, "run-deletions", "--enabled", "false"]);
    assert_eq!(fixed.status.code(), Some(2));
    assert!(stderr(&fixed).contains("run-deletions is not a job_config job"), "{}", stderr(&fixed));
    let text = list();
    let index = text.lines().find(|line| line.starts_with("index-transcripts\t")).unwrap();
    assert!(index.contains("\tcron 15 4 * * * (UTC) (set)\tyes\t"), "{index}");
    assert!(index.ends_with("T04:15:00.000Z\t"), "no standing alert: {index}");
}
