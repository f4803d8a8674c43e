//! GitHub webhook payloads for the tests, written from GitHub's "Webhook events and
//! payloads" documentation: the members GitHub sends (more than Sightline reads, so a
//! parser that chokes on extras would fail here), for `pull_request`, `check_run`,
//! `pull_request_review`, `push`, `ping`, and an event Sightline does not use.

use serde_json::{Value, json};

pub const OWNER: &str = "acme";
pub const REPO: &str = "api";
pub const FULL_NAME: &str = "acme/api";
pub const INSTALLATION: i64 = 4_242;

/// Every action of `pull_request` GitHub documents.
pub const PULL_REQUEST_ACTIONS: &[&str] = &[
    "assigned",
    "auto_merge_disabled",
    "auto_merge_enabled",
    "closed",
    "converted_to_draft",
    "demilestoned",
    "dequeued",
    "edited",
    "enqueued",
    "labeled",
    "locked",
    "milestoned",
    "opened",
    "ready_for_review",
    "reopened",
    "review_request_removed",
    "review_requested",
    "synchronize",
    "unassigned",
    "unlabeled",
    "unlocked",
];
pub const CHECK_RUN_ACTIONS: &[&str] = &["completed", "created", "requested_action", "rerequested"];
pub const REVIEW_ACTIONS: &[&str] = &["dismissed", "edited", "submitted"];

pub fn account(login: &str, id: i64) -> Value {
    json!({
        "login": login, "id": id, "node_id": format!("MDQ6VXNlcj{id}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "url": format!("https://api.github.com/users/{login}"), "html_url": format!("https://github.com/{login}"),
        "type": "User", "site_admin": false
    })
}

pub fn repository() -> Value {
    json!({
        "id": 1_296_269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": REPO, "full_name": FULL_NAME,
        "private": true, "owner": account(OWNER, 9_919), "html_url": format!("https://github.com/{FULL_NAME}"),
        "description": "The API", "fork": false, "url": format!("https://api.github.com/repos/{FULL_NAME}"),
        "created_at": "2024-01-26T19:01:12Z", "updated_at": "2026-11-20T19:14:43Z", "pushed_at": "2026-11-20T19:06:43Z",
        "default_branch": "main", "visibility": "private", "topics": [], "archived": false
    })
}

/// Fields of one pull request's state, for [`pull_request_object`].
#[derive(Clone)]
pub struct Pr {
    pub number: i64,
    pub title: String,
    pub body: Option<String>,
    pub author: (String, i64),
    pub head_ref: String,
    pub head_sha: String,
    pub draft: bool,
    pub state: &'static str,
    pub merged_at: Option<String>,
    pub closed_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub additions: i64,
    pub deletions: i64,
}

impl Pr {
    pub fn new(number: i64, title: &str, head_ref: &str, head_sha: &str) -> Pr {
        Pr {
            number,
            title: title.into(),
            body: None,
            author: ("ada-l".into(), 583_231),
            head_ref: head_ref.into(),
            head_sha: head_sha.into(),
            draft: false,
            state: "open",
            merged_at: None,
            closed_at: None,
            created_at: "2026-11-20T10:00:00Z".into(),
            updated_at: "2026-11-20T10:00:00Z".into(),
            additions: 120,
            deletions: 30,
        }
    }
}

pub fn pull_request_object(pr: &Pr) -> Value {
    let merged = pr.merged_at.is_some();
    json!({
        "url": format!("https://api.github.com/repos/{FULL_NAME}/pulls/{}", pr.number),
        "id": 1_000_000 + pr.number, "node_id": format!("PR_kwDO{}", pr.number),
        "html_url": format!("https://github.com/{FULL_NAME}/pull/{}", pr.number),
        "number": pr.number, "state": pr.state, "locked": false, "title": pr.title,
        "user": account(&pr.author.0, pr.author.1), "body": pr.body,
        "created_at": pr.created_at, "updated_at": pr.updated_at, "closed_at": pr.closed_at, "merged_at": pr.merged_at,
        "merge_commit_sha": if merged { Value::from("9f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6") } else { Value::Null },
        "assignee": null, "assignees": [], "requested_reviewers": [], "labels": [], "milestone": null,
        "draft": pr.draft,
        "head": {"label": format!("{OWNER}:{}", pr.head_ref), "ref": pr.head_ref, "sha": pr.head_sha,
                 "user": account(OWNER, 9_919), "repo": repository()},
        "base": {"label": format!("{OWNER}:main"), "ref": "main", "sha": "1111111111111111111111111111111111111111",
                 "user": account(OWNER, 9_919), "repo": repository()},
        "author_association": "MEMBER", "auto_merge": null, "active_lock_reason": null,
        "merged": merged, "mergeable": null, "rebaseable": null, "mergeable_state": "unknown", "merged_by": null,
        "comments": 0, "review_comments": 0, "maintainer_can_modify": false, "commits": 3,
        "additions": pr.additions, "deletions": pr.deletions, "changed_files": 5
    })
}

pub fn pull_request_event(action: &str, pr: &Pr) -> Value {
    json!({
        "action": action, "number": pr.number, "pull_request": pull_request_object(pr),
        "repository": repository(), "organization": {"login": OWNER, "id": 9_919},
        "sender": account(&pr.author.0, pr.author.1), "installation": {"id": INSTALLATION, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg=="}
    })
}

pub fn check_run_event(action: &str, id: i64, name: &str, pr: &Pr, conclusion: Option<&str>) -> Value {
    let completed = conclusion.is_some();
    json!({
        "action": action,
        "check_run": {
            "id": id, "node_id": format!("CR_{id}"), "head_sha": pr.head_sha, "external_id": "",
            "url": format!("https://api.github.com/repos/{FULL_NAME}/check-runs/{id}"),
            "status": if completed { "completed" } else { "in_progress" }, "conclusion": conclusion,
            "started_at": "2026-11-20T10:05:00Z", "completed_at": if completed { Value::from("2026-11-20T10:09:00Z") } else { Value::Null },
            "output": {"title": null, "summary": null, "text": null, "annotations_count": 0},
            "name": name, "check_suite": {"id": 5, "head_branch": pr.head_ref, "head_sha": pr.head_sha},
            "app": {"id": 15_368, "slug": "github-actions", "name": "GitHub Actions"},
            "pull_requests": [{"url": format!("https://api.github.com/repos/{FULL_NAME}/pulls/{}", pr.number),
                "id": 1_000_000 + pr.number, "number": pr.number,
                "head": {"ref": pr.head_ref, "sha": pr.head_sha, "repo": {"id": 1_296_269, "name": REPO}},
                "base": {"ref": "main", "sha": "1111111111111111111111111111111111111111", "repo": {"id": 1_296_269, "name": REPO}}}]
        },
        "repository": repository(), "sender": account("github-actions[bot]", 41_898_282),
        "installation": {"id": INSTALLATION}
    })
}

pub fn review_event(action: &str, review_id: i64, reviewer: &str, state: &str, commit: &str, pr: &Pr) -> Value {
    json!({
        "action": action,
        "review": {
            "id": review_id, "node_id": format!("PRR_{review_id}"), "user": account(reviewer, 7_000 + review_id),
            "body": "Looks reasonable.", "commit_id": commit, "submitted_at": "2026-11-20T11:00:00Z",
            "state": state, "html_url": format!("https://github.com/{FULL_NAME}/pull/{}#pullrequestreview-{review_id}", pr.number),
            "author_association": "MEMBER"
        },
        "pull_request": pull_request_object(pr), "repository": repository(),
        "sender": account(reviewer, 7_000 + review_id), "installation": {"id": INSTALLATION}
    })
}

pub fn push_event(branch: &str, before: &str, commits: &[(&str, &str)]) -> Value {
    let commit = |(id, message): &(&str, &str)| {
        json!({"id": id, "tree_id": "a".repeat(40), "distinct": true, "message": message,
               "timestamp": "2026-11-20T10:30:00Z", "url": format!("https://github.com/{FULL_NAME}/commit/{id}"),
               "author": {"name": "Ada", "email": "ada@example.com", "username": "ada-l"},
               "committer": {"name": "Ada", "email": "ada@example.com", "username": "ada-l"},
               "added": [], "removed": [], "modified": ["src/lib.rs"]})
    };
    let after = commits.last().map_or("0".repeat(40), |(id, _)| id.to_string());
    let mut repo = repository();
    repo["master_branch"] = json!("main");
    json!({
        "ref": format!("refs/heads/{branch}"), "before": before, "after": after,
        "created": false, "deleted": false, "forced": false, "base_ref": null,
        "compare": format!("https://github.com/{FULL_NAME}/compare/{before}...{after}"),
        "commits": commits.iter().map(commit).collect::<Vec<_>>(),
        "head_commit": commits.last().map(commit),
        "repository": repo, "pusher": {"name": "ada-l", "email": "ada@example.com"},
        "sender": account("ada-l", 583_231), "installation": {"id": INSTALLATION}
    })
}

pub fn ping_event() -> Value {
    json!({
        "zen": "Keep it logically awesome.", "hook_id": 30, "hook": {"type": "App", "id": 30, "active": true,
        "events": ["pull_request", "check_run", "pull_request_review", "push"], "config": {"content_type": "json",
        "insecure_ssl": "0", "url": "https://sightline.example.com/github/webhooks"}}, "repository": repository(),
        "sender": account("ada-l", 583_231)
    })
}

pub fn star_event() -> Value {
    json!({"action": "created", "starred_at": "2026-11-20T10:00:00Z", "repository": repository(),
           "sender": account("someone", 1)})
}
