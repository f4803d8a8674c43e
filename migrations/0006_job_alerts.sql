-- Migration 6: job service-level breaches (spec §8 "Alert when"), one row per breaching run.
CREATE TABLE job_alerts (
    id        TEXT PRIMARY KEY,
    job       TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    at_ms     INTEGER NOT NULL,
    severity  TEXT NOT NULL CHECK (severity IN ('warning', 'critical')),
    reason    TEXT NOT NULL
);

CREATE INDEX job_alerts_by_job ON job_alerts(job, at_ms);
