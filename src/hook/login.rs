//! `sightline login`: signs this machine in and stores a hook token for it.
//!
//! The default is the device flow (RFC 8628): print a code, poll while the person
//! approves it at `/device` in a browser (which shows them this host's name and where the
//! request came from), and receive a hook token labelled with this host's name. Without
//! a browser, `--email` with `--password-stdin` uses the password grant instead, trades
//! the access token for a hook token and revokes the sign-in. Either way the machine
//! keeps only the hook token, which works on ingest routes and nowhere else.

use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use super::local::{self, ClientConfig};
use crate::model::oauth::{CLIENT_ID, DEVICE_GRANT};

/// An answer's status and JSON body (or `Null` if it was not JSON).
fn post_form(agent: &ureq::Agent, url: &str, form: &[(&str, &str)]) -> anyhow::Result<(u16, Value)> {
    let mut response =
        agent.post(url).send_form(form.iter().copied()).with_context(|| format!("cannot reach {url}"))?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

fn oauth_failure(what: &str, status: u16, body: &Value) -> anyhow::Error {
    let code = body["error"].as_str().unwrap_or("unexpected answer");
    let description = body["error_description"].as_str().unwrap_or("");
    anyhow::anyhow!("{what} failed ({status} {code}): {description}")
}

/// The machine's name for the hook token's label: Linux's `/proc`, then `HOSTNAME`,
/// Windows' `COMPUTERNAME`, then the `hostname` command (macOS, where neither variable
/// is exported).
fn host_name() -> String {
    use crate::config::machine::MachineVariable;
    let proc_name =
        || if cfg!(target_os = "linux") { std::fs::read_to_string("/proc/sys/kernel/hostname").ok() } else { None };
    let command = || {
        let out = std::process::Command::new("hostname").stdin(std::process::Stdio::null()).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    [proc_name(), MachineVariable::Hostname.text(), MachineVariable::ComputerName.text()]
        .into_iter()
        .flatten()
        .chain(std::iter::once_with(command).flatten())
        .map(|name| name.trim().to_string())
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown host".into())
}

/// The device flow: returns the token answer once approved.
pub fn device_sign_in(agent: &ureq::Agent, server: &str) -> anyhow::Result<Value> {
    let label = hook_token_label();
    let (status, started) =
        post_form(agent, &format!("{server}/oauth/device/code"), &[("client_id", CLIENT_ID), ("label", &label)])?;
    if status != 200 {
        return Err(oauth_failure("starting the device sign-in", status, &started));
    }
    let field = |name: &str| started[name].as_str().map(str::to_string).context(format!("the server sent no {name}"));
    let (device_code, user_code, uri) = (field("device_code")?, field("user_code")?, field("verification_uri")?);
    let mut interval = started["interval"].as_u64().unwrap_or(5).max(1);
    println!("Open this page in a browser where you are signed in to Sightline:");
    println!("  {uri}");
    println!("and enter the code: {user_code}");
    println!("Waiting for approval…");
    loop {
        std::thread::sleep(Duration::from_secs(interval));
        let (status, answer) = post_form(
            agent,
            &format!("{server}/oauth/device/token"),
            &[("grant_type", DEVICE_GRANT), ("device_code", &device_code), ("client_id", CLIENT_ID)],
        )?;
        if status == 200 {
            return Ok(answer);
        }
        match answer["error"].as_str() {
            Some("authorization_pending") => {}
            // RFC 8628 §3.5: wait 5 seconds longer from now on.
            Some("slow_down") => interval += 5,
            Some("access_denied") => bail!("the sign-in was denied in the browser"),
            Some("expired_token") => bail!("the code expired before it was approved; run `sightline login` again"),
            _ => return Err(oauth_failure("the device sign-in", status, &answer)),
        }
    }
}

/// The password grant, for machines without a browser.
pub fn password_sign_in(agent: &ureq::Agent, server: &str, email: &str, password: &str) -> anyhow::Result<Value> {
    let (status, answer) = post_form(
        agent,
        &format!("{server}/oauth/token"),
        &[("grant_type", "password"), ("username", email), ("password", password)],
    )?;
    if status != 200 {
        return Err(oauth_failure("signing in", status, &answer));
    }
    Ok(answer)
}

/// The label of this machine's hook token.
fn hook_token_label() -> String {
    format!("{} (sightline login)", host_name())
}

/// Saves the hook token of a token answer: the device flow's answer is one already
/// (`"scope": "hook"`); a sign-in's access token (the password grant, or a server from
/// before issue 52) is traded for one and the sign-in revoked. Returns where the
/// credentials were written.
pub fn store_hook_token(agent: &ureq::Agent, server: &str, tokens: &Value) -> anyhow::Result<std::path::PathBuf> {
    let access = tokens["access_token"].as_str().context("the server sent no access_token")?;
    if tokens["scope"].as_str() == Some("hook") {
        let config = ClientConfig { server: server.to_string(), token: access.to_string() };
        return Ok(local::save_config(&config)?);
    }
    let label = hook_token_label();
    let mut response = agent
        .post(format!("{server}/api/me/hook-tokens"))
        .header("Authorization", format!("Bearer {access}"))
        .header("Content-Type", "application/json")
        .send(serde_json::json!({ "label": label }).to_string())
        .with_context(|| format!("cannot reach {server}"))?;
    let status = response.status().as_u16();
    let body: Value =
        serde_json::from_str(&response.body_mut().read_to_string().unwrap_or_default()).unwrap_or(Value::Null);
    let hook_token = match body["token"].as_str() {
        Some(token) if status == 201 => token.to_string(),
        _ => bail!("the server did not make a hook token ({status}): {body}"),
    };
    let path = local::save_config(&ClientConfig { server: server.to_string(), token: hook_token })?;
    if let Some(refresh) = tokens["refresh_token"].as_str() {
        // Best effort: the hook token is saved either way.
        let _ = post_form(agent, &format!("{server}/oauth/revoke"), &[("token", refresh)]);
    }
    Ok(path)
}
