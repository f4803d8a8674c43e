//! `install` / `uninstall` through the real binary, on agent config files that already
//! hold the person's own hooks.

use crate::common;

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
    (
        "droid",
        ".factory/settings.json",
        "{\n  \"model\": \"opus\",\n  \"autonomyMode\": \"auto-low\",\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"Edit|Create\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/usr/local/bin/fmt-changed.sh\",\n            \"timeout\": 30\n          }\n        ]\n      }\n    ]\n  }\n}\n",
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

#[test]
fn copilot_opencode_and_cline_get_files_of_their_own_and_leave_the_persons_alone() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let persons_copilot = home.join(".copilot/hooks/my-audit.json");
    std::fs::create_dir_all(persons_copilot.parent().unwrap()).unwrap();
    let audit = r#"{ "version": 1, "hooks": { "preToolUse": [ { "type": "command", "bash": "./audit.sh" } ] } }"#;
    std::fs::write(&persons_copilot, audit).unwrap();
    let persons_cline = home.join("Documents/Cline/Hooks/PreCompact");
    std::fs::create_dir_all(persons_cline.parent().unwrap()).unwrap();
    std::fs::write(&persons_cline, "#!/bin/sh\necho '{\"cancel\":false}'\n").unwrap();

    for agent in ["copilot_cli", "opencode", "cline"] {
        run(home, &["install", "--agent", agent]);
    }
    let copilot: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".copilot/hooks/sightline.json")).unwrap()).unwrap();
    assert_eq!(copilot["version"], 1);
    let bash = copilot["hooks"]["preToolUse"][0]["bash"].as_str().unwrap();
    assert!(
        bash.ends_with("hook preToolUse --agent copilot_cli || true"),
        "a failing hook must not deny tools: {bash}"
    );
    let plugin = std::fs::read_to_string(home.join("config/opencode/plugins/sightline.js")).unwrap();
    assert!(plugin.contains(BIN) && !plugin.contains("__SIGHTLINE_BIN__"), "the plugin calls this binary");
    let script = home.join("Documents/Cline/Hooks/TaskStart");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o755);
    }
    let skipped = run(home, &["install", "--agent", "cline"]);
    assert!(skipped.contains("PreCompact: exists and was not written by sightline; left alone"), "{skipped}");
    assert!(skipped.contains("TaskStart: already installed"), "{skipped}");

    for agent in ["copilot_cli", "opencode", "cline"] {
        run(home, &["uninstall", "--agent", agent]);
    }
    assert!(!home.join(".copilot/hooks/sightline.json").exists());
    assert!(!home.join("config/opencode/plugins/sightline.js").exists());
    assert!(!script.exists());
    assert_eq!(std::fs::read_to_string(&persons_copilot).unwrap(), audit, "the person's Copilot hooks untouched");
    assert!(std::fs::read_to_string(&persons_cline).unwrap().contains("cancel"), "the person's Cline hook kept");
}

/// The installed Cline script is what Cline runs: it must answer "continue" at once and
/// hand the payload to `sightline hook`.
#[test]
fn the_installed_cline_script_answers_continue_and_records_the_event() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    run(home, &["install", "--agent", "cline"]);
    let payload = r#"{"clineVersion":"3.38.3","hookName":"UserPromptSubmit","timestamp":"1762300000060","taskId":"1762300000000","workspaceRoots":["/"],"userId":"u","userPromptSubmit":{"prompt":"hi","attachments":[]}}"#;
    let mut child = std::process::Command::new(home.join("Documents/Cline/Hooks/UserPromptSubmit"))
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("SIGHTLINE_NO_FLUSHER", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["cancel"], false);
    wait_until(std::time::Duration::from_secs(10), "the backgrounded hook to queue the prompt", || {
        stdout(&client(home, &["status"], None)).contains("queued:      1 events")
    });
}
