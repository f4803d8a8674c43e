//! Credentials in HTTP headers, in curl commands, logs and JSON: the value after
//! `Authorization: Bearer|Basic|token …` (and `Proxy-Authorization`), and the value of
//! key headers (`x-api-key`, `api-key`, `x-auth-token`, …).
//!
//! Invariants: a vendor key in a header keeps its vendor label (those rules run first and
//! their labels end the value's character class); a value that is a variable reference
//! (`$TOKEN`, `${TOKEN}`) or a placeholder (`<token>`) is not a credential; prose such as
//! "the Authorization: Bearer header" stays as it is, because a value needs a digit or a
//! symbol (or 20 characters) to count.

use regex::Regex;
use std::sync::LazyLock;

use super::REDACTED_PREFIX;
use super::rules::{Pattern, Rule};

/// Header names whose whole value is a credential (compared case-insensitively).
const KEY_HEADERS: &str = r"x-api-key|api-key|x-auth-token|x-access-token|x-goog-api-key|private-token|ocp-apim-subscription-key|x-functions-key|x-vault-token";
/// The authorization schemes whose credential follows after a space.
const SCHEMES: &str = r"bearer|basic|token|bot|digest|apikey";
/// A credential (base64, base64url, hex, JWT, vendor keys): a run of token characters
/// with a digit or a symbol in it, or 20 letters. "Bearer header" is prose; "Bearer abc123"
/// and every real token are credentials. The condition is in the pattern, not in a veto,
/// so a refused candidate never hides a credential that overlaps it.
const VALUE: &str = r"[A-Za-z0-9._~+/=-]*[0-9._~+/=-][A-Za-z0-9._~+/=-]*|[A-Za-z]{20,}[A-Za-z0-9._~+/=-]*";

pub(super) fn parts() -> (String, Vec<Pattern>) {
    let trigger = format!(r"(?i:authorization|{KEY_HEADERS})");
    let patterns = vec![
        Pattern::any(&format!(
            r#"(?-u:\b)(?i:(?:proxy-)?authorization)(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?i:{SCHEMES})[ \t]+(?P<s>{VALUE})"#
        )),
        Pattern::any(&format!(r#"(?-u:\b)(?i:{KEY_HEADERS})(?:\\?["'])?[ \t]*:[ \t]*(?:\\?["'])?(?P<s>{VALUE})"#)),
    ];
    (trigger, patterns)
}

static SCHEME_AND_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^(?P<scheme>(?i:{SCHEMES})[ \t]+)(?P<value>\S.*)$")).expect("scheme pattern compiles")
});

/// The JSON member `name: value` when `name` is a credential header (`"Authorization":
/// "Bearer …"`, `"x-api-key": "…"`, any case): the value redacted as text first (so a
/// vendor key keeps its label), and if no rule matched, the credential replaced whole
/// (after the scheme for `Authorization`). Returns the replacements made, or `None` when
/// `name` is no such header (the caller's other rules apply).
pub(super) fn redact_header_value(name: &str, value: &mut String) -> Option<usize> {
    let authorization = ["authorization", "proxy-authorization"].iter().any(|h| h.eq_ignore_ascii_case(name));
    if !authorization && !KEY_HEADERS.split('|').any(|h| h.eq_ignore_ascii_case(name)) {
        return None;
    }
    if value.trim().is_empty() || value.starts_with(REDACTED_PREFIX) {
        return Some(0);
    }
    let (as_text, count) = super::redact_counted(value);
    if count > 0 {
        *value = as_text.into_owned();
        return Some(count);
    }
    let label = Rule::HttpCredential.label();
    let replaced = match SCHEME_AND_VALUE.captures(value) {
        Some(parts) if authorization => {
            if parts["value"].starts_with(REDACTED_PREFIX) || parts["value"].starts_with('$') {
                return Some(0);
            }
            format!("{}{label}", &parts["scheme"])
        }
        _ if value.starts_with('$') => return Some(0),
        _ => label.to_owned(),
    };
    *value = replaced;
    Some(1)
}
