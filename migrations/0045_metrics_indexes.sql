-- Migration 45 (issue 52, /metrics). What a scrape reads of the jobs is found by index,
-- never by reading a job's history: its last success (max(ended_at_ms) of its succeeded
-- runs) and whether its latest run breached (the breach of one run).
CREATE INDEX job_runs_by_outcome ON job_runs(job, outcome, ended_at_ms);
CREATE INDEX job_alerts_by_run ON job_alerts(run_id);
-- The aggregates' refresh lag: the oldest mark, without reading every dirty hour.
CREATE INDEX aggregate_dirty_by_marked ON aggregate_dirty_buckets(marked_at_ms);
