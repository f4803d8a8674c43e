-- Migration 25: branch evidence (src/github/links.rs) also needs the session's person to
-- be the pull request's author or one of its commit authors (a person with a session
-- linked to it by a commit), and the branch reported after the previous pull request from
-- the same head branch closed (one closed before this one opened). Links made before under the looser rule that fail it are
-- removed; the rollups they changed are recomputed by the webhook worker (their link
-- counts no longer match: github::rollups::stale).
DELETE FROM session_pr_links
WHERE evidence = 'branch'
  AND NOT EXISTS (
    SELECT 1 FROM pull_requests p
    JOIN repos r ON r.id = p.repo_id
    JOIN sessions s ON s.id = session_pr_links.session_id
    JOIN session_git g ON g.session_id = s.id AND g.branch = p.head_ref
    WHERE p.id = session_pr_links.pr_id
      AND (p.user_id = s.user_id
           OR EXISTS (SELECT 1 FROM session_pr_links c JOIN sessions cs ON cs.id = c.session_id
                      WHERE c.pr_id = p.id AND c.evidence = 'commit' AND cs.user_id = s.user_id))
      AND g.first_reported_ms > coalesce((SELECT max(coalesce(q.closed_at_ms, q.merged_at_ms))
            FROM pull_requests q JOIN repos rq ON rq.id = q.repo_id
            WHERE q.head_ref = p.head_ref AND q.id <> p.id AND q.created_at_ms < p.created_at_ms
              AND coalesce(q.closed_at_ms, q.merged_at_ms) <= p.created_at_ms
              AND lower(coalesce(q.head_repo, rq.full_name)) = lower(coalesce(p.head_repo, r.full_name))), -1)
  );
