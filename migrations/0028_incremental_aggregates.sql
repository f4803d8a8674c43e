-- Migration 28: the aggregate refresh folds only what was committed since it last looked
-- (analytics::partials). Per day partition, the last commit folded into the aggregates
-- (NULL: rebuild the day from its partition; no row: the same), and an epoch a forced
-- rebuild advances so a refresh that read before it does not apply.
CREATE TABLE aggregate_watermarks (
    day_start_ms INTEGER PRIMARY KEY,
    folded_seq   INTEGER,
    epoch        INTEGER NOT NULL DEFAULT 0
);

-- Per day and person, what agg_sessions_daily is made of before it is spread over the
-- person's teams (sums, so new events add to them).
CREATE TABLE agg_person_days (
    day_start_ms               INTEGER NOT NULL,
    user_id                    TEXT NOT NULL,
    sessions                   INTEGER NOT NULL,
    active_ms                  INTEGER NOT NULL,
    notifications_permission   INTEGER NOT NULL,
    notifications_idle         INTEGER NOT NULL,
    notifications_elicitation  INTEGER NOT NULL,
    notifications_auth         INTEGER NOT NULL,
    notifications_other        INTEGER NOT NULL,
    response_ms                INTEGER NOT NULL,
    responses                  INTEGER NOT NULL,
    mode_normal                INTEGER NOT NULL,
    mode_plan                  INTEGER NOT NULL,
    mode_accept_edits          INTEGER NOT NULL,
    mode_auto                  INTEGER NOT NULL,
    mode_dont_ask              INTEGER NOT NULL,
    mode_bypass                INTEGER NOT NULL,
    PRIMARY KEY (day_start_ms, user_id)
) WITHOUT ROWID;

-- Per day and session, its last event's time and active time so far: a new event extends
-- the session's active time without reading the session again. Kept for recent days only.
CREATE TABLE agg_session_days (
    day_start_ms INTEGER NOT NULL,
    user_id      TEXT NOT NULL,
    agent_type   TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    last_ts_ms   INTEGER NOT NULL,
    active_ms    INTEGER NOT NULL,
    PRIMARY KEY (day_start_ms, user_id, agent_type, session_id)
) WITHOUT ROWID;
