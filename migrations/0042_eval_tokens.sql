-- Migration 42: a fourth kind of token, 'eval', with which the eval dashboard reads the
-- sessions linked to evaluation cells (the /api/evals routes only, for a person in the
-- EVAL_ENGINEER role). The kind's CHECK is part of the table, so the table is made again
-- with every row. legacy_alter_table keeps the rename from rewriting the foreign key of
-- otlp_service_tokens, which must go on naming auth_tokens.
PRAGMA legacy_alter_table = ON;
ALTER TABLE auth_tokens RENAME TO auth_tokens_before_eval;
CREATE TABLE auth_tokens (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('hook', 'refresh', 'otlp', 'eval')),
    token_sha256    BLOB NOT NULL UNIQUE,
    family_id       TEXT,
    label           TEXT,
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL,
    last_used_at_ms INTEGER,
    revoked_at_ms   INTEGER,
    revoked_reason  TEXT,
    run_kind        TEXT CHECK (run_kind IS NULL OR run_kind IN ('CI', 'EVAL'))
);
INSERT INTO auth_tokens
    SELECT id, user_id, kind, token_sha256, family_id, label, created_at_ms, expires_at_ms,
           last_used_at_ms, revoked_at_ms, revoked_reason, run_kind
    FROM auth_tokens_before_eval;
DROP TABLE auth_tokens_before_eval;
CREATE INDEX auth_tokens_by_user ON auth_tokens(user_id, kind);
PRAGMA legacy_alter_table = OFF;
