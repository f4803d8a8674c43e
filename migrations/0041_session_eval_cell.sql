-- Migration 41: the evaluation cell a session was run for (issue 39): the harness names
-- it in the agent's environment (SIGHTLINE_EVAL_CELL, SIGHTLINE_EVAL_RUN,
-- SIGHTLINE_EVAL_PHASE) or its OpenTelemetry resource, the events carry it and the fold
-- keeps the first one a session names. A cell may have several sessions (retries, the
-- phases of a multi-phase cell); the eval dashboard finds them by cell and by run.
ALTER TABLE sessions ADD COLUMN eval_cell_id TEXT;
ALTER TABLE sessions ADD COLUMN eval_run TEXT;
ALTER TABLE sessions ADD COLUMN eval_phase TEXT;
CREATE INDEX sessions_by_eval_cell ON sessions(eval_cell_id) WHERE eval_cell_id IS NOT NULL;
CREATE INDEX sessions_by_eval_run ON sessions(eval_run) WHERE eval_run IS NOT NULL;
