//! A developer machine for the hook CLI tests: the real binary run with its own HOME and
//! XDG directories, and a replayer for the per-agent fixtures in
//! `tests/fixtures/agents/<agent>/` (`hooks.jsonl`: `{"event", "payload"}` lines run as
//! `sightline hook <event> --agent <agent>`, and `{"write": file, "lines": n, "to": path}`
//! lines that make the working copy of a transcript fixture hold its first n lines after
//! the source line (or, without `lines`, the whole file), as the agent would have
//! written them by then; `to` defaults to `<home>/transcripts/<file>`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::{BIN, stderr};

pub fn fixture_dir(agent: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents").join(agent)
}

/// The developer machine's slim binary (`src/bin/sightline-hook.rs`).
pub const HOOK_BIN: &str = env!("CARGO_BIN_EXE_sightline-hook");

/// Runs the binary as the developer machine at `home` would, with stdin.
pub fn client_with(home: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    run_as_machine(BIN, home, args, stdin, env)
}

/// Runs `binary` as the developer machine at `home` would, with stdin.
pub fn run_as_machine(binary: &str, home: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(binary);
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        // Cline finds Documents through xdg-user-dir where installed, else ~/Documents;
        // pinning it makes both resolve to the same place.
        .env("XDG_DOCUMENTS_DIR", home.join("Documents"))
        .env("SIGHTLINE_NO_FLUSHER", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    if let Some(text) = stdin {
        child.stdin.as_mut().unwrap().write_all(text.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

pub fn client(home: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    client_with(home, args, stdin, &[])
}

pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// Replays an agent's fixture session on the machine at `home`, with the agent working
/// in `cwd`. Transcript copies live in `home/transcripts/`; `${TRANSCRIPT}` and
/// `${SUBAGENT_TRANSCRIPT}` in payloads point at `transcript.jsonl` and `subagent.jsonl`
/// there, `${CWD}` at `cwd`, `${HOME}` at `home`, `${XDG_CONFIG_HOME}` at its config dir.
pub fn replay(home: &Path, agent: &str, cwd: &Path) {
    replay_as(home, agent, cwd, None, &[]);
}

/// [`replay`] as another session (`session_id` replaces the fixture's own, in payloads and
/// transcript lines alike) with `env` in the agent's environment: how a harness runs one
/// cell after another on one machine.
pub fn replay_as(home: &Path, agent: &str, cwd: &Path, session_id: Option<&str>, env: &[(&str, &str)]) {
    let dir = fixture_dir(agent);
    let fixture_session = serde_json::from_str::<Value>(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
        .unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let tag: String = match session_id {
        Some(session) => session.chars().filter(char::is_ascii_alphanumeric).collect(),
        None => "01".into(),
    };
    let copies = home.join("transcripts");
    std::fs::create_dir_all(&copies).unwrap();
    let substitute = |text: &str| {
        text.replace("${TRANSCRIPT}", copies.join("transcript.jsonl").to_str().unwrap())
            .replace("${SUBAGENT_TRANSCRIPT}", copies.join("subagent.jsonl").to_str().unwrap())
            .replace("${CWD}", cwd.to_str().unwrap())
            .replace("${XDG_CONFIG_HOME}", home.join("config").to_str().unwrap())
            .replace("${HOME}", home.to_str().unwrap())
            .replace(&fixture_session, session_id.unwrap_or(&fixture_session))
            // Another session's requests are other requests: their ids differ too.
            .replace("\"msg_01", &format!("\"msg_{tag}"))
            .replace("\"req_01", &format!("\"req_{tag}"))
    };
    let script = std::fs::read_to_string(dir.join("hooks.jsonl")).unwrap();
    for line in script.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let step: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{agent} fixture line {line}: {e}"));
        if let Some(file) = step["write"].as_str() {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let body: String = match step["lines"].as_u64() {
                Some(lines) => text.lines().skip(1).take(lines as usize).map(|l| format!("{l}\n")).collect(),
                None => text,
            };
            let target = match step["to"].as_str() {
                Some(to) => std::path::PathBuf::from(substitute(to)),
                None => copies.join(file),
            };
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, substitute(&body)).unwrap();
            continue;
        }
        let event = step["event"].as_str().expect("a step is an event or a write");
        let payload = substitute(&step["payload"].to_string());
        let out = client_with(home, &["hook", event, "--agent", agent], Some(&payload), env);
        assert_eq!(out.status.code(), Some(0), "hook {event}: {}", stderr(&out));
    }
}

/// Secrets a person might paste into a conversation: an AWS key, a GitHub token and a
/// database URL with a password.
pub const PLANTED: [&str; 3] = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "postgres://admin:hunter2@db.internal:5432/app",
];

/// Logs in at `server` and replays the Claude Code fixture session, then appends to its
/// transcript a prompt pasting [`PLANTED`] and `notes` padding lines (`note(i)`), so the
/// upload spans several chunks.
pub fn replay_with_pasted_secrets(home: &Path, server: &str, token: &str, notes: usize, note: fn(usize) -> String) {
    let login = client(home, &["login", "--server", server, "--token", token], None);
    assert!(login.status.success(), "{}", stderr(&login));
    let repo = home.join("repo");
    std::fs::create_dir(&repo).unwrap();
    replay(home, "claude_code", &repo);
    let transcript = home.join("transcripts/transcript.jsonl");
    let mut text = std::fs::read_to_string(&transcript).unwrap();
    let pasted = format!("use {} and {} against {}", PLANTED[0], PLANTED[1], PLANTED[2]);
    let user = |content: String| serde_json::json!({"type": "user", "message": {"role": "user", "content": content}});
    for line in std::iter::once(user(pasted)).chain((0..notes).map(|i| user(note(i)))) {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(&transcript, &text).unwrap();
}
