-- Migration 16: secrets redacted from event metadata per day, person and rule, those the
-- hook had already redacted apart from those ingest caught (analytics::redactions).
CREATE TABLE agg_redactions_daily (
    day_start_ms INTEGER NOT NULL,
    user_id      TEXT NOT NULL,
    rule         TEXT NOT NULL,
    hook_hits    INTEGER NOT NULL,
    ingest_hits  INTEGER NOT NULL,
    PRIMARY KEY (day_start_ms, user_id, rule)
) WITHOUT ROWID;
CREATE INDEX agg_redactions_daily_by_user ON agg_redactions_daily(user_id);
