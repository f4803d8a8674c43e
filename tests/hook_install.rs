//! `install` / `uninstall` through the real binary, on agent config files that already
//! hold the person's own hooks.

mod common;

use std::path::Path;

use common::machine::*;
use common::*;
use serde_json::Value;

fn run(home: &Path, args: &[&str]) -> String {
    let out = client(home, args, None);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The person's own settings: four-space indent, keys in their order, their own hooks
/// on an event we also use and on one we do not.
const CLAUDE_SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": {
        "allow": [
            "Bash(npm run lint)"
        ]
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": "~/bin/check-bash.sh"
                    }
                ]
            }
        ],
        "TeammateIdle": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "notify-send idle"
                    }
                ]
            }
        ]
    },
    "alwaysThinkingEnabled": true
}
"#;

#[test]
fn claude_code_install_twice_then_uninstall_restores_the_file_exactly() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, CLAUDE_SETTINGS).unwrap();

    run(home, &["install", "--agent", "claude-code"]);
    let installed = std::fs::read_to_string(&settings).unwrap();
    let value: Value = serde_json::from_str(&installed).unwrap();
    let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "alwaysThinkingEnabled"], "key order kept");
    assert!(installed.contains("\n    \"model\""), "four-space indent kept:\n{installed}");
    let pre = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre[0]["hooks"][0]["command"], "~/bin/check-bash.sh", "the person's hook stays first");
    let ours = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(ours.ends_with("sightline hook PreToolUse --agent claude_code"), "{ours}");
    for event in ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SubagentStop", "SessionEnd"] {
        assert_eq!(value["hooks"][event].as_array().map(Vec::len), Some(1), "{event} registered once");
    }
    assert_eq!(value["hooks"]["TeammateIdle"][0]["hooks"][0]["command"], "notify-send idle");
    let backups = std::fs::read_dir(home.join("data/sightline/backups/claude_code")).unwrap().count();
    assert_eq!(backups, 1, "the original was backed up");

    let again = run(home, &["install", "--agent", "claude_code"]);
    assert!(again.contains("already installed"), "{again}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed, "a second install changes nothing");

    run(home, &["uninstall", "--agent", "claude_code"]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), CLAUDE_SETTINGS, "uninstall restores the file exactly");
    let nothing = run(home, &["uninstall", "--agent", "claude_code"]);
    assert!(nothing.contains("nothing changed"), "{nothing}");
}

#[test]
fn uninstall_keeps_changes_the_person_made_after_install() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, CLAUDE_SETTINGS).unwrap();
    run(home, &["install", "--agent", "claude_code"]);
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    value["model"] = Value::from("sonnet");
    std::fs::write(&settings, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    run(home, &["uninstall", "--agent", "claude_code"]);
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let mut want: Value = serde_json::from_str(CLAUDE_SETTINGS).unwrap();
    want["model"] = Value::from("sonnet");
    assert_eq!(after, want, "only our hooks left; the person's later edit stayed");
}

#[test]
fn install_into_a_missing_file_creates_it_and_uninstall_removes_it() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    run(home, &["install", "--agent", "claude_code"]);
    let settings = home.join(".claude/settings.json");
    assert!(settings.exists());
    run(home, &["uninstall", "--agent", "claude_code"]);
    assert!(!settings.exists(), "the file install created is gone again");
}

#[test]
fn a_broken_config_is_refused_and_left_untouched() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"hooks\": {").unwrap();
    let out = client(home, &["install", "--agent", "claude_code"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("settings.json is not valid JSON"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{\"hooks\": {");
    let out = client(home, &["install", "--agent", "aider"], None);
    assert!(stderr(&out).contains("aider has no hook adapter"), "{}", stderr(&out));
}

/// Each agent's own config file with the person's hook on an event we also register.
const OTHER_AGENTS: &[(&str, &str, &str)] = &[
    (
        "codex",
        ".codex/hooks.json",
        "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"python3 ~/.codex/hooks/policy.py\",\n            \"timeout\": 30\n          }\n        ]\n      }\n    ]\n  }\n}\n",
    ),
    (
        "gemini_cli",
        ".gemini/settings.json",
        "{\n  \"theme\": \"GitHub\",\n  \"hooksConfig\": {\n    \"enabled\": true\n  },\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\n        \"matcher\": \"write_file|replace\",\n        \"hooks\": [\n          {\n            \"name\": \"secret-guard\",\n            \"type\": \"command\",\n            \"command\": \"~/bin/guard.sh\",\n            \"timeout\": 5000\n          }\n        ]\n      }\n    ]\n  }\n}\n",
    ),
];

#[test]
fn every_json_configured_agent_installs_idempotently_and_uninstalls_exactly() {
    for (agent, relative, original) in OTHER_AGENTS {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        let path = home.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, original).unwrap();
        run(home, &["install", "--agent", agent]);
        let installed = std::fs::read_to_string(&path).unwrap();
        assert!(installed.contains(&format!("--agent {agent}")), "{agent}: {installed}");
        let value: Value = serde_json::from_str(&installed).unwrap();
        let first_event = value["hooks"].as_object().unwrap().values().next().unwrap();
        assert_eq!(first_event.as_array().unwrap().len(), 2, "{agent}: the person's hook kept, ours appended after it");
        run(home, &["install", "--agent", agent]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), installed, "{agent}: second install changes nothing");
        run(home, &["uninstall", "--agent", agent]);
        assert_eq!(&std::fs::read_to_string(&path).unwrap(), original, "{agent}: file restored exactly");
    }
}
