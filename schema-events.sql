-- Sightline event partition: one SQLite file per UTC day of event time,
-- <data_dir>/events/YYYY-MM-DD.db. The event's own timestamp picks the file, so a
-- retried event always meets its earlier copy and the primary key makes it a duplicate.
--
-- event_id is the 16-byte UUID: clients mint UUIDv7, whose time-ordered bytes make
-- this WITHOUT ROWID table append-mostly; UUIDv4 ids from other clients are correct,
-- just slower to insert. Hashes are raw 32-byte digests.
-- commit_seq numbers the writer's commits to this file, so main.db can tell which
-- commits it has folded into session aggregates (see event_partitions in schema.sql).

CREATE TABLE events (
    event_id              BLOB PRIMARY KEY,
    ts_ms                 INTEGER NOT NULL,
    received_ms           INTEGER NOT NULL,
    commit_seq            INTEGER NOT NULL,
    user_id               TEXT NOT NULL,
    agent_type            TEXT NOT NULL,
    session_id            TEXT NOT NULL,
    type                  TEXT NOT NULL,
    run_kind              TEXT NOT NULL,
    model                 TEXT,
    permission_mode       TEXT,
    notification_kind     TEXT,
    tool_name             TEXT,
    tool_server           TEXT,
    tool_skill            TEXT,
    tool_slash_command    TEXT,
    tool_use_id           TEXT,
    tool_status           TEXT,
    tool_duration_ms      INTEGER,
    tool_input_sha256     BLOB,
    tool_input_bytes      INTEGER,
    tool_output_sha256    BLOB,
    tool_output_bytes     INTEGER,
    tool_target_hash      BLOB,
    tool_action           TEXT,
    input_tokens          INTEGER NOT NULL DEFAULT 0,
    output_tokens         INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
    cache_write_5m_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens      INTEGER NOT NULL DEFAULT 0,
    cost_nusd             INTEGER NOT NULL DEFAULT 0,
    client_cost_nusd      INTEGER,
    response_ms           INTEGER,
    git_branch            TEXT,
    git_commit            TEXT,
    git_remote            TEXT,
    git_dirty             INTEGER,
    -- Redacted metadata as JSON text; after compaction it moves, zstd-compressed with
    -- the partition's dictionary, to metadata_zst (the partition reader reads both).
    metadata              TEXT,
    metadata_zst          BLOB
) WITHOUT ROWID;

CREATE INDEX events_by_session ON events(user_id, agent_type, session_id, ts_ms);

-- The interactive events in commit order (schema version 2): the aggregate refresh reads
-- only what was committed since it last looked (analytics::refresh), so its cost follows
-- the new events, not the day. Appended at the right edge, so cheap to keep.
CREATE INDEX events_by_commit ON events(commit_seq) WHERE run_kind = 'INTERACTIVE';

-- The join keys of the tool calls and model requests of sessions that sent OTLP (schema
-- version 3): the vendor's id of what an event reports, by source, so the writer finds
-- the other source's report of one call or request by its key (events::writer::join).
CREATE TABLE join_keys (
    user_id    TEXT NOT NULL,
    agent_type TEXT NOT NULL,
    session_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    from_otlp  INTEGER NOT NULL,
    event_id   BLOB NOT NULL,
    PRIMARY KEY (user_id, agent_type, session_id, key, from_otlp)
) WITHOUT ROWID;

-- The evaluation cell each session of this file was run for (schema version 4): what the
-- harness named on the session's events, kept beside them so a fold made again after a
-- crash keeps the session's link to its cell (sessions.eval_cell_id in main.db).
CREATE TABLE eval_tags (
    user_id    TEXT NOT NULL,
    agent_type TEXT NOT NULL,
    session_id TEXT NOT NULL,
    cell_id    TEXT NOT NULL,
    run_name   TEXT,
    phase      TEXT,
    PRIMARY KEY (user_id, agent_type, session_id)
) WITHOUT ROWID;

CREATE TABLE partition_meta (
    singleton    INTEGER PRIMARY KEY CHECK (singleton = 1),
    day          TEXT NOT NULL,
    last_seq     INTEGER NOT NULL,
    compacted_at_ms INTEGER,
    zstd_dictionary BLOB
);
