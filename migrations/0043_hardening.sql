-- Migration 43 (issue 52, hardening). Who linked a session to its evaluation cell (M2, L5). From
-- this version only a harness's hook token (fixed to EVAL) links a session, and the fold
-- marks the link eval_harness = 1; an eval engineer reads a session linked otherwise only
-- with its owner's explicit sharing. Links made before are taken as a harness's when their
-- owner holds a hook token fixed to EVAL (the harness accounts), and need the owner's
-- sharing otherwise (a developer's own token, or a collector's, could link any session).
ALTER TABLE sessions ADD COLUMN eval_harness INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET eval_harness = 1
 WHERE eval_cell_id IS NOT NULL
   AND user_id IN (SELECT user_id FROM auth_tokens WHERE kind = 'hook' AND run_kind = 'EVAL');

-- A metric point of 9.2e18 overflowed a session's reported sum into REAL (L1), which no
-- reader takes as an integer: every sum is brought back to an integer within the bound
-- sessions::reported now keeps (10^12).
UPDATE session_reported SET
  lines_added = CAST(min(max(lines_added, 0), 1000000000000) AS INTEGER),
  lines_removed = CAST(min(max(lines_removed, 0), 1000000000000) AS INTEGER),
  commits = CAST(min(max(commits, 0), 1000000000000) AS INTEGER),
  pull_requests = CAST(min(max(pull_requests, 0), 1000000000000) AS INTEGER),
  active_user_ms = CAST(min(max(active_user_ms, 0), 1000000000000) AS INTEGER),
  active_agent_ms = CAST(min(max(active_agent_ms, 0), 1000000000000) AS INTEGER)
 WHERE 'real' IN (typeof(lines_added), typeof(lines_removed), typeof(commits), typeof(pull_requests),
                  typeof(active_user_ms), typeof(active_agent_ms));
