-- Migration 5: jobs. The operator's schedule of the tier-1 jobs, and one row per run.
CREATE TABLE job_config (
    job            TEXT PRIMARY KEY,
    cron           TEXT NOT NULL,
    enabled        INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL
);

CREATE TABLE job_runs (
    id             TEXT PRIMARY KEY,
    job            TEXT NOT NULL,
    trigger        TEXT NOT NULL CHECK (trigger IN ('schedule', 'http', 'cli')),
    started_at_ms  INTEGER NOT NULL,
    ended_at_ms    INTEGER,
    outcome        TEXT NOT NULL CHECK (outcome IN ('running', 'succeeded', 'failed', 'refused', 'interrupted')),
    rows_touched   INTEGER,
    error          TEXT
);

CREATE INDEX job_runs_by_job ON job_runs(job, started_at_ms);
-- At most one run of a job at a time.
CREATE UNIQUE INDEX job_runs_one_running ON job_runs(job) WHERE outcome = 'running';
