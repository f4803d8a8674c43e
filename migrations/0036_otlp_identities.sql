-- Migration 36: service-account OTLP tokens (a collector that forwards many people's
-- exports) and the explicit mapping from the identities agents export (user.email,
-- user.account_uuid, user.id) to people; identities seen without a mapping are counted
-- for administrators and never guessed (auth::otlp_identities).
CREATE TABLE otlp_service_tokens (
    token_id      TEXT PRIMARY KEY REFERENCES auth_tokens(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE otlp_identities (
    attribute     TEXT NOT NULL CHECK (attribute IN ('user.email', 'user.account_uuid', 'user.id')),
    value         TEXT NOT NULL,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_by    TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (attribute, value)
) WITHOUT ROWID;
CREATE TABLE otlp_unknown_identities (
    attribute     TEXT NOT NULL,
    value         TEXT NOT NULL,
    records       INTEGER NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL,
    token_id      TEXT NOT NULL,
    PRIMARY KEY (attribute, value)
) WITHOUT ROWID;
