//! `GET /install.sh` and the hook binaries it downloads (`GET /install/hook/<platform>`
//! and `…/<platform>.sha256`), on the ingest listener, which developer machines reach:
//! the one line on `/install` (`curl -fsSL <ingest>/install.sh | sh`). The script names
//! the server by `auth.ingest_public_url`, else by the address `/install` shows, or, only
//! where `auth.install_script_uses_host` says so, by the `Host` it was fetched with.
//!
//! Invariants: open to anyone who reaches the listener, like a release download (the
//! binary holds no secret; signing in is what needs a person); only a `Host` made of a
//! name or address and a port is written into the script; a binary is served with the digest
//! recorded when it was added (`crate::hook_binaries`), never one computed from the file
//! as it is now, so the script refuses a file changed since.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::hook_binaries;
use crate::http::errors::AppError;
use crate::model::platform::Platform;
use crate::state::AppState;

#[derive(Template)]
#[template(path = "install/install.sh", escape = "none")]
struct InstallScript {
    server: String,
    server_quoted: String,
}

/// The install script, with this server's ingest address in it: `auth.ingest_public_url`
/// when set; else, where the administrator allowed it (`auth.install_script_uses_host`),
/// the address the script was fetched from (its `Host`, one the machine can reach where
/// the web app's host may be a proxy's loopback); else the address `/install` shows. A
/// `Host` is the client's to set: trusted by default, a link that fetches the script with
/// another `Host` would send a developer's sessions to another server.
pub async fn script(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Result<Response, AppError> {
    let host = headers.get(header::HOST).and_then(|value| value.to_str().ok()).filter(|host| is_authority(host));
    let auth = &state.config.auth;
    let server = match host {
        Some(host) if auth.ingest_public_url.is_empty() && auth.install_script_uses_host => {
            let tls = matches!(state.config.listen.tls_files(), Ok(Some(_)));
            format!("{}://{host}", if tls { "https" } else { "http" })
        }
        _ => super::install::ingest_url(&state),
    };
    let script = InstallScript { server_quoted: single_quoted(&server), server }
        .render()
        .map_err(|err| AppError::Internal(format!("install.sh template: {err}")))?;
    Ok(text(script, "text/x-shellscript; charset=utf-8"))
}

/// `<platform>` (the binary) or `<platform>.sha256` (its digest, in `sha256sum`'s format).
pub async fn hook_binary(State(state): State<Arc<AppState>>, Path(name): Path<String>) -> Result<Response, AppError> {
    let (platform_name, digest_only) = match name.strip_suffix(".sha256") {
        Some(platform) => (platform, true),
        None => (name.as_str(), false),
    };
    let data_dir = state.config.data_dir.clone();
    let listed = tokio::task::spawn_blocking(move || hook_binaries::list(&data_dir))
        .await
        .map_err(|err| AppError::Internal(format!("listing hook binaries: {err}")))?
        .map_err(|err| AppError::Internal(format!("listing hook binaries: {err:#}")))?;
    let available = || listed.iter().map(|b| b.platform.to_string()).collect::<Vec<_>>().join(", ");
    let Some(platform) = Platform::parse(platform_name) else {
        return Err(AppError::Unknown(format!(
            "{platform_name:?} is not a platform; this server has hook binaries for: {}",
            available()
        )));
    };
    let Some(binary) = listed.iter().find(|b| b.platform == platform) else {
        return Err(AppError::Unknown(format!(
            "this server has no hook binary for {platform} (it has: {}); an administrator adds one from a release with \
             `sightline hook-binaries add <file>`",
            available()
        )));
    };
    let file_name = platform.hook_program_name();
    if digest_only {
        return Ok(text(format!("{}  {file_name}\n", binary.sha256), "text/plain; charset=utf-8"));
    }
    let bytes = tokio::fs::read(&binary.path)
        .await
        .map_err(|err| AppError::Internal(format!("reading {}: {err}", binary.path.display())))?;
    let mut response = (StatusCode::OK, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{file_name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

/// A `Host` header fit to be written into a script: a name or address and a port.
fn is_authority(host: &str) -> bool {
    !host.is_empty() && host.len() <= 255 && host.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
}

/// A word as a POSIX shell reads it literally.
fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn text(body: String, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
