-- Migration 39: what each session score usually is (scoring::bands), so the session
-- page reads a score in context: per scorer and version, over the last 90 days'
-- interactive sessions, the organisation's 25th/50th/75th percentiles (scope '') with
-- the number of people they cover, and each person's (scope: their user id). Replaced
-- whole by the scoring jobs.
CREATE TABLE score_bands (
    scope          TEXT NOT NULL,
    scorer_name    TEXT NOT NULL,
    scorer_version TEXT NOT NULL,
    sessions       INTEGER NOT NULL,
    people         INTEGER NOT NULL,
    low            REAL NOT NULL,
    middle         REAL NOT NULL,
    high           REAL NOT NULL,
    computed_at_ms INTEGER NOT NULL,
    PRIMARY KEY (scope, scorer_name, scorer_version)
) WITHOUT ROWID;
