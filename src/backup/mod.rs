//! Backups of a data directory, taken while the server runs, and their restore
//! (docs/operations.md, "Backup and restore").
//!
//! A backup is a directory `<root>/<UTC time>/` holding `main.db`, every event partition,
//! the transcripts, the transcript index, the keys, the price tables and the
//! configuration file, with a `manifest.json` listing each file's size and SHA-256.
//! `main.db` is copied first and the partitions after it, each as one SQLite snapshot:
//! the writer commits a batch to its partition before `main.db`, so a partition may hold
//! commits the copied `main.db` has not folded, never the reverse, and the server folds
//! those at start exactly as after a crash (`events::writer::ledger`). Every event
//! acknowledged before the backup began is in it.
//!
//! Invariants: a backup is written under a hidden `.partial` name and renamed only when
//! every file and the manifest are synced, so a failure (a full disk) leaves the earlier
//! backups as they were and no half backup; one backup writes to a root at a time (a
//! lock file); a file unchanged since the previous backup (same fingerprint, last
//! modified well before that backup began) is a hard link to its copy there, not a new
//! copy; only the newest `keep` complete backups are kept.

mod copy;
pub mod history;
pub mod manifest;
mod paths;
pub mod restore;

use std::path::{Path, PathBuf};

use manifest::{Entry, Fingerprint, Kind, Manifest};

use crate::events::partitions;

/// A file last modified this close to the previous backup's start is copied again even
/// when its fingerprint matches: a modification time is coarse (a few milliseconds), so
/// a write just after that backup read the file could leave it unchanged.
const REUSE_MARGIN_MS: i64 = 2_000;

/// How often the transcript index is copied before it is left out: the indexer may
/// merge segments (and remove the old ones) while they are copied.
const INDEX_ATTEMPTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error("cannot copy database {path}: {reason}")]
    Database { path: PathBuf, reason: String },
    #[error("{path}: not a readable backup manifest: {reason}")]
    Manifest { path: PathBuf, reason: String },
    #[error("another backup is writing to {0}; try again when it has finished")]
    Busy(PathBuf),
    #[error("{0}: no manifest.json here or in a directory under it, so no backup to restore")]
    NotABackup(PathBuf),
    #[error(
        "the backup is from a newer Sightline ({what} schema {found}; this binary reads up to {supported}): restore it with that version or newer"
    )]
    TooNew { what: &'static str, found: i64, supported: i64 },
    #[error("the backup at {path} does not match its manifest, so nothing was restored: {}", failures.join("; "))]
    Damaged { path: PathBuf, failures: Vec<String> },
    #[error("{0} is not empty: restore only into an empty or new data directory")]
    NotEmpty(PathBuf),
    #[error(
        "a restore into {0} did not finish: empty the directory and restore again (sightline restore --from <backup>)"
    )]
    HalfRestored(PathBuf),
    #[error(
        "the backup's manifest names {path:?}, which a restore does not write: {reason}; nothing was read or restored"
    )]
    UnsafePath { path: String, reason: String },
    #[error("{0}: missing")]
    Missing(String),
    #[error("{0}")]
    Options(String),
}

impl BackupError {
    fn io(context: String, source: std::io::Error) -> BackupError {
        BackupError::Io { context, source }
    }

    /// Whether the failure is the storage's (a full disk, an I/O error).
    pub fn is_storage(&self) -> bool {
        matches!(self, BackupError::Io { .. } | BackupError::Database { .. })
    }
}

/// Where backups go and how many are kept.
#[derive(Clone, Debug)]
pub struct Options {
    pub root: PathBuf,
    pub keep: usize,
    /// The configuration file in force, copied to `config/` in the backup.
    pub config_file: Option<PathBuf>,
}

impl Options {
    /// The configured backups (`[backup]`), `to` and `keep` taking the place of theirs.
    pub fn configured(
        config: &crate::config::Config,
        to: Option<PathBuf>,
        keep: Option<usize>,
    ) -> Result<Options, BackupError> {
        let root = to.or_else(|| config.backup.dir()).ok_or_else(|| {
            BackupError::Options("no backup directory: set backup.dir (SIGHTLINE_BACKUP_DIR) or pass --to".into())
        })?;
        Ok(Options {
            root,
            keep: keep.unwrap_or(config.backup.keep.max(1) as usize),
            config_file: config.source_file.clone(),
        })
    }
}

/// What a backup did.
#[derive(Debug)]
pub struct Taken {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub copied_files: usize,
    pub copied_bytes: u64,
    pub reused_files: usize,
    /// Older backups removed to keep `keep`.
    pub removed: Vec<PathBuf>,
}

impl Taken {
    /// One line for the job's run and the command's output.
    pub fn summary(&self) -> String {
        let name = self.dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let mut line = format!(
            "{name}: {} files, {} bytes; {} copied ({} bytes), {} linked from the previous backup; index {}",
            self.manifest.files.len(),
            self.manifest.total_bytes(),
            self.copied_files,
            self.copied_bytes,
            self.reused_files,
            self.manifest.index
        );
        if !self.removed.is_empty() {
            line.push_str(&format!("; {} older backup(s) removed", self.removed.len()));
        }
        line
    }
}

/// Takes a backup of `data_dir` into a new directory under `options.root`.
pub fn take(data_dir: &Path, options: &Options, now_ms: &dyn Fn() -> i64) -> Result<Taken, BackupError> {
    if options.keep == 0 {
        return Err(BackupError::Options("keep must be at least 1".into()));
    }
    if !data_dir.join("main.db").is_file() {
        return Err(BackupError::Options(format!("{} has no main.db: not a data directory", data_dir.display())));
    }
    copy::private_dirs(&options.root)?;
    let _lock = lock(&options.root)?;
    for stale in partial_dirs(&options.root) {
        let _ = std::fs::remove_dir_all(stale);
    }
    let previous = complete_backups(&options.root).pop().and_then(|dir| Manifest::read(&dir).ok().map(|m| (dir, m)));
    let started_at_ms = now_ms();
    let name = unique_name(&options.root, started_at_ms);
    let partial = options.root.join(format!(".{name}.partial"));
    let mut copier = Copier::new(data_dir, &partial, previous.as_ref().map(|(dir, m)| (dir.as_path(), m)));
    let result = copier.copy_all(options).and_then(|index| {
        let manifest = Manifest {
            format: manifest::FORMAT,
            sightline_version: env!("CARGO_PKG_VERSION").to_string(),
            schema_version: schema_version(&partial.join("main.db"))?,
            events_schema_version: partitions::SCHEMA_VERSION,
            started_at_ms,
            finished_at_ms: now_ms(),
            data_dir: data_dir.to_path_buf(),
            config_file: options.config_file.clone(),
            index,
            files: std::mem::take(&mut copier.entries),
        };
        manifest.write(&partial)?;
        let dir = options.root.join(&name);
        std::fs::rename(&partial, &dir)
            .map_err(|err| BackupError::io(format!("cannot rename {}", partial.display()), err))?;
        copy::sync_dir(&options.root)?;
        Ok((dir, manifest))
    });
    let (dir, manifest) = match result {
        Ok(done) => done,
        Err(err) => {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(err);
        }
    };
    let mut kept = complete_backups(&options.root);
    let mut removed = Vec::new();
    while kept.len() > options.keep {
        let oldest = kept.remove(0);
        if std::fs::remove_dir_all(&oldest).is_ok() {
            removed.push(oldest);
        }
    }
    Ok(Taken {
        dir,
        manifest,
        copied_files: copier.copied_files,
        copied_bytes: copier.copied_bytes,
        reused_files: copier.reused_files,
        removed,
    })
}

/// Copies each part of a data directory into a partial backup, linking what the previous
/// backup already holds unchanged.
struct Copier<'a> {
    data_dir: &'a Path,
    target: &'a Path,
    previous: Option<(&'a Path, &'a Manifest)>,
    entries: Vec<Entry>,
    copied_files: usize,
    copied_bytes: u64,
    reused_files: usize,
}

impl<'a> Copier<'a> {
    fn new(data_dir: &'a Path, target: &'a Path, previous: Option<(&'a Path, &'a Manifest)>) -> Self {
        Copier { data_dir, target, previous, entries: Vec::new(), copied_files: 0, copied_bytes: 0, reused_files: 0 }
    }

    /// Everything, `main.db` first (see the module header); returns the index's state.
    fn copy_all(&mut self, options: &Options) -> Result<String, BackupError> {
        self.database("main.db", false)?;
        let event_files = crate::events::store::Store::at(self.data_dir)
            .files()
            .map_err(|err| BackupError::Database { path: self.data_dir.join("events"), reason: err.to_string() })?;
        for file in event_files {
            self.database(&file, true)?;
        }
        let transcripts = crate::transcripts::store::dir(self.data_dir);
        for file in copy::files_under(&transcripts, &["incoming"])? {
            if is_temporary(&file) {
                continue;
            }
            self.file(&Path::new("transcripts").join(file), true)?;
        }
        for dir in ["keys", "price-tables"] {
            for file in copy::files_under(&self.data_dir.join(dir), &[])? {
                self.file(&Path::new(dir).join(file), false)?;
            }
        }
        if let Some(config) = &options.config_file {
            let name = config.file_name().map_or_else(|| "sightline.toml".into(), |n| n.to_string_lossy().to_string());
            let path = format!("config/{name}");
            let bytes = copy::copy_file(config, &self.target.join(&path))?;
            self.copied(path, Kind::Config, bytes, None)?;
        }
        self.index()
    }

    /// A SQLite file; a partition that vanished since it was listed (retention) is skipped.
    fn database(&mut self, relative: &str, reusable: bool) -> Result<(), BackupError> {
        let source = self.data_dir.join(relative);
        let Ok(fingerprint) = Fingerprint::of(&source) else { return Ok(()) };
        if reusable && self.reuse(relative, &fingerprint)? {
            return Ok(());
        }
        let target = self.target.join(relative);
        match copy::copy_database(&source, &target) {
            Ok(()) => {
                let bytes = std::fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
                self.copied(relative.to_string(), Kind::Database, bytes, Some(fingerprint))
            }
            Err(_) if !source.exists() => {
                let _ = std::fs::remove_file(&target);
                Ok(())
            }
            Err(err) => Err(err),
        }
    }

    /// A plain file; one removed since it was listed (a deletion) is skipped.
    fn file(&mut self, relative: &Path, reusable: bool) -> Result<(), BackupError> {
        let key = relative.to_string_lossy().to_string();
        let source = self.data_dir.join(relative);
        let Ok(fingerprint) = Fingerprint::of(&source) else { return Ok(()) };
        if reusable && self.reuse(&key, &fingerprint)? {
            return Ok(());
        }
        match copy::copy_file(&source, &self.target.join(relative)) {
            Ok(bytes) => self.copied(key, Kind::File, bytes, Some(fingerprint)),
            Err(_) if !source.exists() => Ok(()),
            Err(err) => Err(err),
        }
    }

    /// Links the previous backup's copy when the source is unchanged since; whether it did.
    fn reuse(&mut self, relative: &str, now: &Fingerprint) -> Result<bool, BackupError> {
        let Some((dir, manifest)) = self.previous else { return Ok(false) };
        let Some(entry) = manifest.entry(relative) else { return Ok(false) };
        let settled = now.last_modified_ms() < manifest.started_at_ms - REUSE_MARGIN_MS;
        if entry.source.as_ref() != Some(now) || !settled {
            return Ok(false);
        }
        let previous = dir.join(relative);
        if std::fs::metadata(&previous).map(|m| m.len()).ok() != Some(entry.bytes) {
            return Ok(false);
        }
        copy::link_or_copy(&previous, &self.target.join(relative))?;
        self.entries.push(Entry { reused: true, ..entry.clone() });
        self.reused_files += 1;
        Ok(true)
    }

    fn copied(&mut self, path: String, kind: Kind, bytes: u64, source: Option<Fingerprint>) -> Result<(), BackupError> {
        let (hashed_bytes, sha256) = manifest::hash_file(&self.target.join(&path))?;
        debug_assert!(kind == Kind::Database || hashed_bytes == bytes);
        self.entries.push(Entry { path, kind, bytes: hashed_bytes, sha256, source, reused: false });
        self.copied_files += 1;
        self.copied_bytes += hashed_bytes;
        Ok(())
    }

    /// The transcript index: its files copied (segments unchanged since the previous
    /// backup linked), then opened to prove the copy whole. The indexer may replace
    /// segments meanwhile; after [`INDEX_ATTEMPTS`] the index is left out, and a restore
    /// rebuilds it from the transcripts (it is derived data).
    fn index(&mut self) -> Result<String, BackupError> {
        let source = crate::transcripts::index::dir(self.data_dir);
        if !source.join("meta.json").exists() {
            return Ok("absent: rebuilt from the transcripts at start".into());
        }
        let mut last_error = String::new();
        for _ in 0..INDEX_ATTEMPTS {
            let mark = self.entries.len();
            let attempt = (|| -> Result<u64, BackupError> {
                // meta.json first: it names the segments the copy must hold.
                self.file(Path::new("index/meta.json"), false)?;
                for file in copy::files_under(&source, &[])? {
                    let name = file.to_string_lossy();
                    if name == "meta.json" || name.starts_with(".tantivy-") {
                        continue;
                    }
                    self.file(&Path::new("index").join(&file), true)?;
                }
                let documents = crate::transcripts::index::check_copy(&self.target.join("index"))
                    .map_err(|err| BackupError::Options(err.to_string()))?;
                // Opening the copy left Tantivy's lock files in it (not in the manifest,
                // and made under the umask, not owner-only).
                for file in copy::files_under(&self.target.join("index"), &[])? {
                    if file.to_string_lossy().starts_with(".tantivy-") {
                        let _ = std::fs::remove_file(self.target.join("index").join(file));
                    }
                }
                Ok(documents)
            })();
            match attempt {
                Ok(documents) => return Ok(format!("copied ({documents} documents)")),
                Err(err) if err.is_storage() => return Err(err),
                Err(err) => {
                    last_error = err.to_string();
                    self.entries.truncate(mark);
                    let _ = std::fs::remove_dir_all(self.target.join("index"));
                }
            }
        }
        Ok(format!("omitted: {last_error}; rebuilt from the transcripts at start"))
    }
}

fn is_temporary(file: &Path) -> bool {
    file.file_name().and_then(|n| n.to_str()).is_some_and(|name| name.starts_with('.') || name.ends_with(".tmp"))
}

fn schema_version(main_db: &Path) -> Result<i64, BackupError> {
    let database =
        |err: rusqlite::Error| BackupError::Database { path: main_db.to_path_buf(), reason: err.to_string() };
    let conn =
        rusqlite::Connection::open_with_flags(main_db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(database)?;
    conn.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(database)
}

/// The lock that keeps two backups from writing to one root.
fn lock(root: &Path) -> Result<std::fs::File, BackupError> {
    let path = root.join(".lock");
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|err| BackupError::io(format!("cannot open {}", path.display()), err))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(BackupError::Busy(root.to_path_buf())),
        Err(std::fs::TryLockError::Error(err)) => Err(BackupError::io(format!("cannot lock {}", path.display()), err)),
    }
}

/// The complete backups under `root` (those with a manifest), oldest first.
pub fn complete_backups(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let hidden = path.file_name().and_then(|n| n.to_str()).is_none_or(|n| n.starts_with('.'));
            !hidden && path.join(manifest::FILE_NAME).is_file()
        })
        .collect();
    found.sort();
    found
}

fn partial_dirs(root: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.') && n.ends_with(".partial"))
        })
        .collect()
}

/// `20261127T140502Z`, with `-2`, `-3`, … when a backup of the same second exists.
fn unique_name(root: &Path, started_at_ms: i64) -> String {
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    let time = time::OffsetDateTime::from_unix_timestamp(started_at_ms.div_euclid(1000))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let base = time.format(&format).expect("the format has only numeric parts");
    let mut name = base.clone();
    let mut n = 1;
    while root.join(&name).exists() || root.join(format!(".{name}.partial")).exists() {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

#[cfg(test)]
mod tests;
