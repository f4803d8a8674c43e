-- Migration 32: a third kind of token, 'otlp', for an agent's OpenTelemetry exporter
-- (the OTLP routes only). The kind's CHECK is part of the table, so the table is made
-- again with every row (SQLite cannot alter a CHECK).
ALTER TABLE auth_tokens RENAME TO auth_tokens_before_otlp;
CREATE TABLE auth_tokens (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('hook', 'refresh', 'otlp')),
    token_sha256    BLOB NOT NULL UNIQUE,
    family_id       TEXT,
    label           TEXT,
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL,
    last_used_at_ms INTEGER,
    revoked_at_ms   INTEGER,
    revoked_reason  TEXT
);
INSERT INTO auth_tokens
    SELECT id, user_id, kind, token_sha256, family_id, label, created_at_ms, expires_at_ms,
           last_used_at_ms, revoked_at_ms, revoked_reason
    FROM auth_tokens_before_otlp;
DROP TABLE auth_tokens_before_otlp;
CREATE INDEX auth_tokens_by_user ON auth_tokens(user_id, kind);
