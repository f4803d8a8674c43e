-- Migration 3: identity, access and audit. Sign-in sessions, teams, repos, visibility
-- policies, access grants, the audit log, deletion requests, device authorisations, and
-- the two tables the deletion runner must clear explicitly (feedback and scores).

-- One sign-in (a web login or a CLI login). Access tokens name it (`sid`) and refresh
-- tokens belong to it (auth_tokens.family_id), so revoking it ends both at once.
CREATE TABLE auth_sessions (
    id             TEXT PRIMARY KEY,
    user_id        TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    client         TEXT NOT NULL CHECK (client IN ('web', 'cli')),
    method         TEXT NOT NULL CHECK (method IN ('password', 'github', 'device')),
    created_at_ms  INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL,
    revoked_at_ms  INTEGER,
    revoked_reason TEXT
);
CREATE INDEX auth_sessions_by_user ON auth_sessions(user_id);

-- Teams nest (parent_id); retention_days overrides the organisation's retention.
CREATE TABLE teams (
    id             TEXT PRIMARY KEY,
    slug           TEXT NOT NULL UNIQUE,
    name           TEXT NOT NULL,
    parent_id      TEXT REFERENCES teams(id),
    retention_days INTEGER CHECK (retention_days IS NULL OR retention_days > 0),
    created_at_ms  INTEGER NOT NULL
);

CREATE TABLE team_members (
    team_id     TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    team_role   TEXT NOT NULL DEFAULT 'member' CHECK (team_role IN ('lead', 'member')),
    added_at_ms INTEGER NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_by_user ON team_members(user_id);

CREATE TABLE repos (
    id             TEXT PRIMARY KEY,
    full_name      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    github_id      INTEGER UNIQUE,
    team_id        TEXT REFERENCES teams(id) ON DELETE SET NULL,
    default_branch TEXT,
    created_at_ms  INTEGER NOT NULL
);

-- Four flags per user; a missing row means the defaults. Each flag widens who may
-- see the user's data, so an administrator may only clear one (docs/access.md).
CREATE TABLE visibility_policies (
    user_id             TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    share_transcripts   INTEGER NOT NULL DEFAULT 0,
    team_drill_in       INTEGER NOT NULL DEFAULT 1,
    named_in_team_views INTEGER NOT NULL DEFAULT 1,
    judge_opt_in        INTEGER NOT NULL DEFAULT 0,
    updated_at_ms       INTEGER NOT NULL,
    updated_by          TEXT REFERENCES users(id)
);

-- Time-boxed access to one person's sessions (scope USER) or one session (SESSION).
-- Expiry is decided when a read happens: nothing sweeps grants.
CREATE TABLE access_grants (
    id              TEXT PRIMARY KEY,
    requester_id    TEXT NOT NULL REFERENCES users(id),
    subject_id      TEXT NOT NULL REFERENCES users(id),
    scope           TEXT NOT NULL CHECK (scope IN ('USER', 'SESSION')),
    session_id      TEXT,
    justification   TEXT NOT NULL,
    duration_ms     INTEGER NOT NULL CHECK (duration_ms > 0),
    status          TEXT NOT NULL CHECK (status IN ('REQUESTED', 'APPROVED', 'DENIED', 'REVOKED')),
    requested_at_ms INTEGER NOT NULL,
    decided_by      TEXT REFERENCES users(id),
    decided_at_ms   INTEGER,
    decision_note   TEXT,
    expires_at_ms   INTEGER,
    revoked_by      TEXT REFERENCES users(id),
    revoked_at_ms   INTEGER,
    CHECK ((scope = 'SESSION') = (session_id IS NOT NULL))
);
CREATE INDEX access_grants_by_requester ON access_grants(requester_id, status);
CREATE INDEX access_grants_by_subject ON access_grants(subject_id, requested_at_ms);

-- Append-only. No foreign keys: the record of who read whose data outlives both.
CREATE TABLE audit_log (
    id              TEXT PRIMARY KEY,
    at_ms           INTEGER NOT NULL,
    actor_id        TEXT,
    action          TEXT NOT NULL,
    subject_user_id TEXT,
    target          TEXT,
    detail          TEXT
);
CREATE INDEX audit_log_by_subject ON audit_log(subject_user_id, at_ms);
CREATE INDEX audit_log_by_time ON audit_log(at_ms);

CREATE TABLE deletion_requests (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL REFERENCES users(id),
    requested_by     TEXT NOT NULL,
    requested_at_ms  INTEGER NOT NULL,
    started_at_ms    INTEGER,
    completed_at_ms  INTEGER,
    sessions_deleted INTEGER NOT NULL DEFAULT 0,
    events_deleted   INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX deletion_requests_open ON deletion_requests(user_id) WHERE completed_at_ms IS NULL;

-- RFC 8628 device authorisations. Only a SHA-256 of the device code is kept.
CREATE TABLE device_authorizations (
    device_code_sha256 BLOB PRIMARY KEY,
    user_code          TEXT NOT NULL UNIQUE,
    client_id          TEXT NOT NULL,
    created_at_ms      INTEGER NOT NULL,
    expires_at_ms      INTEGER NOT NULL,
    interval_secs      INTEGER NOT NULL,
    last_polled_at_ms  INTEGER,
    status             TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED', 'DENIED', 'USED')),
    user_id            TEXT REFERENCES users(id) ON DELETE CASCADE
);

CREATE TABLE session_feedback (
    session_id     TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    user_id        TEXT NOT NULL REFERENCES users(id),
    thumbs         INTEGER CHECK (thumbs IN (-1, 1)),
    note           TEXT,
    rubric_version INTEGER,
    created_at_ms  INTEGER NOT NULL
);

-- Versioned scores. No foreign key to their subjects: the deletion runner removes
-- session-scoped rows itself.
CREATE TABLE scores (
    id              INTEGER PRIMARY KEY,
    subject_type    TEXT NOT NULL CHECK (subject_type IN ('session', 'pull_request', 'skill', 'tool_server')),
    subject_id      TEXT NOT NULL,
    scorer_name     TEXT NOT NULL,
    scorer_version  TEXT NOT NULL,
    period_start_ms INTEGER NOT NULL DEFAULT 0,
    value           REAL,
    label           TEXT,
    source          TEXT NOT NULL CHECK (source IN ('HEURISTIC', 'DETERMINISTIC', 'HUMAN', 'JUDGE', 'OUTCOME')),
    cost_nusd       INTEGER,
    rationale_ref   TEXT,
    created_at_ms   INTEGER NOT NULL,
    UNIQUE (subject_type, subject_id, scorer_name, scorer_version, period_start_ms)
);
