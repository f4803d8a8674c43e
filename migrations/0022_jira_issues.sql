-- Migration 22: the Jira issues pull requests name (src/jira/, sync-jira), with their
-- business value from the configured field; found = 0 for a key Jira does not know.
CREATE TABLE jira_issues (
    key            TEXT PRIMARY KEY,
    found          INTEGER NOT NULL CHECK (found IN (0, 1)),
    summary        TEXT NOT NULL,
    status         TEXT,
    business_value REAL,
    fetched_at_ms  INTEGER NOT NULL
);
