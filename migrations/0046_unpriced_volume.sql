-- Migration 46 (issue 53, prices that keep up). An unpriced model is never silently $0:
-- its tokens are counted by kind, with the cost its agent reported where it sends one
-- (Claude Code's cost_usd, Codex's cost_microusd), so /admin/health and /admin/prices say
-- how much usage has no price and what the vendor says it cost.
ALTER TABLE unknown_models ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE unknown_models ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE unknown_models ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE unknown_models ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE unknown_models ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE unknown_models ADD COLUMN client_cost_nusd INTEGER NOT NULL DEFAULT 0;
