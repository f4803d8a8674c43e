//! Tests of backups on small real data directories: what a backup holds, the incremental
//! link, keeping N, refusals (damaged, newer, not empty, half restored, busy) and a failed
//! backup leaving nothing partial. Invariant: each test builds its own directory.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::restore::{self, MARKER};
use super::*;
use crate::db::{self, Checkpointing, Durability};
use crate::events::partitions::{self, Day};

const DAY_ONE: &str = "2026-11-01";
const DAY_TWO: &str = "2026-11-02";

/// A small data directory: `main.db` at this binary's schema, two partitions, a
/// transcript, an empty index and a key; every file dated an hour ago.
fn data_dir(root: &Path) -> std::path::PathBuf {
    let data = root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let path = data.join("main.db");
    let mut main = db::open(&path, Durability::PowerSafe, Checkpointing::Automatic).unwrap();
    db::migrations::migrate(&mut main, &path).unwrap();
    drop(main);
    for day in [DAY_ONE, DAY_TWO] {
        let (conn, _) = partitions::open_for_write(&data, Day::parse(day).unwrap()).unwrap();
        conn.execute_batch("CREATE TABLE probe (x); INSERT INTO probe VALUES (1);").unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    }
    std::fs::create_dir_all(data.join("transcripts/incoming")).unwrap();
    std::fs::write(data.join("transcripts/s1.jsonl.zst"), b"a stored transcript").unwrap();
    std::fs::write(data.join("transcripts/incoming/half"), b"an upload in progress").unwrap();
    std::fs::write(data.join("transcripts/.s2.abc.tmp"), b"a file being written").unwrap();
    drop(crate::transcripts::index::TranscriptIndex::open(&data).unwrap());
    std::fs::create_dir_all(data.join("keys")).unwrap();
    std::fs::write(data.join("keys/access-token-ed25519.pk8"), b"key bytes").unwrap();
    age_everything(&data, Duration::from_secs(3600));
    data
}

fn age_everything(dir: &Path, by: Duration) {
    let then = SystemTime::now() - by;
    for file in copy::files_under(dir, &[]).unwrap() {
        std::fs::File::options().write(true).open(dir.join(file)).unwrap().set_modified(then).unwrap();
    }
}

fn options(root: &Path, keep: usize) -> Options {
    Options { root: root.join("backups"), keep, config_file: None }
}

fn now() -> i64 {
    crate::clock::system_now_ms()
}

/// A clock one second later at each call, so backups of one test have distinct names.
fn ticking(start: i64) -> impl Fn() -> i64 {
    let next = std::cell::Cell::new(start);
    move || {
        let value = next.get();
        next.set(value + 1000);
        value
    }
}

#[test]
fn a_backup_holds_every_file_once_verified_and_leaves_out_work_in_progress() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let taken = take(&data, &options(temp.path(), 3), &now).unwrap();
    let paths: Vec<&str> = taken.manifest.files.iter().map(|e| e.path.as_str()).collect();
    for expected in [
        "main.db",
        "events/2026-11-01.db",
        "events/2026-11-02.db",
        "transcripts/s1.jsonl.zst",
        "keys/access-token-ed25519.pk8",
        "index/meta.json",
    ] {
        assert!(paths.contains(&expected), "{expected} in {paths:?}");
    }
    assert!(!paths.iter().any(|p| p.contains("incoming") || p.contains(".tmp")), "{paths:?}");
    assert_eq!(taken.manifest.schema_version, db::migrations::latest_version());
    assert!(taken.manifest.index.starts_with("copied"), "{}", taken.manifest.index);
    let checked = restore::check(&taken.dir).unwrap();
    assert_eq!(checked.databases, 3);
    assert!(complete_backups(&temp.path().join("backups")).len() == 1);
}

#[test]
fn an_unchanged_file_is_linked_from_the_previous_backup_and_a_changed_one_copied() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let clock = ticking(now());
    let first = take(&data, &options(temp.path(), 5), &clock).unwrap();
    assert_eq!(first.reused_files, 0);
    // A late event reaches day two after the first backup.
    let (conn, _) = partitions::open_for_write(&data, Day::parse(DAY_TWO).unwrap()).unwrap();
    conn.execute("INSERT INTO probe VALUES (2)", []).unwrap();
    drop(conn);
    let second = take(&data, &options(temp.path(), 5), &clock).unwrap();
    let reused = |path: &str| second.manifest.entry(path).unwrap().reused;
    assert!(reused("events/2026-11-01.db"), "day one did not change");
    assert!(reused("transcripts/s1.jsonl.zst"));
    assert!(!reused("events/2026-11-02.db"), "day two changed");
    assert!(!reused("main.db"), "main.db is always copied");
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let inode = |backup: &Path| std::fs::metadata(backup.join("events/2026-11-01.db")).unwrap().ino();
        assert_eq!(inode(&first.dir), inode(&second.dir), "a hard link, not a copy");
    }
    let day_two: i64 = rusqlite::Connection::open(second.dir.join("events/2026-11-02.db"))
        .unwrap()
        .query_row("SELECT count(*) FROM probe", [], |row| row.get(0))
        .unwrap();
    assert_eq!(day_two, 2, "the copy has the late event");
    restore::check(&second.dir).unwrap();
}

#[test]
fn only_the_newest_backups_are_kept() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let clock = ticking(now());
    let taken: Vec<Taken> = (0..4).map(|_| take(&data, &options(temp.path(), 2), &clock).unwrap()).collect();
    let kept = complete_backups(&temp.path().join("backups"));
    assert_eq!(kept, vec![taken[2].dir.clone(), taken[3].dir.clone()]);
    assert_eq!(taken[3].removed, vec![taken[1].dir.clone()]);
    // The newest is whole though the backup it linked from is gone.
    restore::check(&taken[3].dir).unwrap();
}

#[test]
fn a_damaged_backup_is_refused_naming_the_file_and_nothing_is_restored() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let taken = take(&data, &options(temp.path(), 3), &now).unwrap();
    let transcript = taken.dir.join("transcripts/s1.jsonl.zst");
    std::fs::write(&transcript, b"a stored transcripT").unwrap();
    std::fs::remove_file(taken.dir.join("keys/access-token-ed25519.pk8")).unwrap();
    let err = restore::check(&taken.dir).unwrap_err().to_string();
    assert!(err.contains("transcripts/s1.jsonl.zst: SHA-256 differs"), "{err}");
    assert!(err.contains("keys/access-token-ed25519.pk8: missing"), "{err}");
    let target = temp.path().join("restored");
    let err = restore::restore(&taken.dir, &target).unwrap_err();
    assert!(matches!(err, BackupError::Damaged { .. }), "{err}");
    assert!(!target.exists(), "nothing written");
}

#[test]
fn a_backup_from_a_newer_schema_is_refused_naming_both_versions() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let taken = take(&data, &options(temp.path(), 3), &now).unwrap();
    let mut manifest = Manifest::read(&taken.dir).unwrap();
    manifest.schema_version = db::migrations::latest_version() + 1;
    manifest.write(&taken.dir).unwrap();
    let err = restore::restore(&taken.dir, &temp.path().join("restored")).unwrap_err().to_string();
    let expected = format!(
        "main.db schema {}; this binary reads up to {}",
        db::migrations::latest_version() + 1,
        db::migrations::latest_version()
    );
    assert!(err.contains(&expected) && err.contains("newer Sightline"), "{err}");
    assert!(!temp.path().join("restored").exists());
}

#[test]
fn a_restore_writes_only_into_an_empty_directory_and_a_half_restore_is_never_served() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let taken = take(&data, &options(temp.path(), 3), &now).unwrap();
    let err = restore::restore(&taken.dir, &data).unwrap_err();
    assert!(matches!(err, BackupError::NotEmpty(_)), "{err}");

    let target = temp.path().join("restored");
    let restored = restore::restore(&temp.path().join("backups"), &target).unwrap();
    assert_eq!(restored.from, taken.dir, "a directory of backups restores its newest");
    assert!(!target.join(MARKER).exists());
    restore::ensure_not_half_restored(&target).unwrap();
    for file in ["main.db", "events/2026-11-01.db", "transcripts/s1.jsonl.zst", "index/meta.json"] {
        assert!(target.join(file).is_file(), "{file}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(target.join("keys/access-token-ed25519.pk8")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "keys are the owner's only");
    }
    std::fs::write(target.join(MARKER), b"").unwrap();
    let err = restore::ensure_not_half_restored(&target).unwrap_err().to_string();
    assert!(err.contains("did not finish"), "{err}");
}

#[test]
fn a_failed_backup_leaves_no_partial_directory_and_the_earlier_backups_whole() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let clock = ticking(now());
    let first = take(&data, &options(temp.path(), 3), &clock).unwrap();
    // A partition that cannot be read fails the copy part way.
    let day_two = partitions::partition_path(&data, Day::parse(DAY_TWO).unwrap());
    std::fs::write(&day_two, b"not a database at all, and long enough to have a header........").unwrap();
    let err = take(&data, &options(temp.path(), 3), &clock).unwrap_err();
    assert!(err.to_string().contains("2026-11-02.db"), "{err}");
    let root = temp.path().join("backups");
    assert_eq!(complete_backups(&root), vec![first.dir.clone()]);
    assert!(partial_dirs(&root).is_empty(), "the partial backup is removed");
    restore::check(&first.dir).unwrap();
}

#[test]
fn two_backups_never_write_to_one_root_at_once() {
    let temp = tempfile::tempdir().unwrap();
    let data = data_dir(temp.path());
    let root = temp.path().join("backups");
    std::fs::create_dir_all(&root).unwrap();
    let held = lock(&root).unwrap();
    let err = take(&data, &options(temp.path(), 3), &now).unwrap_err();
    assert!(matches!(err, BackupError::Busy(_)), "{err}");
    drop(held);
    take(&data, &options(temp.path(), 3), &now).unwrap();
}
