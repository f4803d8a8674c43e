//! The migration ladder from an empty database yields exactly `schema.sql`, and a
//! database newer than the binary is refused.

use rusqlite::Connection;
use sightline::db::migrations;

fn schema_of(conn: &Connection) -> Vec<(String, String, String)> {
    let mut stmt =
        conn.prepare("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type, name").unwrap();
    stmt.query_map([], |row| {
        let sql: String = row.get(2)?;
        // Compare statements, not their layout.
        Ok((row.get(0)?, row.get(1)?, sql.split_whitespace().collect::<Vec<_>>().join(" ")))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn migrating_an_empty_database_equals_the_schema_file() {
    let mut laddered = Connection::open_in_memory().unwrap();
    migrations::migrate_by_ladder(&mut laddered).unwrap();
    let direct = Connection::open_in_memory().unwrap();
    direct.execute_batch(migrations::SCHEMA_SQL).unwrap();
    assert_eq!(schema_of(&laddered), schema_of(&direct));
    assert!(!schema_of(&direct).is_empty());
}

#[test]
fn a_new_database_is_stamped_with_the_latest_version_and_migrating_twice_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main.db");
    let mut conn = Connection::open(&path).unwrap();
    assert_eq!(migrations::migrate(&mut conn, &path).unwrap(), 0);
    assert!(migrations::is_current(&conn).unwrap());
    assert_eq!(migrations::migrate(&mut conn, &path).unwrap(), migrations::latest_version());
}

#[test]
fn a_database_from_a_newer_binary_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main.db");
    let mut conn = Connection::open(&path).unwrap();
    migrations::migrate(&mut conn, &path).unwrap();
    conn.pragma_update(None, "user_version", migrations::latest_version() + 1).unwrap();
    let err = migrations::migrate(&mut conn, &path).unwrap_err().to_string();
    assert!(err.contains("refusing to downgrade"), "{err}");
}
