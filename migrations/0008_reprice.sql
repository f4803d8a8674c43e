-- Migration 8: repricing's pending changes (sessions::reprice), and a one-line summary
-- of what a job run found or did (the reprice report, for jobs history and the API).
CREATE TABLE reprice_pending (
    day        TEXT NOT NULL,
    event_id   BLOB NOT NULL,
    cost_nusd  INTEGER NOT NULL,
    PRIMARY KEY (day, event_id)
) WITHOUT ROWID;
ALTER TABLE job_runs ADD COLUMN summary TEXT;
