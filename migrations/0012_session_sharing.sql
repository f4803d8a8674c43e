-- Migration 12: the owner's sharing switch for one session's transcript: 1 shared, 0 not,
-- NULL follows the owner's share_transcripts flag.
ALTER TABLE sessions ADD COLUMN transcript_shared INTEGER CHECK (transcript_shared IN (0, 1));
