-- Migration 38: a session's name (issue 38). The indexer finds it in the stored,
-- redacted transcript (the agent's own title, else the first prompt, one line; '' when
-- there is none) and keeps it beside the index row, so it goes wherever the transcript
-- goes: deleting the transcript deletes the row and the name. A row whose title is NULL
-- waits for the indexer like an unindexed one, which is how transcripts stored before
-- this version get their names (no row is rewritten here).
ALTER TABLE transcript_index ADD COLUMN title TEXT;
CREATE INDEX transcript_index_untitled ON transcript_index (stored_ms) WHERE title IS NULL;
