-- Sightline main.db: the full current schema, for reading and for creating a new
-- database in one step. The ladder in migrations/ must produce exactly this schema;
-- tests/schema.rs proves it. Change both together: append a migration, update this file.
--
-- Conventions: ids we create are UUIDv7 text; times are integer milliseconds since the
-- Unix epoch (UTC) in columns named *_ms; money is integer nano-dollars (*_nusd).

CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name           TEXT NOT NULL,
    org_role       TEXT NOT NULL DEFAULT 'MEMBER',
    password_hash  TEXT,
    github_id      INTEGER UNIQUE,
    github_login   TEXT,
    created_at_ms  INTEGER NOT NULL,
    disabled_at_ms INTEGER
);

-- Every credential we issue. Only a SHA-256 of the secret is kept: tokens are 256-bit
-- random, so a fast hash is enough and a database leak reveals no usable token.
-- run_kind: a hook token that fixes the run kind of everything sent with it (a harness's).
-- kind 'eval': the eval dashboard's reads of the sessions linked to evaluation cells.
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
CREATE INDEX auth_tokens_by_user ON auth_tokens(user_id, kind);

-- The central fact table. Aggregates are additive: ingest adds only events it newly
-- inserted, so replayed or reordered batches change nothing. end_reason is 'ended' (a
-- SessionEnd event) or 'abandoned' (sweep-abandoned; a later event reopens the session).
-- transcript_shared is the owner's switch for this session's transcript (NULL: their flag).
CREATE TABLE sessions (
    id                      TEXT PRIMARY KEY,
    user_id                 TEXT NOT NULL REFERENCES users(id),
    agent_type              TEXT NOT NULL,
    agent_session_id        TEXT NOT NULL,
    run_kind                TEXT NOT NULL DEFAULT 'INTERACTIVE',
    first_event_ms          INTEGER NOT NULL,
    last_event_ms           INTEGER NOT NULL,
    started_at_ms           INTEGER,
    ended_at_ms             INTEGER,
    event_count             INTEGER NOT NULL DEFAULT 0,
    prompt_count            INTEGER NOT NULL DEFAULT 0,
    tool_call_count         INTEGER NOT NULL DEFAULT 0,
    tool_error_count        INTEGER NOT NULL DEFAULT 0,
    denial_count            INTEGER NOT NULL DEFAULT 0,
    notification_count      INTEGER NOT NULL DEFAULT 0,
    subagent_count          INTEGER NOT NULL DEFAULT 0,
    compact_count           INTEGER NOT NULL DEFAULT 0,
    input_tokens            INTEGER NOT NULL DEFAULT 0,
    output_tokens           INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens       INTEGER NOT NULL DEFAULT 0,
    cache_write_5m_tokens   INTEGER NOT NULL DEFAULT 0,
    cache_write_1h_tokens   INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens        INTEGER NOT NULL DEFAULT 0,
    cost_nusd               INTEGER NOT NULL DEFAULT 0,
    client_cost_nusd        INTEGER NOT NULL DEFAULT 0,
    unknown_model_events    INTEGER NOT NULL DEFAULT 0,
    total_response_ms       INTEGER NOT NULL DEFAULT 0,
    response_sample_count   INTEGER NOT NULL DEFAULT 0,
    max_autonomy_rank       INTEGER,
    git_ts_ms               INTEGER,
    git_branch              TEXT,
    git_commit              TEXT,
    git_remote              TEXT,
    git_dirty               INTEGER,
    machine_id              TEXT,
    cli_version             TEXT,
    os                      TEXT,
    transcript_path         TEXT,
    transcript_bytes        INTEGER,
    transcript_rules_version INTEGER,
    friction_score          REAL,
    shape_label             TEXT,
    end_reason              TEXT CHECK (end_reason IN ('ended', 'abandoned')),
    transcript_shared       INTEGER CHECK (transcript_shared IN (0, 1)),
    scored_version TEXT,
    scored_event_count INTEGER,
    mode TEXT GENERATED ALWAYS AS (CASE max_autonomy_rank
        WHEN 0 THEN 'plan' WHEN 1 THEN 'normal' WHEN 2 THEN 'accept_edits' WHEN 3 THEN 'auto'
        WHEN 4 THEN 'dont_ask' WHEN 5 THEN 'bypass' END) VIRTUAL, otlp_events INTEGER NOT NULL DEFAULT 0, eval_cell_id TEXT, eval_run TEXT, eval_phase TEXT, eval_harness INTEGER NOT NULL DEFAULT 0, agent_version TEXT,
    UNIQUE (user_id, agent_type, agent_session_id)
);
CREATE INDEX sessions_by_last_event ON sessions(last_event_ms);
CREATE INDEX sessions_by_first_event ON sessions(first_event_ms);
CREATE INDEX sessions_open_by_last_event ON sessions(last_event_ms) WHERE ended_at_ms IS NULL;
-- Non-interactive runs are rare; a partial index finds them without indexing the rest.
CREATE INDEX sessions_non_interactive ON sessions(run_kind) WHERE run_kind <> 'INTERACTIVE';
-- The sessions of an evaluation cell and of an evaluation run (eval_cell_id, eval_run:
-- what the harness named; NULL on every other session).
CREATE INDEX sessions_by_eval_cell ON sessions(eval_cell_id) WHERE eval_cell_id IS NOT NULL;
CREATE INDEX sessions_by_eval_run ON sessions(eval_run) WHERE eval_run IS NOT NULL;

-- Models seen in a session, with how many events each priced.
CREATE TABLE session_models (
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    event_count INTEGER NOT NULL,
    PRIMARY KEY (session_id, model)
) WITHOUT ROWID;

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

-- Models no price table knows; they cost 0 and feed the unknown-model alert.
CREATE TABLE unknown_models (
    agent_type    TEXT NOT NULL,
    model         TEXT NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL,
    event_count   INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    client_cost_nusd INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_type, model)
) WITHOUT ROWID;

-- Hourly buckets whose aggregates must be recomputed by the refresh job.
CREATE TABLE aggregate_dirty_buckets (
    bucket_start_ms INTEGER PRIMARY KEY,
    marked_at_ms    INTEGER NOT NULL
);
CREATE INDEX aggregate_dirty_by_marked ON aggregate_dirty_buckets(marked_at_ms);

-- How far each event partition's commits have been folded into sessions. A partition
-- commits first; main.db records its commit sequence second. After a crash between the
-- two, start-up folds the missing commits in, so no event is counted twice or never.
CREATE TABLE event_partitions (
    day              TEXT PRIMARY KEY,
    applied_seq      INTEGER NOT NULL,
    compacted_at_ms  INTEGER
);

-- Stored transcripts and their indexing state, one row per session that has one. The
-- file itself is <data_dir>/transcripts/<session id>.jsonl.zst; sessions keep the pointer.
-- title: the session's name the indexer found in the redacted file (transcripts::title),
-- '' for none; NULL queues the row for the indexer.
CREATE TABLE transcript_index (
    session_id      TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    upload_sha256   TEXT NOT NULL,
    stored_ms       INTEGER NOT NULL,
    indexed_ms      INTEGER,
    message_count   INTEGER
, title TEXT);
CREATE INDEX transcript_index_unindexed ON transcript_index (stored_ms) WHERE indexed_ms IS NULL;
CREATE INDEX transcript_index_untitled ON transcript_index (stored_ms) WHERE title IS NULL;

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
-- synced_at_ms: set by the GitHub team sync, which then owns the team's name, parent
-- and members (the console shows it as the source).
CREATE TABLE teams (
    id             TEXT PRIMARY KEY,
    slug           TEXT NOT NULL UNIQUE,
    name           TEXT NOT NULL,
    parent_id      TEXT REFERENCES teams(id),
    retention_days INTEGER CHECK (retention_days IS NULL OR retention_days > 0),
    created_at_ms  INTEGER NOT NULL
, synced_at_ms INTEGER);

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
-- One-time links to set a password (a new person's first, or a reset); only a digest
-- of the secret is kept (auth::password_links).
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
, requested_from TEXT, user_agent TEXT, label TEXT);

-- The addresses each account signed in from with its password (the throttle's familiar
-- addresses, read back at start).
CREATE TABLE sign_in_addresses (
    account         TEXT NOT NULL,
    address         TEXT NOT NULL,
    signed_in_at_ms INTEGER NOT NULL,
    PRIMARY KEY (account, address)
) WITHOUT ROWID;

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

-- What each session score usually is (scoring::bands): scope '' is the organisation's
-- band over the people it counts, a user id that person's own; replaced whole by the
-- scoring jobs.
CREATE TABLE score_bands (
    scope          TEXT NOT NULL,
    scorer_name    TEXT NOT NULL,
    scorer_version TEXT NOT NULL,
    sessions       INTEGER NOT NULL,
    people         INTEGER NOT NULL,
    low            REAL NOT NULL,
    middle         REAL NOT NULL,
    high           REAL NOT NULL,
    computed_at_ms INTEGER NOT NULL,
    PRIMARY KEY (scope, scorer_name, scorer_version)
) WITHOUT ROWID;

-- How far re-redaction of stored event metadata has come, one row per day partition
-- (`backfill-redaction`); no row: stored under rules version 1.
CREATE TABLE metadata_redaction (
    day             TEXT PRIMARY KEY,
    rules_version   INTEGER NOT NULL,
    after_event_id  BLOB
);

-- Jobs: the operator's schedule of the tier-1 jobs, and one row per run.
CREATE TABLE job_config (
    job            TEXT PRIMARY KEY,
    cron           TEXT NOT NULL,
    enabled        INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL
);

-- (`summary` came by ALTER TABLE in migration 8; it is written as SQLite records it.)
CREATE TABLE job_runs (
    id             TEXT PRIMARY KEY,
    job            TEXT NOT NULL,
    trigger        TEXT NOT NULL CHECK (trigger IN ('schedule', 'http', 'cli')),
    started_at_ms  INTEGER NOT NULL,
    ended_at_ms    INTEGER,
    outcome        TEXT NOT NULL CHECK (outcome IN ('running', 'succeeded', 'failed', 'refused', 'interrupted')),
    rows_touched   INTEGER,
    error          TEXT
, summary TEXT);

CREATE INDEX job_runs_by_job ON job_runs(job, started_at_ms);
-- At most one run of a job at a time.
CREATE UNIQUE INDEX job_runs_one_running ON job_runs(job) WHERE outcome = 'running';
-- A job's last success by index (/metrics).
CREATE INDEX job_runs_by_outcome ON job_runs(job, outcome, ended_at_ms);

-- Job service-level breaches (spec §8 "Alert when"), one row per breaching run.
CREATE TABLE job_alerts (
    id        TEXT PRIMARY KEY,
    job       TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    at_ms     INTEGER NOT NULL,
    severity  TEXT NOT NULL CHECK (severity IN ('warning', 'critical')),
    reason    TEXT NOT NULL
);

CREATE INDEX job_alerts_by_job ON job_alerts(job, at_ms);
CREATE INDEX job_alerts_by_run ON job_alerts(run_id);

-- Repricing's pending changes (sessions::reprice): the new cost of each changed event of
-- a day, written with the sessions' deltas before the partition is rewritten.
CREATE TABLE reprice_pending (
    day        TEXT NOT NULL,
    event_id   BLOB NOT NULL,
    cost_nusd  INTEGER NOT NULL,
    PRIMARY KEY (day, event_id)
) WITHOUT ROWID;

-- Usage per hour, user, agent and model (analytics::usage), INTERACTIVE runs only,
-- recomputed from the raw events of each dirty hour; `model` is '' when events had none.
CREATE TABLE agg_usage_hourly (
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
CREATE INDEX agg_usage_hourly_by_user ON agg_usage_hourly(user_id, bucket_start_ms);

-- The same usage per UTC day (analytics::usage keeps both in one transaction): a page's
-- period is whole days, so it reads one row a day, not one an hour. `bucket_start_ms` is
-- the day's start, named as in the hourly table so a query reads either.
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

-- Tool calls per day, user, agent, tool, tool server, skill and slash command
-- (analytics::tools), INTERACTIVE runs only; '' where an event named none.
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
-- The calls under a skill, a slash command or to a tool server, with the figures the pages
-- sum, so a skills or servers page reads only those calls (migration 31).
CREATE INDEX agg_tools_daily_skills ON agg_tools_daily(day_start_ms, skill, calls, errors, denials, duration_ms)
    WHERE skill <> '';
CREATE INDEX agg_tools_daily_commands ON agg_tools_daily(day_start_ms, slash_command, calls, errors, denials, duration_ms)
    WHERE slash_command <> '';
CREATE INDEX agg_tools_daily_servers ON agg_tools_daily(day_start_ms, tool_server, calls, errors, denials, duration_ms)
    WHERE tool_server <> '';

-- Sessions per day, user and team (analytics::sessions_daily): a row per team the user
-- is in when the day is refreshed ('' for none), INTERACTIVE runs only.
CREATE TABLE agg_sessions_daily (
    day_start_ms               INTEGER NOT NULL,
    user_id                    TEXT NOT NULL,
    team_id                    TEXT NOT NULL,
    sessions                   INTEGER NOT NULL,
    active_ms                  INTEGER NOT NULL,
    notifications_permission   INTEGER NOT NULL,
    notifications_idle         INTEGER NOT NULL,
    notifications_elicitation  INTEGER NOT NULL,
    notifications_auth         INTEGER NOT NULL,
    notifications_other        INTEGER NOT NULL,
    response_ms                INTEGER NOT NULL,
    responses                  INTEGER NOT NULL,
    mode_normal                INTEGER NOT NULL,
    mode_plan                  INTEGER NOT NULL,
    mode_accept_edits          INTEGER NOT NULL,
    mode_auto                  INTEGER NOT NULL,
    mode_dont_ask              INTEGER NOT NULL,
    mode_bypass                INTEGER NOT NULL,
    friction_sum REAL NOT NULL DEFAULT 0,
    friction_sessions INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day_start_ms, user_id, team_id)
) WITHOUT ROWID;
CREATE INDEX agg_sessions_daily_by_team ON agg_sessions_daily(team_id, day_start_ms);
CREATE INDEX agg_sessions_daily_by_user ON agg_sessions_daily(user_id, day_start_ms);

-- The aggregate refresh folds only what was committed since it last looked
-- (analytics::partials). Per day partition, the last commit folded into the aggregates
-- (NULL: rebuild the day from its partition; no row: the same), and an epoch a forced
-- rebuild advances so a refresh that read before it does not apply.
CREATE TABLE aggregate_watermarks (
    day_start_ms INTEGER PRIMARY KEY,
    folded_seq   INTEGER,
    epoch        INTEGER NOT NULL DEFAULT 0
);

-- Per day and person, what agg_sessions_daily is made of before it is spread over the
-- person's teams (sums, so new events add to them).
CREATE TABLE agg_person_days (
    day_start_ms               INTEGER NOT NULL,
    user_id                    TEXT NOT NULL,
    sessions                   INTEGER NOT NULL,
    active_ms                  INTEGER NOT NULL,
    notifications_permission   INTEGER NOT NULL,
    notifications_idle         INTEGER NOT NULL,
    notifications_elicitation  INTEGER NOT NULL,
    notifications_auth         INTEGER NOT NULL,
    notifications_other        INTEGER NOT NULL,
    response_ms                INTEGER NOT NULL,
    responses                  INTEGER NOT NULL,
    mode_normal                INTEGER NOT NULL,
    mode_plan                  INTEGER NOT NULL,
    mode_accept_edits          INTEGER NOT NULL,
    mode_auto                  INTEGER NOT NULL,
    mode_dont_ask              INTEGER NOT NULL,
    mode_bypass                INTEGER NOT NULL,
    PRIMARY KEY (day_start_ms, user_id)
) WITHOUT ROWID;

-- Per day and session, its last event's time and active time so far: a new event extends
-- the session's active time without reading the session again. Kept for recent days only.
CREATE TABLE agg_session_days (
    day_start_ms INTEGER NOT NULL,
    user_id      TEXT NOT NULL,
    agent_type   TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    last_ts_ms   INTEGER NOT NULL,
    active_ms    INTEGER NOT NULL,
    PRIMARY KEY (day_start_ms, user_id, agent_type, session_id)
) WITHOUT ROWID;

-- Secrets redacted from event metadata per day, person and rule (analytics::redactions),
-- INTERACTIVE runs only: those the hook had already redacted, and those ingest caught.
-- Counted as events are stored (not refreshed from them); the deletion runner removes a
-- person's rows.
CREATE TABLE agg_redactions_daily (
    day_start_ms INTEGER NOT NULL,
    user_id      TEXT NOT NULL,
    rule         TEXT NOT NULL,
    hook_hits    INTEGER NOT NULL,
    ingest_hits  INTEGER NOT NULL,
    PRIMARY KEY (day_start_ms, user_id, rule)
) WITHOUT ROWID;
CREATE INDEX agg_redactions_daily_by_user ON agg_redactions_daily(user_id);

-- The GitHub App (src/github/). Every webhook delivery, stored before it is answered;
-- the body (zstd) is kept until the delivery is processed, so one a crash interrupted
-- is processed after restart, and dropped once it is.
CREATE TABLE webhook_deliveries (
    delivery_id     TEXT PRIMARY KEY,
    event           TEXT NOT NULL,
    action          TEXT,
    received_at_ms  INTEGER NOT NULL,
    body_sha256     TEXT NOT NULL,
    body_zst        BLOB,
    outcome         TEXT NOT NULL CHECK (outcome IN ('pending', 'applied', 'ignored', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    processed_at_ms INTEGER,
    processing_ms   INTEGER,
    error           TEXT
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(received_at_ms) WHERE outcome = 'pending';
CREATE INDEX webhook_deliveries_by_received ON webhook_deliveries(received_at_ms);

-- Pull requests by repository and number; id is "<owner>/<name>#<number>", lower case.
-- reverts_number is the pull request this one reverts; reverted_by_number the one
-- that reverted it (0: a revert commit on the default branch). comment_due is 1 when
-- the bot comment should be posted or edited; comment_consent is whether session
-- figures were shown in it (everyone behind them allowing it) when it was.
CREATE TABLE pull_requests (
    id                   TEXT PRIMARY KEY,
    repo_id              TEXT NOT NULL REFERENCES repos(id),
    number               INTEGER NOT NULL,
    github_id            INTEGER,
    title                TEXT NOT NULL,
    author_login         TEXT,
    author_github_id     INTEGER,
    user_id              TEXT REFERENCES users(id) ON DELETE SET NULL,
    state                TEXT NOT NULL CHECK (state IN ('open', 'closed', 'merged')),
    is_draft             INTEGER NOT NULL DEFAULT 0,
    base_ref             TEXT NOT NULL,
    head_ref             TEXT NOT NULL,
    head_repo            TEXT,
    head_sha             TEXT,
    additions            INTEGER NOT NULL DEFAULT 0,
    deletions            INTEGER NOT NULL DEFAULT 0,
    changed_files        INTEGER NOT NULL DEFAULT 0,
    created_at_ms        INTEGER NOT NULL,
    updated_at_ms        INTEGER NOT NULL,
    merged_at_ms         INTEGER,
    closed_at_ms         INTEGER,
    merge_commit_sha     TEXT,
    issue_key            TEXT,
    reverts_number       INTEGER,
    reverted_by_number   INTEGER,
    check_failures_count INTEGER NOT NULL DEFAULT 0,
    ci_decision          TEXT CHECK (ci_decision IN ('passing', 'failing', 'pending')),
    review_decision      TEXT CHECK (review_decision IN ('approved', 'changes_requested', 'commented')),
    review_rounds        INTEGER NOT NULL DEFAULT 0,
    bot_comment_id       INTEGER,
    comment_due          INTEGER NOT NULL DEFAULT 0,
    comment_consent      INTEGER,
    UNIQUE (repo_id, number)
);
CREATE INDEX pull_requests_by_user ON pull_requests(user_id, created_at_ms);
CREATE INDEX pull_requests_by_head ON pull_requests(head_ref);
CREATE INDEX pull_requests_comment_due ON pull_requests(id) WHERE comment_due = 1;

-- Commits known to belong to a pull request: its head commits and those pushed to its
-- head branch while it was open.
CREATE TABLE pr_commits (
    pr_id TEXT NOT NULL REFERENCES pull_requests(id) ON DELETE CASCADE ON UPDATE CASCADE,
    sha   TEXT NOT NULL,
    PRIMARY KEY (pr_id, sha)
) WITHOUT ROWID;
CREATE INDEX pr_commits_by_sha ON pr_commits(sha);

CREATE TABLE pr_check_runs (
    pr_id           TEXT NOT NULL REFERENCES pull_requests(id) ON DELETE CASCADE ON UPDATE CASCADE,
    check_run_id    INTEGER NOT NULL,
    name            TEXT NOT NULL,
    head_sha        TEXT NOT NULL,
    status          TEXT NOT NULL,
    conclusion      TEXT,
    completed_at_ms INTEGER,
    PRIMARY KEY (pr_id, check_run_id)
) WITHOUT ROWID;

CREATE TABLE pr_reviews (
    pr_id           TEXT NOT NULL REFERENCES pull_requests(id) ON DELETE CASCADE ON UPDATE CASCADE,
    review_id       INTEGER NOT NULL,
    reviewer_login  TEXT NOT NULL,
    state           TEXT NOT NULL,
    commit_sha      TEXT,
    submitted_at_ms INTEGER,
    PRIMARY KEY (pr_id, review_id)
) WITHOUT ROWID;

-- Commits pushed to a repository's default branch.
CREATE TABLE default_branch_commits (
    repo_id      TEXT NOT NULL REFERENCES repos(id),
    sha          TEXT NOT NULL,
    pushed_at_ms INTEGER NOT NULL,
    PRIMARY KEY (repo_id, sha)
) WITHOUT ROWID;
CREATE INDEX default_branch_commits_by_sha ON default_branch_commits(sha);

-- Every git context a session reported (at its start, each resume, and its end):
-- repo is "<host>/<owner>/<name>" in lower case ('' when the remote is not one),
-- pr_number a pull request the session named (0 for none). link_checked is 0 until
-- the link step has tried it against the known pull requests.
CREATE TABLE session_git (
    session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    repo              TEXT NOT NULL,
    branch            TEXT NOT NULL,
    commit_sha        TEXT NOT NULL,
    pr_number         INTEGER NOT NULL,
    first_reported_ms INTEGER NOT NULL,
    link_checked      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, repo, branch, commit_sha, pr_number)
) WITHOUT ROWID;
CREATE INDEX session_git_by_branch ON session_git(repo, branch);
CREATE INDEX session_git_by_commit ON session_git(commit_sha);
CREATE INDEX session_git_unchecked ON session_git(session_id) WHERE link_checked = 0;
CREATE INDEX session_git_by_pr_number ON session_git(repo, pr_number) WHERE pr_number > 0;

-- A session's link to a pull request, made only on exact evidence: 'branch' (the
-- session's repository and head branch), 'commit' (a commit the session reported is
-- one of the pull request's) or 'named' (the session named the pull request).
CREATE TABLE session_pr_links (
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    pr_id        TEXT NOT NULL REFERENCES pull_requests(id) ON DELETE CASCADE ON UPDATE CASCADE,
    evidence     TEXT NOT NULL CHECK (evidence IN ('branch', 'commit', 'named')),
    linked_at_ms INTEGER NOT NULL,
    PRIMARY KEY (session_id, pr_id)
) WITHOUT ROWID;
CREATE INDEX session_pr_links_by_pr ON session_pr_links(pr_id);

-- What a merged pull request took: interactive sessions only in the developer figures,
-- CI runs apart. Recomputed on merge and whenever a link to it changes.
CREATE TABLE pr_rollups (
    pr_id                       TEXT PRIMARY KEY REFERENCES pull_requests(id) ON DELETE CASCADE ON UPDATE CASCADE,
    computed_at_ms              INTEGER NOT NULL,
    sessions                    INTEGER NOT NULL,
    people                      INTEGER NOT NULL,
    agents                      TEXT NOT NULL,
    cost_nusd                   INTEGER NOT NULL,
    tokens                      INTEGER NOT NULL,
    cost_per_changed_line_nusd  INTEGER,
    ci_sessions                 INTEGER NOT NULL,
    ci_cost_nusd                INTEGER NOT NULL,
    check_failures_count        INTEGER NOT NULL,
    review_rounds               INTEGER NOT NULL,
    time_to_merge_ms            INTEGER,
    reverted                    INTEGER NOT NULL
);

-- Alert rules and the events their evaluation opens and resolves (src/alerts/,
-- docs/alerts.md); the six rules are seeded, the last two disabled.
CREATE TABLE alert_rules (
    id            TEXT PRIMARY KEY,
    threshold     REAL,
    enabled       INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at_ms INTEGER NOT NULL,
    updated_by    TEXT
);
INSERT INTO alert_rules (id, threshold, enabled, updated_at_ms) VALUES
    ('spend_spike', 3.0, 1, 0),
    ('error_rate', 0.25, 1, 0),
    ('unknown_model_surge', 100, 1, 0),
    ('autonomy_surge', 2.0, 1, 0),
    ('budget_threshold', NULL, 0, 0),
    ('routing_waste', NULL, 0, 0),
    ('job_slo', 1, 1, 0),
    ('slo_burn', 0.5, 1, 0);
CREATE TABLE alert_events (
    id                 TEXT PRIMARY KEY,
    rule_id            TEXT NOT NULL REFERENCES alert_rules(id),
    state              TEXT NOT NULL CHECK (state IN ('firing', 'acknowledged', 'resolved')),
    opened_at_ms       INTEGER NOT NULL,
    last_seen_ms       INTEGER NOT NULL,
    value              REAL NOT NULL,
    threshold          REAL NOT NULL,
    detail             TEXT NOT NULL,
    resolved_at_ms     INTEGER,
    acknowledged_by    TEXT,
    acknowledged_at_ms INTEGER,
    silenced_until_ms  INTEGER,
    silenced_by        TEXT
, subject TEXT NOT NULL DEFAULT '');
CREATE UNIQUE INDEX alert_events_open ON alert_events(rule_id, subject) WHERE state <> 'resolved';

-- Channel switches and test-sends (credentials stay in the environment, spec §5.6).
CREATE TABLE alert_channel_configs (
    channel           TEXT PRIMARY KEY CHECK (channel IN ('chat_webhook', 'webhook', 'email')),
    enabled           INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at_ms     INTEGER NOT NULL,
    updated_by        TEXT,
    last_test_at_ms   INTEGER,
    last_test_outcome TEXT
);
-- Monthly budgets of teams and people, for the budget_threshold rule.
CREATE TABLE alert_budgets (
    id            TEXT PRIMARY KEY,
    scope         TEXT NOT NULL CHECK (scope IN ('team', 'person')),
    subject_id    TEXT NOT NULL,
    monthly_nusd  INTEGER NOT NULL CHECK (monthly_nusd > 0),
    levels        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    created_by    TEXT,
    UNIQUE (scope, subject_id)
);

-- Every attempt to notify a channel of an alert transition (src/alerts/channels).
CREATE TABLE alert_delivery_log (
    id         TEXT PRIMARY KEY,
    event_id   TEXT NOT NULL REFERENCES alert_events(id),
    channel    TEXT NOT NULL,
    transition TEXT NOT NULL CHECK (transition IN ('opened', 'resolved')),
    attempt    INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed')),
    detail     TEXT NOT NULL
);
CREATE INDEX alert_delivery_log_by_event ON alert_delivery_log(event_id, at_ms);
CREATE INDEX alert_delivery_log_by_time ON alert_delivery_log(at_ms);

-- Service-level indicators per UTC day (src/slo/, docs/slo.md), kept 12 months;
-- latency_buckets: JSON counts per bound of slo::BOUNDS_MS, '' where not timed.
CREATE TABLE sli_daily (
    day_start_ms    INTEGER NOT NULL,
    indicator       TEXT NOT NULL,
    key             TEXT NOT NULL,
    total           INTEGER NOT NULL,
    good            INTEGER NOT NULL,
    latency_buckets TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (day_start_ms, indicator, key)
) WITHOUT ROWID;
CREATE INDEX job_runs_by_end ON job_runs(ended_at_ms);

-- The Jira issues pull requests name (src/jira/, sync-jira), with their business value
-- from the configured field; found = 0 for a key Jira does not know.
CREATE TABLE jira_issues (
    key            TEXT PRIMARY KEY,
    found          INTEGER NOT NULL CHECK (found IN (0, 1)),
    summary        TEXT NOT NULL,
    status         TEXT,
    business_value REAL,
    fetched_at_ms  INTEGER NOT NULL
);

-- Cost reconciliation with the vendors' billing (src/billing/, reconcile-cost). A run
-- replaces its window of days for each vendor it asked.
CREATE TABLE billing_lines (
    day          TEXT NOT NULL,
    vendor       TEXT NOT NULL,
    workspace    TEXT NOT NULL,
    model        TEXT NOT NULL,
    description  TEXT NOT NULL,
    billed_nusd  INTEGER NOT NULL,
    PRIMARY KEY (vendor, day, workspace, model, description)
) WITHOUT ROWID;

CREATE TABLE cost_drift (
    day               TEXT NOT NULL,
    vendor            TEXT NOT NULL,
    model             TEXT NOT NULL,
    recomputed_nusd   INTEGER NOT NULL,
    billed_nusd       INTEGER NOT NULL,
    drift_nusd        INTEGER NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('within', 'uncaptured', 'unattributed', 'breach')),
    uncaptured_agents TEXT NOT NULL,
    reconciled_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (vendor, day, model)
) WITHOUT ROWID;

CREATE TABLE billing_sources (
    vendor           TEXT PRIMARY KEY,
    from_day         TEXT NOT NULL,
    to_day           TEXT NOT NULL,
    reconciled_at_ms INTEGER NOT NULL
);

-- Projections (src/projections/): a predicted saving with its measured baseline, outcome
-- guards and the price-table and scorer versions in force; who recorded it is audited.
CREATE TABLE projections (
    id                   TEXT PRIMARY KEY,
    title                TEXT NOT NULL,
    metric               TEXT NOT NULL CHECK (metric IN ('cost_per_merged_pr', 'spend_per_week', 'cost_per_value_unit')),
    saving_low           REAL NOT NULL,
    saving_high          REAL NOT NULL,
    baseline_from_ms     INTEGER NOT NULL,
    baseline_to_ms       INTEGER NOT NULL,
    baseline_value       REAL,
    baseline_friction    REAL,
    baseline_revert_rate REAL,
    period_from_ms       INTEGER NOT NULL,
    period_to_ms         INTEGER NOT NULL,
    price_tables         TEXT NOT NULL,
    scorers              TEXT NOT NULL,
    recorded_at_ms       INTEGER NOT NULL,
    CHECK (saving_low <= saving_high AND baseline_from_ms < baseline_to_ms AND period_from_ms < period_to_ms)
);

-- Completed backups (backup::history): the administrator's pages show the last one's age.
CREATE TABLE backups (
    id INTEGER PRIMARY KEY,
    started_at_ms INTEGER NOT NULL,
    finished_at_ms INTEGER NOT NULL,
    location TEXT NOT NULL,
    files INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    copied_bytes INTEGER NOT NULL,
    index_state TEXT NOT NULL
);
CREATE INDEX backups_by_start ON backups (started_at_ms);

-- The sessions that sent OTLP lately (events::writer's join of the hook's and OTLP's
-- reports of one tool call or request); pruned after two days at writer start.
CREATE TABLE otlp_sessions (
    user_id      TEXT NOT NULL,
    agent_type   TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    last_seen_ms INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent_type, session_id)
) WITHOUT ROWID;

-- What agents report about a session that no event carries, from their OTLP metrics
-- (sessions::reported), and each metric series' last applied point.
CREATE TABLE session_reported (
    user_id          TEXT NOT NULL,
    agent_type       TEXT NOT NULL,
    agent_session_id TEXT NOT NULL,
    lines_added      INTEGER NOT NULL DEFAULT 0,
    lines_removed    INTEGER NOT NULL DEFAULT 0,
    commits          INTEGER NOT NULL DEFAULT 0,
    pull_requests    INTEGER NOT NULL DEFAULT 0,
    active_user_ms   INTEGER NOT NULL DEFAULT 0,
    active_agent_ms  INTEGER NOT NULL DEFAULT 0,
    updated_ms       INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent_type, agent_session_id)
) WITHOUT ROWID;
CREATE TABLE otlp_metric_series (
    series      TEXT PRIMARY KEY,
    start_nanos INTEGER NOT NULL,
    last_nanos  INTEGER NOT NULL,
    last_value  REAL NOT NULL,
    seen_ms     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX otlp_metric_series_seen ON otlp_metric_series (seen_ms);

-- Service-account OTLP tokens, the mapping from exported identities to people, and the
-- identities seen without one (auth::otlp_identities).
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
