-- Migration 40: a hook token may fix the run kind of everything sent with it (issue 39):
-- an evaluation harness machine's token makes its sessions EVAL (a CI runner's, CI)
-- whatever its events say, so a machine's runs never reach developer figures.
ALTER TABLE auth_tokens ADD COLUMN run_kind TEXT CHECK (run_kind IS NULL OR run_kind IN ('CI', 'EVAL'));
