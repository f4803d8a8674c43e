-- Migration 18: every attempt to notify a channel of an alert transition (src/alerts/).
CREATE TABLE alert_delivery_log (
    id         TEXT PRIMARY KEY,
    event_id   TEXT NOT NULL REFERENCES alert_events(id),
    channel    TEXT NOT NULL,
    transition TEXT NOT NULL CHECK (transition IN ('opened', 'resolved')),
    attempt    INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed')),
    detail     TEXT NOT NULL
);
CREATE INDEX alert_delivery_log_by_event ON alert_delivery_log(event_id, at_ms);
