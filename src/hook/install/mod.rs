//! `install` and `uninstall`: registering the hook CLI in an agent's own configuration.
//!
//! Invariants: installing twice changes nothing the second time; the person's own hooks,
//! key order and indentation are kept; every edited file is backed up first (under
//! `$XDG_DATA_HOME/sightline/backups/<agent>/`); `uninstall` removes exactly the entries
//! whose command is ours (`<path>/sightline hook <event> --agent <agent>`), and when what
//! remains equals the file as it was before the first install, that file is restored
//! byte for byte; a file that is not valid JSON is refused, never overwritten.

mod json_file;
mod owned;
mod targets;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::hook::local;
use crate::model::AgentType;
use json_file::{Layout, read_object, write_atomically};

/// How an agent lists hook commands under each event name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"<Event>": [{"matcher": …, "hooks": [{"type": "command", "command": …, "timeout": …}]}]}`
    /// (Claude Code, Gemini CLI, Droid, Codex).
    Grouped,
    /// `{"<event>": [{"type": "command", "bash": …, "timeoutSec": …}]}` (Copilot CLI).
    Flat,
}

/// A JSON settings file with a hooks object somewhere in it.
#[derive(Debug, Clone)]
pub struct JsonHooks {
    pub path: PathBuf,
    /// Keys leading from the root to the hooks object (`["hooks"]`).
    pub hooks_at: &'static [&'static str],
    pub shape: Shape,
    /// The agent's event names we register, as `sightline hook <event>` receives them.
    pub events: &'static [&'static str],
    /// Root keys a new file needs (Copilot's `"version": 1`).
    pub new_file_root: fn() -> Value,
    /// Our entry for one event, given the command to run.
    pub entry: fn(event: &str, command: &str) -> Value,
}

/// What install or uninstall did, for the person to read.
#[derive(Debug, Default)]
pub struct Outcome {
    pub lines: Vec<String>,
}

pub(crate) fn our_program() -> String {
    shell_quote(&our_program_path())
}

pub(crate) fn our_program_path() -> String {
    std::env::current_exe().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| "sightline".into())
}

/// Quotes a word for a POSIX shell only when it needs it.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@%".contains(&b)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

pub fn hook_command(program: &str, agent: AgentType, event: &str) -> String {
    format!("{program} hook {event} --agent {}", agent.as_str())
}

/// Whether a command string is one `install` wrote for this agent, at any binary path
/// (quoted or not), so entries from an older install location are found too.
pub fn is_our_command(command: &str, agent: AgentType) -> bool {
    let command = command.trim().trim_end_matches("|| true").trim_end();
    let mut tail = command.rsplitn(5, char::is_whitespace);
    let (Some(named), Some(flag), Some(_event), Some(verb), Some(program)) =
        (tail.next(), tail.next(), tail.next(), tail.next(), tail.next())
    else {
        return false;
    };
    let program = program.trim();
    let program = program.strip_prefix('\'').and_then(|p| p.strip_suffix('\'')).unwrap_or(program);
    Path::new(program).file_name().is_some_and(|n| n == "sightline")
        && verb == "hook"
        && flag == "--agent"
        && AgentType::parse_lenient(named) == Some(agent)
}

fn backup_dir(agent: AgentType) -> PathBuf {
    local::data_dir().join("backups").join(agent.as_str())
}

fn state_path(agent: AgentType) -> PathBuf {
    local::data_dir().join("install").join(format!("{}.json", agent.as_str()))
}

/// Copies the file's current bytes into the backup directory and returns the copy's path.
fn back_up(agent: AgentType, path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let dir = backup_dir(agent);
    std::fs::create_dir_all(&dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "config".into());
    let backup = dir.join(format!("{}-{name}", crate::clock::system_now_ms()));
    std::fs::write(&backup, text).map_err(|e| anyhow::anyhow!("cannot write backup {}: {e}", backup.display()))?;
    Ok(backup)
}

/// What install remembers between install and uninstall: whether it created the file,
/// and the backup of the file from before our first entry.
fn load_state(agent: AgentType) -> Value {
    std::fs::read_to_string(state_path(agent)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(json!({}))
}

fn save_state(agent: AgentType, state: &Value) -> anyhow::Result<()> {
    write_atomically(&state_path(agent), &format!("{state:#}\n"))
}

/// The hooks object at `at` under `root`, created (or replacing a non-object) as needed.
/// `root` is an object: `read_object` refuses any other file, and every target's
/// `new_file_root` is one.
fn hooks_object<'v>(root: &'v mut Value, at: &[&str]) -> &'v mut Map<String, Value> {
    if !root.is_object() {
        *root = json!({});
    }
    let mut node = root;
    for key in at {
        // An object: the root above, then each node made one at the end of the loop body.
        let map = node.as_object_mut().expect("made an object");
        node = map.entry(key.to_string()).or_insert_with(|| json!({}));
        if !node.is_object() {
            *node = json!({});
        }
    }
    // The root or the last node, each made an object above.
    node.as_object_mut().expect("made an object")
}

fn entry_commands(entry: &Value, shape: Shape) -> Vec<&str> {
    match shape {
        Shape::Grouped => entry
            .get("hooks")
            .and_then(Value::as_array)
            .map(|hooks| hooks.iter().filter_map(|h| h.get("command").and_then(Value::as_str)).collect())
            .unwrap_or_default(),
        Shape::Flat => entry.get("bash").and_then(Value::as_str).into_iter().collect(),
    }
}

/// Rewrites our command in `entry` to `wanted` when it differs. Returns whether it did.
fn repoint(entry: &mut Value, shape: Shape, agent: AgentType, wanted: &str) -> bool {
    let key = match shape {
        Shape::Grouped => "command",
        Shape::Flat => "bash",
    };
    let mut changed = false;
    let mut fix = |hook: &mut Value| {
        if let Some(command) = hook.get(key).and_then(Value::as_str)
            && is_our_command(command, agent)
            && command != wanted
        {
            hook[key] = json!(wanted);
            changed = true;
        }
    };
    match shape {
        Shape::Grouped => entry.get_mut("hooks").and_then(Value::as_array_mut).into_iter().flatten().for_each(&mut fix),
        Shape::Flat => fix(entry),
    }
    changed
}

impl JsonHooks {
    /// Whether any entry under the hooks object runs our command for `agent`.
    fn contains_ours(&self, root: &Value, agent: AgentType) -> bool {
        let hooks = self.hooks_at.iter().try_fold(root, |node, key| node.get(*key)).and_then(Value::as_object);
        hooks.is_some_and(|hooks| {
            hooks
                .values()
                .filter_map(Value::as_array)
                .flatten()
                .any(|entry| entry_commands(entry, self.shape).iter().any(|c| is_our_command(c, agent)))
        })
    }

    /// Adds our command under every event that lacks it. Returns whether anything changed.
    fn add_ours(&self, root: &mut Value, agent: AgentType) -> bool {
        let program = our_program();
        let hooks = hooks_object(root, self.hooks_at);
        let mut changed = false;
        for event in self.events {
            let list = hooks.entry(event.to_string()).or_insert_with(|| json!([]));
            if !list.is_array() {
                *list = json!([]);
            }
            // Replaced by an empty array just above when it was anything else.
            let list = list.as_array_mut().expect("made an array");
            let wanted = hook_command(&program, agent, event);
            // An entry of ours from another binary path is pointed at this binary.
            for entry in list.iter_mut() {
                changed |= repoint(entry, self.shape, agent, &wanted);
            }
            let present = list.iter().any(|e| entry_commands(e, self.shape).iter().any(|c| is_our_command(c, agent)));
            if !present {
                list.push((self.entry)(event, &wanted));
                changed = true;
            }
        }
        changed
    }

    /// Removes our commands, and the groups, lists and hooks object that held nothing
    /// else. Returns how many commands were removed.
    fn remove_ours(&self, root: &mut Value, agent: AgentType) -> usize {
        let mut removed = 0;
        let Some(hooks) = self.hooks_at.iter().try_fold(&mut *root, |node, key| node.get_mut(*key)) else { return 0 };
        let Some(hooks) = hooks.as_object_mut() else { return 0 };
        for list in hooks.values_mut() {
            let Some(entries) = list.as_array_mut() else { continue };
            entries.retain_mut(|entry| match self.shape {
                Shape::Flat => {
                    let ours = entry_commands(entry, self.shape).iter().any(|c| is_our_command(c, agent));
                    removed += usize::from(ours);
                    !ours
                }
                Shape::Grouped => {
                    let Some(inner) = entry.get_mut("hooks").and_then(Value::as_array_mut) else { return true };
                    let before = inner.len();
                    inner.retain(|h| {
                        !h.get("command").and_then(Value::as_str).is_some_and(|c| is_our_command(c, agent))
                    });
                    removed += before - inner.len();
                    !(inner.is_empty() && before > 0)
                }
            });
        }
        if removed > 0 {
            hooks.retain(|_, list| !list.as_array().is_some_and(Vec::is_empty));
            if hooks.is_empty() {
                remove_empty_path(root, self.hooks_at);
            }
        }
        removed
    }
}

/// Removes the object at `at` from `root` if empty, then each parent left empty.
fn remove_empty_path(root: &mut Value, at: &[&str]) {
    for depth in (1..=at.len()).rev() {
        let (parent_keys, key) = at[..depth].split_at(depth - 1);
        let Some(parent) = parent_keys.iter().try_fold(&mut *root, |node, k| node.get_mut(*k)) else { return };
        let Some(parent) = parent.as_object_mut() else { return };
        if parent.get(key[0]).is_some_and(|v| v.as_object().is_some_and(Map::is_empty)) {
            parent.remove(key[0]);
        } else {
            return;
        }
    }
}

pub fn install_json(agent: AgentType, target: &JsonHooks) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::default();
    let existing = read_object(&target.path)?;
    let (mut root, layout, original) = match &existing {
        Some((value, text)) => (value.clone(), Layout::detect(text), Some(text.clone())),
        None => ((target.new_file_root)(), Layout::default(), None),
    };
    let had_ours = target.contains_ours(&root, agent);
    if !target.add_ours(&mut root, agent) {
        outcome.lines.push(format!("{}: already installed, nothing changed", target.path.display()));
        return Ok(outcome);
    }
    let mut state = load_state(agent);
    match &original {
        Some(text) => {
            let backup = back_up(agent, &target.path, text)?;
            outcome.lines.push(format!("backed up {} to {}", target.path.display(), backup.display()));
            if !had_ours && state.get("original").is_none() {
                state["original"] = json!(backup);
            }
        }
        None => {
            if state.get("original").is_none() {
                state["created"] = json!(true);
            }
        }
    }
    state["path"] = json!(target.path);
    save_state(agent, &state)?;
    write_atomically(&target.path, &layout.render(&root))?;
    outcome.lines.push(format!("{}: registered for {}", target.path.display(), target.events.join(", ")));
    Ok(outcome)
}

pub fn uninstall_json(agent: AgentType, target: &JsonHooks) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::default();
    let Some((mut root, text)) = read_object(&target.path)? else {
        outcome.lines.push(format!("{}: does not exist, nothing to remove", target.path.display()));
        return Ok(outcome);
    };
    let removed = target.remove_ours(&mut root, agent);
    if removed == 0 {
        outcome.lines.push(format!("{}: no sightline hooks found, nothing changed", target.path.display()));
        return Ok(outcome);
    }
    let backup = back_up(agent, &target.path, &text)?;
    outcome.lines.push(format!("backed up {} to {}", target.path.display(), backup.display()));
    let state = load_state(agent);
    let original =
        state.get("original").and_then(Value::as_str).and_then(|p| std::fs::read_to_string(p).ok()).filter(|t| {
            serde_json::from_str::<Value>(t).ok().as_ref() == Some(&root) || (t.trim().is_empty() && root == json!({}))
        });
    if let Some(original) = original {
        write_atomically(&target.path, &original)?;
    } else if state.get("created").and_then(Value::as_bool) == Some(true) && root == (target.new_file_root)() {
        std::fs::remove_file(&target.path)
            .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", target.path.display()))?;
        outcome.lines.push(format!("{}: removed (install had created it)", target.path.display()));
    } else {
        write_atomically(&target.path, &Layout::detect(&text).render(&root))?;
    }
    let _ = std::fs::remove_file(state_path(agent));
    outcome.lines.push(format!("{}: removed {removed} sightline hooks", target.path.display()));
    Ok(outcome)
}

/// Everything `install` writes for one agent.
#[derive(Debug, Clone)]
pub enum Target {
    Json(JsonHooks),
    Owned(owned::OwnedFile),
}

/// The hooked agents whose own directory exists on this machine, with that directory.
pub fn found_agents() -> Vec<(AgentType, PathBuf)> {
    targets::HOOKED_AGENTS
        .into_iter()
        .filter_map(|agent| targets::home_of(agent).filter(|dir| dir.is_dir()).map(|dir| (agent, dir)))
        .collect()
}

pub fn install(agent: AgentType) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::default();
    for target in targets::for_agent(agent)? {
        let done = match &target {
            Target::Json(json) => install_json(agent, json)?,
            Target::Owned(file) => owned::install(file)?,
        };
        outcome.lines.extend(done.lines);
    }
    Ok(outcome)
}

pub fn uninstall(agent: AgentType) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::default();
    for target in targets::for_agent(agent)? {
        let done = match &target {
            Target::Json(json) => uninstall_json(agent, json)?,
            Target::Owned(file) => owned::uninstall(file)?,
        };
        outcome.lines.extend(done.lines);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_commands_are_recognised_at_any_path_quoted_or_not() {
        let agent = AgentType::ClaudeCode;
        assert!(is_our_command("/usr/bin/sightline hook Stop --agent claude_code", agent));
        assert!(is_our_command("'/home/a b/bin/sightline' hook Stop --agent claude-code", agent));
        assert!(is_our_command("/x/sightline hook preToolUse --agent claude_code || true", agent));
        assert!(!is_our_command("/x/sightline hook Stop --agent codex", agent));
        assert!(!is_our_command("~/bin/check.sh", agent));
        assert!(!is_our_command("/x/other hook Stop --agent claude_code", agent));
        assert_eq!(shell_quote("/home/a b/sightline"), "'/home/a b/sightline'");
    }
}
