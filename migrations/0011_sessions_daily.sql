-- Migration 11: the third continuous aggregate (analytics::sessions_daily): per day, user
-- and team (a row per team the user is in, '' for none), INTERACTIVE runs only.
CREATE TABLE agg_sessions_daily (
    day_start_ms               INTEGER NOT NULL,
    user_id                    TEXT NOT NULL,
    team_id                    TEXT NOT NULL,
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
    PRIMARY KEY (day_start_ms, user_id, team_id)
) WITHOUT ROWID;
CREATE INDEX agg_sessions_daily_by_team ON agg_sessions_daily(team_id, day_start_ms);
CREATE INDEX agg_sessions_daily_by_user ON agg_sessions_daily(user_id, day_start_ms);
