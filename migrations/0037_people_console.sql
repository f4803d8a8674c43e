-- Migration 37: the administrator's people and teams pages. One-time links that let a
-- person set their password (a new person's first, or a reset): only a SHA-256 of the
-- secret is kept, each link works once and for a limited time (auth::password_links).
-- teams.synced_at_ms marks a team the GitHub team sync owns (its name, parent and
-- members are replaced at every sync), so the console shows that source and does not
-- offer edits the next sync would undo.
CREATE TABLE password_links (
    id            TEXT PRIMARY KEY,
    secret_sha256 BLOB NOT NULL UNIQUE,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    purpose       TEXT NOT NULL CHECK (purpose IN ('welcome', 'reset')),
    created_by    TEXT,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    used_at_ms    INTEGER
);
CREATE INDEX password_links_by_user ON password_links(user_id);
ALTER TABLE teams ADD COLUMN synced_at_ms INTEGER;
