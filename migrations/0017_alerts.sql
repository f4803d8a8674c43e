-- Migration 17: alert rules and the events their evaluation opens and resolves
-- (src/alerts/, docs/alerts.md). The six rules are seeded; budget threshold and routing
-- waste stay disabled until an operator sets a threshold.
CREATE TABLE alert_rules (
    id            TEXT PRIMARY KEY,
    threshold     REAL,
    enabled       INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at_ms INTEGER NOT NULL,
    updated_by    TEXT
);
INSERT INTO alert_rules (id, threshold, enabled, updated_at_ms) VALUES
    ('spend_spike', 3.0, 1, 0),
    ('error_rate', 0.25, 1, 0),
    ('unknown_model_surge', 100, 1, 0),
    ('autonomy_surge', 2.0, 1, 0),
    ('budget_threshold', NULL, 0, 0),
    ('routing_waste', NULL, 0, 0);
CREATE TABLE alert_events (
    id                 TEXT PRIMARY KEY,
    rule_id            TEXT NOT NULL REFERENCES alert_rules(id),
    state              TEXT NOT NULL CHECK (state IN ('firing', 'acknowledged', 'resolved')),
    opened_at_ms       INTEGER NOT NULL,
    last_seen_ms       INTEGER NOT NULL,
    value              REAL NOT NULL,
    threshold          REAL NOT NULL,
    detail             TEXT NOT NULL,
    resolved_at_ms     INTEGER,
    acknowledged_by    TEXT,
    acknowledged_at_ms INTEGER,
    silenced_until_ms  INTEGER,
    silenced_by        TEXT
);
CREATE UNIQUE INDEX alert_events_open ON alert_events(rule_id) WHERE state <> 'resolved';
