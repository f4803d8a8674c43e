//! The file names a backup may hold, and reading and writing them without leaving their
//! directory. A manifest is input: a backup handed over from elsewhere (or altered on the
//! backup disk) names its own paths, and `sightline restore` runs as root where an
//! operator restores. So a path is accepted only in a shape a backup writes (`main.db`,
//! `events/<day>.db`, `transcripts/<name>`, `index/<name>`, `keys/<name>`,
//! `price-tables/<name>`, `config/<name>`), and a file is read only when neither it nor
//! a directory on its way is a symbolic link.
//!
//! Invariants: an accepted path is relative, has no `.`, `..` or empty component and
//! stays under the directory it is joined to; a backup's file is opened without
//! following a link; a restored file is created new (never through something already
//! there), owner-only (0600, directories 0700) whatever the umask.

use std::fs::File;
use std::path::{Component, Path, PathBuf};

use super::BackupError;
use super::manifest::Kind;

/// Why a manifest's path is refused, naming it.
fn refused(path: &str, reason: &str) -> BackupError {
    BackupError::UnsafePath { path: path.to_string(), reason: reason.to_string() }
}

/// The longest component a backup writes (a transcript's session id and suffix, an index
/// segment) with room to spare; file systems stop at 255 bytes.
const MAX_NAME_BYTES: usize = 255;

/// `path` as a relative path of the shape a backup of `kind` writes, or why not.
pub fn accepted(path: &str, kind: Kind) -> Result<PathBuf, BackupError> {
    if path.is_empty() {
        return Err(refused(path, "the path is empty"));
    }
    if path.contains('\0') || path.contains('\\') {
        return Err(refused(path, "the path holds a NUL or a backslash"));
    }
    if path.starts_with('/') {
        return Err(refused(path, "the path is absolute"));
    }
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts {
        match *part {
            "" => return Err(refused(path, "the path has an empty component")),
            "." | ".." => return Err(refused(path, "the path has a '.' or '..' component")),
            name if name.len() > MAX_NAME_BYTES => return Err(refused(path, "a component is too long")),
            _ => {}
        }
    }
    let shape_ok = match (kind, parts.as_slice()) {
        (Kind::Database, ["main.db"]) => true,
        (Kind::Database, ["events", name]) => is_partition_name(name),
        (Kind::File, [dir, _]) => ["transcripts", "index", "keys", "price-tables"].contains(dir),
        (Kind::Config, ["config", _]) => true,
        _ => false,
    };
    if !shape_ok {
        return Err(refused(
            path,
            "a backup holds only main.db, events/<day>.db, transcripts/, index/, keys/, price-tables/ and config/ files",
        ));
    }
    let relative = PathBuf::from(path);
    // What the checks above mean, said once more by the standard library.
    debug_assert!(relative.components().all(|c| matches!(c, Component::Normal(_))));
    Ok(relative)
}

/// `YYYY-MM-DD.db`.
fn is_partition_name(name: &str) -> bool {
    name.strip_suffix(".db").is_some_and(|day| crate::events::partitions::Day::parse(day).is_some())
}

/// Opens `relative` (an [`accepted`] path) under `root` for reading, refusing a symbolic
/// link at any step: a link inside a backup could point anywhere.
pub fn open_in(root: &Path, relative: &Path) -> Result<File, BackupError> {
    let shown = relative.display().to_string();
    let mut walked = root.to_path_buf();
    let components: Vec<_> = relative.components().collect();
    for (i, component) in components.iter().enumerate() {
        walked.push(component);
        let meta = match std::fs::symlink_metadata(&walked) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(BackupError::Missing(shown)),
            Err(err) => return Err(BackupError::io(format!("cannot read {}", walked.display()), err)),
        };
        if meta.file_type().is_symlink() {
            return Err(refused(&shown, "it is, or lies under, a symbolic link"));
        }
        let last = i + 1 == components.len();
        if last && !meta.is_file() {
            return Err(refused(&shown, "it is not a regular file"));
        }
        if !last && !meta.is_dir() {
            return Err(refused(&shown, "a component on its way is not a directory"));
        }
    }
    open_no_follow(&walked).map_err(|err| BackupError::io(format!("cannot open {}", walked.display()), err))
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NOFOLLOW: a link put in place after the walk above is refused too.
    File::options().read(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// Creates the directories of `relative` under `root` owner-only, refusing to go through
/// anything that is not a directory it can see as one (a link included).
pub fn make_parents(root: &Path, relative: &Path) -> Result<PathBuf, BackupError> {
    let mut walked = root.to_path_buf();
    if let Some(parent) = relative.parent() {
        for component in parent.components() {
            walked.push(component);
            match std::fs::symlink_metadata(&walked) {
                Ok(meta) if meta.is_dir() && !meta.file_type().is_symlink() => {}
                Ok(_) => {
                    return Err(refused(&relative.display().to_string(), "a component on its way is not a directory"));
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => private_dir(&walked)?,
                Err(err) => return Err(BackupError::io(format!("cannot read {}", walked.display()), err)),
            }
        }
    }
    Ok(root.join(relative))
}

/// Creates one directory with mode 0700.
pub fn private_dir(path: &Path) -> Result<(), BackupError> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path).map_err(|err| BackupError::io(format!("cannot create {}", path.display()), err))?;
    owner_only(path, 0o700)
}

/// Creates `path` new (never opening what is already there: a link, a file) with mode 0600.
pub fn create_new(path: &Path) -> Result<File, BackupError> {
    let mut options = File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path).map_err(|err| BackupError::io(format!("cannot create {}", path.display()), err))?;
    owner_only(path, 0o600)?;
    Ok(file)
}

/// Sets `path`'s mode (a umask could have left it narrower than asked, never wider; a file
/// SQLite made is 0644 less the umask).
pub fn owner_only(path: &Path, mode: u32) -> Result<(), BackupError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|err| BackupError::io(format!("cannot set the mode of {}", path.display()), err))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_a_backup_writes_are_accepted() {
        for (path, kind) in [
            ("main.db", Kind::Database),
            ("events/2026-11-01.db", Kind::Database),
            ("transcripts/3c1d2f4e-8a7b-4c6d-9e0f-1a2b3c4d5e6f.jsonl.zst", Kind::File),
            ("index/meta.json", Kind::File),
            ("index/.managed.json", Kind::File),
            ("keys/access-token-ed25519.pk8", Kind::File),
            ("price-tables/claude_code.toml", Kind::File),
            ("config/sightline.toml", Kind::Config),
        ] {
            assert_eq!(accepted(path, kind).unwrap(), PathBuf::from(path), "{path}");
        }
    }

    #[test]
    fn every_other_path_is_refused_naming_it() {
        for (path, kind) in [
            ("../etc/cron.d/evil", Kind::File),
            ("transcripts/../../etc/passwd", Kind::File),
            ("/etc/passwd", Kind::File),
            ("transcripts//x", Kind::File),
            ("transcripts/./x", Kind::File),
            ("transcripts/", Kind::File),
            ("", Kind::Database),
            ("events/../main.db", Kind::Database),
            ("events/not-a-day.db", Kind::Database),
            ("events/2026-11-01.db/x", Kind::Database),
            ("main.db", Kind::File),
            ("config/sightline.toml", Kind::File),
            ("keys/sub/dir", Kind::File),
            ("bin/sightline-hook", Kind::File),
            ("transcripts\\..\\x", Kind::File),
            ("transcripts/a\0b", Kind::File),
        ] {
            let err = accepted(path, kind).expect_err(path).to_string();
            assert!(err.contains(&format!("{path:?}")), "{path}: {err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_the_backup_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, b"secret").unwrap();
        let backup = dir.path().join("backup");
        std::fs::create_dir_all(backup.join("keys")).unwrap();
        std::os::unix::fs::symlink(&outside, backup.join("keys/key")).unwrap();
        std::os::unix::fs::symlink(dir.path(), backup.join("transcripts")).unwrap();
        let err = open_in(&backup, Path::new("keys/key")).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        let err = open_in(&backup, Path::new("transcripts/outside")).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        std::fs::write(backup.join("keys/real"), b"k").unwrap();
        assert!(open_in(&backup, Path::new("keys/real")).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn restored_files_are_owner_only_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = make_parents(dir.path(), Path::new("events/2026-11-01.db")).unwrap();
        drop(create_new(&target).unwrap());
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&dir.path().join("events")), mode(&target)), (0o700, 0o600));
        assert!(create_new(&target).is_err(), "an existing file is never opened for writing");
    }
}
