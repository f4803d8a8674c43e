//! `sync-teams`: the organisation's teams on GitHub (`GET /orgs/{org}/teams`, with each
//! team's `parent`), and each team's members (`GET /orgs/{org}/teams/{slug}/members`),
//! read as the App's installation on the organisation and made ours by
//! `access::teams::sync` (people matched by their GitHub account id; a person removed
//! on GitHub leaves the team and is never deleted).

use serde::Deserialize;

use super::app_client::AppClient;
use crate::access::teams::{SyncSummary, SyncedTeam};
use crate::config::Config;

#[derive(Deserialize)]
struct GithubTeam {
    slug: String,
    name: String,
    parent: Option<ParentTeam>,
}

#[derive(Deserialize)]
struct ParentTeam {
    slug: String,
}

#[derive(Deserialize)]
struct Member {
    id: i64,
}

/// Why there is nothing to sync, when the App or the organisation is not configured
/// (a run then does nothing but say so, as an install without GitHub expects).
pub fn not_configured(config: &Config) -> Option<&'static str> {
    if !config.github.app_enabled() {
        Some("the GitHub App is not configured (github.app_id, github.private_key_path); nothing to sync")
    } else if config.github.organisation.is_empty() {
        Some("github.organisation is not set; nothing to sync")
    } else {
        None
    }
}

/// Reads the organisation's teams and members from GitHub (blocking).
pub fn fetch(
    config: &Config,
    resting_until_ms: &super::app_client::RestingUntil,
    now_s: i64,
) -> Result<Vec<SyncedTeam>, String> {
    let org = &config.github.organisation;
    if let Some(why) = not_configured(config) {
        return Err(why.into());
    }
    let client = AppClient::from_config(config, resting_until_ms)?
        .ok_or_else(|| "the GitHub App is not configured (github.app_id, github.private_key_path)".to_string())?;
    let installed = client.organisation_installation(org, now_s)?;
    let teams: Vec<GithubTeam> = installed.get_all(&format!("/orgs/{org}/teams"))?;
    let mut out = Vec::with_capacity(teams.len());
    for team in teams {
        let members: Vec<Member> = installed.get_all(&format!("/orgs/{org}/teams/{}/members", team.slug))?;
        out.push(SyncedTeam {
            slug: team.slug.to_ascii_lowercase(),
            name: team.name,
            parent_slug: team.parent.map(|p| p.slug.to_ascii_lowercase()),
            member_github_ids: members.into_iter().map(|m| m.id).collect(),
        });
    }
    Ok(direct_members(out))
}

/// GitHub lists a team's members with its child teams' members; ours are direct (a
/// team's figures already include its sub-teams'), so a child's members are taken out
/// of its parent's list.
pub fn direct_members(mut teams: Vec<SyncedTeam>) -> Vec<SyncedTeam> {
    let in_children: Vec<std::collections::BTreeSet<i64>> = teams
        .iter()
        .map(|team| {
            teams
                .iter()
                .filter(|child| child.parent_slug.as_deref() == Some(team.slug.as_str()))
                .flat_map(|child| child.member_github_ids.iter().copied())
                .collect()
        })
        .collect();
    for (team, below) in teams.iter_mut().zip(in_children) {
        team.member_github_ids.retain(|id| !below.contains(id));
    }
    teams
}

pub fn describe(summary: &SyncSummary) -> String {
    format!(
        "{} teams added, {} updated; {} memberships added, {} removed",
        summary.teams_added, summary.teams_updated, summary.members_added, summary.members_removed
    )
}
