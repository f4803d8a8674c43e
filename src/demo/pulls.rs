//! The demo's pull requests: for each branch a developer worked on in the last 90 days,
//! the deliveries GitHub would send — opened, check runs (some failing first), a review
//! (some asking for changes first), and for most the merge — signed with the server's
//! webhook secret and sent to its GitHub App listener, so the links and rollups are made
//! by the product itself, on branch evidence.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Server;
use super::people::Person;

const WINDOW_MS: i64 = 90 * super::DAY_MS;
const SENDERS: usize = 4;

#[derive(Default)]
pub struct Opened {
    pub opened: usize,
    pub merged: usize,
}

fn iso(ms: i64) -> String {
    crate::model::rfc3339_ms(ms)
}

/// Sends every branch's pull request; waits until the server has applied them.
pub fn send(
    server: &Server,
    developers: &[&Person],
    branches: &BTreeMap<(usize, &'static str, String), (i64, i64)>,
    now_ms: i64,
) -> anyhow::Result<Opened> {
    let mut numbers: BTreeMap<&str, i64> = BTreeMap::new();
    let mut deliveries: Vec<(&'static str, Value)> = Vec::new();
    let mut opened = Opened::default();
    for ((developer, repo, branch), (first, last)) in branches {
        if *last < now_ms - WINDOW_MS {
            continue;
        }
        let person = developers[*developer];
        let number = numbers.entry(repo).or_insert(1_000);
        *number += 1;
        let number = *number;
        let created = first - 600_000;
        let merged_at = (last + 3 * 3_600_000 < now_ms - 2 * 3_600_000 && fastrand::u32(0..20) < 17)
            .then_some(last + 3 * 3_600_000);
        let head_sha = format!("{:040x}", fastrand::u128(..));
        let (additions, deletions) = (fastrand::i64(5..900), fastrand::i64(0..300));
        let repository =
            json!({"id": 10_000 + repo.len(), "full_name": repo, "default_branch": "main", "private": true});
        let pr = |state: &str, updated: i64, merged: Option<i64>| {
            json!({"id": number, "number": number, "title": format!("{} ({branch})", title_of(branch)),
                "body": "Opened from the demo organisation.", "user": {"login": person.github.1, "id": person.github.0},
                "state": state, "draft": false, "merged": merged.is_some(), "created_at": iso(created),
                "updated_at": iso(updated), "merged_at": merged.map(iso), "closed_at": merged.map(iso),
                "merge_commit_sha": merged.map(|_| format!("{:040x}", fastrand::u128(..))),
                "head": {"ref": branch, "sha": head_sha, "repo": {"full_name": repo}},
                "base": {"ref": "main", "sha": "0".repeat(39) + "1", "repo": {"full_name": repo}},
                "additions": additions, "deletions": deletions, "changed_files": 1 + additions / 60})
        };
        deliveries.push((
            "pull_request",
            json!({"action": "opened", "pull_request": pr("open", created, None), "repository": repository}),
        ));
        let check = |id: i64, conclusion: &str| {
            json!({"action": "completed", "check_run": {"id": id, "name": "ci / test", "head_sha": head_sha,
                "status": "completed", "conclusion": conclusion, "completed_at": iso(created + 1_800_000),
                "pull_requests": [{"number": number}]}, "repository": repository})
        };
        if fastrand::u32(0..6) == 0 {
            deliveries.push(("check_run", check(number * 10 + 1, "failure")));
        }
        deliveries.push(("check_run", check(number * 10 + 2, "success")));
        let reviewer = developers[(developer + 1) % developers.len()];
        let review = |id: i64, state: &str| {
            json!({"action": "submitted", "review": {"id": id, "user": {"login": reviewer.github.1, "id": reviewer.github.0},
                "state": state, "commit_id": head_sha, "submitted_at": iso(created + 3_600_000)},
                "pull_request": pr("open", created + 3_600_000, None), "repository": repository})
        };
        if fastrand::u32(0..5) == 0 {
            deliveries.push(("pull_request_review", review(number * 10 + 1, "changes_requested")));
        }
        deliveries.push(("pull_request_review", review(number * 10 + 2, "approved")));
        if let Some(at) = merged_at {
            deliveries.push((
                "pull_request",
                json!({"action": "closed", "pull_request": pr("closed", at, Some(at)), "repository": repository}),
            ));
            opened.merged += 1;
        }
        opened.opened += 1;
    }
    let url = format!("{}/github/webhooks", server.github);
    let secret = server.webhook_secret.clone();
    let chunks: Vec<Vec<(&'static str, Value)>> = {
        // One sender per pull request's deliveries keeps each pull request's order.
        let mut by_sender: Vec<Vec<(&'static str, Value)>> = vec![Vec::new(); SENDERS];
        for (event, payload) in deliveries {
            let number = payload["pull_request"]["number"]
                .as_i64()
                .or_else(|| payload["check_run"]["pull_requests"][0]["number"].as_i64())
                .unwrap_or(0);
            by_sender[number as usize % SENDERS].push((event, payload));
        }
        by_sender
    };
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let handles: Vec<_> = chunks
            .into_iter()
            .enumerate()
            .map(|(sender, chunk)| {
                let (url, secret) = (&url, &secret);
                scope.spawn(move || -> anyhow::Result<()> {
                    let agent = Server::agent();
                    for (i, (event, payload)) in chunk.into_iter().enumerate() {
                        let body = serde_json::to_vec(&payload)?;
                        let mut answer = agent
                            .post(url)
                            .header("Content-Type", "application/json")
                            .header("X-GitHub-Event", event)
                            .header("X-GitHub-Delivery", format!("demo-{sender}-{i}"))
                            .header("X-Hub-Signature-256", crate::github::signature::sign(secret.as_bytes(), &body))
                            .send(&body[..])?;
                        let status = answer.status().as_u16();
                        anyhow::ensure!(
                            status == 202,
                            "the webhook answered {status}: {}",
                            answer.body_mut().read_to_string().unwrap_or_default()
                        );
                    }
                    Ok(())
                })
            })
            .collect();
        for handle in handles {
            handle.join().map_err(|_| anyhow::anyhow!("a webhook sender panicked"))??;
        }
        Ok(())
    })?;
    wait_until_applied(server, Duration::from_secs(600))?;
    Ok(opened)
}

fn title_of(branch: &str) -> &'static str {
    match branch.split('/').next() {
        Some("fix") => "Fix",
        Some("feat") => "Add",
        Some("chore") => "Chore",
        _ => "Experiment",
    }
}

fn wait_until_applied(server: &Server, limit: Duration) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(server.data_dir.join("main.db"))?;
    let deadline = Instant::now() + limit;
    loop {
        let (pending, failed): (i64, i64) = conn.query_row(
            "SELECT count(*) FILTER (WHERE outcome = 'pending'), count(*) FILTER (WHERE outcome = 'failed')
             FROM webhook_deliveries",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        anyhow::ensure!(failed == 0, "{failed} demo webhook deliveries failed");
        if pending == 0 {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "the webhook worker did not catch up ({pending} waiting)");
        std::thread::sleep(Duration::from_millis(200));
    }
}
