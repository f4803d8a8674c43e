//! One name per tool whatever reports it. An agent's hook and its OpenTelemetry export
//! may name one tool differently (Codex's hooks call its shell tool `Bash`, for hook
//! matchers written for Claude Code; its export and transcript call it `exec_command`,
//! and older releases `shell`, `shell_command` or `local_shell`), so the same call would
//! be two tools in every breakdown, and in "both" whichever source arrived first would
//! name it. Ingest stores the canonical name of this table (`docs/wire-contract.md`,
//! "Tool names"); a name not in it is kept as sent.
//!
//! Invariant: a canonical name maps to itself, so a stored name validated again (a
//! replay, an import) is unchanged.

use super::AgentType;

/// The canonical name of `tool` (the part after `<agent>:`) for `agent`, if the table
/// renames it.
fn canonical(agent: AgentType, tool: &str) -> Option<&'static str> {
    match (agent, tool) {
        (AgentType::Codex, "Bash" | "shell" | "shell_command" | "local_shell" | "exec_command" | "container.exec") => {
            Some("shell")
        }
        _ => None,
    }
}

/// `name` (`<agent>:<tool>`) with its tool under the table's canonical name.
pub fn canonical_name(agent: AgentType, name: String) -> String {
    match name.split_once(':') {
        Some((prefix, tool)) => match canonical(agent, tool) {
            Some(canonical) if canonical != tool => format!("{prefix}:{canonical}"),
            _ => name,
        },
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codexs_shell_tool_is_one_name_whatever_the_source() {
        for sent in ["codex:Bash", "codex:exec_command", "codex:shell", "codex:shell_command", "codex:local_shell"] {
            assert_eq!(canonical_name(AgentType::Codex, sent.to_string()), "codex:shell", "{sent}");
        }
        assert_eq!(canonical_name(AgentType::Codex, "codex:apply_patch".into()), "codex:apply_patch");
        assert_eq!(canonical_name(AgentType::Codex, "codex:mcp__github__search".into()), "codex:mcp__github__search");
        // Another agent's Bash is its own.
        assert_eq!(canonical_name(AgentType::ClaudeCode, "claude_code:Bash".into()), "claude_code:Bash");
    }

    #[test]
    fn a_canonical_name_maps_to_itself() {
        for agent in AgentType::ALL {
            for tool in ["Bash", "shell", "exec_command", "apply_patch", "Edit", "run_shell_command"] {
                let once = canonical_name(*agent, format!("{}:{tool}", agent.as_str()));
                assert_eq!(canonical_name(*agent, once.clone()), once);
            }
        }
    }
}
