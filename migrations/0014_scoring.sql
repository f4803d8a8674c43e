-- Migration 14: what trajectory scoring last saw of a session: the scorers' version and
-- the session's event count, so a session is due again when either changes.
ALTER TABLE sessions ADD COLUMN scored_version TEXT;
ALTER TABLE sessions ADD COLUMN scored_event_count INTEGER;
