//! `/install`: how a developer connects an agent to this server, with the server's
//! addresses filled in: the one line that signs the machine in and registers the hooks
//! (per agent, with what it changes), the device sign-in it starts, the alternative of
//! a hook token, and how to check and undo it.
//!
//! Invariants: shows nothing about anyone; open to every signed-in person (the login
//! page for nobody), since every one of them may connect their own agents.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;

use super::login::render;
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

#[derive(Template)]
#[template(path = "web/install.html")]
struct InstallPage {
    nav_role: &'static str,
    ingest_url: String,
    /// True when the address was derived rather than configured (the page says how to set it).
    derived: bool,
    web_url: String,
    agents: Vec<AgentSteps>,
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
    let ingest_url = ingest_url(&state);
    let agents = AGENTS
        .iter()
        .map(|(id, name, changes)| AgentSteps {
            id,
            name,
            changes,
            command: format!("sightline login --server {ingest_url} && sightline install --agent {id}"),
        })
        .collect();
    let derived = state.config.auth.ingest_public_url.is_empty();
    Ok(render(&InstallPage {
        nav_role: caller.role.as_str(),
        ingest_url,
        derived,
        web_url: state.web_origin.clone(),
        agents,
    }))
}
