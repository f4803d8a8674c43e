-- Sightline main.db: the full current schema, for reading and for creating a new
-- database in one step. The ladder in migrations/ must produce exactly this schema;
-- tests/schema.rs proves it. Change both together: append a migration, update this file.
--
-- Conventions: ids we create are UUIDv7 text; times are integer milliseconds since the
-- Unix epoch (UTC) in columns named *_ms; money is integer nano-dollars (*_nusd).

CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name           TEXT NOT NULL,
    org_role       TEXT NOT NULL DEFAULT 'MEMBER',
    password_hash  TEXT,
    github_id      INTEGER UNIQUE,
    github_login   TEXT,
    created_at_ms  INTEGER NOT NULL,
    disabled_at_ms INTEGER
);

-- Every credential we issue. Only a SHA-256 of the secret is kept: tokens are 256-bit
-- random, so a fast hash is enough and a database leak reveals no usable token.
CREATE TABLE auth_tokens (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('hook', 'refresh')),
    token_sha256    BLOB NOT NULL UNIQUE,
    family_id       TEXT,
    label           TEXT,
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL,
    last_used_at_ms INTEGER,
    revoked_at_ms   INTEGER,
    revoked_reason  TEXT
);
CREATE INDEX auth_tokens_by_user ON auth_tokens(user_id, kind);

-- The central fact table. Aggregates are additive: ingest adds only events it newly
-- inserted, so replayed or reordered batches change nothing.
CREATE TABLE sessions (
    id                      TEXT PRIMARY KEY,
    user_id                 TEXT NOT NULL REFERENCES users(id),
    agent_type              TEXT NOT NULL,
    agent_session_id        TEXT NOT NULL,
    run_kind                TEXT NOT NULL DEFAULT 'INTERACTIVE',
    first_event_ms          INTEGER NOT NULL,
    last_event_ms           INTEGER NOT NULL,
    started_at_ms           INTEGER,
    ended_at_ms             INTEGER,
    event_count             INTEGER NOT NULL DEFAULT 0,
    prompt_count            INTEGER NOT NULL DEFAULT 0,
    tool_call_count         INTEGER NOT NULL DEFAULT 0,
    tool_error_count        INTEGER NOT NULL DEFAULT 0,
    denial_count            INTEGER NOT NULL DEFAULT 0,
    notification_count      INTEGER NOT NULL DEFAULT 0,
    subagent_count          INTEGER NOT NULL DEFAULT 0,
    compact_count           INTEGER NOT NULL DEFAULT 0,
    input_tokens            INTEGER NOT NULL DEFAULT 0,
    output_tokens           INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens       INTEGER NOT NULL DEFAULT 0,
    cache_write_5m_tokens   INTEGER NOT NULL DEFAULT 0,
    cache_write_1h_tokens   INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens        INTEGER NOT NULL DEFAULT 0,
    cost_nusd               INTEGER NOT NULL DEFAULT 0,
    client_cost_nusd        INTEGER NOT NULL DEFAULT 0,
    unknown_model_events    INTEGER NOT NULL DEFAULT 0,
    total_response_ms       INTEGER NOT NULL DEFAULT 0,
    response_sample_count   INTEGER NOT NULL DEFAULT 0,
    max_autonomy_rank       INTEGER,
    git_ts_ms               INTEGER,
    git_branch              TEXT,
    git_commit              TEXT,
    git_remote              TEXT,
    git_dirty               INTEGER,
    machine_id              TEXT,
    cli_version             TEXT,
    os                      TEXT,
    transcript_path         TEXT,
    transcript_bytes        INTEGER,
    transcript_rules_version INTEGER,
    friction_score          REAL,
    shape_label             TEXT,
    mode                    TEXT,
    UNIQUE (user_id, agent_type, agent_session_id)
);
CREATE INDEX sessions_by_last_event ON sessions(last_event_ms);
-- Non-interactive runs are rare; a partial index finds them without indexing the rest.
CREATE INDEX sessions_non_interactive ON sessions(run_kind) WHERE run_kind <> 'INTERACTIVE';

-- Models seen in a session, with how many events each priced.
CREATE TABLE session_models (
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    event_count INTEGER NOT NULL,
    PRIMARY KEY (session_id, model)
) WITHOUT ROWID;

-- Models no price table knows; they cost 0 and feed the unknown-model alert.
CREATE TABLE unknown_models (
    agent_type    TEXT NOT NULL,
    model         TEXT NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL,
    event_count   INTEGER NOT NULL,
    PRIMARY KEY (agent_type, model)
) WITHOUT ROWID;

-- Hourly buckets whose aggregates must be recomputed by the refresh job.
CREATE TABLE aggregate_dirty_buckets (
    bucket_start_ms INTEGER PRIMARY KEY,
    marked_at_ms    INTEGER NOT NULL
);

-- How far each event partition's commits have been folded into sessions. A partition
-- commits first; main.db records its commit sequence second. After a crash between the
-- two, start-up folds the missing commits in, so no event is counted twice or never.
CREATE TABLE event_partitions (
    day              TEXT PRIMARY KEY,
    applied_seq      INTEGER NOT NULL,
    compacted_at_ms  INTEGER
);

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
