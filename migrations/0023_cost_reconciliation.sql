-- Migration 23: cost reconciliation with the vendors' billing (src/billing/,
-- reconcile-cost). A run replaces its window of days for each vendor it asked.
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
