-- Migration 19: job service-level breaches (`job_alerts`) are alerts too: a seventh rule.
INSERT INTO alert_rules (id, threshold, enabled, updated_at_ms) VALUES ('job_slo', 1, 1, 0);
