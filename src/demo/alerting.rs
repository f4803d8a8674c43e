//! The demo's alerts, set through the administrator's console as an operator would:
//! monthly budgets for two teams and one person, the budget rule switched on with an
//! organisation budget, then one `evaluate-alerts` run, so `/admin/alerts` has budgets,
//! events and (with a channel configured) deliveries to show; and a new hire added on
//! `/admin/people`, who has not yet used their one-time link.

use anyhow::Context;

use super::Server;
use super::people::Person;

pub fn set_up(server: &Server, people: &[Person], password: &str) -> anyhow::Result<()> {
    let admin = server.sign_in("admin@demo.example", password)?;
    let budgets: [(&str, &str, &str, &str); 2] =
        [("team", "platform", "400", "50,75,90,100"), ("team", "research", "50000", "75,90,100")];
    for (scope, who, usd, levels) in budgets {
        server.form(
            &admin,
            "/admin/alerts/budgets",
            &[("scope", scope), ("who", who), ("monthly_usd", usd), ("levels", levels)],
        )?;
    }
    // A developer who leads no team; in a tiny demo, where everyone leads, any member.
    let developer = people
        .iter()
        .find(|p| p.team.is_some() && !p.lead)
        .or_else(|| people.iter().find(|p| p.team.is_some()))
        .context("the demo has no developer")?;
    server.form(
        &admin,
        "/admin/alerts/budgets",
        &[("scope", "person"), ("who", &developer.email), ("monthly_usd", "25"), ("levels", "")],
    )?;
    server.form(&admin, "/admin/alerts/rules/budget_threshold", &[("threshold", "20000"), ("enabled", "on")])?;
    server.run_job(&admin, "evaluate-alerts")
}

/// A person added through `/admin/people` into the platform team, as an administrator
/// would on someone's first day: the people page shows them without a password yet.
pub fn new_hire(server: &Server, password: &str) -> anyhow::Result<()> {
    let admin = server.sign_in("admin@demo.example", password)?;
    let page = server.form_page(
        &admin,
        "/admin/people",
        &[("email", "new.hire@demo.example"), ("name", "Noor Haddad"), ("role", "MEMBER"), ("team", "platform")],
    )?;
    anyhow::ensure!(page.contains("/password/"), "adding a person showed no one-time link");
    Ok(())
}
