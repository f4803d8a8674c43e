//! The full-text index of transcripts, `<data_dir>/index/` (Tantivy): one document per
//! normalised message, with the session, owner, team, agent, model, time, role and tool
//! names as fast fields beside the text.
//!
//! Invariants: the index is derived data. Everything in it is rebuilt from the stored
//! transcripts, so an index that is missing, from an older schema or unreadable is
//! replaced by an empty one and every transcript is queued again ([`Opened::fresh`]).
//! A session's documents are replaced as a whole (delete by session, then add), so
//! indexing a session twice leaves one copy. Only one `IndexWriter` exists at a time:
//! Tantivy's lock file enforces it across processes, and in the server the indexer task
//! ([`worker`]) is the only code that takes it.

pub mod analyzer;
pub mod documents;
pub mod worker;

use std::path::{Path, PathBuf};

use tantivy::directory::MmapDirectory;
use tantivy::directory::error::LockError;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, TantivyError};

use crate::db::DbError;

/// What can go wrong with the index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(
        "the transcript index {0} is being written by another process (a running server's indexer, or another index-transcripts); try again when it is idle"
    )]
    Busy(PathBuf),
    #[error("transcript index: {0}")]
    Tantivy(#[from] TantivyError),
    #[error(transparent)]
    Storage(#[from] DbError),
}

/// The schema's fields, by role.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    pub session: Field,
    pub owner: Field,
    pub team: Field,
    pub agent: Field,
    pub model: Field,
    pub role: Field,
    pub tool: Field,
    pub time: Field,
    pub position: Field,
    pub text: Field,
}

/// Field names as they appear in the schema (fast-field readers look them up by name).
pub mod names {
    pub const TIME: &str = "time_ms";
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let fields = Fields {
        session: builder.add_text_field("session", STRING | STORED | FAST),
        owner: builder.add_text_field("owner", STRING | FAST),
        team: builder.add_text_field("team", STRING | FAST),
        agent: builder.add_text_field("agent", STRING | STORED | FAST),
        model: builder.add_text_field("model", STRING | STORED | FAST),
        role: builder.add_text_field("role", STRING | STORED | FAST),
        tool: builder.add_text_field("tool", STRING | STORED | FAST),
        time: builder.add_i64_field(names::TIME, INDEXED | STORED | FAST),
        position: builder.add_u64_field("position", STORED),
        text: builder.add_text_field(
            "text",
            TextOptions::default()
                .set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer(analyzer::NAME)
                        .set_index_option(IndexRecordOption::WithFreqsAndPositions),
                )
                .set_stored(),
        ),
    };
    (builder.build(), fields)
}

/// The opened index and a reader that follows its commits.
pub struct TranscriptIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    dir: PathBuf,
}

/// An opened index, and whether it started empty (so every transcript needs indexing).
pub struct Opened {
    pub index: TranscriptIndex,
    pub fresh: bool,
}

/// Opens a copy of the index (a backup's) and reads every segment it names: whether the
/// copy is whole; the documents it holds.
pub fn check_copy(dir: &Path) -> Result<u64, IndexError> {
    let index = Index::open_in_dir(dir)?;
    let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
    let searcher: Searcher = reader.searcher();
    Ok(searcher.num_docs())
}

/// The index directory under a data directory.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("index")
}

impl TranscriptIndex {
    /// Opens `<data_dir>/index/`, creating it, or recreating it when it is unreadable or
    /// from another schema (it is derived data; see the module invariants).
    pub fn open(data_dir: &Path) -> Result<Opened, IndexError> {
        let dir = dir(data_dir);
        let (schema, fields) = schema();
        let existed = dir.join("meta.json").exists();
        match Self::open_in(&dir, schema.clone(), fields) {
            Ok(index) => Ok(Opened { index, fresh: !existed }),
            Err(IndexError::Tantivy(err)) if existed => {
                tracing::warn!(error = %err, dir = %dir.display(), "transcript index unreadable or from another schema; rebuilding it");
                std::fs::remove_dir_all(&dir)
                    .map_err(crate::transcripts::store::io_error(format!("cannot remove {}", dir.display())))?;
                Ok(Opened { index: Self::open_in(&dir, schema, fields)?, fresh: true })
            }
            Err(err) => Err(err),
        }
    }

    fn open_in(dir: &Path, schema: Schema, fields: Fields) -> Result<TranscriptIndex, IndexError> {
        std::fs::create_dir_all(dir)
            .map_err(crate::transcripts::store::io_error(format!("cannot create {}", dir.display())))?;
        let directory = MmapDirectory::open(dir).map_err(TantivyError::from)?;
        let index = Index::open_or_create(directory, schema)?;
        index.tokenizers().register(analyzer::NAME, analyzer::analyzer());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::OnCommitWithDelay).try_into()?;
        Ok(TranscriptIndex { index, reader, fields, dir: dir.to_path_buf() })
    }

    pub fn fields(&self) -> &Fields {
        &self.fields
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    /// A searcher on the latest commit this process has seen.
    pub fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    /// Makes this process's own commits visible now rather than when the file watcher
    /// notices them.
    pub fn reload(&self) -> Result<(), IndexError> {
        Ok(self.reader.reload()?)
    }

    /// Takes the index's one writer. `threads` indexing threads share `memory_bytes`.
    pub fn writer(&self, threads: usize, memory_bytes: usize) -> Result<IndexWriter<TantivyDocument>, IndexError> {
        match self.index.writer_with_num_threads(threads, memory_bytes) {
            Err(TantivyError::LockFailure(LockError::LockBusy, _)) => Err(IndexError::Busy(self.dir.clone())),
            other => Ok(other?),
        }
    }

    /// Bytes the index takes on disk.
    pub fn disk_bytes(&self) -> u64 {
        std::fs::read_dir(&self.dir)
            .map(|entries| entries.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
            .unwrap_or(0)
    }
}
