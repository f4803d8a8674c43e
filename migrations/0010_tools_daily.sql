-- Migration 10: the second continuous aggregate (analytics::tools): tool calls per day,
-- user, agent, tool, tool server, skill and slash command, INTERACTIVE runs only.
CREATE TABLE agg_tools_daily (
    day_start_ms       INTEGER NOT NULL,
    user_id            TEXT NOT NULL,
    agent_type         TEXT NOT NULL,
    tool_name          TEXT NOT NULL,
    tool_server        TEXT NOT NULL,
    skill              TEXT NOT NULL,
    slash_command      TEXT NOT NULL,
    calls              INTEGER NOT NULL,
    errors             INTEGER NOT NULL,
    denials            INTEGER NOT NULL,
    duration_ms        INTEGER NOT NULL,
    input_bytes        INTEGER NOT NULL,
    output_bytes       INTEGER NOT NULL,
    PRIMARY KEY (day_start_ms, user_id, agent_type, tool_name, tool_server, skill, slash_command)
) WITHOUT ROWID;
CREATE INDEX agg_tools_daily_by_user ON agg_tools_daily(user_id, day_start_ms);
