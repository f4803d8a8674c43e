//! Secret redaction, applied before anything is stored.
//!
//! The ingest server runs [`redact_json`] over each event's `metadata` object, and
//! transcripts (JSONL text) go through [`redact_text`]; both use the same [`Rule`]s,
//! always in the order of [`Rule::ORDERED`]. The order is load-bearing: structural token
//! formats come first, then vendor keys by their own prefix (`vendors`, so
//! `GITHUB_TOKEN=ghp_…` keeps `code_hosting_token` and `x-api-key: sk-ant-…` keeps
//! `anthropic_key`), then JWTs and chat tokens, then credentials in HTTP headers (`headers`),
//! then `NAME=value` context rules, PEM blocks, URL credentials, and e-mail last
//! (so an address inside URL credentials is reported as credentials). Each match becomes
//! `[REDACTED:<rule name>]`; context rules replace only the value and keep the name and
//! quotes readable, e.g. `AWS_SECRET_ACCESS_KEY=[REDACTED:cloud_secret_key]`.
//!
//! Invariants:
//! - Idempotent: labels are inert (bracketed, nothing secret-shaped inside them) and values
//!   already starting with `[REDACTED:` are left alone, so redacting twice changes nothing.
//! - Cheap when clean: one pass of a trigger [`RegexSet`]; clean input comes back borrowed.
//! - JSON text stays valid JSON: escapes are never split, and a bare JSON value of a secret
//!   name (`"token": 123`) becomes the quoted string `"[REDACTED:env_secret]"`.
//! - Not redacted: bare 40-hex git SHAs and other bare base64 (an AWS secret key needs a
//!   naming context), UUIDs, prose that merely mentions "password" or "token", YAML like
//!   `key: value`, URLs without userinfo, `ssh://git@host/…` and `git@host:org/repo.git`,
//!   variable references (`$API_KEY`, `${{ secrets.X }}`), file paths and versions.
//! - Over-redaction is preferred to a leak where the two conflict (e.g. a truncated private
//!   key is cut at the end of its base64 body; any `*_TOKEN: x` in code is treated as secret).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};
use serde_json::{Map, Value};

/// Version of the rule set; bump it whenever a rule changes what it redacts.
/// 2: vendor API keys by their own format, and credentials in HTTP headers.
pub const RULES_VERSION: u32 = 2;

mod headers;
mod scan;
mod vendors;
use headers::redact_header_value;
use scan::{redact_env, redact_pem};

const REDACTED_PREFIX: &str = "[REDACTED:";

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

    /// The replacement text, `[REDACTED:<name>]`.
    fn label(self) -> &'static str {
        match self {
            Rule::CloudAccessKey => "[REDACTED:cloud_access_key]",
            Rule::CloudSecretKey => "[REDACTED:cloud_secret_key]",
            Rule::CodeHostingToken => "[REDACTED:code_hosting_token]",
            Rule::AnthropicKey => "[REDACTED:anthropic_key]",
            Rule::OpenAiKey => "[REDACTED:openai_key]",
            Rule::StripeKey => "[REDACTED:stripe_key]",
            Rule::HuggingFaceToken => "[REDACTED:hugging_face_token]",
            Rule::NpmToken => "[REDACTED:npm_token]",
            Rule::PypiToken => "[REDACTED:pypi_token]",
            Rule::DockerHubToken => "[REDACTED:docker_hub_token]",
            Rule::AzureKey => "[REDACTED:azure_key]",
            Rule::Jwt => "[REDACTED:jwt]",
            Rule::ChatToken => "[REDACTED:chat_token]",
            Rule::HttpCredential => "[REDACTED:http_credential]",
            Rule::EnvSecret => "[REDACTED:env_secret]",
            Rule::PrivateKey => "[REDACTED:private_key]",
            Rule::UrlCredentials => "[REDACTED:url_credentials]",
            Rule::Email => "[REDACTED:email]",
        }
    }
}

/// Redacts with every rule, in order. Borrowed when nothing matched (the common case must
/// not allocate).
pub fn redact_text(input: &str) -> Cow<'_, str> {
    redact_counted(input).0
}

/// Redacts a JSON value in place, structurally. An object member whose key is a secret name
/// (rule 6 names, case-insensitive bare `password`/`secret`/`token`/`passwd`, and camelCase
/// such as `apiKey`, `accessToken`, `clientSecret`, `dbPassword`) has its whole value
/// (string, number, bool or nested structure) replaced by the string `[REDACTED:env_secret]`,
/// unless it is null, an empty string or a string already starting with `[REDACTED:`. Every
/// other string leaf and every object key goes through [`redact_text`]; keys that collide
/// after redaction get a `#2`, `#3`, … suffix. Returns the number of replacements made.
pub fn redact_json(value: &mut Value) -> usize {
    match value {
        Value::String(s) => redact_string(s),
        Value::Array(items) => items.iter_mut().map(redact_json).sum(),
        Value::Object(map) => redact_object(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// A transcript redacted line by line: a JSON line structurally ([`redact_json`], so
/// secret-named keys such as `apiKey` go whole), any other line as text. The shipper runs
/// it on the laptop and the server again on receipt; running it twice changes nothing
/// more than running it once.
pub fn redact_transcript(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        redact_transcript_line(line, &mut out);
    }
    out
}

/// One line of [`redact_transcript`] (without its line ending), appended to `out` with a
/// `\n`: for redacting a transcript as it streams past.
pub fn redact_transcript_line(line: &str, out: &mut String) {
    match serde_json::from_str::<Value>(line) {
        Ok(mut value) if value.is_object() || value.is_array() => {
            redact_json(&mut value);
            out.push_str(&value.to_string());
        }
        _ => out.push_str(&redact_text(line)),
    }
    out.push('\n');
}

/// A deterministic worst-case-ish input of `size_bytes` ASCII bytes for benchmarking
/// [`redact_text`]: glued and spaced runs of near-miss prefixes (`AKIA`, `ghp_`, `sk-ant-`,
/// `hf_`, `Authorization: Bearer `, `eyJ`, `xoxb-`, `-----BEGIN`, `@`, `://user:`, unclosed
/// quotes, …), truncated PEM headers over long
/// base64-ish runs, and long identifier runs ending in KEY/TOKEN without values.
pub fn adversarial_input(size_bytes: usize) -> String {
    const NEAR_MISSES: [&str; 40] = [
        "sk-",
        "sk-ant-api03-",
        "sk-proj-",
        "sk_live_",
        "hf_",
        "npm_",
        "pypi-AgE",
        "dckr_pat_",
        "azure_openai_key=",
        "Authorization: Bearer ",
        "x-api-key: ",
        "Authorization: Basic \\\"",
        "AKIA",
        "ASIAIOSFODNN7EXAMP",
        "AIzaSyFAKE",
        "ghp_",
        "gho_0123456789",
        "github_pat_",
        "glpat-",
        "eyJ",
        "eyJhbGciOi.eyJzdWIi",
        "xoxb-",
        "xapp-1",
        "hooks.slack.com/services/T0/",
        "discord.com/api/webhooks/1/",
        "123456789:AAshort",
        "aws_secret_access_key",
        "AccountKey=c2hvcnQ",
        "-----BEGIN",
        "-----BEGIN RSA PRIVATE KEY",
        "-----END",
        "@",
        "a@b",
        "user@host.",
        "://user:",
        "https://user:",
        "PASSWORD",
        "password \"",
        "API_KEY=\"",
        "\\\"",
    ];
    let mut out = String::with_capacity(size_bytes + 4096);
    let mut i = 0usize;
    while out.len() < size_bytes {
        let piece = NEAR_MISSES[i % NEAR_MISSES.len()];
        match (i / NEAR_MISSES.len()) % 4 {
            0 => (0..64).for_each(|_| out.push_str(piece)),
            1 => (0..64).for_each(|_| {
                out.push_str(piece);
                out.push(' ');
            }),
            2 => {
                (0..48).for_each(|_| out.push_str("SOME_LONG_IDENTIFIER_"));
                out.push_str(if i.is_multiple_of(2) { "KEY " } else { "TOKEN\n" });
            }
            _ => {
                out.push_str(piece);
                (0..12).for_each(|_| out.push_str("AAAAbbbb0000++//"));
                out.push_str(if i.is_multiple_of(3) { "-----BEGIN RSA PRIVATE KEY-----\\n" } else { "\n" });
            }
        }
        i += 1;
    }
    out.truncate(size_bytes);
    out
}

/// A regex whose matches are replaced by the rule's label: the named group `s` if it took
/// part in the match, else the whole match. `accept` can veto a match (it is then kept).
struct Pattern {
    re: Regex,
    accept: fn(&Captures<'_>) -> bool,
}

impl Pattern {
    fn new(re: &str, accept: fn(&Captures<'_>) -> bool) -> Self {
        Pattern { re: Regex::new(re).expect("redaction pattern compiles"), accept }
    }

    fn any(re: &str) -> Self {
        Self::new(re, |_| true)
    }
}

/// A word start, or the JSON escape before it (`\nAKIA…` in JSONL): patterns starting with
/// it replace only their `s` group, so the escape survives.
const B: &str = r"(?:(?-u:\b)|\\[nrt])";

/// Rule 6 names: a suffix after `_`/`-` in any case (`api_key`, `X-Api-Key`), an all-uppercase
/// identifier ending in a suffix (`GITHUB_TOKEN`, `SECRET`), or a bare word (`password`).
const ENV_NAME: &str = r"[A-Za-z0-9_-]*[_-](?i:key|token|secret|passwd|password)|[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWD|PASSWORD)|[Pp]assword|[Ss]ecret|[Tt]oken|passwd";

struct Engine {
    /// One cheap necessary condition per rule, indexed like [`Rule::ORDERED`].
    triggers: RegexSet,
    /// Regex rules, indexed like [`Rule::ORDERED`] (empty for the env and PEM rules, done by hand).
    patterns: Vec<Vec<Pattern>>,
    /// Rule 6: a secret name and its separator; the value is parsed by hand.
    env_assignment: Regex,
    /// Object keys whose whole value [`redact_json`] replaces.
    secret_key_name: Regex,
    pem_begin: Regex,
    pem_end: Regex,
}

static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::new);

impl Engine {
    fn new() -> Self {
        let re = |p: &str| Regex::new(p).expect("redaction pattern compiles");
        let parts: Vec<(String, Vec<Pattern>)> = Rule::ORDERED.into_iter().map(rule_parts).collect();
        let triggers = RegexSet::new(parts.iter().map(|(trigger, _)| trigger)).expect("trigger patterns compile");
        let patterns = parts.into_iter().map(|(_, patterns)| patterns).collect();
        Engine {
            triggers,
            patterns,
            env_assignment: re(&format!(r#"{B}(?P<name>{ENV_NAME})(?P<q>\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*"#)),
            secret_key_name: re(&format!(
                r"^(?:{ENV_NAME}|(?i:password|secret|token|passwd)|[A-Za-z0-9_-]*[A-Za-z0-9](?:Key|Token|Secret|Password|Passwd))$"
            )),
            pem_begin: re(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
            pem_end: re(r"^-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
        }
    }
}

/// A rule's trigger (one cheap necessary condition) and its regex patterns (none for the
/// env and PEM rules, which are scanned by hand).
fn rule_parts(rule: Rule) -> (String, Vec<Pattern>) {
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

fn redact_counted(input: &str) -> (Cow<'_, str>, usize) {
    let engine = &*ENGINE;
    let hits = engine.triggers.matches(input);
    let mut text = Cow::Borrowed(input);
    let mut count = 0;
    for (i, rule) in Rule::ORDERED.into_iter().enumerate() {
        if !hits.matched(i) {
            continue;
        }
        let redacted = match rule {
            Rule::EnvSecret => redact_env(engine, &text, &mut count),
            Rule::PrivateKey => redact_pem(engine, &text, &mut count),
            _ => apply_patterns(&engine.patterns[i], rule.label(), &text, &mut count),
        };
        if let Some(redacted) = redacted {
            text = Cow::Owned(redacted);
        }
    }
    (text, count)
}

/// Builds the output lazily: nothing is allocated until the first replacement.
struct Splice<'a> {
    src: &'a str,
    out: Option<String>,
    copied_to: usize,
}

impl<'a> Splice<'a> {
    fn new(src: &'a str) -> Self {
        Splice { src, out: None, copied_to: 0 }
    }

    fn replace(&mut self, start: usize, end: usize, parts: &[&str]) {
        let out = self.out.get_or_insert_with(|| String::with_capacity(self.src.len()));
        out.push_str(&self.src[self.copied_to..start]);
        parts.iter().for_each(|p| out.push_str(p));
        self.copied_to = end;
    }

    fn finish(self) -> Option<String> {
        let mut out = self.out?;
        out.push_str(&self.src[self.copied_to..]);
        Some(out)
    }
}

fn apply_patterns(patterns: &[Pattern], label: &str, text: &str, count: &mut usize) -> Option<String> {
    let mut result: Option<String> = None;
    for pattern in patterns {
        let current = result.as_deref().unwrap_or(text);
        let mut splice = Splice::new(current);
        for caps in pattern.re.captures_iter(current) {
            if !(pattern.accept)(&caps) {
                continue;
            }
            let Some(m) = caps.name("s").or_else(|| caps.get(0)) else {
                continue;
            };
            splice.replace(m.start(), m.end(), &[label]);
            *count += 1;
        }
        if let Some(next) = splice.finish() {
            result = Some(next);
        }
    }
    result
}

fn redact_string(s: &mut String) -> usize {
    let (redacted, count) = redact_counted(s);
    if let Cow::Owned(redacted) = redacted {
        *s = redacted;
    }
    count
}

fn redact_object(map: &mut Map<String, Value>) -> usize {
    let engine = &*ENGINE;
    let mut count = 0;
    for (key, value) in map.iter_mut() {
        if let Value::String(text) = value
            && let Some((redacted, n)) = redact_header_value(key, text)
        {
            *text = redacted;
            count += n;
            continue;
        }
        if !engine.secret_key_name.is_match(key) {
            count += redact_json(value);
            continue;
        }
        let kept = match value {
            Value::Null => true,
            Value::String(s) => s.is_empty() || s.starts_with(REDACTED_PREFIX),
            _ => false,
        };
        if !kept {
            *value = Value::String(Rule::EnvSecret.label().to_owned());
            count += 1;
        }
    }
    if map.keys().any(|k| engine.triggers.is_match(k)) {
        for (key, value) in std::mem::take(map) {
            let (redacted, n) = redact_counted(&key);
            count += n;
            let mut new_key = redacted.into_owned();
            if map.contains_key(&new_key) {
                new_key = (2..)
                    .map(|i| format!("{new_key}#{i}"))
                    .find(|k| !map.contains_key(k))
                    .expect("an unused suffix exists");
            }
            map.insert(new_key, value);
        }
    }
    count
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_json;
#[cfg(test)]
mod tests_vendors;
