-- Stored transcripts and their indexing state, one row per session that has one. The
-- file itself is <data_dir>/transcripts/<session id>.jsonl.zst; sessions keep the pointer.
CREATE TABLE transcript_index (
    session_id      TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    upload_sha256   TEXT NOT NULL,
    stored_ms       INTEGER NOT NULL,
    indexed_ms      INTEGER,
    message_count   INTEGER
);
CREATE INDEX transcript_index_unindexed ON transcript_index (stored_ms) WHERE indexed_ms IS NULL;
