//! The embedded tables against the vendors' published list prices (Anthropic, OpenAI,
//! Google), each cost worked out by hand: $1/MTok = 10^6 pico-dollars per token, and
//! 1,000 pico-dollars = 1 nano-dollar.

use super::tests::{book, entry, usage};
use super::*;

// ---- Anthropic ----

#[test]
fn sonnet_4_5_prices_each_kind_of_token_exactly() {
    // Claude Sonnet 4.5, published per MTok: input $3, output $15, cache hits $0.30,
    // 5-minute cache writes $3.75, 1-hour cache writes $6.
    //   1,000 input          × 3,000,000 pUSD = 3,000,000,000 pUSD
    //     500 output         × 15,000,000     = 7,500,000,000
    //  10,000 cache read     × 300,000        = 3,000,000,000
    //   2,000 cache write 5m × 3,750,000      = 7,500,000,000
    //   4,000 cache write 1h × 6,000,000      = 24,000,000,000
    //                                   total = 45,000,000,000 pUSD = 45,000,000 nUSD ($0.045)
    // Prompt: 1,000 + 10,000 + 2,000 + 4,000 = 17,000 tokens, far below the 200K tier.
    let book = book();
    let priced = book.price(
        AgentType::ClaudeCode,
        Some("claude-sonnet-4-5-20250929"),
        &usage(1_000, 500, 10_000, 2_000, 4_000, 0),
    );
    assert_eq!(
        priced,
        Priced { cost_nusd: 45_000_000, known_model: true, model_id: Some("claude-sonnet-4-5"), long_context: false }
    );
}

#[test]
fn claude_extended_thinking_is_billed_as_output() {
    // Haiku 4.5: 1,000 reasoning tokens × $5/MTok = 5,000,000,000 pUSD = 5,000,000 nUSD.
    let cost = book().price(AgentType::ClaudeCode, Some("claude-haiku-4-5"), &usage(0, 0, 0, 0, 0, 1_000)).cost_nusd;
    assert_eq!(cost, 5_000_000);
}

#[test]
fn every_claude_model_writes_the_1h_cache_at_2x_and_the_5m_cache_at_1_25x_input() {
    // Anthropic's multipliers: 5-minute write 1.25x input, 1-hour write 2x, read 0.1x.
    // Claude Haiku 3 is the one model whose published 5-minute-write and read prices are
    // rounded ($0.30 and $0.03 on a $0.25 input), and the table keeps what is published.
    let book = book();
    let mut checked = 0;
    for &agent in AgentType::ALL {
        for model in book.table(agent).models.iter().filter(|m| m.id.starts_with("claude-")) {
            let tiers = std::iter::once(&model.prices).chain(model.long_context.as_ref().map(|lc| &lc.prices));
            for p in tiers {
                assert_eq!(p.cache_write_1h, 2 * p.input, "{} 1h write", model.id);
                assert_eq!(p.reasoning, p.output, "{} reasoning", model.id);
                if model.id == "claude-3-haiku" {
                    assert_eq!((p.input, p.cache_write_5m, p.cache_read), (250_000, 300_000, 30_000));
                } else {
                    assert_eq!(4 * p.cache_write_5m, 5 * p.input, "{} 5m write", model.id);
                    assert_eq!(10 * p.cache_read, p.input, "{} cache read", model.id);
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 8 * 13, "checked {checked} Claude price tiers");
}

#[test]
fn claude_published_list_prices() {
    // (id, input, output) in $/MTok millionths = pUSD per token.
    let table = book();
    let table = table.table(AgentType::ClaudeCode);
    for (id, input, output) in [
        ("claude-opus-4-6", 5_000_000, 25_000_000),
        ("claude-opus-4-5", 5_000_000, 25_000_000),
        ("claude-opus-4-1", 15_000_000, 75_000_000),
        ("claude-opus-4", 15_000_000, 75_000_000),
        ("claude-sonnet-4-6", 3_000_000, 15_000_000),
        ("claude-sonnet-4-5", 3_000_000, 15_000_000),
        ("claude-sonnet-4", 3_000_000, 15_000_000),
        ("claude-3-7-sonnet", 3_000_000, 15_000_000),
        ("claude-3-5-sonnet", 3_000_000, 15_000_000),
        ("claude-haiku-4-5", 1_000_000, 5_000_000),
        ("claude-3-5-haiku", 800_000, 4_000_000),
        ("claude-3-opus", 15_000_000, 75_000_000),
        ("claude-3-haiku", 250_000, 1_250_000),
    ] {
        let p = entry(table, id).prices;
        assert_eq!((p.input, p.output), (input, output), "{id}");
    }
    let sonnet = entry(table, "claude-sonnet-4-5").long_context.expect("Sonnet 4.5 has a long-context tier");
    assert_eq!(sonnet.above_prompt_tokens, 200_000);
    assert_eq!(
        sonnet.prices,
        Prices {
            input: 6_000_000,
            output: 22_500_000,
            cache_read: 600_000,
            cache_write_5m: 7_500_000,
            cache_write_1h: 12_000_000,
            reasoning: 22_500_000
        }
    );
    assert_eq!(entry(table, "claude-sonnet-4").long_context, Some(sonnet));
    assert_eq!(table.models.len(), 13);
}

#[test]
fn long_context_tier_applies_above_200k_prompt_tokens_not_at_200k() {
    let book = book();
    let sonnet = |u: Usage| book.price(AgentType::ClaudeCode, Some("claude-sonnet-4-5"), &u);
    // Exactly 200,000: base tier. 200,000 × $3 = 600,000,000,000 pUSD = $0.60.
    let at = sonnet(usage(200_000, 0, 0, 0, 0, 0));
    assert_eq!((at.cost_nusd, at.long_context), (600_000_000, false));
    // 200,001 input + 1,000 output: every token at the tier ($6 in, $22.50 out).
    //   200,001 × 6,000,000 = 1,200,006,000,000; 1,000 × 22,500,000 = 22,500,000,000
    //   total 1,222,506,000,000 pUSD = 1,222,506,000 nUSD
    let above = sonnet(usage(200_001, 1_000, 0, 0, 0, 0));
    assert_eq!((above.cost_nusd, above.long_context), (1_222_506_000, true));
    // Cache reads and writes count toward the prompt: 1 + 150,000 + 30,000 + 20,000 = 200,001.
    //   1 × 6,000,000 + 150,000 × 600,000 + 30,000 × 7,500,000 + 20,000 × 12,000,000
    //   = 6,000,000 + 90,000,000,000 + 225,000,000,000 + 240,000,000,000 = 555,006,000,000 pUSD
    let cached = sonnet(usage(1, 0, 150_000, 30_000, 20_000, 0));
    assert_eq!((cached.cost_nusd, cached.long_context), (555_006_000, true));
    // Output alone never triggers the tier.
    assert!(!sonnet(usage(10, 500_000, 0, 0, 0, 0)).long_context);

    let gemini = |u: Usage| book.price(AgentType::GeminiCli, Some("gemini-2.5-pro"), &u);
    // Gemini 2.5 Pro, ≤200K: $1.25 in, $10 out.
    //   200,000 × 1,250,000 = 250,000,000,000; 1,000 × 10,000,000 = 10,000,000,000 → 260,000,000 nUSD
    let at = gemini(usage(200_000, 1_000, 0, 0, 0, 0));
    assert_eq!((at.cost_nusd, at.long_context), (260_000_000, false));
    // >200K: $2.50 in, $15 out.
    //   200,001 × 2,500,000 = 500,002,500,000; 1,000 × 15,000,000 = 15,000,000,000 → 515,002,500 nUSD
    let above = gemini(usage(200_001, 1_000, 0, 0, 0, 0));
    assert_eq!((above.cost_nusd, above.long_context), (515_002_500, true));
    // Models without a tier never report one.
    assert!(!book.price(AgentType::ClaudeCode, Some("claude-opus-4-5"), &usage(900_000, 0, 0, 0, 0, 0)).long_context);
}

// ---- OpenAI and Google ----

#[test]
fn gpt_5_prices_cached_input_and_reasoning_tokens() {
    // GPT-5: input $1.25, cached input $0.125, output $10 (reasoning billed as output).
    //   10,000 input     × 1,250,000  = 12,500,000,000
    //   50,000 cached    × 125,000    =  6,250,000,000
    //    2,000 output    × 10,000,000 = 20,000,000,000
    //    3,000 reasoning × 10,000,000 = 30,000,000,000
    //                           total = 68,750,000,000 pUSD = 68,750,000 nUSD ($0.06875)
    let book = book();
    let priced = book.price(AgentType::Codex, Some("gpt-5-2025-08-07"), &usage(10_000, 2_000, 50_000, 0, 0, 3_000));
    assert_eq!(
        priced,
        Priced { cost_nusd: 68_750_000, known_model: true, model_id: Some("gpt-5"), long_context: false }
    );
    // OpenAI has no cache-write charge: a cache write costs the input price.
    // 1,000 × 1,250,000 = 1,250,000,000 pUSD = 1,250,000 nUSD, for either duration.
    assert_eq!(book.price(AgentType::Codex, Some("gpt-5"), &usage(0, 0, 0, 1_000, 0, 0)).cost_nusd, 1_250_000);
    assert_eq!(book.price(AgentType::Codex, Some("gpt-5"), &usage(0, 0, 0, 0, 1_000, 0)).cost_nusd, 1_250_000);
}

#[test]
fn openai_published_list_prices() {
    let book = book();
    let table = book.table(AgentType::Codex);
    // (id, input, cached input, output), pUSD per token.
    for (id, input, cached, output) in [
        ("gpt-5", 1_250_000, 125_000, 10_000_000),
        ("gpt-5-codex", 1_250_000, 125_000, 10_000_000),
        ("gpt-5.1", 1_250_000, 125_000, 10_000_000),
        ("gpt-5.1-codex", 1_250_000, 125_000, 10_000_000),
        ("gpt-5.1-codex-max", 1_250_000, 125_000, 10_000_000),
        ("gpt-5-mini", 250_000, 25_000, 2_000_000),
        ("gpt-5-nano", 50_000, 5_000, 400_000),
        ("gpt-4.1", 2_000_000, 500_000, 8_000_000),
        ("gpt-4.1-mini", 400_000, 100_000, 1_600_000),
        ("o3", 2_000_000, 500_000, 8_000_000),
        ("o4-mini", 1_100_000, 275_000, 4_400_000),
        ("codex-mini-latest", 1_500_000, 375_000, 6_000_000),
    ] {
        let p = entry(table, id).prices;
        assert_eq!((p.input, p.cache_read, p.output), (input, cached, output), "{id}");
    }
    for model in &table.models {
        let p = model.prices;
        assert_eq!((p.cache_write_5m, p.cache_write_1h, p.reasoning), (p.input, p.input, p.output), "{}", model.id);
        assert!(model.long_context.is_none(), "{}", model.id);
    }
}

#[test]
fn gemini_2_5_flash_bills_thinking_tokens_as_output() {
    // Gemini 2.5 Flash: input $0.30, cached $0.03, output (thinking included) $2.50.
    //   20,000 input    × 300,000   =  6,000,000,000
    //   10,000 cached   × 30,000    =    300,000,000
    //    1,000 output   × 2,500,000 =  2,500,000,000
    //    4,000 thinking × 2,500,000 = 10,000,000,000
    //                         total = 18,800,000,000 pUSD = 18,800,000 nUSD
    let book = book();
    let priced = book.price(AgentType::GeminiCli, Some("gemini-2.5-flash"), &usage(20_000, 1_000, 10_000, 0, 0, 4_000));
    assert_eq!(
        priced,
        Priced { cost_nusd: 18_800_000, known_model: true, model_id: Some("gemini-2.5-flash"), long_context: false }
    );
}

#[test]
fn google_published_list_prices() {
    let book = book();
    let table = book.table(AgentType::GeminiCli);
    let tier = |id: &str| entry(table, id).long_context.map(|lc| (lc.above_prompt_tokens, lc.prices));
    let p = |input, output, cached| Prices {
        input,
        output,
        cache_read: cached,
        cache_write_5m: input,
        cache_write_1h: input,
        reasoning: output,
    };
    assert_eq!(entry(table, "gemini-2.5-pro").prices, p(1_250_000, 10_000_000, 125_000));
    assert_eq!(tier("gemini-2.5-pro"), Some((200_000, p(2_500_000, 15_000_000, 250_000))));
    assert_eq!(entry(table, "gemini-2.5-flash").prices, p(300_000, 2_500_000, 30_000));
    assert_eq!(entry(table, "gemini-2.5-flash-lite").prices, p(100_000, 400_000, 10_000));
    assert_eq!(entry(table, "gemini-3-pro-preview").prices, p(2_000_000, 12_000_000, 200_000));
    assert_eq!(tier("gemini-3-pro-preview"), Some((200_000, p(4_000_000, 18_000_000, 400_000))));
    for model in &table.models {
        let prices = std::iter::once(model.prices).chain(model.long_context.map(|lc| lc.prices));
        for q in prices {
            assert_eq!((q.cache_write_5m, q.cache_write_1h, q.reasoning), (q.input, q.input, q.output), "{}", model.id);
        }
    }
}
