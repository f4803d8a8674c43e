-- Migration 21: service-level indicators, one row per UTC day, indicator and key
-- (src/slo/, docs/slo.md), kept 12 months. latency_buckets is a JSON array of counts
-- per bound of slo::BOUNDS_MS (the last one unbounded); '' for an indicator without.
CREATE TABLE sli_daily (
    day_start_ms    INTEGER NOT NULL,
    indicator       TEXT NOT NULL,
    key             TEXT NOT NULL,
    total           INTEGER NOT NULL,
    good            INTEGER NOT NULL,
    latency_buckets TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (day_start_ms, indicator, key)
) WITHOUT ROWID;
-- The service levels read the job runs that ended each day.
CREATE INDEX job_runs_by_end ON job_runs(ended_at_ms);
