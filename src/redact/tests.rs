//! Tests of the redaction rules: five syntactic contexts per rule, false
//! positives that must stay byte-identical, idempotence, order and JSON structure.

use super::*;

const ALNUM: &str = "FAKE0123456789abcdefXYZ";
const AWS_ID: &str = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.fake_signature-0123456789";

/// `prefix` followed by `len` characters cycled from `alphabet` (fake secrets of the
/// right shape, built here rather than pasted).
pub(super) fn fake(prefix: &str, len: usize, alphabet: &str) -> String {
    let mut s = prefix.to_owned();
    s.extend(alphabet.chars().cycle().take(len));
    s
}

pub(super) fn ghp() -> String {
    fake("ghp_", 36, ALNUM)
}

fn telegram() -> String {
    fake("123456789:", 35, "AAFAKE_telegram-0123")
}

/// Three fake 64-column base64 lines of a PEM body.
fn pem_lines() -> [String; 3] {
    [
        fake("MIIEpAIBAAKCAQEA", 48, "FAKEkeyMaterial0123+/"),
        fake("", 64, "moreFAKEbase64Body9876/+"),
        fake("", 24, "lastLineFAKE=="),
    ]
}

/// A PEM block of `kind` ("RSA ", "", …) whose lines are joined by `sep`.
fn pem(kind: &str, sep: &str) -> String {
    let [a, b, c] = pem_lines();
    format!("-----BEGIN {kind}PRIVATE KEY-----{sep}{a}{sep}{b}{sep}{c}{sep}-----END {kind}PRIVATE KEY-----")
}

pub(super) struct Case {
    rule: Rule,
    context: &'static str,
    input: String,
    secret: String,
}

pub(super) fn case(rule: Rule, context: &'static str, input: String, secret: &str) -> Case {
    Case { rule, context, input, secret: secret.to_owned() }
}

/// True positives: every rule in JSON, YAML, env-file, shell-export and prose contexts.
fn positives() -> Vec<Case> {
    use Rule::*;
    let google = fake("AIza", 35, "SyFAKE-example_key0123");
    let azure = fake("", 86, "FAKEazure+key/0123456789") + "==";
    let (gho, ghs) = (fake("gho_", 36, ALNUM), fake("ghs_", 36, ALNUM));
    let pat = fake("github_pat_", 40, "11FAKE_0123abc");
    let glpat = fake("glpat-", 20, "FAKE-gitlab_0123");
    let slack = fake("xoxb-", 40, "1234567890-FAKEfake");
    let xapp = fake("xapp-1-", 30, "A0FAKE-123456");
    let hook_secret = fake("", 24, "FAKEfake0123");
    let discord_secret = fake("", 68, "FAKE_fake-0123");
    let [pem_a, _, _] = pem_lines();
    vec![
        case(CloudAccessKey, "json", format!(r#"{{"aws_access_key_id": "{AWS_ID}", "region": "us-east-1"}}"#), AWS_ID),
        case(CloudAccessKey, "yaml", format!("aws_access_key_id: {AWS_ID}\nregion: eu-west-1"), AWS_ID),
        case(CloudAccessKey, "env", format!("AWS_ACCESS_KEY_ID={AWS_ID}\n"), AWS_ID),
        case(CloudAccessKey, "shell", format!(r#"export MAPS_CLIENT="{google}""#), &google),
        case(CloudAccessKey, "prose", format!("The leaked id {AWS_ID} was rotated."), AWS_ID),
        case(
            CloudSecretKey,
            "json",
            format!(r#"{{"SecretAccessKey": "{AWS_SECRET}", "Expiration": "2025-01-01"}}"#),
            AWS_SECRET,
        ),
        case(CloudSecretKey, "yaml", format!("aws_secret_access_key: {AWS_SECRET}\n"), AWS_SECRET),
        case(CloudSecretKey, "env", format!("AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n"), AWS_SECRET),
        case(
            CloudSecretKey,
            "shell",
            format!(
                r#"export AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={azure};EndpointSuffix=core.windows.net""#
            ),
            &azure,
        ),
        case(CloudSecretKey, "prose", format!("my aws secret key is {AWS_SECRET} so please rotate it"), AWS_SECRET),
        case(CodeHostingToken, "json", format!(r#"{{"auth": "{pat}"}}"#), &pat),
        case(CodeHostingToken, "yaml", format!("gitlab:\n  auth: {glpat}\n"), &glpat),
        case(CodeHostingToken, "env", format!("GH_APP_INSTALLATION={ghs}\n"), &ghs),
        case(CodeHostingToken, "shell", format!("export GITHUB_TOKEN={}", ghp()), &ghp()),
        case(CodeHostingToken, "prose", format!("The OAuth token {gho} showed up in the log."), &gho),
        case(Jwt, "json", format!(r#"{{"id_token": "{JWT}"}}"#), JWT),
        case(Jwt, "yaml", format!("session: {JWT}\n"), JWT),
        case(Jwt, "env", format!("SESSION_COOKIE={JWT}\n"), JWT),
        case(Jwt, "shell", format!(r#"export AUTH_HEADER="Bearer {JWT}""#), JWT),
        case(Jwt, "prose", format!("The cookie was {JWT}, and it expired."), JWT),
        case(ChatToken, "json", format!(r#"{{"slack": "{slack}"}}"#), &slack),
        case(
            ChatToken,
            "yaml",
            format!("webhook: https://discord.com/api/webhooks/123456789012345678/{discord_secret}\n"),
            &discord_secret,
        ),
        case(
            ChatToken,
            "env",
            format!("SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/{hook_secret}\n"),
            &hook_secret,
        ),
        case(ChatToken, "shell", format!("export TG_BOT={}", telegram()), &telegram()),
        case(ChatToken, "prose", format!("The app-level token {xapp} was posted in #general."), &xapp),
        case(EnvSecret, "json", r#"{"API_KEY": "v4lue-Not-Real", "region": "x"}"#.to_owned(), "v4lue-Not-Real"),
        case(
            EnvSecret,
            "yaml",
            "database:\n  db_password: correct-horse-battery\n".to_owned(),
            "correct-horse-battery",
        ),
        case(EnvSecret, "env", "DATABASE_PASSWORD=hunter2-env\nPORT=5432\n".to_owned(), "hunter2-env"),
        case(EnvSecret, "shell", r#"export CLIENT_SECRET="s3cr3t \"quoted\" value""#.to_owned(), "s3cr3t"),
        case(EnvSecret, "prose", "I set DATABASE_PASSWORD=hunter2 in prod".to_owned(), "hunter2"),
        case(PrivateKey, "json", format!(r#"{{"private_key": "{}\n"}}"#, pem("RSA ", "\\n")), &pem_a),
        case(PrivateKey, "yaml", format!("tls:\n  key: |\n    {}\n", pem("EC ", "\n    ")), &pem_a),
        case(PrivateKey, "env", format!("SSH_KEY=\"{}\"\n", pem("OPENSSH ", "\\n")), &pem_a),
        case(PrivateKey, "shell", format!("export TLS_PEM='{}'", pem("", "\n")), &pem_a),
        case(PrivateKey, "prose", format!("Here it is: {} (do not share)", pem("ENCRYPTED ", " ")), &pem_a),
        case(
            UrlCredentials,
            "json",
            r#"{"remote": "https://deploy:s3cr3t-Pass@git.example.com/org/repo.git"}"#.to_owned(),
            "s3cr3t-Pass",
        ),
        case(
            UrlCredentials,
            "yaml",
            "database_url: postgres://app:pg-Pass-123@db.internal:5432/app\n".to_owned(),
            "pg-Pass-123",
        ),
        case(UrlCredentials, "env", "DATABASE_URL=mysql://root:r00t-Pass@localhost/db\n".to_owned(), "r00t-Pass"),
        case(
            UrlCredentials,
            "shell",
            "export GIT_REMOTE=https://oauth2:gl-Pass-abc@gitlab.example.com/x.git".to_owned(),
            "gl-Pass-abc",
        ),
        case(
            UrlCredentials,
            "prose",
            "First clone https://tok3nValue0123@github.com/org/repo.git locally.".to_owned(),
            "tok3nValue0123",
        ),
        case(Email, "json", r#"{"author": "alice.smith@example.com"}"#.to_owned(), "alice.smith@example.com"),
        case(Email, "yaml", "maintainer: bob_ops@example.org\n".to_owned(), "bob_ops@example.org"),
        case(Email, "env", "GIT_AUTHOR_EMAIL=carol+ci@example.co.uk\n".to_owned(), "carol+ci@example.co.uk"),
        case(Email, "shell", r#"export NOTIFY="dave@mail.example.com""#.to_owned(), "dave@mail.example.com"),
        case(Email, "prose", "Contact erin@example.com for access.".to_owned(), "erin@example.com"),
    ]
    .into_iter()
    .chain(super::tests_vendors::positives())
    .collect()
}

/// Inputs that must come back byte-identical (and borrowed).
const NEGATIVES: &[&str] = &[
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    r#"{"sha": "3f786850e387550fdab836ed7e6dc881de23001b", "parent": "da39a3ee5e6b4b0d3255bfef95601890afd80709"}"#,
    "request 550e8400-e29b-41d4-a716-446655440000 finished",
    "Enter your password when prompted",
    "the token expired",
    "Please reset your password.",
    "Your session token has expired; log in again. The secret is out.",
    "key: value",
    "monkey: banana\nturkey: sandwich",
    "https://example.com/path?q=1&page=2#top",
    "See https://docs.rs/regex/latest/regex/ for details",
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "git remote add origin git@gitlab.example.com:group/project.git",
    "data: SGVsbG8sIHdvcmxkIQ==",
    "aGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSBrZXk= and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "regex = \"1.13.1\"; v1.2.3-beta+build.5; lodash@4.17.21; node@v18.2.0",
    "/home/user/.config/app/api_key.txt and src/redact.rs:42:7",
    r"C:\Users\dev\secret\token.txt",
    "docker run -v /etc/secret:/run/secret app",
    "assets/icon@2x.png",
    r#"{"input_tokens": 1234, "max_tokens": 4096, "token_count": 7}"#,
    "API_KEY=\nPASSWORD=\"\"\nsecret: ''",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "API_KEY=$API_KEY ./run.sh",
    "api_key: str",
    "started 2024-01-01T12:00:00Z, took 12:34:56",
    "AKIAIOSFODNN7EXAMPLEX is too long to be a key id",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
];

#[test]
fn labels_are_redacted_prefix_plus_name_in_fixed_order() {
    let names: Vec<_> = Rule::ORDERED.iter().map(|r| r.name()).collect();
    assert_eq!(
        names,
        [
            "cloud_access_key",
            "cloud_secret_key",
            "code_hosting_token",
            "anthropic_key",
            "openai_key",
            "stripe_key",
            "hugging_face_token",
            "npm_token",
            "pypi_token",
            "docker_hub_token",
            "azure_key",
            "jwt",
            "chat_token",
            "http_credential",
            "env_secret",
            "private_key",
            "url_credentials",
            "email"
        ]
    );
    for rule in Rule::ORDERED {
        assert_eq!(rule.label(), format!("[REDACTED:{}]", rule.name()));
    }
}

#[test]
fn ordered_lists_the_rules_in_declaration_order() {
    for (index, rule) in Rule::ORDERED.into_iter().enumerate() {
        assert_eq!(rule as usize, index, "{rule:?}");
    }
}

#[test]
fn every_rule_has_fixtures_in_five_contexts() {
    let cases = positives();
    for rule in Rule::ORDERED {
        let mut contexts: Vec<_> = cases.iter().filter(|c| c.rule == rule).map(|c| c.context).collect();
        contexts.sort_unstable();
        assert_eq!(contexts, ["env", "json", "prose", "shell", "yaml"], "{rule:?}");
    }
}

#[test]
fn positives_lose_the_secret_and_carry_the_rule_label() {
    for c in positives() {
        let out = redact_text(&c.input);
        let label = c.rule.label();
        assert!(!out.contains(&c.secret), "{:?}/{}: secret left in {out}", c.rule, c.context);
        assert!(out.contains(label), "{:?}/{}: no {label} in {out}", c.rule, c.context);
    }
}

#[test]
fn json_fixtures_stay_valid_json() {
    for c in positives().iter().filter(|c| c.context == "json") {
        let out = redact_text(&c.input);
        assert!(serde_json::from_str::<Value>(&out).is_ok(), "{:?}: {out}", c.rule);
    }
}

#[test]
fn negatives_are_byte_identical_and_borrowed() {
    for input in NEGATIVES {
        let out = redact_text(input);
        assert_eq!(out, *input);
        assert!(matches!(out, Cow::Borrowed(_)), "{input}");
    }
}

#[test]
fn clean_text_is_borrowed() {
    let input = "cargo test finished: 12 passed, 0 failed";
    assert!(matches!(redact_text(input), Cow::Borrowed(s) if std::ptr::eq(s, input)));
}

#[test]
fn redact_text_is_idempotent_over_all_fixtures() {
    let extra = all_exact_cases().into_iter().map(|(input, _)| input);
    for input in positives().into_iter().map(|c| c.input).chain(extra) {
        let once = redact_text(&input).into_owned();
        let twice = redact_text(&once);
        assert_eq!(twice, once, "from {input}");
        assert!(matches!(twice, Cow::Borrowed(_)), "second pass changed {once}");
    }
}

/// `(input, expected output)`; an empty expectation means "unchanged".
fn ex(input: impl Into<String>, expected: &str) -> (String, String) {
    let input = input.into();
    let expected = if expected.is_empty() { input.clone() } else { expected.to_owned() };
    (input, expected)
}

/// Asserts exact outputs, and that input that was valid JSON stays valid JSON.
fn assert_exact(cases: &[(String, String)]) {
    for (input, expected) in cases {
        let out = redact_text(input);
        assert_eq!(out, *expected, "input: {input}");
        if serde_json::from_str::<Value>(input).is_ok() {
            assert!(serde_json::from_str::<Value>(&out).is_ok(), "invalid JSON: {out}");
        }
    }
}

fn env_value_cases() -> Vec<(String, String)> {
    vec![
        ex(r#"export API_KEY="v""#, r#"export API_KEY="[REDACTED:env_secret]""#),
        ex("API_KEY='v' cmd", "API_KEY='[REDACTED:env_secret]' cmd"),
        ex(r#"{"password": "a\"b", "user": "x"}"#, r#"{"password": "[REDACTED:env_secret]", "user": "x"}"#),
        ex(r#"{"token": 12345, "n": 1}"#, r#"{"token": "[REDACTED:env_secret]", "n": 1}"#),
        ex(
            r#"{"cmd":"export API_KEY=\"abc\" && run\nPASSWORD=pw\\x"}"#,
            r#"{"cmd":"export API_KEY=\"[REDACTED:env_secret]\" && run\nPASSWORD=[REDACTED:env_secret]"}"#,
        ),
        ex(r#"{"out":"{\"db_password\": \"pw\"}"}"#, r#"{"out":"{\"db_password\": \"[REDACTED:env_secret]\"}"}"#),
        ex(
            "url = https://api.example.com/v1?api_key=abc123&format=json",
            "url = https://api.example.com/v1?api_key=[REDACTED:env_secret]&format=json",
        ),
        ex("run --api-key=abc123 -v", "run --api-key=[REDACTED:env_secret] -v"),
        ex(
            "X-Api-Key: abc123\nspring.datasource.password=pw",
            "X-Api-Key: [REDACTED:http_credential]\nspring.datasource.password=[REDACTED:env_secret]",
        ),
        ex(
            "Password: hunter2, user: bob; DB_PASSWORD = 'x y'",
            "Password: [REDACTED:env_secret], user: bob; DB_PASSWORD = '[REDACTED:env_secret]'",
        ),
        ex("config = {'secret' => 'abc', 'keep' => 1}", "config = {'secret' => '[REDACTED:env_secret]', 'keep' => 1}"),
    ]
}

fn order_cases() -> Vec<(String, String)> {
    let ghp = ghp();
    vec![
        ex(format!("GITHUB_TOKEN={ghp}"), "GITHUB_TOKEN=[REDACTED:code_hosting_token]"),
        ex(format!("API_KEY=\"{AWS_ID}\""), "API_KEY=\"[REDACTED:cloud_access_key]\""),
        ex(format!("AWS_SECRET_ACCESS_KEY={AWS_SECRET}"), "AWS_SECRET_ACCESS_KEY=[REDACTED:cloud_secret_key]"),
        ex(
            format!("https://{ghp}@github.com/org/repo.git"),
            "https://[REDACTED:code_hosting_token]@github.com/org/repo.git",
        ),
        ex(
            format!("https://x-access-token:{ghp}@github.com/o/r.git"),
            "https://x-access-token:[REDACTED:code_hosting_token]@github.com/o/r.git",
        ),
        ex("https://abc123token@host.example/r", "https://[REDACTED:url_credentials]@host.example/r"),
        ex(
            "https://alice@example.com:pw@git.example.com/r.git",
            "https://[REDACTED:url_credentials]@git.example.com/r.git",
        ),
        ex("ftp://anonymous@ftp.example.com/pub", "ftp://[REDACTED:email]/pub"),
    ]
}

fn token_shape_cases() -> Vec<(String, String)> {
    let (tg, azure) = (telegram(), fake("", 86, "FAKEazure+key/0123456789") + "==");
    vec![
        ex(
            format!("https://api.telegram.org/bot{tg}/getMe"),
            "https://api.telegram.org/bot[REDACTED:chat_token]/getMe",
        ),
        ex(format!("{tg}x"), ""),
        ex(
            format!("AccountName=demo;AccountKey={azure};EndpointSuffix=core.windows.net"),
            "AccountName=demo;AccountKey=[REDACTED:cloud_secret_key];EndpointSuffix=core.windows.net",
        ),
        ex(format!("the aws secret key is {AWS_SECRET}X"), ""),
        ex(format!("aws_secret_access_key = {AWS_SECRET}X"), "aws_secret_access_key = [REDACTED:env_secret]"),
        ex(fake("ghp_", 35, ALNUM), ""),
    ]
}

fn private_key_cases() -> Vec<(String, String)> {
    let [a, b, _] = pem_lines();
    vec![
        ex(format!(r#"{{"k":"{}"}}"#, pem("RSA ", "\\r\\n")), r#"{"k":"[REDACTED:private_key]"}"#),
        ex(
            format!(r#"{{"out":"-----BEGIN RSA PRIVATE KEY-----\n{a}\n{b}\nABCD"}}"#),
            r#"{"out":"[REDACTED:private_key]"}"#,
        ),
        ex(
            format!("-----BEGIN PRIVATE KEY-----\n{a}\n\nThat was the key."),
            "[REDACTED:private_key]\n\nThat was the key.",
        ),
        ex(
            "Keys start with -----BEGIN RSA PRIVATE KEY----- and so on",
            "Keys start with [REDACTED:private_key] and so on",
        ),
        ex(
            format!("PRIVATE_KEY: -----BEGIN EC PRIVATE KEY----- {a} -----END EC PRIVATE KEY-----"),
            "PRIVATE_KEY: [REDACTED:private_key]",
        ),
        ex(
            format!("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17\n\n{a}\n{b}"),
            "[REDACTED:private_key]",
        ),
    ]
}

fn jsonl_and_email_cases() -> Vec<(String, String)> {
    let ghp = ghp();
    vec![
        ex(
            format!(r#"{{"t":"a\n{AWS_ID}\nalice@example.com\t{ghp}\nSECRET=x\ntoken: y"}}"#),
            r#"{"t":"a\n[REDACTED:cloud_access_key]\n[REDACTED:email]\t[REDACTED:code_hosting_token]\nSECRET=[REDACTED:env_secret]\ntoken: [REDACTED:env_secret]"}"#,
        ),
        ex("mail me at git@example.com or mygit@example.com", "mail me at git@example.com or [REDACTED:email]"),
    ]
}

fn all_exact_cases() -> Vec<(String, String)> {
    [env_value_cases(), order_cases(), token_shape_cases(), private_key_cases(), jsonl_and_email_cases()].concat()
}

#[test]
fn env_secret_replaces_only_the_value_and_keeps_quotes() {
    assert_exact(&env_value_cases());
}

#[test]
fn rule_order_keeps_the_most_specific_label() {
    assert_exact(&order_cases());
}

#[test]
fn token_shapes_need_exact_lengths_and_contexts() {
    assert_exact(&token_shape_cases());
}

#[test]
fn private_keys_complete_escaped_encrypted_and_truncated() {
    assert_exact(&private_key_cases());
}

#[test]
fn jsonl_escapes_survive_and_git_is_not_an_address() {
    assert_exact(&jsonl_and_email_cases());
}

/// What the hook had redacted (its labels arrived) is told apart from what ingest catches;
/// a label that is not a rule's name shape, or clean metadata, counts nothing.
#[test]
fn counted_redaction_tells_the_hooks_labels_from_what_ingest_catches() {
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let mut value = serde_json::json!({
        "command": format!("git push https://x:{token}@github.com/acme/shop"),
        "earlier": "[REDACTED:code_hosting_token] and [REDACTED:email]",
        "nested": [{"again": format!("GITHUB_TOKEN={token}")}],
        "odd": "[REDACTED:Not A Rule] [REDACTED:",
    });
    let hits = redact_json_counted(&mut value);
    let by_rule: std::collections::BTreeMap<&str, (u32, u32)> =
        hits.0.iter().map(|(rule, hook, ingest)| (rule.as_str(), (*hook, *ingest))).collect();
    assert_eq!(by_rule.get("email"), Some(&(1, 0)), "{hits:?}");
    let code = by_rule.get("code_hosting_token").copied().unwrap_or_default();
    assert_eq!(code.0, 1, "the hook's label: {hits:?}");
    assert!(code.1 >= 1, "the token ingest caught: {hits:?} in {value}");
    assert!(!value.to_string().contains(&token));
    let total: u32 = hits.0.iter().map(|(_, hook, ingest)| hook + ingest).sum();
    let labels = value.to_string().matches("[REDACTED:").count() as u32;
    assert_eq!(total + 2, labels, "every well-formed label is counted once; the two odd ones are not: {value}");
    assert_eq!(redact_json_counted(&mut serde_json::json!({"clean": "nothing to see"})), Hits::default());
}
