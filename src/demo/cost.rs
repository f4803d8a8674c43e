//! The demo's cost truth: vendors' bills for the last days, made from what the demo's
//! events cost (within a couple of per cent, one day and model well over, web search
//! besides) and reconciled by the real comparison and store, as `reconcile-cost` would
//! with Anthropic and OpenAI wired; and two projections recorded through the console, so
//! `/org/roi` and `/admin/projections` have reconciliation, drift and grades to show.
//! The bills are synthetic and say so (workspace `wrk_demo`, project `proj_demo`).

use anyhow::Context;

use super::Server;
use crate::billing::{BillingLine, Settings, SourceConfig, Vendor, run, store};
use crate::config::Config;
use crate::events::partitions::Day;
use crate::model::AgentType;

/// Reconciles the last `days` complete days (at most 30) against made-up bills.
pub fn reconcile(config: &Config, days: i64, now_ms: i64) -> anyhow::Result<String> {
    let sources =
        [(Vendor::Anthropic, "wrk_demo", AgentType::ClaudeCode), (Vendor::OpenAi, "proj_demo", AgentType::Codex)].map(
            |(vendor, scope, agent)| SourceConfig {
                vendor,
                base_url: "https://billing.demo.invalid".into(),
                admin_key: String::new(),
                scope: vec![scope.into()],
                agents: vec![agent],
            },
        );
    let settings =
        Settings { enabled: true, sources: sources.to_vec(), days: days.clamp(1, 30) as u32, tolerance_pct: 5.0 };
    let book = crate::pricing::PriceBook::load(&config.data_dir)?;
    let costs = run::DayCosts::read(&config.data_dir, run::window(Day::of_ms(now_ms), settings.days))
        .map_err(anyhow::Error::msg)?;
    let mut bills = Vec::new();
    for source in &settings.sources {
        let recomputed = run::recomputed(&book, source, &costs);
        let busiest = recomputed.iter().max_by_key(|(_, cost)| **cost).map(|(key, _)| key.clone());
        let mut lines = Vec::new();
        for ((day, model), cost) in &recomputed {
            // Within tolerance most days; the busiest day and model 12 % and $1.50 over: a
            // breach whatever its size (beyond 5 % and beyond the $1 floor).
            let billed = if Some((day.clone(), model.clone())) == busiest {
                (*cost as f64 * 1.12).round() as i64 + 1_500_000_000
            } else {
                (*cost as f64 * (0.98 + fastrand::f64() * 0.04)).round() as i64
            };
            for (share, kind) in [(0.6, "input"), (0.4, "output")] {
                lines.push(BillingLine {
                    day: day.clone(),
                    vendor: source.vendor,
                    workspace: source.scope[0].clone(),
                    model: Some(model.clone()),
                    description: format!("{model}, {kind}"),
                    billed_nusd: (billed as f64 * share).round() as i64,
                });
            }
            if source.vendor == Vendor::Anthropic {
                lines.push(BillingLine {
                    day: day.clone(),
                    vendor: source.vendor,
                    workspace: source.scope[0].clone(),
                    model: None,
                    description: "Web Search Usage".into(),
                    billed_nusd: 1_000_000_000 + fastrand::i64(0..2_000_000_000),
                });
            }
        }
        bills.push((source, lines));
    }
    let reconciliation = run::compare_bills(&book, &settings, &costs, bills);
    let conn = crate::db::side_door::open(&config.main_db_path())?;
    let stored = crate::db::side_door::write(&conn, |tx| store::replace(tx, &reconciliation, now_ms))?;
    Ok(stored.summary)
}

/// Two projections, recorded on the console as an administrator would.
pub fn projections(server: &Server, password: &str, days: i64, now_ms: i64) -> anyhow::Result<()> {
    let admin = server.sign_in("admin@demo.example", password)?;
    let day = |back: i64| Day::of_ms(now_ms - back * super::DAY_MS).to_string();
    let half = (days / 2).max(7);
    let baseline = half.min(30).to_string();
    let projected: [(&str, &str, &str, &str, String, String); 2] = [
        ("Prompt caching in the monorepo", "spend_per_week", "20", "80", day(13.min(days - 1)), day(0)),
        ("Smaller model for routine edits", "cost_per_merged_pr", "0.5", "2", day(half), day(1)),
    ];
    for (title, metric, low, high, from, to) in projected {
        server
            .form(
                &admin,
                "/admin/projections",
                &[
                    ("title", title),
                    ("metric", metric),
                    ("saving_low", low),
                    ("saving_high", high),
                    ("period_from", &from),
                    ("period_to", &to),
                    ("baseline_days", &baseline),
                ],
            )
            .with_context(|| format!("recording the projection {title:?}"))?;
    }
    Ok(())
}
