//! Pieces every adapter shares: content-free digests, tool targets and actions, git
//! context of a working directory, and notification classification.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::agents::usage::Request;
use crate::model::NotificationKind;
use crate::model::wire::{Draft, DraftGit, DraftUsage};

pub use crate::model::sha256_hex;

/// Digest (hex) and size of a JSON value as compact JSON with its object keys sorted
/// (`model::json_digest`, which the scorers use to find a call in its transcript).
pub fn digest_of(value: &Value) -> (String, usize) {
    let (digest, bytes) = crate::model::json_digest(value);
    (hex::encode(digest), bytes)
}

/// What a tool acted on, as a digest: the file, path, URL or pattern, or the program of
/// a shell command. Never the content.
pub fn target_hash(input: &Value) -> Option<String> {
    for key in ["file_path", "filePath", "notebook_path", "path", "url", "pattern", "query"] {
        if let Some(target) = input.get(key).and_then(Value::as_str) {
            return Some(sha256_hex(target.as_bytes()));
        }
    }
    let command = input.get("command").or_else(|| input.get("patchText")).and_then(Value::as_str)?;
    // A patch (Codex's apply_patch, OpenCode's patch) targets the first file it names.
    if let Some(file) = command.lines().find_map(|line| {
        ["*** Update File: ", "*** Add File: ", "*** Delete File: "].iter().find_map(|m| line.strip_prefix(m))
    }) {
        return Some(sha256_hex(file.trim().as_bytes()));
    }
    let program = command.split_whitespace().next()?;
    Some(sha256_hex(program.as_bytes()))
}

/// Git branch, commit, remote (credentials stripped) and dirty flag of `dir`, or None
/// outside a repository.
pub fn git_context(dir: &Path) -> Option<DraftGit> {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain=v2", "--branch", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&status.stdout);
    let mut branch = None;
    let mut commit = None;
    let mut dirty = false;
    for line in text.lines() {
        if let Some(oid) = line.strip_prefix("# branch.oid ") {
            commit = (oid != "(initial)").then(|| oid.to_string());
        } else if let Some(head) = line.strip_prefix("# branch.head ") {
            branch = (head != "(detached)").then(|| head.to_string());
        } else if !line.starts_with('#') {
            dirty = true;
        }
    }
    let remote = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["config", "--get", "remote.origin.url"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| strip_credentials(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|r| !r.is_empty());
    Some(DraftGit { branch, commit, remote, dirty: Some(dirty) })
}

/// `https://user:token@host/x` → `https://host/x`; other remotes unchanged.
pub fn strip_credentials(remote: &str) -> String {
    let Some((scheme, rest)) = remote.split_once("://") else { return remote.to_string() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => remote.to_string(),
    }
}

/// `template` once per model request, each copy with its own id, model and usage (the
/// server picks long-context tiers per event); `template` alone when there was none.
pub fn usage_events(template: &Draft, requests: Vec<Request>) -> Vec<Draft> {
    if requests.is_empty() {
        return vec![template.clone()];
    }
    let count = requests.len();
    requests
        .into_iter()
        .enumerate()
        .map(|(index, request)| {
            let mut event = template.clone();
            if index > 0 {
                event.event_id = Some(uuid::Uuid::now_v7().to_string());
            }
            if count > 1 {
                event.note("request", index + 1);
                event.note("requests", count);
            }
            if let Some(model) = request.model {
                event.model = Some(model);
            }
            if let Some(request_id) = request.request_id {
                event.note("request_id", request_id);
            }
            event.usage = Some(DraftUsage::from(request.usage));
            event
        })
        .collect()
}

/// Classifies a notification by its type field when the agent gives one, else by text.
pub fn classify_notification(kind: Option<&str>, message: &str) -> NotificationKind {
    let kind = kind.unwrap_or("").to_ascii_lowercase();
    let text = message.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| kind.contains(n) || text.contains(n));
    if has(&["permission"]) {
        NotificationKind::Permission
    } else if has(&["elicitation", "wants to ask", "input requested"]) {
        NotificationKind::Elicitation
    } else if has(&["auth", "log in", "login", "api key", "credential"]) {
        NotificationKind::Auth
    } else if has(&["idle", "waiting for your input"]) {
        NotificationKind::Idle
    } else {
        NotificationKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credentials_are_stripped_from_remotes() {
        assert_eq!(strip_credentials("https://ada:ghp_x@github.com/acme/app.git"), "https://github.com/acme/app.git");
        assert_eq!(strip_credentials("https://token@github.com/acme/app"), "https://github.com/acme/app");
        assert_eq!(strip_credentials("git@github.com:acme/app.git"), "git@github.com:acme/app.git");
        assert_eq!(strip_credentials("https://github.com/a@b"), "https://github.com/a@b");
    }

    #[test]
    fn notifications_are_classified() {
        assert_eq!(
            classify_notification(None, "Claude needs your permission to use Bash"),
            NotificationKind::Permission
        );
        assert_eq!(classify_notification(None, "Claude is waiting for your input"), NotificationKind::Idle);
        assert_eq!(classify_notification(Some("auth_success"), "Signed in"), NotificationKind::Auth);
        assert_eq!(classify_notification(Some("elicitation_dialog"), "server asks"), NotificationKind::Elicitation);
        assert_eq!(classify_notification(None, "Build finished"), NotificationKind::Other);
    }

    #[test]
    fn digests_depend_on_content_not_key_order_and_targets_are_hashed() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": 2}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a": 2, "b": 1}"#).unwrap();
        assert_eq!(digest_of(&a), digest_of(&b));
        let target = target_hash(&json!({"command": "cargo test --all"})).unwrap();
        assert_eq!(target, sha256_hex(b"cargo"));
        assert_eq!(target.len(), 64);
    }
}
