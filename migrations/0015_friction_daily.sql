-- Migration 15: friction per day in the sessions aggregate (the sum of the day's scored
-- sessions' friction and how many there were), and an index to find a day's sessions.
ALTER TABLE agg_sessions_daily ADD COLUMN friction_sum REAL NOT NULL DEFAULT 0;
ALTER TABLE agg_sessions_daily ADD COLUMN friction_sessions INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_by_first_event ON sessions(first_event_ms);
