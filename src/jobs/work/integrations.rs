//! The jobs that read services outside Sightline: `sync-teams` (GitHub), `sync-jira`
//! (Jira) and `reconcile-cost` (the vendors' billing APIs). Each without its settings
//! says so and does nothing (docs/github-app.md, docs/cost.md).

use crate::jobs::context::{Done, JobContext, JobError};

/// `sync-teams`: the organisation's teams and members from GitHub.
pub fn sync_teams(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    if let Some(why) = crate::github::teams::not_configured(ctx.config) {
        tracing::warn!("sync-teams: {why}");
        return Ok(Done::described(0, why));
    }
    let now_ms = ctx.now_ms();
    let teams = crate::github::teams::fetch(ctx.config, &ctx.host.github_resting_until_ms(), now_ms / 1000)
        .map_err(|err| JobError::remote("GitHub", err))?;
    let summary = ctx.write(move |tx| {
        crate::access::teams::sync(tx, &teams, now_ms).map_err(|err| match err {
            crate::access::teams::TeamError::Db(db) => db,
            other => {
                crate::db::DbError::Io { context: "team sync".into(), source: std::io::Error::other(other.to_string()) }
            }
        })
    })?;
    let rows = summary.teams_added + summary.teams_updated + summary.members_added + summary.members_removed;
    Ok(Done::described(rows as i64, crate::github::teams::describe(&summary)))
}

/// `sync-jira`: the issues pull requests name, read from Jira and stored with their
/// business value.
pub fn sync_jira(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let Some(jira) = crate::jira::from_config(&ctx.config.jira).map_err(JobError::Configuration)? else {
        tracing::warn!("sync-jira: {}", crate::jira::NOT_CONFIGURED);
        return Ok(Done::described(0, crate::jira::NOT_CONFIGURED));
    };
    let keys = crate::github::pulls::issue_keys(&*ctx.reader()?)?;
    let fetched = crate::jira::client::fetch(&jira, &keys).map_err(|err| JobError::remote("Jira", err))?;
    let now_ms = ctx.now_ms();
    let stored = ctx.write(move |tx| crate::jira::store::upsert(tx, &fetched, now_ms))?;
    Ok(Done::described(stored.rows(), stored.describe()))
}

/// `reconcile-cost`: the configured vendors' bills for the last complete days beside the
/// events' recomputed cost, stored with their drift in one transaction. Without
/// credentials every source is the null source and it says so.
pub fn reconcile_cost(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let settings = crate::billing::Settings::from_config(&ctx.config.billing).map_err(JobError::Configuration)?;
    let now_ms = ctx.now_ms();
    let today = crate::events::partitions::Day::of_ms(now_ms);
    let run = crate::billing::run::prepare(ctx.data_dir(), &*ctx.host.prices()?, &settings, today)
        .map_err(JobError::stopped)?;
    let stored = ctx.write(move |tx| crate::billing::store::replace(tx, &run, now_ms))?;
    Ok(Done::described(stored.drift_rows as i64, stored.summary))
}
