//! A backup's `manifest.json`: what was copied (every file with its size and SHA-256),
//! from which schema, when, and how each source file looked when it was copied (its
//! fingerprint), so the next backup can tell an unchanged file and link it instead of
//! copying it again.
//!
//! Invariant: the manifest is written last, after every file it lists is synced, and a
//! backup directory gets its final name only then; a directory without a manifest is
//! not a backup.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use super::BackupError;

/// The manifest's own format; a reader refuses a format it does not know.
pub const FORMAT: u32 = 1;

pub const FILE_NAME: &str = "manifest.json";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The binary that took it.
    pub sightline_version: String,
    /// `main.db`'s `user_version` and the partitions' schema version.
    pub schema_version: i64,
    pub events_schema_version: i64,
    pub started_at_ms: i64,
    pub finished_at_ms: i64,
    /// The data directory it was taken from, and the configuration file copied.
    pub data_dir: PathBuf,
    pub config_file: Option<PathBuf>,
    /// "copied", or why the transcript index was left out (a restore rebuilds it).
    pub index: String,
    pub files: Vec<Entry>,
}

/// What a backup holds: one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Relative to the backup directory (and, but for `config/`, to the data directory).
    pub path: String,
    pub kind: Kind,
    pub bytes: u64,
    pub sha256: String,
    /// The source file when it was read; `None` for files always copied.
    pub source: Option<Fingerprint>,
    /// Linked from the previous backup rather than copied.
    pub reused: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A SQLite file, copied through SQLite's online backup (a consistent snapshot).
    Database,
    /// A plain file (transcripts, index segments, keys, price tables).
    File,
    /// The configuration file; not restored into the data directory.
    Config,
}

/// How a source file looked: its identity, size and modification time, and those of its
/// write-ahead log. A file whose fingerprint is unchanged, and which was last modified
/// well before the previous backup began, has the content that backup copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub inode: u64,
    pub bytes: u64,
    pub modified_ns: i128,
    pub wal_bytes: u64,
    pub wal_modified_ns: i128,
}

impl Fingerprint {
    /// The fingerprint of `path` now (its `-wal` beside it, when there is one).
    pub fn of(path: &Path) -> std::io::Result<Fingerprint> {
        let meta = std::fs::metadata(path)?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        // An empty log holds nothing (a reader opening the file may create one), so it
        // counts as none.
        let wal = std::fs::metadata(PathBuf::from(wal)).ok().filter(|m| m.len() > 0);
        Ok(Fingerprint {
            inode: inode(&meta),
            bytes: meta.len(),
            modified_ns: modified_ns(&meta),
            wal_bytes: wal.as_ref().map_or(0, |m| m.len()),
            wal_modified_ns: wal.as_ref().map_or(0, modified_ns),
        })
    }

    /// The later of the file's and its log's modification times, in milliseconds.
    pub fn last_modified_ms(&self) -> i64 {
        (self.modified_ns.max(self.wal_modified_ns) / 1_000_000) as i64
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> u64 {
    0
}

fn modified_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as i128)
}

impl Manifest {
    pub fn read(backup: &Path) -> Result<Manifest, BackupError> {
        let path = backup.join(FILE_NAME);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| BackupError::io(format!("cannot read {}", path.display()), source))?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|err| BackupError::Manifest { path: path.clone(), reason: err.to_string() })?;
        if manifest.format != FORMAT {
            return Err(BackupError::Manifest {
                path,
                reason: format!(
                    "format {} is not this binary's ({FORMAT}); use the Sightline that took it",
                    manifest.format
                ),
            });
        }
        Ok(manifest)
    }

    /// Writes the manifest durably (temporary name, sync, rename).
    pub fn write(&self, backup: &Path) -> Result<(), BackupError> {
        let text = serde_json::to_string_pretty(self).expect("a manifest serialises");
        let temporary = backup.join(".manifest.json.tmp");
        super::copy::write_synced(&temporary, text.as_bytes())?;
        let path = backup.join(FILE_NAME);
        std::fs::rename(&temporary, &path)
            .map_err(|source| BackupError::io(format!("cannot rename {}", temporary.display()), source))?;
        super::copy::sync_dir(backup)
    }

    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|entry| entry.bytes).sum()
    }

    pub fn entry(&self, path: &str) -> Option<&Entry> {
        self.files.iter().find(|entry| entry.path == path)
    }
}

/// The SHA-256 of a file, streamed, and its size.
pub fn hash_file(path: &Path) -> Result<(u64, String), BackupError> {
    let file = std::fs::File::open(path)
        .map_err(|source| BackupError::io(format!("cannot open {}", path.display()), source))?;
    hash_open(file, path)
}

/// The SHA-256 and size of an open file (`path` names it in errors).
pub fn hash_open(mut file: std::fs::File, path: &Path) -> Result<(u64, String), BackupError> {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buffer = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let read = file
            .read(&mut buffer)
            .map_err(|source| BackupError::io(format!("cannot read {}", path.display()), source))?;
        if read == 0 {
            break;
        }
        bytes += read as u64;
        context.update(&buffer[..read]);
    }
    Ok((bytes, hex::encode(context.finish().as_ref())))
}
