//! The benchmark input of `sightline bench redact`: near misses of every rule, built to
//! make the rules work as hard as clean text can.

/// A deterministic worst-case-ish input of `size_bytes` ASCII bytes for benchmarking
/// [`redact_text`](super::redact_text): glued and spaced runs of near-miss prefixes (`AKIA`, `ghp_`, `sk-ant-`,
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
