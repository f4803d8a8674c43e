//! Settings from the environment, and drift worked by hand.

use super::drift::{Sides, Status, compare};
use super::*;

/// The `[billing]` section the variables give (a type error, such as a switch that is
/// not true or false, is the configuration's).
fn env(pairs: &[(&str, &str)]) -> Result<crate::config::Billing, String> {
    crate::config::Config::from_variables(pairs).map(|config| config.billing)
}

impl Settings {
    fn from_env(billing: Result<crate::config::Billing, String>) -> Result<Settings, String> {
        Settings::from_config(&billing?)
    }
}

#[test]
fn each_source_is_wired_only_by_its_own_credentials() {
    let none = Settings::from_env(env(&[])).unwrap();
    assert!(!none.enabled && none.sources.is_empty());
    assert_eq!(none.null_sources(), vec![Vendor::Anthropic, Vendor::OpenAi]);
    assert_eq!((none.days, none.tolerance_pct), (7, 5.0));

    let anthropic = Settings::from_env(env(&[
        ("SIGHTLINE_BILLING_RECONCILIATION_ENABLED", "true"),
        ("SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY", "sk-ant-admin01-secret"),
    ]))
    .unwrap();
    assert!(anthropic.enabled);
    assert_eq!(anthropic.null_sources(), vec![Vendor::OpenAi]);
    let source = &anthropic.sources[0];
    assert_eq!(source.base_url, "https://api.anthropic.com");
    assert_eq!(source.agents, vec![AgentType::ClaudeCode]);
    assert!(!format!("{source:?}").contains("secret"), "the key never reaches logs");

    let err = Settings::from_env(env(&[("SIGHTLINE_BILLING_OPENAI_ADMIN_KEY", "sk-admin-x")])).unwrap_err();
    assert!(err.contains("SIGHTLINE_BILLING_OPENAI_PROJECTS"), "OpenAI needs its scope: {err}");
    let openai = Settings::from_env(env(&[
        ("SIGHTLINE_BILLING_OPENAI_ADMIN_KEY", "sk-admin-x"),
        ("SIGHTLINE_BILLING_OPENAI_PROJECTS", "proj_a, proj_b"),
        ("SIGHTLINE_BILLING_OPENAI_AGENTS", "codex, opencode"),
    ]))
    .unwrap();
    assert_eq!(openai.sources[0].scope, vec!["proj_a", "proj_b"]);
    assert_eq!(openai.sources[0].agents, vec![AgentType::Codex, AgentType::Opencode]);

    for (pairs, names) in [
        (&[("SIGHTLINE_BILLING_ANTHROPIC_WORKSPACES", "wrkspc_1")][..], "SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY"),
        (&[("SIGHTLINE_BILLING_RECONCILIATION_ENABLED", "sometimes")][..], "true or false"),
        (&[("SIGHTLINE_BILLING_RECONCILE_DAYS", "0")][..], "1 to 93"),
        (
            &[
                ("SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY", "k"),
                ("SIGHTLINE_BILLING_ANTHROPIC_URL", "http://billing.example"),
            ][..],
            "https://",
        ),
        (
            &[("SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY", "k"), ("SIGHTLINE_BILLING_ANTHROPIC_AGENTS", "vim")][..],
            "\"vim\"",
        ),
    ] {
        let pairs: &'static [(&'static str, &'static str)] = Box::leak(pairs.to_vec().into_boxed_slice());
        let err = Settings::from_env(env(pairs)).unwrap_err();
        assert!(err.contains(names), "{err}");
    }
}

const USD: i64 = 1_000_000_000;

/// Five rows worked by hand (tolerance 5 % of the larger figure, at least $1).
#[test]
fn drift_is_classified_as_worked_by_hand() {
    let key = |day: &str, model: &str| (day.to_string(), model.to_string());
    let mut sides = Sides::default();
    // 20th, sonnet: $10.00 recomputed, $10.40 billed: drift $0.40 ≤ max($0.52, $1) → within.
    sides.recomputed.insert(key("2026-11-20", "claude-sonnet-4-5"), 10 * USD);
    sides.billed.insert(key("2026-11-20", "claude-sonnet-4-5"), 10_400_000_000);
    // 20th, opus: $100 vs $112.50: drift $12.50 > 5 % of $112.50 = $5.625 → breach.
    sides.recomputed.insert(key("2026-11-20", "claude-opus-4-6"), 100 * USD);
    sides.billed.insert(key("2026-11-20", "claude-opus-4-6"), 112_500_000_000);
    // 21st: cline reported events without tokens that day.
    sides.uncaptured.insert("2026-11-21".into(), ["cline".to_string()].into());
    // 21st, opus: $40 vs $60: drift $20 beyond $3 → uncaptured, never a breach.
    sides.recomputed.insert(key("2026-11-21", "claude-opus-4-6"), 40 * USD);
    sides.billed.insert(key("2026-11-21", "claude-opus-4-6"), 60 * USD);
    // 21st, sonnet: $30 recomputed, nothing billed: drift −$30. Missing tokens cannot
    // explain a bill lower than our figure → breach, even that day.
    sides.recomputed.insert(key("2026-11-21", "claude-sonnet-4-5"), 30 * USD);
    // 22nd, haiku: $3 billed, nothing recomputed, every agent captured → unattributed.
    sides.billed.insert(key("2026-11-22", "claude-haiku-4-5"), 3 * USD);

    let rows = compare(Vendor::Anthropic, &sides, 5.0);
    let got: Vec<(&str, &str, i64, Status, &str)> = rows
        .iter()
        .map(|r| (r.day.as_str(), r.model.as_str(), r.drift_nusd, r.status, r.uncaptured_agents.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("2026-11-20", "claude-opus-4-6", 12_500_000_000, Status::Breach, ""),
            ("2026-11-20", "claude-sonnet-4-5", 400_000_000, Status::Within, ""),
            ("2026-11-21", "claude-opus-4-6", 20 * USD, Status::Uncaptured, "cline"),
            ("2026-11-21", "claude-sonnet-4-5", -30 * USD, Status::Breach, "cline"),
            ("2026-11-22", "claude-haiku-4-5", 3 * USD, Status::Unattributed, ""),
        ]
    );
    // At 15 % the opus breach ($12.50 ≤ $16.875) is within tolerance.
    let lenient = compare(Vendor::Anthropic, &sides, 15.0);
    assert_eq!(lenient[0].status, Status::Within);
}
