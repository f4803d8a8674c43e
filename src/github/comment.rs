//! The bot comment on a merged pull request: what its sessions took, posted as the
//! GitHub App and edited in place when the figures change (a later link, a check run,
//! a revert). A repository opts in with `.sightline.yml` on its base branch:
//!
//! ```yaml
//! comment:
//!   enabled: true
//!   show: [sessions, agents, cost, cost_per_line, tokens, ci_cost, check_failures, review_rounds, time_to_merge]
//! ```
//!
//! Invariants: no figure about a person reaches the repository's readers unless every
//! person behind it allows being named in team views (`named_in_team_views`): when one
//! does not, the session figures (sessions, agents, cost, cost per line, tokens) are
//! left out and only the pull request's own figures remain; nothing is ever broken down
//! by person; no file, or `enabled: false`, means no comment.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::app_client::AppClient;
use super::pulls::{self, StoredPr};
use super::rollups::{self, Rollup};
use crate::access::policies;
use crate::db::{self, DbError};
use crate::model::usd;
use crate::state::AppState;

/// Marks our comment, so a reader knows where it comes from.
pub const MARKER: &str = "<!-- sightline:pull-request-figures -->";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    Sessions,
    Agents,
    Cost,
    CostPerLine,
    Tokens,
    CiCost,
    CheckFailures,
    ReviewRounds,
    TimeToMerge,
}

impl Figure {
    pub const ALL: [Figure; 9] = [
        Figure::Sessions,
        Figure::Agents,
        Figure::Cost,
        Figure::CostPerLine,
        Figure::Tokens,
        Figure::CiCost,
        Figure::CheckFailures,
        Figure::ReviewRounds,
        Figure::TimeToMerge,
    ];

    /// Figures that describe people's sessions (and so need their consent): a CI run's
    /// cost belongs to the person whose token ran it.
    fn about_people(self) -> bool {
        matches!(
            self,
            Figure::Sessions | Figure::Agents | Figure::Cost | Figure::CostPerLine | Figure::Tokens | Figure::CiCost
        )
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoSettings {
    #[serde(default)]
    pub comment: CommentSettings,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommentSettings {
    #[serde(default)]
    pub enabled: bool,
    pub show: Option<Vec<Figure>>,
}

/// `.sightline.yml`, or why it cannot be read (naming the key).
pub fn settings_of(text: &str) -> Result<RepoSettings, String> {
    if text.trim().is_empty() {
        return Ok(RepoSettings::default());
    }
    serde_yaml_ng::from_str(text).map_err(|err| format!(".sightline.yml: {err}"))
}

fn duration(ms: i64) -> String {
    let minutes = ms / 60_000;
    match minutes {
        m if m < 60 => format!("{m} min"),
        m if m < 48 * 60 => format!("{:.1} h", m as f64 / 60.0),
        m => format!("{:.1} days", m as f64 / 1440.0),
    }
}

/// The comment's Markdown.
pub fn render(pr: &StoredPr, rollup: &Rollup, show: &[Figure], people_consent: bool) -> String {
    let mut lines = vec![MARKER.to_string(), "### Sightline: what this pull request took".to_string(), String::new()];
    lines.push("| Figure | Value |".into());
    lines.push("|---|---|".into());
    for figure in show.iter().copied().filter(|f| people_consent || !f.about_people()) {
        let (name, value) = match figure {
            Figure::Sessions => ("Agent sessions", rollup.sessions.to_string()),
            Figure::Agents => {
                ("Agents", if rollup.agents.is_empty() { "none".into() } else { rollup.agents.join(", ") })
            }
            Figure::Cost => ("Agent cost", usd(rollup.cost_nusd)),
            Figure::CostPerLine => (
                "Cost per changed line",
                rollup.cost_per_changed_line_nusd.map_or("n/a".into(), |c| format!("${:.4}", c as f64 / 1e9)),
            ),
            Figure::Tokens => ("Tokens", rollup.tokens.to_string()),
            Figure::CiCost => ("CI agent cost", format!("{} ({} runs)", usd(rollup.ci_cost_nusd), rollup.ci_sessions)),
            Figure::CheckFailures => ("Failed checks", rollup.check_failures_count.to_string()),
            Figure::ReviewRounds => ("Review rounds", rollup.review_rounds.to_string()),
            Figure::TimeToMerge => ("Time to merge", rollup.time_to_merge_ms.map_or("n/a".into(), duration)),
        };
        lines.push(format!("| {name} | {value} |"));
    }
    if rollup.reverted {
        lines.push(String::new());
        lines.push("This pull request was later reverted.".into());
    }
    if !people_consent && show.iter().any(|f| f.about_people()) {
        lines.push(String::new());
        lines.push("Session figures are not shown: a contributor keeps theirs out of shared views.".into());
    }
    lines.push(String::new());
    lines.push(format!("<sub>Sessions are linked by branch, commit or CI run, never by time. {}.</sub>", pr.id));
    lines.join("\n")
}

/// Posts or edits every due comment; answers how many it settled. Failures are logged
/// and leave the comment due (the next pass tries again); the figures stay in Sightline.
pub async fn publish_due(state: &Arc<AppState>) -> usize {
    let pool = state.readers.clone();
    if !state.config.github.app_enabled() {
        let _ = db::blocking(move || pulls::clear_comments_due(&*pool.get()?)).await;
        return 0;
    }
    let due = match db::blocking(move || pulls::comments_due(&*pool.get()?, 50)).await {
        Ok(due) => due,
        Err(err) => {
            tracing::warn!(%err, "bot comments: cannot read what is due");
            return 0;
        }
    };
    let mut settled = 0;
    for pr in due {
        match publish(state, &pr).await {
            Ok(()) => settled += 1,
            Err(err) if super::app_client::is_rate_limited(&err) => {
                // Every other comment would meet the same limit: stop until it lifts.
                tracing::warn!(%err, "bot comments wait for GitHub's rate limit; they stay due");
                break;
            }
            Err(err) => tracing::warn!(pull_request = %pr, %err, "bot comment not published; it stays due"),
        }
    }
    settled
}

/// Whether everyone behind a pull request's session figures allows them to be shown.
pub fn consent(conn: &rusqlite::Connection, pr_id: &str) -> Result<bool, DbError> {
    for person in rollups::people(conn, pr_id)? {
        if !policies::get(conn, &person)?.named_in_team_views {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Marks the comments whose consent changed since they were posted (someone turned
/// `named_in_team_views` off or on, or a linked session changed hands by deletion).
pub async fn recheck_consent(state: &Arc<AppState>) -> Result<usize, DbError> {
    let pool = state.readers.clone();
    let changed = db::blocking(move || {
        let conn = pool.get()?;
        let mut changed = Vec::new();
        for (pr, shown) in pulls::commented(&conn)? {
            if shown != Some(consent(&conn, &pr)?) {
                changed.push(pr);
            }
        }
        Ok::<_, DbError>(changed)
    })
    .await?;
    let count = changed.len();
    if count > 0 {
        state.writer.transact(move |tx| pulls::mark_comment_due(tx, &changed)).await.map_err(|err| DbError::Io {
            context: "marking comments due".into(),
            source: std::io::Error::other(err.to_string()),
        })?;
    }
    Ok(count)
}

async fn publish(state: &Arc<AppState>, pr_id: &str) -> Result<(), String> {
    let pool = state.readers.clone();
    let id = pr_id.to_string();
    let read = db::blocking(move || {
        let conn = pool.get()?;
        let Some(pr) = pulls::get(&conn, &id)? else { return Ok(None) };
        let rollup = rollups::get(&conn, &id)?;
        let consent = consent(&conn, &id)?;
        Ok::<_, DbError>(Some((pr, rollup, consent)))
    })
    .await
    .map_err(|err| err.to_string())?;
    let (comment_id, shown) = match read {
        Some((pr, Some(rollup), consent)) => {
            let (config, resting) = (state.config.clone(), state.github_resting_until_ms.clone());
            let now_s = state.clock.now_ms() / 1000;
            tokio::task::spawn_blocking(move || post_or_edit(&config, &resting, now_s, &pr, &rollup, consent))
                .await
                .map_err(|err| err.to_string())??
        }
        // Not merged (or gone): nothing to say.
        _ => (None, None),
    };
    let id = pr_id.to_string();
    state
        .writer
        .transact(move |tx| pulls::comment_done(tx, &id, comment_id, shown))
        .await
        .map_err(|err| err.to_string())
}

/// Talks to GitHub (blocking): answers the new comment's id (if one was posted) and
/// whether session figures were shown (None when the repository has no comment).
fn post_or_edit(
    config: &crate::config::Config,
    resting_until_ms: &super::app_client::RestingUntil,
    now_s: i64,
    pr: &StoredPr,
    rollup: &Rollup,
    consent: bool,
) -> Result<(Option<i64>, Option<bool>), String> {
    let Some(client) = AppClient::from_config(config, resting_until_ms)? else { return Ok((None, None)) };
    let installed = client.repository_installation(&pr.repo_full_name, now_s)?;
    let Some(text) = installed.raw_file(&pr.repo_full_name, ".sightline.yml", &pr.base_ref)? else {
        return Ok((None, None));
    };
    let settings = settings_of(&text)?;
    if !settings.comment.enabled {
        return Ok((None, None));
    }
    let show = settings.comment.show.unwrap_or_else(|| Figure::ALL.to_vec());
    let body = json!({"body": render(pr, rollup, &show, consent)});
    #[derive(Deserialize)]
    struct Comment {
        id: i64,
    }
    if let Some(existing) = pr.bot_comment_id {
        let path = format!("/repos/{}/issues/comments/{existing}", pr.repo_full_name);
        match installed.patch_status(&path, &body)? {
            status if (200..300).contains(&status) => return Ok((None, Some(consent))),
            // Someone deleted it: post it again.
            404 => {}
            status => return Err(format!("PATCH {path} answered {status}")),
        }
    }
    let created: Comment =
        installed.post(&format!("/repos/{}/issues/{}/comments", pr.repo_full_name, pr.number), &body)?;
    Ok((Some(created.id), Some(consent)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_strictly() {
        let on = settings_of("comment:\n  enabled: true\n  show: [cost, review_rounds]\n").unwrap();
        assert!(on.comment.enabled);
        assert_eq!(on.comment.show, Some(vec![Figure::Cost, Figure::ReviewRounds]));
        assert!(!settings_of("").unwrap().comment.enabled, "no settings: no comment");
        let err = settings_of("comment:\n  enabled: true\n  show: [salary]\n").unwrap_err();
        assert!(err.contains("salary"), "{err}");
        let err = settings_of("coment:\n  enabled: true\n").unwrap_err();
        assert!(err.contains("coment"), "{err}");
    }
}
