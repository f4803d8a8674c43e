//! Text hygiene for anything shown to people: cutting long messages, keeping the
//! tail of huge logs, stripping terminal control sequences, redacting secrets, and
//! turning a run name into a safe file name.
//!
//! Invariants: cuts happen on character boundaries; output of [`clean_output`] has
//! no control characters other than newline and tab; [`safe_file_stem`] never yields
//! a path separator, a leading dot, or `..`.

/// Cuts `text` to `max_chars` characters, appending an ellipsis when it was longer.
pub fn ellipsize(text: &str, max_chars: usize) -> String {
    let mut chars = text.char_indices();
    match chars.nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// One line for tables: newlines and tabs become spaces, runs of spaces collapse.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The last `max_bytes` of `text` (cut on a character boundary), and whether it was cut.
pub fn tail(text: &str, max_bytes: usize) -> (&str, bool) {
    if text.len() <= max_bytes {
        return (text, false);
    }
    let mut start = text.len() - max_bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    (&text[start..], true)
}

/// Removes ANSI escape sequences and control characters (keeping newline and tab),
/// so harness logs cannot restyle a terminal or smuggle invisible text.
pub fn strip_control(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ params final-byte; OSC: ESC ] ... BEL or ESC \; other: ESC + one char.
                match chars.peek() {
                    Some('[') => {
                        chars.next();
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some(']') => {
                        chars.next();
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.peek() == Some(&'\\')) {
                                if c == '\u{1b}' {
                                    chars.next();
                                }
                                break;
                            }
                        }
                    }
                    Some(_) => {
                        chars.next();
                    }
                    None => {}
                }
            }
            '\r' => {}
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Harness output as the cell page shows it: the last `max_bytes`, control
/// characters stripped, secrets redacted with the platform's redaction rules.
pub fn clean_output(text: &str, max_bytes: usize) -> (String, bool) {
    let (kept, cut) = tail(text, max_bytes);
    let stripped = strip_control(kept);
    (crate::redact::redact_text(&stripped).into_owned(), cut)
}

/// A run name made safe as a file-name stem: letters, digits, `-`, `_` and `.` kept,
/// anything else replaced by `_`, no leading dots, at most 100 characters.
pub fn safe_file_stem(name: &str) -> String {
    let mut stem: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .take(100)
        .collect();
    while stem.starts_with('.') {
        stem.replace_range(0..1, "_");
    }
    let stem = stem.replace("..", "__");
    if stem.is_empty() { "run".to_string() } else { stem }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ellipsize_cuts_at_the_limit_on_character_boundaries() {
        assert_eq!(ellipsize("short", 60), "short");
        let long = "é".repeat(61);
        let cut = ellipsize(&long, 60);
        assert_eq!(cut.chars().count(), 61);
        assert!(cut.ends_with('…'));
        assert_eq!(ellipsize(&"a".repeat(60), 60), "a".repeat(60));
    }

    #[test]
    fn tail_keeps_the_end_on_a_boundary() {
        let text = format!("{}{}", "ü".repeat(10), "end");
        let (kept, cut) = tail(&text, 6);
        assert!(cut);
        assert!(kept.ends_with("end") && kept.len() <= 6);
        assert_eq!(tail("abc", 10), ("abc", false));
    }

    #[test]
    fn control_sequences_and_characters_are_removed() {
        let raw = "\u{1b}[31mred\u{1b}[0m ok\u{7}\r\n\u{1b}]0;title\u{7}next\tcol\u{0}";
        assert_eq!(strip_control(raw), "red ok\nnext\tcol");
    }

    #[test]
    fn secrets_in_output_are_redacted() {
        let key = format!("ghp_{}", "Ab1".repeat(12));
        let (clean, cut) = clean_output(&format!("pushing with {key}\n"), 50_000);
        assert!(!cut);
        assert!(!clean.contains(&key), "{clean}");
    }

    #[test]
    fn file_stems_cannot_escape_or_hide() {
        assert_eq!(safe_file_stem("nightly-2026.11"), "nightly-2026.11");
        assert_eq!(safe_file_stem("../../etc/passwd"), "_.____etc_passwd");
        assert_eq!(safe_file_stem(".hidden"), "_hidden");
        assert_eq!(safe_file_stem("a..b"), "a__b");
        assert_eq!(safe_file_stem(""), "run");
        assert_eq!(safe_file_stem("<script>"), "_script_");
        assert!(!safe_file_stem("x/y\\z").contains(['/', '\\']));
    }
}
