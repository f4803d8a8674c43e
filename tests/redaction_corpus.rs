//! The redaction corpus (vendor keys and header credentials in five line shapes, and
//! clean near misses) through the three places redaction runs: the library, ingest (a
//! real server, read back through the API), and the hook on the laptop (what the real
//! binary uploads). Then re-redaction of events stored under the old rules.

use crate::common;

use common::machine::*;
use common::secrets::{CLEAN, Planted, corpus};
use common::transcript_standin::StandIn;
use common::*;
use serde_json::{Value, json};

const SEED: u64 = 22;

/// A start time whose next minute of events stays within one UTC day (one partition).
fn same_day_start() -> i64 {
    let now = now_ms();
    (now - 60_000).max(now - now % 86_400_000 + 1_000)
}

fn assert_redacted(planted: &[Planted], output_of: impl Fn(usize) -> String) {
    let mut missed = Vec::new();
    for (i, p) in planted.iter().enumerate() {
        let out = output_of(i);
        if out.contains(&p.secret) || !out.contains("[REDACTED:") {
            missed.push(format!("{}/{}: {out}", p.family, p.shape));
        }
    }
    assert!(
        missed.is_empty(),
        "recall below 100 % ({} of {} missed):\n{}",
        missed.len(),
        planted.len(),
        missed.join("\n")
    );
}

#[test]
fn the_library_redacts_every_planted_secret_and_touches_no_clean_line() {
    let planted = corpus(SEED, 20);
    assert_eq!(planted.len(), 20 * 15 * 5);
    assert_redacted(&planted, |i| sightline::redact::redact_text(&planted[i].line).into_owned());
    // The JSON shapes structurally too, as ingest stores metadata.
    for p in planted.iter().filter(|p| p.shape == "json") {
        let mut value: Value = serde_json::from_str(&p.line).unwrap();
        sightline::redact::redact_json(&mut value);
        assert!(!value.to_string().contains(&p.secret), "{}: {value}", p.family);
    }
    for line in CLEAN {
        assert_eq!(sightline::redact::redact_text(line), *line, "a clean line was touched");
    }
}

#[test]
fn ingest_stores_the_corpus_redacted_and_clean_lines_as_sent() {
    let server = TestServer::spawn();
    let planted = corpus(SEED + 1, 2);
    let lines: Vec<&str> = planted.iter().map(|p| p.line.as_str()).chain(CLEAN.iter().copied()).collect();
    let start = same_day_start();
    let events: Vec<Value> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let mut event = event("notification", "corpus-session", start + i as i64);
            event["metadata"] = json!({ "message": line, "index": i });
            event
        })
        .collect();
    for batch in events.chunks(500) {
        let (code, body) = server.post_events(&server.token, &envelope(batch.to_vec()));
        assert_eq!(code, 200, "{body}");
    }
    let url = format!("{}/v1/me/sessions/claude_code/corpus-session/events?limit=1000", server.ingest);
    let (code, stored) = get_auth(&url, &server.token);
    assert_eq!(code, 200, "{stored}");
    let mut by_index = vec![String::new(); lines.len()];
    for event in stored["events"].as_array().unwrap() {
        let index = event["metadata"]["index"].as_u64().unwrap() as usize;
        by_index[index] = event["metadata"]["message"].as_str().unwrap().to_string();
    }
    assert_redacted(&planted, |i| by_index[i].clone());
    for (offset, line) in CLEAN.iter().enumerate() {
        assert_eq!(by_index[planted.len() + offset], *line, "ingest touched a clean line");
    }
}

#[test]
fn the_hook_redacts_the_corpus_before_it_leaves_the_laptop() {
    let server = TestServer::spawn();
    let standin = StandIn::start(&server.ingest);
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let planted = corpus(SEED + 2, 1);
    let lines: Vec<String> =
        planted.iter().map(|p| p.line.clone()).chain(CLEAN.iter().map(|l| l.to_string())).collect();
    // The Claude Code fixture session, its transcript carrying every corpus line as a
    // message the person pasted.
    replay_with_pasted_secrets(home, &standin.url, &server.token, lines.len(), pasted_line);
    let transcript = home.join("transcripts/transcript.jsonl");
    let mut text = std::fs::read_to_string(&transcript).unwrap();
    for (i, line) in lines.iter().enumerate() {
        // Written inside a JSON string: escaped as JSON (quotes, line breaks).
        let escaped = Value::String(line.clone()).to_string();
        text = text.replace(&pasted_line(i), &escaped[1..escaped.len() - 1]);
    }
    std::fs::write(&transcript, text).unwrap();

    let out = client(home, &["flusher", "--once"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let uploads = standin.completed("claude_code", "3f1c2a9e-5b7d-4c1e-9a0f-6d2e8b4c7a11");
    assert_eq!(uploads.len(), 1, "the transcript was uploaded");
    let uploaded: Vec<Value> = uploads[0].lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let contents: Vec<String> =
        uploaded.iter().filter_map(|line| line["message"]["content"].as_str().map(str::to_string)).collect();
    // The pasted messages are the transcript's last ones, in the order written.
    let pasted = &contents[contents.len() - lines.len()..];
    let find = |index: usize| pasted[index].clone();
    assert_redacted(&planted, find);
    for (offset, line) in CLEAN.iter().enumerate() {
        assert_eq!(find(planted.len() + offset), *line, "the hook touched a clean line");
    }
}

fn pasted_line(i: usize) -> String {
    format!("corpus placeholder {i:05}")
}

#[test]
fn backfill_redaction_rewrites_events_stored_under_the_old_rules_and_resumes() {
    let mut server = TestServer::spawn();
    let planted = corpus(SEED + 3, 1);
    let start = same_day_start();
    let events: Vec<Value> = (0..planted.len())
        .map(|i| {
            let mut event = event("notification", "old-rules", start + i as i64);
            event["metadata"] = json!({ "message": format!("placeholder {i}") });
            event
        })
        .collect();
    let (code, body) = server.post_events(&server.token, &envelope(events));
    assert_eq!(code, 200, "{body}");
    server.terminate();

    // Stored under rules that missed these secrets: write them into the partition as
    // the old rules let them through.
    let data_dir = server.data_dir.clone();
    let days = sightline::events::partitions::list_days(&data_dir).unwrap();
    let partition =
        rusqlite::Connection::open(sightline::events::partitions::partition_path(&data_dir, days[0])).unwrap();
    for (i, p) in planted.iter().enumerate() {
        let metadata = json!({ "message": p.line }).to_string();
        let changed = partition
            .execute(
                "UPDATE events SET metadata = ?1 WHERE metadata = ?2",
                rusqlite::params![metadata, json!({ "message": format!("placeholder {i}") }).to_string()],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
    drop(partition);
    // Compacted since: the metadata is zstd-compressed with the partition's dictionary.
    let day = days[0].to_string();
    let compacted = sightline(&["compact", "--data-dir", data_dir.to_str().unwrap(), "--day", &day]);
    assert!(compacted.status.success(), "{}", stderr(&compacted));

    let out = sightline(&["backfill-redaction", "--data-dir", data_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("redacted the events of 1 partitions again under rules version 2")
            && said.contains(&format!("({} of {} rows changed)", planted.len(), planted.len())),
        "{said}"
    );
    let partition =
        rusqlite::Connection::open(sightline::events::partitions::partition_path(&data_dir, days[0])).unwrap();
    let plain: i64 = partition.query_row("SELECT count(metadata) FROM events", [], |row| row.get(0)).unwrap();
    assert_eq!(plain, 0, "the rewritten metadata stays compressed");
    let stored = sightline::events::partitions::events_after_seq(&partition, 0).unwrap();
    assert_eq!(stored.len(), planted.len());
    let all: String = stored.iter().map(|s| s.event.metadata.clone().unwrap_or_default() + "\n").collect();
    let file = std::fs::read(sightline::events::partitions::partition_path(&data_dir, days[0])).unwrap();
    for p in &planted {
        assert!(!all.contains(&p.secret), "{}/{} still stored", p.family, p.shape);
        let on_disk = file.windows(p.secret.len()).any(|window| window == p.secret.as_bytes());
        assert!(!on_disk, "{}/{}: the old bytes linger in the partition file", p.family, p.shape);
    }
    let main = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    let (version, resume): (i64, Option<Vec<u8>>) = main
        .query_row("SELECT rules_version, after_event_id FROM metadata_redaction", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!((version, resume), (2, None), "the partition is done and has no resume point");

    // A second run finds nothing to do.
    let again = stdout(&sightline(&["backfill-redaction", "--data-dir", data_dir.to_str().unwrap()]));
    assert!(again.contains("redacted the events of 0 partitions"), "{again}");
}

#[test]
fn a_stopped_pass_resumes_after_its_last_batch() {
    let server = TestServer::spawn();
    let start = same_day_start();
    let secret = corpus(SEED + 4, 1).remove(0).secret;
    let events: Vec<Value> = (0..10)
        .map(|i| {
            let mut event = event("notification", "resume", start + i);
            event["metadata"] = json!({ "i": i });
            event
        })
        .collect();
    let (code, body) = server.post_events(&server.token, &envelope(events));
    assert_eq!(code, 200, "{body}");
    let data_dir = server.data_dir.clone();
    let day = sightline::events::partitions::list_days(&data_dir).unwrap()[0];
    let path = sightline::events::partitions::partition_path(&data_dir, day);
    let partition = rusqlite::Connection::open(&path).unwrap();
    partition.execute("UPDATE events SET metadata = ?1", [json!({ "leaked": secret }).to_string()]).unwrap();
    let ids: Vec<Vec<u8>> = partition
        .prepare("SELECT event_id FROM events ORDER BY event_id")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // A pass that stopped after the first four rows left this resume point.
    let main = server.main_db();
    main.execute(
        "INSERT INTO metadata_redaction (day, rules_version, after_event_id) VALUES (?1, 1, ?2)",
        rusqlite::params![day.to_string(), ids[3]],
    )
    .unwrap();
    let report = sightline::events::store::Store::at(&data_dir)
        .rewriting("test")
        .unwrap()
        .reredact_all(&main, now_ms(), |_| {})
        .unwrap();
    assert_eq!((report.partitions, report.rows_read, report.rows_changed), (1, 6, 6));
    let still_leaked: i64 = partition
        .query_row("SELECT count(*) FROM events WHERE metadata LIKE ?1", [format!("%{secret}%")], |row| row.get(0))
        .unwrap();
    assert_eq!(still_leaked, 4, "the rows before the resume point were not read again");
}

/// A pass that rewrote a compacted partition's rows and stopped before compacting it
/// again left the old dictionary, which holds samples of the old rows: the next pass,
/// with nothing left to rewrite, still compacts it again.
#[test]
fn a_pass_stopped_before_its_rebuild_is_rebuilt_by_the_next() {
    let mut server = TestServer::spawn();
    let secret = corpus(SEED + 5, 1).remove(0).secret;
    let start = same_day_start();
    let events: Vec<Value> = (0..80)
        .map(|i| {
            let mut event = event("notification", "stopped-pass", start + i);
            event["metadata"] = json!({ "note": format!("placeholder {i}") });
            event
        })
        .collect();
    let (code, body) = server.post_events(&server.token, &envelope(events));
    assert_eq!(code, 200, "{body}");
    server.terminate();
    let data_dir = server.data_dir.clone();
    let day = sightline::events::partitions::list_days(&data_dir).unwrap()[0];
    let path = sightline::events::partitions::partition_path(&data_dir, day);
    let leaked = json!({ "note": format!("the key {secret} leaked") }).to_string();
    rusqlite::Connection::open(&path).unwrap().execute("UPDATE events SET metadata = ?1", [&leaked]).unwrap();
    let compacted = sightline(&["compact", "--data-dir", data_dir.to_str().unwrap(), "--day", &day.to_string()]);
    assert!(compacted.status.success(), "{}", stderr(&compacted));
    let holds_secret = || std::fs::read(&path).unwrap().windows(secret.len()).any(|w| w == secret.as_bytes());
    assert!(holds_secret(), "the dictionary was trained on the leaked rows");

    // What the stopped pass left: every row rewritten (plain, redacted), the ledger row
    // of a pass that began, no rebuild yet.
    let redacted = sightline::redact::redact_text(&leaked).into_owned();
    let partition = rusqlite::Connection::open(&path).unwrap();
    partition.execute_batch("PRAGMA secure_delete = ON;").unwrap();
    partition.execute("UPDATE events SET metadata = ?1, metadata_zst = NULL", [&redacted]).unwrap();
    drop(partition);
    rusqlite::Connection::open(data_dir.join("main.db"))
        .unwrap()
        .execute(
            "INSERT INTO metadata_redaction (day, rules_version, after_event_id) VALUES (?1, 1, NULL)",
            [day.to_string()],
        )
        .unwrap();

    let out = sightline(&["backfill-redaction", "--data-dir", data_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("(0 of 80 rows changed)"), "{}", stdout(&out));
    assert!(!holds_secret(), "compacted again: the old dictionary is gone");
}
