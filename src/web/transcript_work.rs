//! What a transcript's tool calls did, in words a reader scans: the one line that says
//! what a call was about (the command it ran, the file it read or wrote, the pattern it
//! searched), an edit's change as removed and added lines, and whether a result is short
//! enough to show open.
//!
//! Invariants: everything here is plain text from the stored (redacted) transcript; the
//! page escapes and marks it (`transcript_page::marked`), so a redaction label stays
//! visible and nothing becomes markup; a headline is one line of at most
//! [`HEADLINE_CHARS`] characters.

/// The longest headline, in characters.
pub const HEADLINE_CHARS: usize = 140;
/// A result of at most this many lines and bytes is shown open.
const OPEN_LINES: usize = 12;
const OPEN_BYTES: usize = 1_500;

/// The input's fields that say what a call was about, most telling first.
const HEADLINE_KEYS: [&str; 10] =
    ["command", "cmd", "file_path", "path", "filePath", "pattern", "url", "query", "description", "prompt"];

/// The one line that says what the call with `input` (its JSON, as the agent sent it)
/// was about; empty when nothing in it says.
pub fn headline(input: &str) -> String {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_str::<serde_json::Value>(input) else {
        return one_line(input);
    };
    for key in HEADLINE_KEYS {
        match fields.get(key) {
            Some(serde_json::Value::String(text)) if !text.trim().is_empty() => return one_line(text),
            // Codex runs `["bash", "-lc", "<script>"]`: the script says it.
            Some(serde_json::Value::Array(parts)) => {
                let parts: Vec<&str> = parts.iter().filter_map(|part| part.as_str()).collect();
                let shown = match parts.as_slice() {
                    [shell, flag, script] if flag.starts_with('-') && shell.ends_with("sh") => script.to_string(),
                    _ => parts.join(" "),
                };
                if !shown.trim().is_empty() {
                    return one_line(&shown);
                }
            }
            _ => {}
        }
    }
    String::new()
}

/// An edit's change as removed (`- `) and added (`+ `) lines, when the input is one
/// (`old_string`/`new_string`, or `old_str`/`new_str`); `None` otherwise.
pub fn edit_lines(input: &str) -> Option<String> {
    let fields: serde_json::Value = serde_json::from_str(input).ok()?;
    let text = |keys: [&str; 2]| keys.iter().find_map(|key| fields.get(*key).and_then(|v| v.as_str()));
    let (old, new) = (text(["old_string", "old_str"])?, text(["new_string", "new_str"])?);
    let mut out = String::new();
    for line in old.lines() {
        out.push_str("- ");
        out.push_str(line);
        out.push('\n');
    }
    for line in new.lines() {
        out.push_str("+ ");
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

/// The input as a reader reads it: pretty JSON when it is JSON, else as sent.
pub fn readable_input(input: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(input) {
        Ok(value @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => {
            serde_json::to_string_pretty(&value).unwrap_or_else(|_| input.to_string())
        }
        _ => input.to_string(),
    }
}

/// Whether a result is short enough to show open rather than folded.
pub fn short(text: &str) -> bool {
    text.len() <= OPEN_BYTES && text.lines().count() <= OPEN_LINES
}

/// The first line of `text`, cut to [`HEADLINE_CHARS`] with an ellipsis.
pub fn one_line(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or("").trim();
    let more_lines = text.trim().lines().nth(1).is_some();
    if first.chars().count() > HEADLINE_CHARS {
        let cut: String = first.chars().take(HEADLINE_CHARS - 1).collect();
        format!("{cut}…")
    } else if more_lines {
        format!("{first} …")
    } else {
        first.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_is_what_the_call_was_about() {
        assert_eq!(headline(r#"{"command": "cargo test --lib", "description": "run the tests"}"#), "cargo test --lib");
        assert_eq!(headline(r#"{"file_path": "/src/main.rs", "limit": 20}"#), "/src/main.rs");
        assert_eq!(headline(r#"{"cmd": ["bash", "-lc", "ls -la\nwc -l *"]}"#), "ls -la …");
        assert_eq!(headline(r#"{"cmd": ["rg", "TODO"]}"#), "rg TODO");
        assert_eq!(headline(r#"{"todos": []}"#), "");
        assert_eq!(headline("not json at all"), "not json at all");
        assert_eq!(headline(&format!("{{\"command\": \"{}\"}}", "x".repeat(500))).chars().count(), HEADLINE_CHARS);
        assert_eq!(headline(r#"{"command": "echo [REDACTED:openai_key]"}"#), "echo [REDACTED:openai_key]");
    }

    #[test]
    fn an_edit_reads_as_removed_and_added_lines() {
        let edit = r#"{"file_path": "a.rs", "old_string": "let x = 1;\nlet y = 2;", "new_string": "let x = 3;"}"#;
        assert_eq!(edit_lines(edit).unwrap(), "- let x = 1;\n- let y = 2;\n+ let x = 3;\n");
        assert_eq!(edit_lines(r#"{"command": "ls"}"#), None);
        assert!(readable_input(r#"{"a":1}"#).contains("\n  \"a\": 1\n"));
        assert!(short("ok\n") && !short(&"line\n".repeat(40)));
    }
}
