//! The developer machine's slim binary, `sightline-hook`, on a machine of its own: it
//! signs in, registers its hooks in Claude Code's settings (pointing at itself), records
//! a session's hook calls and ships them to a real `sightline serve`; the server's
//! commands are not in it.

use serde_json::json;

use crate::common::machine::*;
use crate::common::*;

fn hook_client(home: &std::path::Path, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    run_as_machine(HOOK_BIN, home, args, stdin, &[])
}

#[test]
fn the_slim_binary_signs_in_installs_records_and_ships_and_carries_no_server() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let login = hook_client(home, &["login", "--server", &server.ingest, "--token", &server.token], None);
    assert!(login.status.success(), "{}", stderr(&login));
    let installed = hook_client(home, &["install", "--agent", "claude_code"], None);
    assert!(installed.status.success(), "{}", stderr(&installed));
    let settings = std::fs::read_to_string(home.join(".claude/settings.json")).unwrap();
    assert!(settings.contains("sightline-hook"), "the hooks call the binary that installed them: {settings}");

    let session = "5f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f";
    for (event, payload) in [
        (
            "SessionStart",
            json!({"session_id": session, "hook_event_name": "SessionStart", "source": "startup", "cwd": "/tmp"}),
        ),
        (
            "UserPromptSubmit",
            json!({"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": "hello", "cwd": "/tmp"}),
        ),
    ] {
        let out = hook_client(home, &["hook", event, "--agent", "claude-code"], Some(&payload.to_string()));
        assert_eq!(out.status.code(), Some(0), "{event}: {}", stderr(&out));
    }
    let flushed = hook_client(home, &["flusher", "--once"], None);
    assert!(flushed.status.success(), "{}", stderr(&flushed));
    let (status, view) = server.session(&server.token, session);
    assert_eq!(status, 200, "{view}");
    assert_eq!((view["event_count"].as_i64(), view["prompt_count"].as_i64()), (Some(2), Some(1)));
    let shown = stdout(&hook_client(home, &["status"], None));
    assert!(shown.contains("reachable:   yes"), "{shown}");

    let serve = hook_client(home, &["serve"], None);
    assert_eq!(serve.status.code(), Some(2), "not a command of this binary");
    assert!(stderr(&serve).contains("unrecognized subcommand 'serve'"), "{}", stderr(&serve));
}
