-- Completed backups (backup::history): the administrator's pages show the last one's age.
CREATE TABLE backups (
    id INTEGER PRIMARY KEY,
    started_at_ms INTEGER NOT NULL,
    finished_at_ms INTEGER NOT NULL,
    location TEXT NOT NULL,
    files INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    copied_bytes INTEGER NOT NULL,
    index_state TEXT NOT NULL
);
CREATE INDEX backups_by_start ON backups (started_at_ms);
