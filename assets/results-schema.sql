-- results.db: evaluation results written by an eval harness and read by
-- `sightline report | results | dashboard`. Sightline never writes this database
-- (except `sightline evals demo`, which creates a new one). A harness creates it with
-- this DDL; every statement is idempotent. Timestamps are ISO 8601 text with
-- fractional seconds and an offset, e.g. 2026-11-21T09:30:00.123456+00:00.

-- One row per cell: exactly the columns of the spec, in order (evals-reporting §2.1).
CREATE TABLE IF NOT EXISTS run_results (
    cell_id                  TEXT NOT NULL,   -- <harness>__<model>__<task_id>__r<repeat>
    run_name                 TEXT NOT NULL,
    harness                  TEXT NOT NULL,
    model                    TEXT NOT NULL,
    task_id                  TEXT NOT NULL,
    track                    TEXT NOT NULL CHECK (track IN ('swe', 'open_ended', 'multi_phase')),
    repeat                   INTEGER NOT NULL DEFAULT 0,
    exit_class               TEXT NOT NULL,   -- 'pass', 'fail', or another non-passing class
    success                  REAL NOT NULL DEFAULT 0 CHECK (success BETWEEN 0 AND 1),
    error_class              TEXT,
    error_message            TEXT,
    input_tokens             INTEGER NOT NULL DEFAULT 0,
    output_tokens            INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens        INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens       INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens         INTEGER NOT NULL DEFAULT 0,
    total_cost               REAL NOT NULL DEFAULT 0,   -- US dollars, as the harness reports it
    latency_ms               INTEGER,
    time_to_first_attempt_ms INTEGER,
    num_api_calls            INTEGER NOT NULL DEFAULT 0,
    num_tool_calls           INTEGER NOT NULL DEFAULT 0,
    diff                     TEXT,            -- unified diff of the agent's changes
    test_output              TEXT,
    harness_metadata         TEXT,            -- JSON object; multi_phase: {"phases": [...], "review_model": ...}
    harness_stdout           TEXT,
    harness_stderr           TEXT,
    timestamp                TEXT NOT NULL,
    retry_count              INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_name, cell_id)
);
-- Rows carry diffs and logs, and the spec's column order puts them before timestamp
-- and retry_count, so reading a row can mean walking its overflow pages. Readers
-- therefore aggregate and sort from indexes that cover what they need:
-- leaderboards, the model x task matrix and filters by model ...
CREATE INDEX IF NOT EXISTS run_results_by_model ON run_results (
    run_name, model, harness, task_id, success, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, reasoning_tokens, total_cost, latency_ms, num_api_calls);
-- ... run summaries and the failed-cells list ...
CREATE INDEX IF NOT EXISTS run_results_by_exit ON run_results (run_name, exit_class, success, total_cost, timestamp);
-- ... and filters and sorts of the results table. Each ends with cell_id, the
-- tie-breaker of every sort, so a page is read in index order without sorting runs of
-- equal values (success is mostly 0 or 1).
CREATE INDEX IF NOT EXISTS run_results_by_harness ON run_results (run_name, harness, cell_id);
CREATE INDEX IF NOT EXISTS run_results_by_model_cell ON run_results (run_name, model, cell_id);
CREATE INDEX IF NOT EXISTS run_results_by_task ON run_results (run_name, task_id, cell_id);
CREATE INDEX IF NOT EXISTS run_results_by_track ON run_results (run_name, track, cell_id);
CREATE INDEX IF NOT EXISTS run_results_by_success ON run_results (run_name, success, cell_id);
CREATE INDEX IF NOT EXISTS run_results_by_cost ON run_results (run_name, total_cost, cell_id);
CREATE INDEX IF NOT EXISTS run_results_by_latency ON run_results (run_name, latency_ms, cell_id);
CREATE INDEX IF NOT EXISTS run_results_by_tokens ON run_results (
    run_name, (input_tokens + output_tokens + cache_read_tokens + cache_write_tokens + reasoning_tokens), cell_id);

-- Live progress, one row per cell, updated by the harness as cells run (§2.3).
CREATE TABLE IF NOT EXISTS run_state (
    run_name   TEXT NOT NULL,
    cell_id    TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'skipped')),
    error      TEXT,                          -- for failed and skipped cells
    updated_at TEXT NOT NULL,
    PRIMARY KEY (run_name, cell_id)
);
CREATE INDEX IF NOT EXISTS run_state_by_status ON run_state (run_name, status);

-- The per-phase store: one row per phase of a multi-phase cell, with the fields of
-- the per-phase object (§2.2) plus its position and an error text. When a harness
-- writes phases only into run_results.harness_metadata.phases, readers use those.
CREATE TABLE IF NOT EXISTS run_phases (
    run_name      TEXT NOT NULL,
    cell_id       TEXT NOT NULL,
    phase_index   INTEGER NOT NULL,           -- 0-based order of the phase in the cell
    name          TEXT NOT NULL,              -- e.g. plan, implement, review
    trace_id      TEXT,
    model         TEXT,
    model_role    TEXT,                       -- e.g. worker, reviewer
    exit_code     INTEGER,
    duration_ms   INTEGER,
    timed_out     INTEGER NOT NULL DEFAULT 0, -- 0 or 1
    usage         TEXT,                       -- JSON: {"input_tokens", "output_tokens", ...}
    total_cost    REAL,
    num_api_calls INTEGER,
    error         TEXT,
    PRIMARY KEY (run_name, cell_id, phase_index)
);

-- An independent re-check of a cell's verdict (for example re-running the tests or a
-- second grader), shown on the cell detail page when present.
CREATE TABLE IF NOT EXISTS reconciliation_results (
    run_name              TEXT NOT NULL,
    cell_id               TEXT NOT NULL,
    reconciled_at         TEXT NOT NULL,
    reconciler            TEXT NOT NULL,      -- who or what re-checked: 'rerun-tests', 'grader:<model>'
    original_exit_class   TEXT,
    original_success      REAL,
    reconciled_exit_class TEXT,
    reconciled_success    REAL,
    agrees                INTEGER NOT NULL,   -- 1 when the verdicts agree
    notes                 TEXT,
    PRIMARY KEY (run_name, cell_id, reconciler)
);
