-- Migration 7: why a session ended. 'ended': its agent said so (a SessionEnd event);
-- 'abandoned': sweep-abandoned closed it after a quiet time (a later event reopens it).
ALTER TABLE sessions ADD COLUMN end_reason TEXT CHECK (end_reason IN ('ended', 'abandoned'));
UPDATE sessions SET end_reason = 'ended' WHERE ended_at_ms IS NOT NULL;
-- Open sessions by their last event: what sweep-abandoned looks at.
CREATE INDEX sessions_open_by_last_event ON sessions(last_event_ms) WHERE ended_at_ms IS NULL;
