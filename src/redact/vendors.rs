//! Vendor API keys recognised by their own format anywhere in text, not only after
//! `NAME=`: the keys a coding agent handles most (LLM APIs, payments, package
//! registries, model hubs).
//!
//! The formats follow gitleaks' maintained rule set (`config/gitleaks.toml`, rules
//! `anthropic-api-key`, `anthropic-admin-api-key`, `openai-api-key`, `stripe-access-token`,
//! `huggingface-access-token`, `huggingface-organization-api-token`, `npm-access-token`,
//! `pypi-upload-token`, `dockerhub-pat` (docker `dckr_pat_`), and the Azure AI key
//! shapes); the matchers are our own, written for Rust's linear-time regex engine. Each
//! prefix is specific enough to stand alone; the bodies are bounded below so identifiers
//! such as `hf_hub_download` or `sk-learn` stay as they are. Azure keys have no prefix,
//! so they need an Azure naming context.

use super::rules::{B, Pattern, Rule};

/// The trigger and patterns of one vendor rule (see `rule_parts`).
pub(super) fn parts(rule: Rule) -> (String, Vec<Pattern>) {
    let (trigger, pattern) = match rule {
        // `sk-ant-api03-…`, `sk-ant-admin01-…`: gitleaks fixes the body at 93 + `AA`; any
        // long body is accepted so a cut or future key is still caught.
        Rule::AnthropicKey => ("sk-ant-", format!(r"{B}(?P<s>sk-ant-[a-z]{{2,10}}[0-9]{{0,3}}-[A-Za-z0-9_-]{{20,}})")),
        // Project, service-account and admin keys, and the legacy `sk-` + 48 alphanumerics.
        Rule::OpenAiKey => (
            "sk-",
            format!(r"{B}(?P<s>sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{{20,}}|sk-[A-Za-z0-9]{{48}}(?-u:\b))"),
        ),
        Rule::StripeKey => ("k_", format!(r"{B}(?P<s>(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{{10,}})")),
        Rule::HuggingFaceToken => ("hf_|api_org_", format!(r"{B}(?P<s>(?:hf|api_org)_[A-Za-z0-9]{{30,}})(?-u:\b)")),
        Rule::NpmToken => ("npm_", format!(r"{B}(?P<s>npm_[A-Za-z0-9]{{36}})(?-u:\b)")),
        // The body is a macaroon whose first bytes encode the index: `AgE` starts both
        // pypi.org (`AgEIcHlwaS5vcmc`) and test.pypi.org (`AgENdGVzdC5weXBpLm9yZw`) tokens.
        Rule::PypiToken => ("pypi-AgE", format!(r"{B}(?P<s>pypi-AgE[A-Za-z0-9_-]{{50,}})")),
        Rule::DockerHubToken => ("dckr_", format!(r"{B}(?P<s>dckr_(?:pat|oat)_[A-Za-z0-9_-]{{27,}})")),
        // An Azure name (`AZURE_OPENAI_API_KEY`, `azure key`, `azureOpenAiKey`) then, after a
        // separator, 32 hex digits (Azure OpenAI) or 84 alphanumerics (Azure AI services).
        Rule::AzureKey => (
            "(?i:azure)",
            r#"(?i:azure)[A-Za-z0-9_ .-]{0,40}?(?i:key|secret)(?:\\?["'])?[ \t]*(?:=>|:=|[:=]|(?i:is))?[ \t]*(?:\\?["'])?(?P<s>[A-Fa-f0-9]{32}|[A-Za-z0-9]{84})(?-u:\b)"#
                .to_owned(),
        ),
        other => unreachable!("{other:?} is not a vendor rule"),
    };
    (trigger.to_owned(), vec![Pattern::any(&pattern)])
}
