//! Whether a person sits at the session, from the command line that started the agent:
//! some agents' hook payloads never say (Gemini CLI's, Claude Code's), but `gemini -p` and
//! `claude -p` are runs nobody sits at, as the same agents' OpenTelemetry exports say
//! (`interactive` = false, `terminal.type` = `non-interactive`). On Linux the hook reads
//! the command lines of its ancestors in `/proc` (the agents run hooks through a shell,
//! and Gemini CLI relaunches itself with the same arguments); elsewhere it cannot tell.
//!
//! Invariant: only a flag given to the agent's own program counts, never another
//! program's, and nothing read here leaves the machine.

/// How many processes up the hook looks.
const ANCESTORS: usize = 5;

/// The command lines of the hook's ancestors, nearest first (none off Linux).
pub fn ancestors_args() -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut pid = std::process::id();
    for _ in 0..ANCESTORS {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { break };
        // `pid (comm) state ppid …`: the command name may hold spaces and parentheses.
        let Some(parent) = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)) else { break };
        let Ok(parent) = parent.parse::<u32>() else { break };
        if parent <= 1 {
            break;
        }
        pid = parent;
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { break };
        found.push(
            cmdline
                .split(|byte| *byte == 0)
                .filter(|arg| !arg.is_empty())
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect(),
        );
    }
    found
}

/// Whether one of `ancestors` runs the agent (`is_agent` recognises its program among
/// the arguments before the flags: node, node's own flags, then the script) with one of
/// `flags` (`-p`, or `--prompt` and `--prompt=…`).
pub fn started_with(ancestors: &[Vec<String>], is_agent: fn(&str) -> bool, flags: &[&str]) -> bool {
    let is_flag = |arg: &str| {
        flags.iter().any(|flag| arg == *flag || (flag.starts_with("--") && arg.starts_with(&format!("{flag}="))))
    };
    ancestors.iter().any(|args| {
        let program = args.iter().take_while(|arg| !is_flag(arg)).any(|arg| is_agent(arg));
        program && args.iter().skip(1).any(|arg| is_flag(arg))
    })
}

/// Marks every event of a run nobody sits at as `CI` (a harness's `SIGHTLINE_RUN_KIND`
/// is stamped after, and wins).
pub fn stamp_ci(events: &mut [crate::model::wire::Draft]) {
    for event in events {
        event.set_run_kind(crate::model::RunKind::Ci);
    }
}
