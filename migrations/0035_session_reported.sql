-- Migration 35: what agents report about a session that no event carries (lines of
-- code, commits, pull requests, active time), from their OTLP metrics
-- (sessions::reported), and each metric series' last applied point, so a cumulative
-- series adds only its growth and a retried export adds nothing.
CREATE TABLE session_reported (
    user_id          TEXT NOT NULL,
    agent_type       TEXT NOT NULL,
    agent_session_id TEXT NOT NULL,
    lines_added      INTEGER NOT NULL DEFAULT 0,
    lines_removed    INTEGER NOT NULL DEFAULT 0,
    commits          INTEGER NOT NULL DEFAULT 0,
    pull_requests    INTEGER NOT NULL DEFAULT 0,
    active_user_ms   INTEGER NOT NULL DEFAULT 0,
    active_agent_ms  INTEGER NOT NULL DEFAULT 0,
    updated_ms       INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent_type, agent_session_id)
) WITHOUT ROWID;
CREATE TABLE otlp_metric_series (
    series      TEXT PRIMARY KEY,
    start_nanos INTEGER NOT NULL,
    last_nanos  INTEGER NOT NULL,
    last_value  REAL NOT NULL,
    seen_ms     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX otlp_metric_series_seen ON otlp_metric_series (seen_ms);
