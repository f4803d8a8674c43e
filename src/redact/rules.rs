//! The redaction rules: each rule's name and label, the order they run in, and each
//! rule's trigger and patterns (the vendor and header rules' patterns are in `vendors`
//! and `headers`; the env and PEM rules are scanned by hand in `scan`).
//!
//! Invariant: the order of [`Rule::ORDERED`] is load-bearing (see the module above): a
//! specific format runs before a general context rule, so labels stay specific.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::{REDACTED_PREFIX, headers, vendors};

/// One redaction rule; its [`Rule::name`] appears in the `[REDACTED:<name>]` label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// AWS access key ids (`AKIA`/`ASIA`/`ABIA`/`ACCA` + 16) and Google API keys (`AIza` + 35).
    CloudAccessKey,
    /// AWS secret access keys in a naming context, and Azure storage `AccountKey=` values.
    CloudSecretKey,
    /// GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`) and GitLab (`glpat-`) tokens.
    CodeHostingToken,
    /// Anthropic API and admin keys (`sk-ant-…`).
    AnthropicKey,
    /// OpenAI project, service-account, admin and legacy keys (`sk-proj-…`, `sk-` + 48).
    OpenAiKey,
    /// Stripe secret and restricted keys (`sk_live_…`, `rk_live_…`, test and prod too).
    StripeKey,
    /// Hugging Face user and organisation tokens (`hf_…`, `api_org_…`).
    HuggingFaceToken,
    /// npm access tokens (`npm_` + 36).
    NpmToken,
    /// PyPI and TestPyPI upload tokens (`pypi-AgE…`).
    PypiToken,
    /// Docker Hub personal and organisation access tokens (`dckr_pat_…`, `dckr_oat_…`).
    DockerHubToken,
    /// Azure OpenAI and Azure AI keys (32 hex or 84 alphanumerics) in an Azure naming context.
    AzureKey,
    /// JSON Web Tokens: three base64url segments, header and payload starting with `eyJ`.
    Jwt,
    /// Slack tokens and incoming webhooks, Discord webhooks, Telegram bot tokens.
    ChatToken,
    /// The credential of an HTTP header: after `Authorization: Bearer|Basic|token …`, and the
    /// value of `x-api-key:`, `api-key:`, `x-auth-token:` and their like.
    HttpCredential,
    /// The value of an assignment whose name ends in KEY, TOKEN, SECRET, PASSWORD or PASSWD.
    EnvSecret,
    /// PEM private key blocks, with real or JSON-escaped line breaks, complete or truncated.
    PrivateKey,
    /// The userinfo of a URL: `user:password@`, or a bare `token@` for http(s).
    UrlCredentials,
    /// E-mail addresses (except the `git@` of SSH remotes).
    Email,
}

impl Rule {
    /// All rules in the order they are applied (see the module documentation).
    pub const ORDERED: [Rule; 18] = [
        Rule::CloudAccessKey,
        Rule::CloudSecretKey,
        Rule::CodeHostingToken,
        Rule::AnthropicKey,
        Rule::OpenAiKey,
        Rule::StripeKey,
        Rule::HuggingFaceToken,
        Rule::NpmToken,
        Rule::PypiToken,
        Rule::DockerHubToken,
        Rule::AzureKey,
        Rule::Jwt,
        Rule::ChatToken,
        Rule::HttpCredential,
        Rule::EnvSecret,
        Rule::PrivateKey,
        Rule::UrlCredentials,
        Rule::Email,
    ];

    /// The rule's snake_case name, as used in its `[REDACTED:<name>]` label.
    pub fn name(self) -> &'static str {
        match self {
            Rule::CloudAccessKey => "cloud_access_key",
            Rule::CloudSecretKey => "cloud_secret_key",
            Rule::CodeHostingToken => "code_hosting_token",
            Rule::AnthropicKey => "anthropic_key",
            Rule::OpenAiKey => "openai_key",
            Rule::StripeKey => "stripe_key",
            Rule::HuggingFaceToken => "hugging_face_token",
            Rule::NpmToken => "npm_token",
            Rule::PypiToken => "pypi_token",
            Rule::DockerHubToken => "docker_hub_token",
            Rule::AzureKey => "azure_key",
            Rule::Jwt => "jwt",
            Rule::ChatToken => "chat_token",
            Rule::HttpCredential => "http_credential",
            Rule::EnvSecret => "env_secret",
            Rule::PrivateKey => "private_key",
            Rule::UrlCredentials => "url_credentials",
            Rule::Email => "email",
        }
    }

    /// The replacement text, `[REDACTED:<name>]` (built once per rule). `ORDERED` lists
    /// the rules in declaration order, so a rule's discriminant is its index there.
    pub(super) fn label(self) -> &'static str {
        static LABELS: LazyLock<Vec<String>> =
            LazyLock::new(|| Rule::ORDERED.iter().map(|rule| format!("[REDACTED:{}]", rule.name())).collect());
        &LABELS[self as usize]
    }
}

/// A regex whose matches are replaced by the rule's label: the named group `s` if it took
/// part in the match, else the whole match. `accept` can veto a match (it is then kept).
pub(super) struct Pattern {
    pub(super) re: Regex,
    pub(super) accept: fn(&Captures<'_>) -> bool,
}

impl Pattern {
    pub(super) fn new(re: &str, accept: fn(&Captures<'_>) -> bool) -> Self {
        Pattern { re: Regex::new(re).expect("redaction pattern compiles"), accept }
    }

    pub(super) fn any(re: &str) -> Self {
        Self::new(re, |_| true)
    }
}

/// A word start, or the JSON escape before it (`\nAKIA…` in JSONL): patterns starting with
/// it replace only their `s` group, so the escape survives.
pub(super) const B: &str = r"(?:(?-u:\b)|\\[nrt])";

/// A rule's trigger (one cheap necessary condition) and its regex patterns (none for the
/// env and PEM rules, which are scanned by hand).
pub(super) fn rule_parts(rule: Rule) -> (String, Vec<Pattern>) {
    let (trigger, patterns): (&str, Vec<Pattern>) = match rule {
        Rule::CloudAccessKey => (
            r"AKIA|ASIA|ABIA|ACCA|AIza",
            vec![Pattern::any(&format!(
                r"{B}(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}(?-u:\b)|AIza[0-9A-Za-z_-]{{35}})"
            ))],
        ),
        Rule::CloudSecretKey => (
            r"(?i:secret|accountkey)",
            vec![
                Pattern::new(
                    r#"(?i:(?:aws[ _-]?)?secret[ _-]?access[ _-]?key|aws[ _-]?secret[ _-]?key)(?:\\?["'])?(?:[ \t]*(?:=>|:=|[:=])[ \t]*|[ \t]+(?:(?i:is)[ \t]+)?)(?:\\?["'])?(?P<s>[A-Za-z0-9/+]{40,})"#,
                    |c| c["s"].len() == 40,
                ),
                Pattern::any(r"(?i:AccountKey)=(?P<s>[A-Za-z0-9+/]{86,88}={0,2})"),
            ],
        ),
        Rule::CodeHostingToken => (
            r"gh[pousr]_|github_pat_|glpat-",
            vec![Pattern::any(&format!(
                r"{B}(?P<s>gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}}|glpat-[A-Za-z0-9_-]{{20,}})"
            ))],
        ),
        Rule::AnthropicKey
        | Rule::OpenAiKey
        | Rule::StripeKey
        | Rule::HuggingFaceToken
        | Rule::NpmToken
        | Rule::PypiToken
        | Rule::DockerHubToken
        | Rule::AzureKey => return vendors::parts(rule),
        Rule::Jwt => ("eyJ", vec![Pattern::any(r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")]),
        Rule::ChatToken => (
            r"xox[abposr]-|xapp-|hooks\.slack\.com|discord(?:app)?\.com|[0-9]{8}:",
            vec![
                Pattern::any(&format!(r"{B}(?P<s>(?:xox[abposr]|xapp)-[A-Za-z0-9-]{{10,}})")),
                Pattern::any(concat!(
                    r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
                    r"|https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+",
                )),
                // Telegram: `bot` prefix allowed for API URLs; the secret part is exactly 35.
                Pattern::new(&format!(r"(?:{B}|bot)(?P<s>[0-9]{{8,10}}:(?P<t>[A-Za-z0-9_-]{{35,}}))"), |c| {
                    c["t"].len() == 35
                }),
            ],
        ),
        Rule::HttpCredential => return headers::parts(),
        Rule::EnvSecret => (r#"(?i:key|token|secret|passwd|password)(?:\\?["'])?[ \t]*[:=]"#, Vec::new()),
        Rule::PrivateKey => ("-----BEGIN", Vec::new()),
        Rule::UrlCredentials => (
            "://",
            vec![Pattern::new(
                // Greedy userinfo: up to the last `@` of the authority, as URL parsers do.
                &format!(r#"{B}(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<s>[^\s/?#"'<>\\]+)@"#),
                url_userinfo_is_secret,
            )],
        ),
        Rule::Email => (
            "@",
            vec![Pattern::new(
                r"(?:\\[nrt])?(?P<s>(?P<local>[A-Za-z0-9_.%+-]+)@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?P<tld>[A-Za-z]{2,}))(?-u:\b)",
                is_email_address,
            )],
        ),
    };
    (trigger.to_owned(), patterns)
}

/// `user:password@` always; a bare `token@` only for http(s) (so `ssh://git@…` survives);
/// never when an earlier rule already put a label there.
fn url_userinfo_is_secret(c: &Captures<'_>) -> bool {
    let userinfo = &c["s"];
    let scheme = c["scheme"].to_ascii_lowercase();
    !userinfo.contains(REDACTED_PREFIX)
        && (userinfo.contains(':') || scheme.ends_with("http") || scheme.ends_with("https"))
}

/// Not an address: the `git@` of SSH remotes, and retina asset names like `icon@2x.png`.
fn is_email_address(c: &Captures<'_>) -> bool {
    const IMAGE_EXTENSIONS: [&str; 8] = ["png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp"];
    let tld = c["tld"].to_ascii_lowercase();
    &c["local"] != "git" && !IMAGE_EXTENSIONS.contains(&tld.as_str())
}
