//! The one-line install, as a developer runs it: `curl -fsSL <server>/install.sh | sh` in
//! a fresh HOME downloads this server's hook binary (its SHA-256 checked), signs the
//! machine in through the device flow (approved here in a signed-in browser session),
//! registers the hooks of the agents whose directories exist and no others, and a hook
//! event then reaches the server. Run again it changes nothing; `--uninstall` undoes it;
//! a binary changed on the server after it was registered is refused.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::machine::HOOK_BIN;
use crate::common::*;
use crate::device_login::{browser_cookie, decide};

/// `curl -fsSL <ingest>/install.sh | sh -s -- <args>` on a machine whose only setting is
/// HOME (and a PATH with the system's tools), as a new laptop's shell would have.
fn run_install(server: &TestServer, home: &Path, args: &str) -> Child {
    let line = format!("curl -fsSL {}/install.sh | sh -s -- {args}", server.ingest);
    Command::new("sh")
        .args(["-c", &line])
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("SIGHTLINE_NO_FLUSHER", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(mut child: Child, mut printed: Vec<String>) -> (i32, String, String) {
    let mut status = None;
    wait_until(Duration::from_secs(120), "the install script to finish", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if let Some(stdout) = child.stdout.as_mut() {
        let mut rest = String::new();
        std::io::Read::read_to_string(stdout, &mut rest).unwrap();
        printed.push(rest);
    }
    let mut errors = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut errors).unwrap();
    (status.unwrap().code().unwrap_or(-1), printed.join("\n"), errors)
}

/// Runs the script that needs no sign-in (already signed in, or `--uninstall`).
fn run_to_end(server: &TestServer, home: &Path, args: &str) -> (i32, String, String) {
    finish(run_install(server, home, args), Vec::new())
}

/// Every file under `dir` with its bytes, to compare a machine before and after.
fn files_under(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn one_line_installs_signs_in_registers_found_agents_and_ships_and_undoes_itself() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "ada@example.com", "MEMBER");
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // Claude Code and Codex have run on this machine; Gemini CLI has not.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();

    let mut child = run_install(&server, home, "");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let code = loop {
        let line = lines.next().expect("the script printed no device code").unwrap();
        printed.push(line.clone());
        if let Some(code) = line.strip_prefix("and enter the code: ") {
            break code.trim().to_string();
        }
    };
    let drained = std::thread::spawn(move || lines.map(Result::unwrap).collect::<Vec<_>>());
    let cookie = browser_cookie(&server, "ada@example.com");
    let (status, body) = decide(&server, &cookie, &code, "approve");
    assert_eq!(status, 200, "{body}");
    printed.extend(drained.join().unwrap());
    let (exit, out, errors) = finish(child, printed);
    assert_eq!(exit, 0, "{out}\n{errors}");

    // The binary is the server's, byte for byte, where the script said.
    let installed = home.join(".local/bin/sightline");
    let served = std::fs::read(HOOK_BIN).unwrap();
    assert_eq!(std::fs::read(&installed).unwrap(), served, "the built-in binary is sightline-hook beside the server");
    let digest = sha256_hex(&served);
    assert!(out.contains(&format!("installed {} (sha256 {digest})", installed.display())), "{out}");
    assert!(out.contains("found claude_code") && out.contains("found codex") && !out.contains("gemini"), "{out}");
    let claude = std::fs::read_to_string(home.join(".claude/settings.json")).unwrap();
    assert!(claude.contains(&format!("{} hook SessionStart --agent claude_code", installed.display())), "{claude}");
    assert!(std::fs::read_to_string(home.join(".codex/hooks.json")).unwrap().contains("--agent codex"));
    assert!(!home.join(".gemini").exists(), "no agent directory is made for an agent that is not here");
    let client: toml::Table =
        std::fs::read_to_string(home.join(".config/sightline/client.toml")).unwrap().parse().unwrap();
    assert_eq!(client["server"].as_str(), Some(server.ingest.as_str()));
    let hook_token = client["token"].as_str().unwrap().to_string();

    // A hook event, as Claude Code would run the registered command, reaches the server.
    let session = "0b7c2f4e-9d1a-4e3b-8c5d-6f7a8b9c0d1e";
    let payload = json!({"session_id": session, "hook_event_name": "SessionStart", "source": "startup", "cwd": "/tmp"});
    let run = |args: &[&str], stdin: Option<&str>| {
        let mut command = Command::new(&installed);
        command.args(args).env_clear().env("HOME", home).env("SIGHTLINE_NO_FLUSHER", "1");
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        if let Some(text) = stdin {
            std::io::Write::write_all(child.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
        }
        drop(child.stdin.take());
        child.wait_with_output().unwrap()
    };
    assert_eq!(
        run(&["hook", "SessionStart", "--agent", "claude_code"], Some(&payload.to_string())).status.code(),
        Some(0)
    );
    let flushed = run(&["flusher", "--once"], None);
    assert!(flushed.status.success(), "{}", stderr(&flushed));
    let (status, view) = get_auth(&format!("{}/v1/me/sessions/claude_code/{session}", server.ingest), &hook_token);
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["event_count"].as_i64(), Some(1), "{view}");

    // Run again: nothing asked, nothing changed.
    let before = files_under(home);
    let (exit, again, errors) = run_to_end(&server, home, "");
    assert_eq!(exit, 0, "{again}\n{errors}");
    assert!(again.contains("is already this server's hook binary") && again.contains("already logged in"), "{again}");
    assert!(!again.contains("enter the code"), "{again}");
    assert_eq!(files_under(home).keys().collect::<Vec<_>>(), before.keys().collect::<Vec<_>>());
    for (path, bytes) in &before {
        if !path.starts_with(".local/share/sightline") {
            assert_eq!(&files_under(home)[path], bytes, "{} changed on the second run", path.display());
        }
    }

    // --uninstall: the hooks, the login and the binary are gone; the person's files stay.
    let (exit, undone, errors) = run_to_end(&server, home, "--uninstall");
    assert_eq!(exit, 0, "{undone}\n{errors}");
    assert!(!installed.exists(), "{undone}");
    assert!(!home.join(".config/sightline/client.toml").exists());
    let claude = std::fs::read_to_string(home.join(".claude/settings.json")).unwrap_or_default();
    assert!(!claude.contains("sightline"), "{claude}");
    let codex = std::fs::read_to_string(home.join(".codex/hooks.json")).unwrap_or_default();
    assert!(!codex.contains("sightline"), "{codex}");
    assert!(home.join(".claude").is_dir() && home.join(".codex").is_dir());
    let (exit, twice, _) = run_to_end(&server, home, "--uninstall");
    assert_eq!((exit, twice.contains("nothing to undo")), (0, true), "{twice}");
}

#[test]
fn a_binary_changed_after_it_was_registered_is_refused_and_nothing_is_installed() {
    let server = TestServer::spawn();
    // The operator registers a hook binary for this platform, as from a release.
    let added = sightline(&["hook-binaries", "add", HOOK_BIN, "--data-dir", server.data_dir.to_str().unwrap()]);
    assert!(added.status.success(), "{}", stderr(&added));
    let registered = stdout(&added);
    let platform = sightline_platform();
    assert!(registered.contains(&format!("for {platform} (version {})", env!("CARGO_PKG_VERSION"))), "{registered}");
    let listed = stdout(&sightline(&["hook-binaries", "list", "--data-dir", server.data_dir.to_str().unwrap()]));
    assert!(
        listed.contains(&sha256_hex(&std::fs::read(HOOK_BIN).unwrap())) && listed.contains("registered"),
        "{listed}"
    );

    // Anyone may fetch the digest and the binary; a platform the server lacks is named.
    let (status, sum) = get_text(&format!("{}/install/hook/{platform}.sha256", server.ingest));
    assert_eq!(status, 200);
    assert_eq!(sum, format!("{}  sightline-hook\n", sha256_hex(&std::fs::read(HOOK_BIN).unwrap())));
    let (status, missing) = get_text(&format!("{}/install/hook/windows-x86_64", server.ingest));
    assert_eq!(status, 404, "{missing}");
    assert!(
        missing.contains("no hook binary for windows-x86_64") && missing.contains("hook-binaries add"),
        "{missing}"
    );
    assert_eq!(get_text(&format!("{}/install/hook/plan9-mips", server.ingest)).0, 404);

    // Then the file on the server changes (one byte), and a new machine runs the line.
    let stored = server.data_dir.join(format!("bin/sightline-hook-{platform}"));
    let mut bytes = std::fs::read(&stored).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    std::fs::write(&stored, bytes).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (exit, out, errors) = run_to_end(&server, home.path(), "");
    assert_ne!(exit, 0, "{out}");
    assert!(errors.contains("SHA-256") && errors.contains("nothing was installed"), "{errors}");
    assert!(!home.path().join(".local/bin/sightline").exists());
    assert!(!home.path().join(".local/bin/sightline.partial").exists());
}

fn sightline_platform() -> String {
    let os = if cfg!(target_os = "macos") { "macos" } else { "linux" };
    let arch = if cfg!(target_arch = "aarch64") { "aarch64" } else { "x86_64" };
    format!("{os}-{arch}")
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn get_text(url: &str) -> (u16, String) {
    let response = agent().get(url).call().unwrap();
    (response.status().as_u16(), response.into_body().read_to_string().unwrap())
}

/// The script names the server by `auth.ingest_public_url`, else by the address
/// `/install` shows; the `Host` it was fetched with only where the administrator turned
/// `auth.install_script_uses_host` on (behind a proxy, the web app's own host is often a
/// loopback a laptop cannot reach). A `Host` that is not an address is never written into
/// a shell script. (Issue 52: a client sets its `Host`.)
#[test]
fn the_script_names_the_configured_address_and_the_host_only_when_allowed() {
    let fetch = |server: &TestServer, host: &str| {
        let response = agent().get(format!("{}/install.sh", server.ingest)).header("Host", host).call().unwrap();
        assert_eq!(response.status().as_u16(), 200);
        response.into_body().read_to_string().unwrap()
    };
    let server = TestServer::spawn();
    let shown = format!("\nSERVER='{}'\n", server.ingest);
    let spoofed = fetch(&server, "attacker.example:4000");
    assert!(spoofed.contains(&shown) && !spoofed.contains("attacker.example"), "the Host is not trusted by default");

    let trusting = TestServer::spawn_with_env(&[("SIGHTLINE_AUTH_INSTALL_SCRIPT_USES_HOST", "true")]);
    assert!(fetch(&trusting, "sightline.internal:4000").contains("\nSERVER='http://sightline.internal:4000'\n"));
    let odd = fetch(&trusting, "x'$(reboot)");
    assert!(odd.contains(&format!("\nSERVER='{}'\n", trusting.ingest)), "falls back to the configured address");
    assert!(!odd.contains("reboot"));

    let configured = TestServer::spawn_with_env(&[("SIGHTLINE_AUTH_INGEST_PUBLIC_URL", "https://ingest.example.com")]);
    assert!(fetch(&configured, "attacker.example").contains("\nSERVER='https://ingest.example.com'\n"));
}
