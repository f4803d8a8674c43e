-- Migration 33: the sessions that sent OTLP lately (events::writer's join): a hook
-- event of one of them is looked for among its OTLP twins, so one tool call or model
-- request seen by both is stored once. Rows older than two days are dropped when the
-- writer starts; a deletion request removes a person's.
CREATE TABLE otlp_sessions (
    user_id      TEXT NOT NULL,
    agent_type   TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    last_seen_ms INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent_type, session_id)
) WITHOUT ROWID;
