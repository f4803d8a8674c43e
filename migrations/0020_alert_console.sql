-- Migration 20: the alert console. Channel switches and test-sends
-- (alert_channel_configs; credentials stay in the environment, spec §5.6), monthly
-- budgets of teams and people (alert_budgets), events per subject (a budget, a level,
-- a service-level objective), and the eighth rule, slo_burn.
CREATE TABLE alert_channel_configs (
    channel           TEXT PRIMARY KEY CHECK (channel IN ('chat_webhook', 'webhook', 'email')),
    enabled           INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at_ms     INTEGER NOT NULL,
    updated_by        TEXT,
    last_test_at_ms   INTEGER,
    last_test_outcome TEXT
);
CREATE TABLE alert_budgets (
    id            TEXT PRIMARY KEY,
    scope         TEXT NOT NULL CHECK (scope IN ('team', 'person')),
    subject_id    TEXT NOT NULL,
    monthly_nusd  INTEGER NOT NULL CHECK (monthly_nusd > 0),
    levels        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    created_by    TEXT,
    UNIQUE (scope, subject_id)
);
ALTER TABLE alert_events ADD COLUMN subject TEXT NOT NULL DEFAULT '';
DROP INDEX alert_events_open;
CREATE UNIQUE INDEX alert_events_open ON alert_events(rule_id, subject) WHERE state <> 'resolved';
-- An organisation budget event of before subjects would resolve with a notice and open
-- again per level: it resolves here, quietly, and the next evaluation opens the levels.
UPDATE alert_events SET state = 'resolved', resolved_at_ms = last_seen_ms
    WHERE rule_id = 'budget_threshold' AND state <> 'resolved';
CREATE INDEX alert_delivery_log_by_time ON alert_delivery_log(at_ms);
INSERT INTO alert_rules (id, threshold, enabled, updated_at_ms) VALUES ('slo_burn', 0.5, 1, 0);
