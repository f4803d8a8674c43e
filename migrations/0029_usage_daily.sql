-- Migration 29: usage per UTC day beside the hourly rows (analytics::usage keeps both in
-- the refresh's transaction). A page's period is whole days, so it reads one row per
-- person, agent and model a day instead of one an hour. `bucket_start_ms` is the day's
-- start, named as in the hourly table so a query reads either.
CREATE TABLE agg_usage_daily (
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
CREATE INDEX agg_usage_daily_by_user ON agg_usage_daily(user_id, bucket_start_ms);

INSERT INTO agg_usage_daily
SELECT (bucket_start_ms / 86400000) * 86400000, user_id, agent_type, model, sum(events), sum(prompts),
       sum(sessions_started), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
       sum(cache_write_5m_tokens), sum(cache_write_1h_tokens), sum(reasoning_tokens), sum(cost_nusd)
FROM agg_usage_hourly
GROUP BY 1, 2, 3, 4;
