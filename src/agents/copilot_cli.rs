//! GitHub Copilot CLI's records: its tools as actions.

pub fn tool_action(tool: &str) -> &'static str {
    match tool {
        "bash" | "powershell" | "read_bash" | "write_bash" | "stop_bash" | "list_bash" => "exec",
        "read_powershell" | "write_powershell" | "stop_powershell" | "list_powershell" => "exec",
        "view" | "show_file" => "read",
        "create" => "write",
        "edit" | "apply_patch" | "str_replace_editor" => "edit",
        "grep" | "rg" | "glob" => "search",
        "web_fetch" | "web_search" => "fetch",
        "task" | "read_agent" | "list_agents" | "write_agent" => "delegate",
        "update_todo" | "exit_plan_mode" => "plan",
        // MCP tools are named `<server>-<tool>`; built-in names use underscores.
        _ if tool.contains('-') => "mcp",
        _ => "other",
    }
}
