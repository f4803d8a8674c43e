-- Migration 4: how far re-redaction of stored event metadata has come, one row per day
-- partition (`backfill-redaction` after the redaction rules change). A partition without a
-- row was stored under rules version 1; `after_event_id` is the resume point of a pass
-- that stopped part way (NULL: from the start).
CREATE TABLE metadata_redaction (
    day             TEXT PRIMARY KEY,
    rules_version   INTEGER NOT NULL,
    after_event_id  BLOB
);
