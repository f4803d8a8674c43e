-- Migration 30: the git reports that name a pull request (CI sessions), by repository
-- and number, for linking a pull request's named sessions when its webhook arrives
-- (github::links::backfill). Partial: every other report has pr_number 0.
CREATE INDEX session_git_by_pr_number ON session_git(repo, pr_number) WHERE pr_number > 0;
