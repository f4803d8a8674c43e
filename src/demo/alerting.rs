//! The demo's alerts, set through the administrator's console as an operator would:
//! monthly budgets for two teams and one person, the budget rule switched on with an
//! organisation budget, then one `evaluate-alerts` run, so `/admin/alerts` has budgets,
//! events and (with a channel configured) deliveries to show.

use std::time::Duration;

use anyhow::Context;

use super::Server;
use super::people::Person;

/// Posts a console form as the administrator; the console answers 303 to a change.
pub fn form(server: &Server, token: &str, path: &str, fields: &[(&str, &str)]) -> anyhow::Result<()> {
    // The console answers a form with a redirect, which is what the demo checks.
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .new_agent();
    let mut response = agent
        .post(format!("{}{path}", server.web))
        .header("Authorization", format!("Bearer {token}"))
        .header("Accept", "text/html")
        .send_form(fields.iter().copied())?;
    let status = response.status().as_u16();
    anyhow::ensure!(status == 303, "{path} answered {status}: {}", response.body_mut().read_to_string()?);
    Ok(())
}

pub fn set_up(server: &Server, people: &[Person], password: &str) -> anyhow::Result<()> {
    let admin = server.sign_in("admin@demo.example", password)?;
    let budgets: [(&str, &str, &str, &str); 2] =
        [("team", "platform", "400", "50,75,90,100"), ("team", "research", "50000", "75,90,100")];
    for (scope, who, usd, levels) in budgets {
        form(
            server,
            &admin,
            "/admin/alerts/budgets",
            &[("scope", scope), ("who", who), ("monthly_usd", usd), ("levels", levels)],
        )?;
    }
    let developer = people.iter().find(|p| p.team.is_some() && !p.lead).context("the demo has no developer")?;
    form(
        server,
        &admin,
        "/admin/alerts/budgets",
        &[("scope", "person"), ("who", &developer.email), ("monthly_usd", "25"), ("levels", "")],
    )?;
    form(server, &admin, "/admin/alerts/rules/budget_threshold", &[("threshold", "20000"), ("enabled", "on")])?;
    server.run_job(&admin, "evaluate-alerts")
}
