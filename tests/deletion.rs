//! Deletion requests end to end (issue 6): two people with sessions whose events span
//! two day partitions (one compacted), an indexed transcript, feedback and session
//! scores, and an event with no session row; a deletion request for one of them;
//! `sightline run-deletions` removes every trace of that person and nothing of the
//! other's, records completion and audits both ends. A run that stops midway (a target
//! that fails, standing in for a kill) is finished by the next run; the CLI runs beside
//! a live server, whose HTTP routes take and show the request. Retention, stopped midway,
//! is finished by its next sweep the same way.

use crate::common;

use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

use common::transcripts::*;
use common::*;
use serde_json::{Value, json};
use sightline::cli::deletions::CliTarget;
use sightline::deletion::{self, runner};
use sightline::events::partitions::Day;
use sightline::events::store::Store;

const ADA: &str = "dev@example.com";
const BO: &str = "bo@example.com";

/// The seeded data directory: Ada (the server's first user) and Bo have the same kinds
/// of data. `shared-1` is an agent session id both of them used.
struct World {
    server: TestServer,
    bo_token: String,
    ada: String,
    bo: String,
    /// Ada's session row ids (long, shared, transcript) and Bo's.
    ada_rows: Vec<String>,
    bo_rows: Vec<String>,
    /// Ada's events stored, all partitions.
    ada_events: i64,
    /// The compacted partition.
    old_day: Day,
}

fn with_metadata(mut events: Vec<Value>) -> Vec<Value> {
    for (i, event) in events.iter_mut().enumerate() {
        event["metadata"] = json!({"hook_event": "PostToolUse", "cwd_hash": format!("{:016x}", i % 5), "offset": i,
            "note": "[REDACTED:email]"});
    }
    events
}

fn post(server: &TestServer, token: &str, events: Vec<Value>) {
    let n = events.len();
    let (status, body) = server.post_events(token, &envelope(events));
    assert_eq!((status, &body["accepted"]), (200, &json!(n)), "{body}");
}

/// One person's data: `<name>-long` (20 events nine days ago, in the partition that is
/// compacted, and 3 late ones today), `shared-1` (5 today), and a transcript session
/// whose words are `words`. Returns the row ids.
fn person(server: &TestServer, token: &str, email: &str, name: &str, words: &str) -> Vec<String> {
    let (now, old) = (now_ms(), now_ms() - 9 * 86_400_000);
    let long = format!("{name}-long");
    post(server, token, with_metadata(session_events(&long, old, 20)));
    post(server, token, vec![event("prompt_submit", &long, now), event("turn_end", &long, now + 1)]);
    post(server, token, vec![event("notification", &long, now + 2)]);
    post(server, token, with_metadata(session_events("shared-1", now, 5)));
    let turns = [Turn::User(words), Turn::Assistant("Counted.")];
    let session = format!("{name}-transcript");
    let transcript =
        Transcript { agent: "codex", session: &session, model: "gpt-5.1-codex", start_ms: now, turns: &turns };
    let with_transcript = session_with_transcript(server, token, &transcript);
    let user = user_id(&server.data_dir, email);
    let conn = server.main_db();
    let row = |session: &str| -> String {
        conn.query_row("SELECT id FROM sessions WHERE user_id = ?1 AND agent_session_id = ?2", [&user, session], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let rows = vec![row(&long), row("shared-1"), with_transcript];
    // Nothing writes feedback or scores yet: rows as the feedback and scoring code will.
    conn.execute(
        "INSERT INTO session_feedback (session_id, user_id, thumbs, note, created_at_ms) VALUES (?1, ?2, 1, 'ok', 0)",
        [&rows[0], &user],
    )
    .unwrap();
    for (i, row) in rows.iter().enumerate() {
        conn.execute(
            "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, value, source, created_at_ms)
             VALUES ('session', ?1, ?2, '1', 0.5, 'HEURISTIC', 0)",
            rusqlite::params![row, format!("friction-{i}")],
        )
        .unwrap();
    }
    // The judge's words on the transcript, as `judge-sessions` stores them, and a file
    // an older judge version left.
    let verdict = sightline::scoring::judge::Verdict {
        score: 4,
        rationale: format!("{name} judged: {words}"),
        input_tokens: 10,
        output_tokens: 5,
    };
    sightline::scoring::judge::store(&conn, &server.data_dir, &rows[2], &verdict, 1, now).unwrap();
    std::fs::write(server.data_dir.join(format!("judge/{}-v0.txt", rows[2])), format!("{name} judged before")).unwrap();
    rows
}

/// Every file under the data directory, with its path relative to it.
fn every_file(data_dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut folders = vec![data_dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(data_dir).unwrap().to_string_lossy().into_owned();
                files.push((relative, std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

/// The files that name or hold any of `marks` (in their path or their bytes).
fn files_with(files: &[(String, Vec<u8>)], marks: &[String]) -> Vec<String> {
    files
        .iter()
        .filter(|(path, bytes)| {
            marks
                .iter()
                .any(|mark| path.contains(mark.as_str()) || bytes.windows(mark.len()).any(|w| w == mark.as_bytes()))
        })
        .map(|(path, _)| path.clone())
        .collect()
}

/// An event of `user_id` in today's partition with no session row, as a crash between
/// the partition's commit and main.db's could leave (commit_seq 0: never folded).
fn orphan_event(data_dir: &Path, user_id: &str) {
    let day = Day::of_ms(now_ms());
    let conn = rusqlite::Connection::open(sightline::events::partitions::partition_path(data_dir, day)).unwrap();
    conn.execute(
        "INSERT INTO events (event_id, ts_ms, received_ms, commit_seq, user_id, agent_type, session_id, type, run_kind)
         VALUES (?1, ?2, ?2, 0, ?3, 'claude_code', 'ghost', 'session_start', 'INTERACTIVE')",
        rusqlite::params![uuid::Uuid::now_v7().as_bytes().as_slice(), now_ms(), user_id],
    )
    .unwrap();
}

fn seed() -> World {
    let server = TestServer::spawn();
    let bo_token = user_with_token(&server.data_dir, BO);
    let ada_rows = person(&server, &server.token, ADA, "ada", "Count the walrus herd");
    let bo_rows = person(&server, &bo_token, BO, "bo", "Count the narwhal pod");
    let old_day = Day::of_ms(now_ms() - 9 * 86_400_000);
    let out = cli(&server.data_dir, &["compact", "--day", &old_day.to_string()]);
    assert!(out.contains("40 rows"), "{out}");
    wait_searchable(&server, &server.token, &[&ada_rows[2]]);
    wait_searchable(&server, &bo_token, &[&bo_rows[2]]);
    let (ada, bo) = (user_id(&server.data_dir, ADA), user_id(&server.data_dir, BO));
    orphan_event(&server.data_dir, &ada);
    let compacted = sightline::events::partitions::open_for_read(&server.data_dir, old_day)
        .unwrap()
        .unwrap()
        .query_row("SELECT count(*) FROM events WHERE user_id = ?1 AND metadata_zst IS NOT NULL", [&ada], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
    assert_eq!(compacted, 20, "Ada's old events are in a compacted partition");
    let ada_events = events_of(&server.data_dir, &ada);
    assert_eq!(ada_events, 20 + 3 + 5 + 2 + 1);
    let mut server = server;
    assert_eq!(server.terminate(), Some(0));
    fold_aggregates(&server.data_dir);
    World { server, bo_token, ada, bo, ada_rows, bo_rows, ada_events, old_day }
}

/// The aggregate refresh, as the server's job runs it (every 15 s, so a slow machine's
/// server may or may not have run it before the seed stops it): the aggregates then
/// hold each person's days and recent sessions, as a deletion finds them.
fn fold_aggregates(data_dir: &Path) {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    sightline::analytics::refresh::refresh(data_dir, &conn, &commit_on(&conn), usize::MAX).unwrap();
}

/// A user's rows over every partition file, compacted ones included.
fn events_of(data_dir: &Path, user_id: &str) -> i64 {
    let mut total = 0;
    for day in sightline::events::partitions::list_days(data_dir).unwrap() {
        let conn = sightline::events::partitions::open_for_read(data_dir, day).unwrap().unwrap();
        total += conn
            .query_row("SELECT count(*) FROM events WHERE user_id = ?1", [user_id], |r| r.get::<_, i64>(0))
            .unwrap();
    }
    total
}

/// Everything of `user_id` in main.db, the partitions, the transcript files and the
/// index, as one comparable value.
fn traces(data_dir: &Path, user_id: &str, rows: &[String], word: &str) -> Value {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    let count =
        |sql: &str| -> i64 { rows.iter().map(|row| conn.query_row(sql, [row], |r| r.get::<_, i64>(0)).unwrap()).sum() };
    json!({
        "sessions": conn.query_row("SELECT count(*) FROM sessions WHERE user_id = ?1", [user_id], |r| r.get::<_, i64>(0)).unwrap(),
        "session_rows": count("SELECT count(*) FROM sessions WHERE id = ?1"),
        "models": count("SELECT count(*) FROM session_models WHERE session_id = ?1"),
        "transcript_rows": count("SELECT count(*) FROM transcript_index WHERE session_id = ?1"),
        "feedback": count("SELECT count(*) FROM session_feedback WHERE session_id = ?1"),
        "scores": count("SELECT count(*) FROM scores WHERE subject_type = 'session' AND subject_id = ?1"),
        "events": events_of(data_dir, user_id),
        "files": rows.iter().filter(|row| data_dir.join(format!("transcripts/{row}.jsonl.zst")).exists()).count(),
        "hits": library_hits(data_dir, user_id, word).len() + library_hits(data_dir, user_id, &format!("session:{}", rows[2])).len(),
        "redaction_rows": conn.query_row("SELECT count(*) FROM agg_redactions_daily WHERE user_id = ?1", [user_id], |r| r.get::<_, i64>(0)).unwrap(),
        "person_days": conn.query_row("SELECT count(*) FROM agg_person_days WHERE user_id = ?1", [user_id], |r| r.get::<_, i64>(0)).unwrap(),
        "session_days": conn.query_row("SELECT count(*) FROM agg_session_days WHERE user_id = ?1", [user_id], |r| r.get::<_, i64>(0)).unwrap(),
    })
}

fn nothing() -> Value {
    json!({"sessions": 0, "session_rows": 0, "models": 0, "transcript_rows": 0, "feedback": 0, "scores": 0,
        "events": 0, "files": 0, "hits": 0, "redaction_rows": 0, "person_days": 0, "session_days": 0})
}

fn request_of(data_dir: &Path, user_id: &str) -> deletion::DeletionRequest {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    deletion::by_user(&conn, user_id).unwrap().expect("a deletion request")
}

fn audit_count(data_dir: &Path, user_id: &str, action: &str) -> i64 {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    conn.query_row(
        "SELECT count(*) FROM audit_log WHERE subject_user_id = ?1 AND action = ?2",
        [user_id, action],
        |r| r.get(0),
    )
    .unwrap()
}

/// Deleted bytes are overwritten, not only unlinked: in the compacted partition (rebuilt
/// after the deletion) and in main.db (secure_delete; small enough here that no b-tree
/// page was rebalanced, which can leave key bytes in a page's unused space).
fn assert_overwritten(data_dir: &Path, compacted: Day) {
    let partition = sightline::events::partitions::partition_path(data_dir, compacted);
    for file in [partition, data_dir.join("main.db")] {
        let bytes = std::fs::read(&file).unwrap();
        assert!(!bytes.windows(8).any(|w| w == b"ada-long"), "{} keeps deleted bytes", file.display());
    }
}

fn cli(data_dir: &Path, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--data-dir", data_dir.to_str().unwrap()]);
    let out = sightline(&all);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn run_deletions_removes_every_trace_of_the_person_and_nothing_of_anyone_else() {
    let mut world = seed();
    let data_dir = world.server.data_dir.clone();
    let bo_before = traces(&data_dir, &world.bo, &world.bo_rows, "narwhal");
    assert_eq!(bo_before["sessions"], 3);
    assert_eq!(bo_before["hits"], 1 + 2, "one message names the animal; the session has two");
    assert_eq!(traces(&data_dir, &world.ada, &world.ada_rows, "walrus")["hits"], 1 + 2);
    assert!(bo_before["redaction_rows"].as_i64().unwrap() > 0, "the secrets counted per person");
    assert_eq!(
        (bo_before["person_days"].clone(), bo_before["session_days"].clone()),
        (json!(1), json!(3)),
        "today's: older days' partials are pruned"
    );

    let asked = cli(&data_dir, &["deletion", "request", "--user", ADA]);
    let again = cli(&data_dir, &["deletion", "request", "--user", ADA]);
    assert_eq!(asked.split_whitespace().next(), again.split_whitespace().next(), "asking twice gives the same request");
    assert!(asked.contains("pending"), "{asked}");
    assert_eq!(audit_count(&data_dir, &world.ada, "DELETION_REQUESTED"), 1);

    // An upload of the transcript session still in progress: chunks not yet redacted.
    let staged = data_dir.join(format!("transcripts/incoming/{}-{}", world.ada_rows[2], "ab".repeat(32)));
    std::fs::create_dir_all(&staged).unwrap();
    std::fs::write(staged.join("0"), b"walrus chunk").unwrap();

    // Every place the data directory holds a person's content: before, Ada's marks are
    // in files; after, in none (Bo's stay).
    let ada_marks: Vec<String> =
        world.ada_rows.iter().cloned().chain(["walrus".to_string(), "ada judged".to_string()]).collect();
    let bo_marks: Vec<String> =
        world.bo_rows.iter().cloned().chain(["narwhal".to_string(), "bo judged".to_string()]).collect();
    let before = every_file(&data_dir);
    let ada_files = files_with(&before, &ada_marks);
    for place in ["main.db", "judge/", "transcripts/"] {
        assert!(ada_files.iter().any(|f| f.starts_with(place)), "Ada's content is in {place} before: {ada_files:?}");
    }

    let ran = cli(&data_dir, &["run-deletions"]);
    assert!(ran.contains("completed 1 deletion requests: 3 sessions, 31 events, 1 transcripts removed"), "{ran}");
    let after = every_file(&data_dir);
    let listing: Vec<&String> = after.iter().map(|(path, _)| path).collect();
    assert_eq!(files_with(&after, &ada_marks), Vec::<String>::new(), "nothing of Ada's remains in {listing:?}");
    let bo_files = files_with(&after, &bo_marks);
    assert!(bo_files.iter().any(|f| f.starts_with("judge/")), "Bo's rationale stays: {bo_files:?}");
    assert!(!staged.exists(), "uploads in progress go too");
    assert_eq!(traces(&data_dir, &world.ada, &world.ada_rows, "walrus"), nothing());
    assert_eq!(traces(&data_dir, &world.bo, &world.bo_rows, "narwhal"), bo_before, "Bo's data is untouched");
    assert_overwritten(&data_dir, world.old_day);

    let request = request_of(&data_dir, &world.ada);
    assert_eq!((request.status, request.sessions_deleted, request.events_deleted), ("completed", 3, world.ada_events));
    assert!(request.completed_at_ms >= request.started_at_ms && request.started_at_ms.is_some());
    assert_eq!(audit_count(&data_dir, &world.ada, "DELETION_REQUESTED"), 1);
    assert_eq!(audit_count(&data_dir, &world.ada, "DELETION_COMPLETED"), 1);
    assert!(cli(&data_dir, &["user", "list"]).contains(ADA), "the account itself is kept");
    assert!(cli(&data_dir, &["run-deletions"]).contains("completed 0 deletion requests"));
    assert_eq!(audit_count(&data_dir, &world.ada, "DELETION_COMPLETED"), 1, "nothing runs twice");

    // A server started afterwards serves Bo's compacted and fresh events, and nothing of Ada's.
    world.server.start();
    let url = |token: &str, session: &str| {
        get_auth(&format!("{}/v1/me/sessions/claude_code/{session}/events?limit=100", world.server.ingest), token)
    };
    let (status, page) = url(&world.bo_token, "bo-long");
    assert_eq!((status, page["events"].as_array().map(Vec::len)), (200, Some(23)));
    assert_eq!(page["events"][5]["metadata"]["offset"], 5, "compacted rows still decompress");
    assert_eq!(url(&world.server.token, "ada-long").0, 404);
    assert_eq!(hits(&world.server, &world.bo_token, "narwhal").len(), 1);
    assert_eq!(hits(&world.server, &world.server.token, "walrus"), vec![]);
}

/// The CLI's target, failing at the `fail_at`-th `main.db` change: what a kill at that
/// point leaves behind (the change before it committed, nothing after it ran).
struct Crashing<'a> {
    inner: CliTarget<'a>,
    changes: Cell<usize>,
    fail_at: usize,
}

impl runner::DeletionTarget for Crashing<'_> {
    fn change_main(&self, change: sightline::events::writer::MainChange) -> Result<(), sightline::db::DbError> {
        self.changes.set(self.changes.get() + 1);
        if self.changes.get() == self.fail_at {
            return Err(sightline::db::DbError::Io {
                context: "killed".into(),
                source: std::io::Error::other("kill -9"),
            });
        }
        self.inner.change_main(change)
    }

    fn forget_transcript(&self, session_id: &str) -> Result<(), String> {
        self.inner.forget_transcript(session_id)
    }

    fn drop_partition(
        &self,
        rewrite: &sightline::events::store::Rewrite<'_>,
        day: sightline::events::partitions::Day,
    ) -> Result<bool, sightline::db::DbError> {
        self.inner.drop_partition(rewrite, day)
    }
}

fn run_crashing(data_dir: &Path, fail_at: usize) -> runner::DeletionReport {
    let conn = sightline::db::open(
        &data_dir.join("main.db"),
        sightline::db::Durability::PowerSafe,
        sightline::db::Checkpointing::Automatic,
    )
    .unwrap();
    let target = Crashing { inner: CliTarget::new(&conn, data_dir), changes: Cell::new(0), fail_at };
    let store = sightline::events::store::Store::at(data_dir);
    let report = runner::run(&conn, &store.rewriting("test").unwrap(), &target).unwrap();
    target.inner.close().unwrap();
    report
}

#[test]
fn a_run_stopped_midway_is_finished_by_the_next_run() {
    let world = seed();
    let data_dir = world.server.data_dir.clone();
    let bo_before = traces(&data_dir, &world.bo, &world.bo_rows, "narwhal");
    cli(&data_dir, &["deletion", "request", "--user", ADA]);

    // Change 1 marks the request started; change 2 would remove the first session's rows,
    // after every session's events went: the rows stay, so the next run finds them.
    let report = run_crashing(&data_dir, 2);
    assert_eq!((report.requests_completed, report.failed.len()), (0, 1), "{report:?}");
    let left = traces(&data_dir, &world.ada, &world.ada_rows, "walrus");
    assert_eq!(
        (left["sessions"].clone(), left["events"].clone()),
        (json!(3), json!(1)),
        "only the orphan event is left"
    );
    assert_eq!(request_of(&data_dir, &world.ada).status, "running");

    // Started already, so change 1 removes the first session's rows; change 2 fails.
    let report = run_crashing(&data_dir, 2);
    assert_eq!((report.sessions_deleted, report.failed.len()), (1, 1), "{report:?}");
    assert_eq!(traces(&data_dir, &world.ada, &world.ada_rows, "walrus")["sessions"], 2);

    let report = run_crashing(&data_dir, 0);
    assert_eq!((report.requests_completed, report.sessions_deleted, report.failed.len()), (1, 2, 0), "{report:?}");
    assert_eq!(traces(&data_dir, &world.ada, &world.ada_rows, "walrus"), nothing());
    assert_eq!(traces(&data_dir, &world.bo, &world.bo_rows, "narwhal"), bo_before);
    let request = request_of(&data_dir, &world.ada);
    assert_eq!((request.status, request.sessions_deleted), ("completed", 3));
    assert!(request.events_deleted < world.ada_events, "events a stopped run removed are not counted");
    assert_overwritten(&data_dir, world.old_day);
    assert_eq!(audit_count(&data_dir, &world.ada, "DELETION_COMPLETED"), 1);
}

/// An access token for `email`, as a web sign-in would issue it (sign-in is built
/// elsewhere; this uses its library on the server's data directory and key).
fn access_token(data_dir: &Path, email: &str) -> String {
    use sightline::auth::signins::{self as sessions, Client, Method};
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    let user = user_id(data_dir, email);
    let signed_in = sessions::start(&conn, &user, Client::Web, Method::Password, now_ms()).unwrap();
    let keys = sightline::auth::jwt::SigningKeys::load_or_create(data_dir, "sightline").unwrap();
    keys.issue(&user, &signed_in.session_id, now_ms()).unwrap()
}

fn post_deletion(server: &TestServer, token: &str) -> (u16, Value) {
    post_json(&format!("{}/api/me/deletion", server.web), token, &json!({}))
}

#[test]
fn run_deletions_works_beside_a_running_server_and_the_person_sees_the_request_over_http() {
    let mut world = seed();
    // A restart puts the server's own deletion run (a minute after start) well after
    // this test's, so the run below is the CLI's.
    world.server.start();
    let server = &world.server;
    let token = access_token(&server.data_dir, ADA);
    let status_url = format!("{}/api/me/deletion", server.web);
    assert_eq!(get_auth(&status_url, &token).0, 404, "no request yet");
    assert_eq!(post_deletion(server, &server.token).0, 401, "a hook token is not a sign-in");

    let (status, asked) = post_deletion(server, &token);
    assert_eq!((status, &asked["status"], &asked["user_id"]), (202, &json!("pending"), &json!(world.ada)), "{asked}");
    let (status, again) = post_deletion(server, &token);
    assert_eq!((status, &again["id"]), (202, &asked["id"]), "asking twice gives the same request");
    assert_eq!(get_auth(&status_url, &token), (200, asked.clone()));

    let ran = cli(&server.data_dir, &["run-deletions"]);
    assert!(ran.contains("completed 1 deletion requests: 3 sessions"), "{ran}");
    assert_eq!(get(&format!("{}/readyz", server.ingest)).0, 200, "the server still answers");
    let (status, done) = get_auth(&status_url, &token);
    assert_eq!((status, &done["id"], &done["status"]), (200, &asked["id"], &json!("completed")), "{done}");
    assert_eq!(done["sessions_deleted"], 3);
    assert_eq!(done["events_deleted"], world.ada_events);
    wait_until(Duration::from_secs(30), "the server's searcher to drop Ada's documents", || {
        hits(server, &server.token, "walrus").is_empty()
    });
    assert_eq!(hits(server, &world.bo_token, "narwhal").len(), 1);
    assert_eq!(events_of(&server.data_dir, &world.ada), 0);
    assert_eq!(events_of(&server.data_dir, &world.bo), 30);
    assert_eq!(server.session(&server.token, "ada-long").0, 404);

    // The account stays: Ada can record again, and ask again (a new request).
    post(server, &server.token, vec![event("session_start", "ada-new", now_ms())]);
    assert_eq!(server.session(&server.token, "ada-new").0, 200);
    let (status, second) = post_deletion(server, &token);
    assert_eq!((status, &second["status"]), (202, &json!("pending")));
    assert_ne!(second["id"], asked["id"]);
}

/// A compacted partition large enough to train a zstd dictionary: the dictionary holds
/// samples of the rows, so after a deletion the partition is compacted again with a
/// dictionary trained on what is left, and nothing of the person stays in the file.
#[test]
fn a_deleted_persons_rows_leave_the_compaction_dictionary_too() {
    let server = TestServer::spawn();
    let bo_token = user_with_token(&server.data_dir, BO);
    let old = now_ms() - 9 * 86_400_000;
    let note =
        |name: &str, i: usize| json!({"hook_event": "PostToolUse", "note": format!("{name}-private-note-{}", i % 7)});
    for (token, name) in [(&server.token, "ada"), (&bo_token, "bo")] {
        let mut events = session_events(&format!("{name}-dictionary"), old, 60);
        for (i, event) in events.iter_mut().enumerate() {
            event["metadata"] = note(name, i);
        }
        post(&server, token, events);
    }
    let old_day = Day::of_ms(old);
    let out = cli(&server.data_dir, &["compact", "--day", &old_day.to_string()]);
    assert!(out.contains("120 rows"), "{out}");
    let partition = sightline::events::partitions::partition_path(&server.data_dir, old_day);
    let holds = |needle: &[u8]| std::fs::read(&partition).unwrap().windows(needle.len()).any(|w| w == needle);
    let dictionary: Option<Vec<u8>> = rusqlite::Connection::open(&partition)
        .unwrap()
        .query_row("SELECT zstd_dictionary FROM partition_meta", [], |row| row.get(0))
        .unwrap();
    let dictionary = dictionary.expect("120 rows train a dictionary");
    assert!(
        dictionary.windows(b"ada-private-note".len()).any(|w| w == b"ada-private-note"),
        "the dictionary holds samples of Ada's rows (the leak this test guards against)"
    );

    cli(&server.data_dir, &["deletion", "request", "--user", ADA]);
    let ran = cli(&server.data_dir, &["run-deletions"]);
    assert!(ran.contains("completed 1 deletion requests"), "{ran}");
    assert!(!holds(b"ada-private-note"), "Ada's rows linger in the partition file or its dictionary");
    let left = sightline::events::partitions::open_for_read(&server.data_dir, old_day).unwrap().unwrap();
    let rows = sightline::events::partitions::events_after_seq(&left, 0).unwrap();
    assert_eq!(rows.len(), 60, "Bo's rows stay");
    assert!(rows.iter().all(|row| row.event.metadata.as_deref().unwrap_or("").contains("bo-private-note")));
}

/// Retention (`sweep-retention`) stopped midway, after its first partition drop and
/// before the first transcript's pointer is cleared (the target fails there, standing in
/// for a kill): the next sweep finishes the work, and nothing still kept is lost.
#[test]
fn a_retention_sweep_stopped_midway_is_finished_by_the_next_and_loses_nothing_kept() {
    let mut server = TestServer::spawn();
    let (data_dir, token) = (server.data_dir.clone(), server.token.clone());
    let now = now_ms();
    let two_days_ago = now - 2 * 86_400_000;
    let mut rows = Vec::new();
    for (session, word, at) in
        [("old-1", "zanzibar", two_days_ago), ("old-2", "walrus", two_days_ago), ("recent", "quokka", now)]
    {
        assert_eq!(server.post_events(&token, &envelope(session_events(session, at, 6))).0, 200);
        let said = format!("tell me about {word}");
        let turns = [Turn::User(&said), Turn::Assistant("here it is")];
        let transcript = Transcript {
            agent: "claude_code",
            session,
            model: "claude-sonnet-4-5-20250929",
            start_ms: at,
            turns: &turns,
        };
        assert_eq!(upload(&server, &token, "claude_code", session, &transcript.text()).0, 200);
        rows.push(row_id(&data_dir, "claude_code", session));
    }
    wait_searchable(&server, &token, &rows.iter().map(String::as_str).collect::<Vec<_>>());
    let figures_before: Vec<Vec<i64>> =
        ["old-1", "old-2", "recent"].iter().map(|s| session_aggregates(&server.main_db(), s)).collect();
    server.terminate();
    // The judge's words on an old transcript and on the kept one.
    for row in [&rows[1], &rows[2]] {
        let verdict = sightline::scoring::judge::Verdict {
            score: 3,
            rationale: "judged".into(),
            input_tokens: 1,
            output_tokens: 1,
        };
        sightline::scoring::judge::store(&server.main_db(), &data_dir, row, &verdict, 1, now).unwrap();
    }
    let rationale =
        |row: &String| data_dir.join(format!("judge/{row}-v{}.txt", sightline::scoring::registry::JUDGE.version));

    let conn = sightline::db::open(
        &data_dir.join("main.db"),
        sightline::db::Durability::PowerSafe,
        sightline::db::Checkpointing::Automatic,
    )
    .unwrap();
    // Each sweep holds the store's rewrite lock, as the job does.
    let store = Store::at(&data_dir);
    let sweep = |target: &dyn runner::DeletionTarget| {
        deletion::retention::sweep(&conn, &store.rewriting("test").unwrap(), target, 1)
    };
    let stopping = Crashing { inner: CliTarget::new(&conn, &data_dir), changes: Cell::new(0), fail_at: 1 };
    let stopped = sweep(&stopping);
    assert!(stopped.is_err(), "the first pointer change fails");
    stopping.inner.close().unwrap();
    let old_day = Day::of_ms(two_days_ago);
    assert!(!sightline::events::partitions::partition_path(&data_dir, old_day).exists(), "the day went first");

    let target = CliTarget::new(&conn, &data_dir);
    let report = sweep(&target).unwrap();
    target.close().unwrap();
    assert_eq!(report.transcripts_removed, 2, "both old transcripts (the stopped one again: removal re-runs)");
    assert_eq!((report.partitions_dropped, report.events_deleted), (0, 0), "the events went in the stopped run");
    let pointers: Vec<Option<String>> = rows
        .iter()
        .map(|id| conn.query_row("SELECT transcript_path FROM sessions WHERE id = ?1", [id], |r| r.get(0)).unwrap())
        .collect();
    assert_eq!((pointers[0].is_none(), pointers[1].is_none(), pointers[2].is_some()), (true, true, true));
    assert!(!rationale(&rows[1]).exists() && rationale(&rows[2]).exists(), "the judge's words go with the transcript");
    let refs: Vec<Option<String>> = [&rows[1], &rows[2]]
        .iter()
        .map(|id| conn.query_row("SELECT rationale_ref FROM scores WHERE subject_id = ?1", [id], |r| r.get(0)).unwrap())
        .collect();
    assert_eq!((refs[0].is_none(), refs[1].is_some()), (true, true), "no score points at a removed rationale");
    let owner = user_id(&data_dir, ADA);
    assert!(
        library_hits(&data_dir, &owner, "zanzibar").is_empty() && library_hits(&data_dir, &owner, "walrus").is_empty()
    );
    assert_eq!(library_hits(&data_dir, &owner, "quokka").len(), 1, "the kept transcript is still found");
    let today = sightline::events::partitions::open_for_read(&data_dir, Day::of_ms(now)).unwrap().unwrap();
    assert_eq!(sightline::events::partitions::count_events(&today).unwrap(), 6, "today's events are kept");
    let figures_after: Vec<Vec<i64>> =
        ["old-1", "old-2", "recent"].iter().map(|s| session_aggregates(&conn, s)).collect();
    assert_eq!(figures_before, figures_after, "session rows outlive their raw events");
    // A third run finds nothing left to do.
    let target = CliTarget::new(&conn, &data_dir);
    assert_eq!(sweep(&target).unwrap(), Default::default());
}
