-- Migration 24: projections (src/projections/): a predicted saving an administrator
-- recorded, with the baseline measured when it was recorded, the outcome guards of the
-- same window, and the price-table and scorer versions in force. Who recorded it is in
-- the audit log (PROJECTION_RECORDED), not here.
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
