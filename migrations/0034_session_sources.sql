-- Migration 34: how many of a session's events came from the agent's own OTLP export
-- (the rest from the hook), for /admin/adapters' sources per person and agent. Sessions
-- stored before it count none (OTLP arrived with issue 35, in the same release).
ALTER TABLE sessions ADD COLUMN otlp_events INTEGER NOT NULL DEFAULT 0;
