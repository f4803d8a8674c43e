-- Migration 9: the first continuous aggregate (analytics::usage): usage per hour, user,
-- agent and model, INTERACTIVE runs only, recomputed from the raw events of each dirty hour.
CREATE TABLE agg_usage_hourly (
    bucket_start_ms        INTEGER NOT NULL,
    user_id                TEXT NOT NULL,
    agent_type             TEXT NOT NULL,
    model                  TEXT NOT NULL,
    events                 INTEGER NOT NULL,
    prompts                INTEGER NOT NULL,
    sessions_started       INTEGER NOT NULL,
    input_tokens           INTEGER NOT NULL,
    output_tokens          INTEGER NOT NULL,
    cache_read_tokens      INTEGER NOT NULL,
    cache_write_5m_tokens  INTEGER NOT NULL,
    cache_write_1h_tokens  INTEGER NOT NULL,
    reasoning_tokens       INTEGER NOT NULL,
    cost_nusd              INTEGER NOT NULL,
    PRIMARY KEY (bucket_start_ms, user_id, agent_type, model)
) WITHOUT ROWID;
CREATE INDEX agg_usage_hourly_by_user ON agg_usage_hourly(user_id, bucket_start_ms);
