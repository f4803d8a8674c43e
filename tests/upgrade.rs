//! Upgrades (docs/operations.md, "Upgrade and roll back"): a data directory written by the
//! oldest schema still supported (`tests/fixtures/datadir-v26.tar.zst`, made by the binary
//! of schema 26 with `sightline demo --developers 6 --days 3 --seed 7`, password
//! `fixture-password`) migrates to this binary's schema with every row of every table,
//! every event and every file kept, and the server serves it; a data directory or a backup
//! from a newer schema is refused, naming both versions.

use crate::common;

use common::datadir::*;
use common::*;

/// The oldest schema whose data directory this binary is tested to upgrade.
const OLDEST_FIXTURE: &str = "datadir-v26.tar.zst";
const FIXTURE_PASSWORD: &str = "fixture-password";

#[test]
fn the_oldest_supported_data_directory_upgrades_with_nothing_lost_and_is_served() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    unpack_fixture(OLDEST_FIXTURE, &data);
    let version = |path: &std::path::Path| -> i64 {
        open_read_only(path).query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap()
    };
    assert_eq!(version(&data.join("main.db")), 26, "the fixture is schema 26");
    let main_before = tables(&open_read_only(&data.join("main.db")));
    let partitions_before: Vec<_> =
        databases(&data).into_iter().skip(1).map(|path| tables(&open_read_only(&path))).collect();
    let files_before = file_digests(&data, &["transcripts", "index", "keys"]);

    let migrated = sightline(&["migrate", "--data-dir", data.to_str().unwrap()]);
    assert!(migrated.status.success(), "{}", stderr(&migrated));
    let latest = sightline::db::migrations::latest_version();
    assert!(
        stdout(&migrated).contains(&format!("migrated main.db from schema version 26 to {latest}")),
        "{}",
        stdout(&migrated)
    );
    assert_eq!(version(&data.join("main.db")), latest);

    let main = open_read_only(&data.join("main.db"));
    for (table, (columns, rows)) in &main_before {
        assert_eq!(&rows_of(&main, table, columns), rows, "{table}: every row of schema 26 is kept as it was");
    }
    let partitions_after: Vec<_> =
        databases(&data).into_iter().skip(1).map(|path| tables(&open_read_only(&path))).collect();
    assert_eq!(partitions_after, partitions_before, "every stored event is kept");
    assert_eq!(file_digests(&data, &["transcripts", "index", "keys"]), files_before);
    for path in databases(&data) {
        assert_eq!(integrity(&path), "ok", "{}", path.display());
    }

    // The server starts on it: people sign in with what they had, read what they had,
    // and new events are stored beside the old.
    let developer = "ada.okafor@demo.example";
    let token =
        sightline(&["token", "create", "--data-dir", data.to_str().unwrap(), "--user", developer, "--kind", "hook"]);
    assert!(token.status.success(), "{}", stderr(&token));
    let server = TestServer::on(data.clone(), stdout(&token).trim().to_string());
    let (status, grant) = password_grant(&server.web, developer, FIXTURE_PASSWORD);
    assert_eq!(status, 200, "{grant}");
    let access = grant["access_token"].as_str().unwrap().to_string();
    let (session_id, events): (String, i64) = main
        .query_row(
            "SELECT s.id, s.event_count FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE u.email = ?1 ORDER BY s.event_count DESC LIMIT 1",
            [developer],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    let (status, page) = get_auth(&format!("{}/api/sessions/{session_id}/events?limit=1000", server.web), &access);
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["events"].as_array().unwrap().len() as i64, events, "the session's events are read back");
    let (status, body) = server.post_events(&server.token, &envelope(session_events("after-the-upgrade", now_ms(), 5)));
    assert_eq!(status, 200, "{body}");
    // Transcripts stored before sessions had names get theirs from the indexer.
    let stored: i64 = main.query_row("SELECT count(*) FROM transcript_index", [], |row| row.get(0)).unwrap();
    assert!(stored > 0, "the fixture has transcripts");
    wait_until(std::time::Duration::from_secs(60), "every stored transcript read for its name", || {
        main.query_row("SELECT count(*) FROM transcript_index WHERE title IS NULL", [], |row| row.get::<_, i64>(0))
            .unwrap()
            == 0
    });
    let named: i64 =
        main.query_row("SELECT count(*) FROM transcript_index WHERE title <> ''", [], |row| row.get(0)).unwrap();
    assert!(named > 0, "the demo's transcripts begin with a prompt");
}

#[test]
fn a_data_directory_from_a_newer_schema_is_refused_with_both_versions_named() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    unpack_fixture(OLDEST_FIXTURE, &data);
    let newer = sightline::db::migrations::latest_version() + 1;
    rusqlite::Connection::open(data.join("main.db")).unwrap().pragma_update(None, "user_version", newer).unwrap();
    let before = tables(&open_read_only(&data.join("main.db")));
    for command in [
        vec!["migrate"],
        vec!["serve", "--ingest-addr", "127.0.0.1:0", "--web-addr", "127.0.0.1:0", "--github-addr", "127.0.0.1:0"],
    ] {
        let mut args = command.clone();
        args.extend(["--data-dir", data.to_str().unwrap()]);
        let out = sightline(&args);
        assert!(!out.status.success(), "{command:?} refuses it");
        let text = stderr(&out);
        assert!(
            text.contains(&format!("schema version {newer}")) && text.contains("newer than this binary's"),
            "{command:?}: {text}"
        );
    }
    assert_eq!(tables(&open_read_only(&data.join("main.db"))), before, "nothing was changed");
}
