//! Tests of structural JSON redaction: secret-named members replaced whole, nested
//! leaves and keys redacted, idempotence and untouched clean values.

use super::*;
use serde_json::json;
use tests::ghp;

#[test]
fn redact_json_replaces_secret_named_members_whole() {
    let mut v = json!({
        "password": {"nested": [1, 2]},
        "apiKey": 12345,
        "access_token": true,
        "clientSecret": "plain",
        "API_KEY": "",
        "db_password": null,
        "GITHUB_TOKEN": "[REDACTED:code_hosting_token]",
        "key": "value",
        "monkey": "banana",
        "Key": "s3/object/path",
    });
    let n = redact_json(&mut v);
    let label = Rule::EnvSecret.label();
    assert_eq!(n, 4);
    assert_eq!(
        v,
        json!({
            "password": label, "apiKey": label, "access_token": label, "clientSecret": label,
            "API_KEY": "", "db_password": null, "GITHUB_TOKEN": "[REDACTED:code_hosting_token]",
            "key": "value", "monkey": "banana", "Key": "s3/object/path",
        })
    );
}

#[test]
fn redact_json_redacts_nested_leaves_and_keys() {
    let ghp = ghp();
    let mut v = json!({
        "tool": {"args": ["ls", format!("GITHUB_TOKEN={ghp}"), {"cwd": "/srv"}]},
        "alice@example.com": {"role": "owner"},
        "bob@example.com": 1,
        "[REDACTED:email]": "already there",
        "count": 3,
    });
    let n = redact_json(&mut v);
    assert_eq!(n, 3);
    assert_eq!(v["tool"]["args"][1], "GITHUB_TOKEN=[REDACTED:code_hosting_token]");
    assert_eq!(v["tool"]["args"][2], json!({"cwd": "/srv"}));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 5, "no member lost on key collision: {keys:?}");
    assert!(keys.iter().all(|k| !k.contains("example.com")), "{keys:?}");
    assert!(keys.contains(&"[REDACTED:email]#2") && keys.contains(&"[REDACTED:email]#3"));
    assert!(!v.to_string().contains(&ghp));
}

#[test]
fn redact_json_is_idempotent_and_counts_zero_the_second_time() {
    let mut v = json!({
        "metadata": {"remote": "https://u:p@host/x", "token": 5, "notes": ["mail a@b.example.org"]},
        "x@y.example": {"db_password": "pw"},
    });
    assert!(redact_json(&mut v) > 0);
    let once = v.clone();
    assert_eq!(redact_json(&mut v), 0);
    assert_eq!(v, once);
}

#[test]
fn redact_json_on_clean_value_is_unchanged() {
    let mut v = json!({"model": "m", "input_tokens": 10, "max_tokens": 20, "paths": ["/a/b"], "ok": true});
    let before = v.clone();
    assert_eq!(redact_json(&mut v), 0);
    assert_eq!(v, before);
}

#[test]
fn adversarial_megabyte_completes_with_valid_output() {
    let input = adversarial_input(1 << 20);
    assert_eq!(input.len(), 1 << 20);
    let out = redact_text(&input);
    assert!(!out.is_empty());
    assert!(!out.contains("-----BEGIN RSA PRIVATE KEY-----"));
    assert_eq!(redact_text(&out), out);
}
