//! Checking a backup and restoring it into an empty data directory.
//!
//! Invariants: nothing is read before every path the manifest names is one a backup
//! writes (`backup::paths`), and nothing is written before the whole backup is verified
//! (every file's size and SHA-256 against the manifest, the schema no newer than this
//! binary's); a file of the backup is read only if neither it nor a directory on its way
//! is a symbolic link, and a restored file is created new, owner-only, under the data
//! directory; a restore writes a marker first and removes it last, and the server refuses
//! to start on a directory that still has it, so a restore that stopped half way is never
//! served.

use std::path::{Path, PathBuf};

use super::manifest::{self, Kind, Manifest};
use super::{BackupError, copy, paths};
use crate::db::migrations;
use crate::events::partitions;

/// Present in a data directory while a restore writes into it.
pub const MARKER: &str = ".restore-incomplete";

/// What a check found: the backup is whole.
#[derive(Debug)]
pub struct Checked {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// Databases that passed `PRAGMA integrity_check`.
    pub databases: usize,
}

/// What a restore wrote.
#[derive(Debug)]
pub struct Restored {
    pub from: PathBuf,
    pub manifest: Manifest,
    pub files: usize,
    pub bytes: u64,
}

/// The backup `from` names: a backup directory itself, or a directory of backups (the
/// newest complete one).
pub fn locate(from: &Path) -> Result<PathBuf, BackupError> {
    if from.join(manifest::FILE_NAME).is_file() {
        return Ok(from.to_path_buf());
    }
    super::complete_backups(from).pop().ok_or_else(|| BackupError::NotABackup(from.to_path_buf()))
}

/// Verifies a backup without writing anything: the manifest, every file's size and
/// SHA-256, the schema, and SQLite's integrity check of every database.
pub fn check(from: &Path) -> Result<Checked, BackupError> {
    let dir = locate(from)?;
    let manifest = verified(&dir)?;
    let mut databases = 0;
    let mut failures = Vec::new();
    for entry in manifest.files.iter().filter(|e| e.kind == Kind::Database) {
        // `verified` accepted the path and found no link on its way.
        match integrity(&dir.join(&entry.path)) {
            Ok(()) => databases += 1,
            Err(reason) => failures.push(format!("{}: {reason}", entry.path)),
        }
    }
    if !failures.is_empty() {
        return Err(BackupError::Damaged { path: dir, failures });
    }
    Ok(Checked { dir, manifest, databases })
}

/// Restores the backup `from` names into `data_dir`, which must be empty or absent.
pub fn restore(from: &Path, data_dir: &Path) -> Result<Restored, BackupError> {
    let dir = locate(from)?;
    let manifest = verified(&dir)?;
    let occupied = std::fs::read_dir(data_dir).map(|mut entries| entries.next().is_some()).unwrap_or(false);
    if occupied {
        return Err(BackupError::NotEmpty(data_dir.to_path_buf()));
    }
    if !data_dir.exists() {
        copy::private_dirs(data_dir)?;
    }
    let marker = data_dir.join(MARKER);
    copy::write_synced(&marker, b"a restore is writing this directory\n")?;
    copy::sync_dir(data_dir)?;
    let (mut files, mut bytes) = (0, 0);
    for entry in manifest.files.iter().filter(|e| e.kind != Kind::Config) {
        let relative = paths::accepted(&entry.path, entry.kind)?;
        let source = paths::open_in(&dir, &relative)?;
        let target = paths::make_parents(data_dir, &relative)?;
        bytes += copy::copy_into_new(source, &target)?;
        files += 1;
    }
    let mut failures = Vec::new();
    for entry in manifest.files.iter().filter(|e| e.kind == Kind::Database) {
        if let Err(reason) = integrity(&data_dir.join(&entry.path)) {
            failures.push(format!("{}: {reason}", entry.path));
        }
    }
    if !failures.is_empty() {
        return Err(BackupError::Damaged { path: dir, failures });
    }
    for sub in ["", "events", "transcripts", "index", "keys"] {
        let _ = copy::sync_dir(&data_dir.join(sub));
    }
    std::fs::remove_file(&marker).map_err(|err| BackupError::io(format!("cannot remove {}", marker.display()), err))?;
    copy::sync_dir(data_dir)?;
    Ok(Restored { from: dir, manifest, files, bytes })
}

/// Refuses a data directory a restore did not finish writing.
pub fn ensure_not_half_restored(data_dir: &Path) -> Result<(), BackupError> {
    if data_dir.join(MARKER).exists() {
        return Err(BackupError::HalfRestored(data_dir.to_path_buf()));
    }
    Ok(())
}

/// The manifest of `dir`, once its schema and every file are found as it says.
fn verified(dir: &Path) -> Result<Manifest, BackupError> {
    let manifest = Manifest::read(dir)?;
    if manifest.schema_version > migrations::latest_version() {
        return Err(BackupError::TooNew {
            what: "main.db",
            found: manifest.schema_version,
            supported: migrations::latest_version(),
        });
    }
    if manifest.events_schema_version > partitions::SCHEMA_VERSION {
        return Err(BackupError::TooNew {
            what: "event partition",
            found: manifest.events_schema_version,
            supported: partitions::SCHEMA_VERSION,
        });
    }
    // Every path first: a manifest that names one a backup never writes is refused
    // before any file is opened.
    let relatives =
        manifest.files.iter().map(|entry| paths::accepted(&entry.path, entry.kind)).collect::<Result<Vec<_>, _>>()?;
    let mut failures = Vec::new();
    for (entry, relative) in manifest.files.iter().zip(&relatives) {
        let hashed = paths::open_in(dir, relative).and_then(|file| manifest::hash_open(file, &dir.join(relative)));
        match hashed {
            Ok((bytes, _)) if bytes != entry.bytes => {
                failures.push(format!("{}: {bytes} bytes, the manifest says {}", entry.path, entry.bytes))
            }
            Ok((_, sha256)) if sha256 != entry.sha256 => failures.push(format!("{}: SHA-256 differs", entry.path)),
            Ok(_) => {}
            Err(unsafe_path @ BackupError::UnsafePath { .. }) => return Err(unsafe_path),
            Err(err) => failures.push(err.to_string()),
        }
    }
    if !failures.is_empty() {
        return Err(BackupError::Damaged { path: dir.to_path_buf(), failures });
    }
    Ok(manifest)
}

fn integrity(path: &Path) -> Result<(), String> {
    let conn = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|err| err.to_string())?;
    let answer: String =
        conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).map_err(|err| err.to_string())?;
    if answer == "ok" { Ok(()) } else { Err(format!("integrity check: {answer}")) }
}
