-- Migration 26: sessions.mode (spec §2) is the session's permission mode of the highest
-- autonomy seen, derived from max_autonomy_rank, which the sessions fold keeps: a virtual
-- generated column, so nothing has to write it and it can never disagree with the rank
-- (src/model: plan 0, normal 1, accept_edits 2, auto 3, dont_ask 4, bypass 5).
ALTER TABLE sessions DROP COLUMN mode;
ALTER TABLE sessions ADD COLUMN mode TEXT GENERATED ALWAYS AS (CASE max_autonomy_rank
    WHEN 0 THEN 'plan' WHEN 1 THEN 'normal' WHEN 2 THEN 'accept_edits' WHEN 3 THEN 'auto'
    WHEN 4 THEN 'dont_ask' WHEN 5 THEN 'bypass' END) VIRTUAL;
