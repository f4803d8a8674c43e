//! `/install`: how a developer connects an agent to this server, with the server's
//! addresses filled in: the one line that installs the hook from this server
//! (`install.sh`, `web::install_script`), the per-agent lines that sign the machine in
//! and register the hooks (with what each changes), the device sign-in it starts, the alternative of
//! a hook token, and how to check and undo it; and the settings-only alternative, the
//! agents' own OpenTelemetry export (`docs/otel.md`), per agent, with a button that makes
//! the caller an OTLP token and fills it in.
//!
//! Invariants: shows nothing about anyone; open to every signed-in person (the login
//! page for nobody), since every one of them may connect their own agents; a token made
//! here is the caller's own, shown once and never stored in the clear.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::Response;

use super::login::render;
use crate::auth::tokens::{self, TokenKind};
use crate::http::errors::PageError;
use crate::state::AppState;
use crate::state::caller::PageCaller;

/// One agent's instructions.
pub struct AgentSteps {
    pub id: &'static str,
    pub name: &'static str,
    pub changes: &'static str,
    pub command: String,
}

/// What each adapter's `install` writes (docs/agents/README.md).
const AGENTS: [(&str, &str, &str); 7] = [
    ("claude_code", "Claude Code", "adds hooks to $CLAUDE_CONFIG_DIR/settings.json (default ~/.claude/settings.json)"),
    ("codex", "Codex", "adds hooks to $CODEX_HOME/hooks.json (default ~/.codex/hooks.json)"),
    ("gemini_cli", "Gemini CLI", "adds hooks to ~/.gemini/settings.json"),
    (
        "copilot_cli",
        "Copilot CLI",
        "writes its own file $COPILOT_HOME/hooks/sightline.json (default ~/.copilot/hooks/sightline.json)",
    ),
    ("droid", "Droid", "adds hooks to ~/.factory/settings.json, or ~/.factory/hooks.json when that file exists"),
    (
        "opencode",
        "OpenCode",
        "writes the plugin $XDG_CONFIG_HOME/opencode/plugins/sightline.js (default ~/.config/opencode/plugins/sightline.js)",
    ),
    ("cline", "Cline", "writes 9 hook scripts in <Documents>/Cline/Hooks/"),
];

/// One agent's settings for its own OpenTelemetry export to this server.
pub struct OtlpSettings {
    pub id: &'static str,
    pub name: &'static str,
    /// Where the settings go.
    pub file: &'static str,
    pub settings: String,
}

/// The settings of each agent that exports OTLP, with this server's address and `token`.
fn otlp_settings(ingest_url: &str, prefix: &str, token: &str) -> Vec<OtlpSettings> {
    vec![
        OtlpSettings {
            id: "otlp-claude_code",
            name: "Claude Code",
            file: "managed settings (or ~/.claude/settings.json), its env block",
            settings: format!(
                "{{\n  \"env\": {{\n    \"CLAUDE_CODE_ENABLE_TELEMETRY\": \"1\",\n    \"OTEL_LOGS_EXPORTER\": \"otlp\",\n    \
                 \"OTEL_METRICS_EXPORTER\": \"otlp\",\n    \"OTEL_EXPORTER_OTLP_PROTOCOL\": \"http/protobuf\",\n    \
                 \"OTEL_EXPORTER_OTLP_ENDPOINT\": \"{ingest_url}\",\n    \
                 \"OTEL_EXPORTER_OTLP_HEADERS\": \"Authorization=Bearer {token}\"\n  }}\n}}"
            ),
        },
        OtlpSettings {
            id: "otlp-codex",
            name: "Codex",
            file: "~/.codex/config.toml (the endpoint is used as written, with its path)",
            settings: format!(
                "[otel]\nexporter = {{ otlp-http = {{ endpoint = \"{ingest_url}{prefix}/v1/logs\", protocol = \"binary\", \
                 headers = {{ \"Authorization\" = \"Bearer {token}\" }} }} }}"
            ),
        },
        OtlpSettings {
            id: "otlp-gemini_cli",
            name: "Gemini CLI",
            file: "~/.gemini/settings.json, and the header in the environment",
            settings: format!(
                "{{\n  \"telemetry\": {{\n    \"enabled\": true,\n    \"target\": \"local\",\n    \
                 \"otlpEndpoint\": \"{ingest_url}\",\n    \"otlpProtocol\": \"http\",\n    \"logPrompts\": false\n  }}\n}}\n\
                 export OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer {token}\""
            ),
        },
        OtlpSettings {
            id: "otlp-qwen_code",
            name: "Qwen Code",
            file: "~/.qwen/settings.json, and the header in the environment",
            settings: format!(
                "{{\n  \"telemetry\": {{\n    \"enabled\": true,\n    \"target\": \"local\",\n    \
                 \"otlpEndpoint\": \"{ingest_url}\",\n    \"otlpProtocol\": \"http\",\n    \"logPrompts\": false\n  }}\n}}\n\
                 export OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer {token}\""
            ),
        },
        OtlpSettings {
            id: "otlp-copilot_cli",
            name: "GitHub Copilot (CLI and VS Code)",
            file: "the environment of the copilot CLI, or of VS Code (with github.copilot.chat.otel.enabled)",
            settings: format!(
                "export COPILOT_OTEL_ENABLED=true\n\
                 export OTEL_EXPORTER_OTLP_ENDPOINT=\"{ingest_url}{prefix}\"\n\
                 export OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer {token}\""
            ),
        },
        OtlpSettings {
            id: "otlp-opencode",
            name: "opencode",
            file: "~/.config/opencode/opencode.json, and the endpoint in the environment",
            settings: format!(
                "{{\n  \"experimental\": {{ \"openTelemetry\": true }}\n}}\n\
                 export OTEL_EXPORTER_OTLP_ENDPOINT=\"{ingest_url}{prefix}\"\n\
                 export OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer {token}\""
            ),
        },
    ]
}

#[derive(Template)]
#[template(path = "web/install.html")]
struct InstallPage {
    nav_role: &'static str,
    ingest_url: String,
    /// True when the address was derived rather than configured (the page says how to set it).
    derived: bool,
    web_url: String,
    agents: Vec<AgentSteps>,
    /// The platforms this server hands the hook binary out for.
    platforms: Vec<String>,
    otlp: Vec<OtlpSettings>,
    /// An OTLP token just made for the caller (shown once), filled into the settings.
    new_token: Option<String>,
}

/// The ingest listener as a developer machine reaches it: `auth.ingest_public_url`, or
/// else the web app's public scheme and host with the ingest listener's port.
pub fn ingest_url(state: &AppState) -> String {
    let configured = state.config.auth.ingest_public_url.trim_end_matches('/');
    if !configured.is_empty() {
        return configured.to_string();
    }
    let origin = &state.web_origin;
    let (scheme, rest) = origin.split_once("://").unwrap_or(("http", origin));
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = match authority.strip_prefix('[') {
        // An IPv6 literal keeps its brackets.
        Some(inner) => format!("[{}]", inner.split(']').next().unwrap_or(inner)),
        None => authority.split(':').next().unwrap_or(authority).to_string(),
    };
    format!("{scheme}://{host}:{}", state.ingest_addr.port())
}

pub async fn page(State(state): State<Arc<AppState>>, PageCaller(caller): PageCaller) -> Result<Response, PageError> {
    Ok(render(&install_page(&state, caller.role.as_str(), None)))
}

/// `POST /install/otlp-token`: makes the caller an OTLP token and shows the page with it
/// filled into every agent's settings (once: only its digest is stored).
pub async fn new_otlp_token(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
) -> Result<Response, PageError> {
    let (user_id, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let token = state
        .write(move |tx| tokens::create(tx, &user_id, TokenKind::Otlp, Some("OTLP settings (from /install)"), now_ms))
        .await?;
    let mut response = render(&install_page(&state, caller.role.as_str(), Some(token.secret)));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

fn install_page(state: &AppState, nav_role: &'static str, new_token: Option<String>) -> InstallPage {
    let ingest_url = ingest_url(state);
    let agents = AGENTS
        .iter()
        .map(|(id, name, changes)| AgentSteps {
            id,
            name,
            changes,
            command: format!("sightline login --server {ingest_url} && sightline install --agent {id}"),
        })
        .collect();
    let token = new_token.clone().unwrap_or_else(|| "<token>".to_string());
    let otlp = otlp_settings(&ingest_url, &state.config.ingest.otlp_path_prefix, &token);
    InstallPage {
        nav_role,
        derived: state.config.auth.ingest_public_url.is_empty(),
        web_url: state.web_origin.clone(),
        ingest_url,
        agents,
        platforms: crate::hook_binaries::list(&state.config.data_dir)
            .map(|binaries| binaries.iter().map(|b| b.platform.to_string()).collect())
            .unwrap_or_default(),
        otlp,
        new_token,
    }
}
