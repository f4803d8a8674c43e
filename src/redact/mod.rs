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

use regex::{Regex, RegexSet};
use serde_json::{Map, Value};

/// Version of the rule set; bump it whenever a rule changes what it redacts.
/// 2: vendor API keys by their own format, and credentials in HTTP headers.
pub const RULES_VERSION: u32 = 2;

mod adversarial;
mod headers;
mod rules;
mod scan;
mod vendors;
pub use adversarial::adversarial_input;
use headers::redact_header_value;
pub use rules::Rule;
use rules::{B, Pattern, rule_parts};
use scan::{redact_env, redact_pem};

const REDACTED_PREFIX: &str = "[REDACTED:";

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

/// Secrets replaced in one event's metadata, by rule name: `(rule, by the hook, by
/// ingest)`. The hook redacts before it sends, so the labels already in what arrives are
/// the hook's; those a second pass adds are what the hook missed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hits(pub Vec<(String, u32, u32)>);

/// Redacts `value` like [`redact_json`], and counts the labels it held before and after.
pub fn redact_json_counted(value: &mut Value) -> Hits {
    let mut before = std::collections::BTreeMap::new();
    count_labels(value, &mut before);
    let replaced = redact_json(value);
    if replaced == 0 && before.is_empty() {
        return Hits::default();
    }
    let mut after = std::collections::BTreeMap::new();
    count_labels(value, &mut after);
    Hits(
        after
            .into_iter()
            .map(|(rule, total)| {
                let hook = before.get(&rule).copied().unwrap_or(0).min(total);
                (rule, hook, total - hook)
            })
            .collect(),
    )
}

/// Counts the `[REDACTED:<rule>]` labels in every key and string of `value`.
fn count_labels(value: &Value, into: &mut std::collections::BTreeMap<String, u32>) {
    match value {
        Value::String(text) => count_text_labels(text, into),
        Value::Array(items) => items.iter().for_each(|item| count_labels(item, into)),
        Value::Object(map) => {
            for (key, item) in map {
                count_text_labels(key, into);
                count_labels(item, into);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn count_text_labels(text: &str, into: &mut std::collections::BTreeMap<String, u32>) {
    let mut rest = text;
    while let Some(at) = rest.find(REDACTED_PREFIX) {
        rest = &rest[at + REDACTED_PREFIX.len()..];
        let name_len = rest.bytes().take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_').count();
        if (1..=40).contains(&name_len) && rest.as_bytes().get(name_len) == Some(&b']') {
            *into.entry(rest[..name_len].to_string()).or_default() += 1;
        }
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
            && let Some(n) = redact_header_value(key, text)
        {
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
