//! Model-name matching: dated, prefixed and cased names find their entry; newer or
//! unlisted versions are unknown rather than priced as an older model.

use super::tests::{book, usage};
use super::*;

#[test]
fn model_name_variants_match_dated_prefixed_and_cased_names() {
    let book = book();
    let cases: &[(AgentType, &[(&str, &str)])] = &[
        (
            AgentType::ClaudeCode,
            &[
                ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
                ("CLAUDE-Sonnet-4-5", "claude-sonnet-4-5"),
                ("  claude-sonnet-4-5\n", "claude-sonnet-4-5"),
                ("claude-sonnet-4-5-20250929[1m]", "claude-sonnet-4-5"),
                ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
                ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
                ("bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
                ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
                ("claude-sonnet-4.5", "claude-sonnet-4-5"),
                ("claude-4.5-sonnet-thinking", "claude-sonnet-4-5"),
                ("claude-4-sonnet", "claude-sonnet-4"),
                ("claude-sonnet-4-20250514", "claude-sonnet-4"),
                ("claude-sonnet-4-0", "claude-sonnet-4"),
                ("claude-sonnet-4-6", "claude-sonnet-4-6"),
                ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
                ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
                ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
                ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
                ("claude-3-haiku-20240307", "claude-3-haiku"),
                ("claude-3-opus-20240229", "claude-3-opus"),
                ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
            ],
        ),
        (
            AgentType::Codex,
            &[
                ("gpt-5-codex", "gpt-5-codex"),
                ("gpt-5.1-codex-max", "gpt-5.1-codex-max"),
                ("gpt-5.1-codex-mini", "gpt-5.1-codex-mini"),
                ("gpt-5.1-codex", "gpt-5.1-codex"),
                ("gpt-5.1-chat-latest", "gpt-5.1"),
                ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
                ("openai/gpt-5-nano", "gpt-5-nano"),
                ("GPT-4.1", "gpt-4.1"),
                ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
                ("o3-2025-04-16", "o3"),
                ("o4-mini", "o4-mini"),
                ("codex-mini-latest", "codex-mini-latest"),
                ("gpt-4o-2024-08-06", "gpt-4o"),
                ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),
            ],
        ),
        (
            AgentType::GeminiCli,
            &[
                ("gemini-2.5-pro", "gemini-2.5-pro"),
                ("models/gemini-2.5-pro-preview-06-05", "gemini-2.5-pro"),
                ("gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"),
                ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
                ("gemini-3-pro-preview", "gemini-3-pro-preview"),
            ],
        ),
        (
            AgentType::Opencode,
            &[
                ("anthropic/claude-opus-4-5", "claude-opus-4-5"),
                ("openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
                ("openai/gpt-5-codex", "gpt-5-codex"),
                ("google/gemini-2.5-pro", "gemini-2.5-pro"),
            ],
        ),
        (
            AgentType::Aider,
            &[
                ("gemini/gemini-2.5-flash", "gemini-2.5-flash"),
                ("vertex_ai/gemini-3-pro-preview", "gemini-3-pro-preview"),
            ],
        ),
        (
            AgentType::CopilotCli,
            &[("claude-sonnet-4.5", "claude-sonnet-4-5"), ("gpt-5.1-codex-max", "gpt-5.1-codex-max")],
        ),
        (AgentType::Cursor, &[("gpt-5-codex-high", "gpt-5-codex"), ("claude-4.1-opus", "claude-opus-4-1")]),
    ];
    for &(agent, names) in cases {
        for &(name, id) in names {
            let priced = book.price(agent, Some(name), &Usage::default());
            assert_eq!(priced.model_id, Some(id), "{agent} {name:?}");
            assert!(priced.known_model, "{agent} {name:?}");
            assert!(book.table(agent).is_known_model(name), "{agent} {name:?}");
        }
    }
}

#[test]
fn opus_4_5_opus_4_1_and_opus_4_pick_their_own_prices() {
    // 1,000,000 input + 100,000 output:
    //   Opus 4.5 ($5/$25):  5,000,000,000,000 + 2,500,000,000,000 pUSD = 7,500,000,000 nUSD ($7.50)
    //   Opus 4.1 and 4 ($15/$75): 15,000,000,000,000 + 7,500,000,000,000 = 22,500,000,000 nUSD ($22.50)
    let book = book();
    let u = usage(1_000_000, 100_000, 0, 0, 0, 0);
    for (name, id, cost) in [
        ("claude-opus-4-5", "claude-opus-4-5", 7_500_000_000),
        ("claude-opus-4-5-20251101", "claude-opus-4-5", 7_500_000_000),
        ("claude-opus-4-1", "claude-opus-4-1", 22_500_000_000),
        ("claude-opus-4-1-20250805", "claude-opus-4-1", 22_500_000_000),
        ("claude-opus-4", "claude-opus-4", 22_500_000_000),
        ("claude-opus-4-20250514", "claude-opus-4", 22_500_000_000),
        ("claude-opus-4-0", "claude-opus-4", 22_500_000_000),
        ("claude-4-opus", "claude-opus-4", 22_500_000_000),
        ("claude-opus-4-6", "claude-opus-4-6", 7_500_000_000),
    ] {
        let priced = book.price(AgentType::ClaudeCode, Some(name), &u);
        assert_eq!((priced.model_id, priced.cost_nusd), (Some(id), cost), "{name}");
    }
}

#[test]
fn newer_or_unlisted_versions_are_unknown_rather_than_priced_as_an_older_model() {
    let book = book();
    for name in [
        "claude-opus-4-7",
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-sonnet-4-7",
        "claude-sonnet-5",
        "claude-haiku-5-5",
        "gpt-5.4",
        "gpt-5.2-codex",
        "gpt-5-codex-mini",
        "o3-deep-research",
        "chatgpt-4o-latest",
        "gemini-2.5-flash-image",
        "gemini-3.1-pro-preview",
    ] {
        let priced = book.price(AgentType::Cursor, Some(name), &usage(1_000, 1_000, 0, 0, 0, 0));
        assert_eq!(priced, Priced::UNKNOWN, "{name}");
    }
}

#[test]
fn unknown_model_costs_nothing_and_is_flagged_unknown() {
    let book = book();
    let u = usage(1_000, 1_000, 1_000, 1_000, 1_000, 1_000);
    let unknown = Priced { cost_nusd: 0, known_model: false, model_id: None, long_context: false };
    assert_eq!(book.price(AgentType::ClaudeCode, Some("llama-3.3-70b"), &u), unknown);
    assert_eq!(book.price(AgentType::ClaudeCode, Some("<synthetic>"), &u), unknown);
    // Each agent prices only the vendors it uses.
    assert_eq!(book.price(AgentType::ClaudeCode, Some("gpt-5"), &u), unknown);
    assert!(!book.table(AgentType::Codex).is_known_model("claude-sonnet-4-5"));
}

#[test]
fn no_model_or_a_blank_model_costs_nothing_and_is_flagged_unknown() {
    let book = book();
    let u = usage(1_000, 1_000, 0, 0, 0, 0);
    for agent in AgentType::ALL {
        assert_eq!(book.price(*agent, None, &u), Priced::UNKNOWN);
        assert_eq!(book.price(*agent, Some(""), &u), Priced::UNKNOWN);
        assert_eq!(book.price(*agent, Some("   "), &u), Priced::UNKNOWN);
    }
}
