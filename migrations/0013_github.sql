-- Migration 13: the GitHub App: webhook deliveries, pull requests and what they link to.

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
