//! How one file reaches a backup: a SQLite file through SQLite's online backup, in one
//! step, so the copy is one consistent snapshot while the writer keeps committing; a
//! plain file by copying; an unchanged file by a hard link to the previous backup's copy.
//!
//! Invariants: every file written here is synced before it counts as copied, and so is
//! the directory that names it; every file is owner-only (0600, directories 0700)
//! whatever the umask: a backup holds password hashes, keys and transcripts.

use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use super::BackupError;

/// Copies the SQLite file at `source` to `target` as one snapshot: the copy holds every
/// transaction committed before the copy began and none after. The copy is a single
/// file (rollback journal mode), readable without its log.
pub fn copy_database(source: &Path, target: &Path) -> Result<(), BackupError> {
    // The reason names the copy too, and a full disk says it is the backup's.
    let database = |err: rusqlite::Error| {
        let full = err.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull);
        BackupError::Database {
            path: source.to_path_buf(),
            reason: if full {
                format!("no space left on the backup's disk, writing {}: {err}", target.display())
            } else {
                format!("to {}: {err}", target.display())
            },
        }
    };
    let from = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(database)?;
    from.busy_timeout(crate::db::BUSY_TIMEOUT).map_err(database)?;
    ensure_parent(target)?;
    let mut to = Connection::open(target).map_err(database)?;
    {
        let backup = Backup::new(&from, &mut to).map_err(database)?;
        // All pages in one step: one read transaction, so one snapshot. A step of some
        // pages at a time would restart whenever the writer commits, forever under load.
        loop {
            match backup.step(-1).map_err(database)? {
                StepResult::Done => break,
                StepResult::More => continue,
                // Busy, locked (or a result added later): wait and step again.
                _ => std::thread::sleep(std::time::Duration::from_millis(50)),
            }
        }
    }
    let mode: String = to.query_row("PRAGMA journal_mode = DELETE", [], |row| row.get(0)).map_err(database)?;
    debug_assert_eq!(mode.to_ascii_lowercase(), "delete");
    to.close().map_err(|(_, err)| database(err))?;
    super::paths::owner_only(target, 0o600)?;
    sync_file(target)
}

/// Copies a plain file (owner-only) and syncs the copy.
pub fn copy_file(source: &Path, target: &Path) -> Result<u64, BackupError> {
    ensure_parent(target)?;
    let mut from =
        std::fs::File::open(source).map_err(|err| BackupError::io(format!("cannot open {}", source.display()), err))?;
    let mut to = owner_only_file(target)?;
    let bytes = std::io::copy(&mut from, &mut to)
        .map_err(|err| BackupError::io(format!("cannot copy {} to {}", source.display(), target.display()), err))?;
    to.sync_all().map_err(|err| BackupError::io(format!("cannot sync {}", target.display()), err))?;
    Ok(bytes)
}

/// Streams `from` into `target`, which must not exist yet, and syncs it: a restore's copy
/// of a file it opened without following links (`paths::open_in`).
pub fn copy_into_new(mut from: std::fs::File, target: &Path) -> Result<u64, BackupError> {
    let mut to = super::paths::create_new(target)?;
    let bytes = std::io::copy(&mut from, &mut to)
        .map_err(|err| BackupError::io(format!("cannot write {}", target.display()), err))?;
    to.sync_all().map_err(|err| BackupError::io(format!("cannot sync {}", target.display()), err))?;
    Ok(bytes)
}

/// `path` created or truncated, with mode 0600 (set again: the file may have existed).
fn owner_only_file(path: &Path) -> Result<std::fs::File, BackupError> {
    let mut options = std::fs::File::options();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path).map_err(|err| BackupError::io(format!("cannot create {}", path.display()), err))?;
    super::paths::owner_only(path, 0o600)?;
    Ok(file)
}

/// Links `target` to the previous backup's copy (falling back to a copy where the file
/// system has no hard links).
pub fn link_or_copy(previous: &Path, target: &Path) -> Result<(), BackupError> {
    ensure_parent(target)?;
    if std::fs::hard_link(previous, target).is_err() {
        copy_file(previous, target)?;
    }
    // A backup taken by an older binary may have left the file readable by others.
    super::paths::owner_only(target, 0o600)
}

/// Writes a small file durably.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), BackupError> {
    ensure_parent(path)?;
    let mut file = owner_only_file(path)?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|err| BackupError::io(format!("cannot write {}", path.display()), err))
}

pub fn sync_file(path: &Path) -> Result<(), BackupError> {
    std::fs::File::open(path)
        .and_then(|file| file.sync_all())
        .map_err(|err| BackupError::io(format!("cannot sync {}", path.display()), err))
}

/// Syncs a directory, so the names in it survive a power loss (a no-op where the
/// platform cannot open directories).
pub fn sync_dir(path: &Path) -> Result<(), BackupError> {
    #[cfg(unix)]
    std::fs::File::open(path)
        .and_then(|dir| dir.sync_all())
        .map_err(|err| BackupError::io(format!("cannot sync {}", path.display()), err))?;
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

fn ensure_parent(path: &Path) -> Result<(), BackupError> {
    private_dirs(path.parent().expect("a file in a directory"))
}

/// Creates `dir` and its missing parents with mode 0700 (those that exist keep theirs).
pub fn private_dirs(dir: &Path) -> Result<(), BackupError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|err| BackupError::io(format!("cannot create {}", dir.display()), err))
}

/// The files under `dir`, recursively, relative to `dir`, sorted; a missing `dir` has
/// none. `skip` names directories (relative) left out.
pub fn files_under(dir: &Path, skip: &[&str]) -> Result<Vec<PathBuf>, BackupError> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let entries = match std::fs::read_dir(dir.join(&relative)) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => return Err(BackupError::io(format!("cannot list {}", dir.join(&relative).display()), err)),
        };
        for entry in entries.flatten() {
            let path = relative.join(entry.file_name());
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !skip.iter().any(|s| Path::new(s) == path) {
                    pending.push(path);
                }
            } else if kind.is_file() {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}
