//! Whole data directories in tests: unpacking a kept fixture, and reading every row of
//! every table and every file's digest, so a test can say "nothing was lost" about a
//! migration, a backup or a restore without naming tables one by one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

/// Unpacks `tests/fixtures/<name>` (a zstd-compressed tar of a data directory) into `into`.
pub fn unpack_fixture(name: &str, into: &Path) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let file = std::fs::File::open(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let decoder = zstd::stream::read::Decoder::new(file).unwrap();
    std::fs::create_dir_all(into).unwrap();
    tar::Archive::new(decoder).unpack(into).unwrap();
}

pub fn open_read_only(path: &Path) -> Connection {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// A table's columns and its rows, each row one text of its quoted values, sorted.
pub type TableRows = (Vec<String>, Vec<String>);

/// Every table of a database (SQLite's own aside), with every row.
pub fn tables(conn: &Connection) -> BTreeMap<String, TableRows> {
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    names
        .into_iter()
        .map(|name| {
            let columns: Vec<String> = conn
                .prepare(&format!("SELECT name FROM pragma_table_info('{name}') ORDER BY cid"))
                .unwrap()
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let rows = rows_of(conn, &name, &columns);
            (name, (columns, rows))
        })
        .collect()
}

/// The rows of `table`, as texts of the given columns' quoted values, sorted.
pub fn rows_of(conn: &Connection, table: &str, columns: &[String]) -> Vec<String> {
    let select = columns.iter().map(|c| format!("quote(\"{c}\")")).collect::<Vec<_>>().join(" || '|' || ");
    let mut rows: Vec<String> = conn
        .prepare(&format!("SELECT {select} FROM \"{table}\""))
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows.sort();
    rows
}

/// `PRAGMA integrity_check` of a SQLite file.
pub fn integrity(path: &Path) -> String {
    open_read_only(path).query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap()
}

/// The SQLite files of a data directory: `main.db` and every partition.
pub fn databases(data_dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![data_dir.join("main.db")];
    let mut partitions: Vec<PathBuf> = std::fs::read_dir(data_dir.join("events"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "db"))
        .collect();
    partitions.sort();
    found.extend(partitions);
    found
}

/// The SHA-256 of every file under `dir/sub` for each `sub`, by path relative to `dir`.
pub fn file_digests(dir: &Path, subs: &[&str]) -> BTreeMap<String, String> {
    let mut digests = BTreeMap::new();
    for sub in subs {
        let mut pending = vec![dir.join(sub)];
        while let Some(path) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&path) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().to_string();
                if path.is_dir() {
                    pending.push(path);
                } else if !name.starts_with(".tantivy-") {
                    let relative = path.strip_prefix(dir).unwrap().display().to_string();
                    digests.insert(relative, sightline::model::sha256_hex(&std::fs::read(&path).unwrap()));
                }
            }
        }
    }
    digests
}
