-- Migration 47 (issue 53, see drift coming). The agent's own version per session (what
-- its OTLP resource or its transcript says: Claude Code 2.1.332, not our hook's version),
-- what the agents send that no mapping uses (event names and attributes, per agent and
-- version, counted), and Claude Code's inventory events (plugins, MCP servers, hooks and
-- skills a person's agent loaded), which the capability ledger builds on.
ALTER TABLE sessions ADD COLUMN agent_version TEXT;

CREATE TABLE adapter_unmapped (
    agent_type    TEXT NOT NULL,
    agent_version TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('event', 'attribute')),
    event_name    TEXT NOT NULL,
    name          TEXT NOT NULL,
    records       INTEGER NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL,
    PRIMARY KEY (agent_type, agent_version, kind, event_name, name)
) WITHOUT ROWID;

CREATE TABLE capability_sightings (
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    agent_type      TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('mcp_server', 'plugin', 'hook', 'skill')),
    name            TEXT NOT NULL,
    detail          TEXT NOT NULL,
    agent_version   TEXT,
    last_session_id TEXT NOT NULL,
    records         INTEGER NOT NULL,
    first_seen_ms   INTEGER NOT NULL,
    last_seen_ms    INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent_type, kind, name)
) WITHOUT ROWID;
