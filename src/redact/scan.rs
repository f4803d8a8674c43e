//! Hand-written scanners for the two rules a regex cannot finish without look-around:
//! the value of an `env_secret` assignment (quoted, escaped or bare) and the extent of a
//! PEM private-key block (complete, JSON-escaped or truncated). Linear in the input.

use super::*;

/// Rule 6: the regex finds `NAME<sep>`; the value after it is parsed by hand so that
/// escaped quotes (`"a\"b"`, and JSONL's `\"…\"`) are handled and escapes never split.
pub(super) fn redact_env(engine: &Engine, text: &str, count: &mut usize) -> Option<String> {
    let bytes = text.as_bytes();
    let mut splice = Splice::new(text);
    let mut pos = 0;
    while let Some(caps) = engine.env_assignment.captures_at(text, pos) {
        let whole = caps.get_match();
        let name = caps.name("name").expect("the name always participates");
        pos = whole.end();
        // `/etc/secret:/run/secret` is a path, not an assignment.
        if name.start() > 0 && matches!(bytes[name.start() - 1], b'/' | b'\\') {
            continue;
        }
        let (start, end, quoted) = env_value(bytes, whole.end());
        if is_not_a_secret(&text[start..end], quoted) {
            continue;
        }
        let label = Rule::EnvSecret.label();
        let key_quote = caps.name("q").map_or("", |q| q.as_str());
        if !quoted && key_quote.ends_with('"') {
            // A bare JSON value (`"token": 123`) becomes a string so JSON stays valid.
            splice.replace(start, end, &[key_quote, label, key_quote]);
        } else {
            splice.replace(start, end, &[label]);
        }
        *count += 1;
        pos = end;
    }
    splice.finish()
}

/// The value starting at `p`: `(start, end, quoted)`, quotes excluded. Quoted forms are
/// `"…"` (with `\` escapes), JSONL-escaped `\"…\"`, and `'…'`; an unterminated quote
/// (none before the line ends) yields the bare run after it.
fn env_value(b: &[u8], p: usize) -> (usize, usize, bool) {
    let rest = &b[p..];
    let (open, close): (usize, &[u8]) = if rest.starts_with(br#"\""#) {
        (2, br#"\""#)
    } else if rest.starts_with(b"\"") {
        (1, b"\"")
    } else if rest.starts_with(b"'") {
        (1, b"'")
    } else {
        return (p, bare_value_end(b, p), false);
    };
    let start = p + open;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\n' => break,
            _ if b[i..].starts_with(close) => return (start, i, true),
            // Inside `\"…\"` a raw `"` ends the enclosing JSON string: unterminated.
            b'"' if close.len() == 2 => break,
            b'\\' if close != b"'" => i += 2,
            _ => i += 1,
        }
    }
    (start, bare_value_end(b, start), true)
}

/// End of an unquoted value: up to whitespace, `,`, `;`, `}`, `]`, `&`, a quote, or a
/// backslash that is not part of an escaped backslash (`\n` in JSONL ends the value).
fn bare_value_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'\\') => i += 2,
            b'\\' | b',' | b';' | b'}' | b']' | b'&' | b'"' | b'\'' => break,
            c if c.is_ascii_whitespace() => break,
            _ => i += 1,
        }
    }
    i
}

/// Values rule 6 leaves alone: empty, already redacted, a PEM block (rule 7 takes it whole),
/// variable references, and for bare values JSON/YAML structure, null-likes and type names
/// (`api_key: str` in code).
fn is_not_a_secret(value: &str, quoted: bool) -> bool {
    let variable = value
        .strip_prefix('$')
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c == '{' || c == '(' || c == '_' || c.is_ascii_alphabetic());
    value.is_empty()
        || value.starts_with(REDACTED_PREFIX)
        || value.starts_with("-----BEGIN")
        || variable
        || (!quoted
            && (value.starts_with(['=', '{', '['])
                || matches!(
                    value,
                    "null"
                        | "None"
                        | "nil"
                        | "undefined"
                        | "str"
                        | "string"
                        | "String"
                        | "|"
                        | "|-"
                        | "|+"
                        | ">"
                        | ">-"
                        | ">+"
                )))
}

pub(super) fn redact_pem(engine: &Engine, text: &str, count: &mut usize) -> Option<String> {
    let mut splice = Splice::new(text);
    let mut pos = 0;
    while let Some(begin) = engine.pem_begin.find_at(text, pos) {
        let end = pem_block_end(engine, text, begin.end());
        splice.replace(begin.start(), end, &[Rule::PrivateKey.label()]);
        *count += 1;
        pos = end;
    }
    splice.finish()
}

fn is_base64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')
}

/// End of the PEM block whose BEGIN line ends at `body`: after its `-----END … PRIVATE
/// KEY-----` line if the body (base64, whitespace, `\n`/`\r`/`\t` escapes, legacy headers)
/// reaches one, else the end of the truncated body.
fn pem_block_end(engine: &Engine, text: &str, body: usize) -> usize {
    let b = text.as_bytes();
    let mut i = body;
    while i < b.len() {
        match b[i] {
            b'-' if b[i..].starts_with(b"-----") => {
                if let Some(end) = engine.pem_end.find(&text[i..]) {
                    return i + end.end();
                }
                break;
            }
            b'\\' if matches!(b.get(i + 1), Some(b'n' | b'r' | b't')) => i += 2,
            c if is_base64(c) || c.is_ascii_whitespace() || b":,.-_()".contains(&c) => i += 1,
            _ => break,
        }
    }
    truncated_body_end(b, body)
}

/// End of a truncated body, line by line: `Name: value` headers (legacy encrypted PEM) before
/// the first base64 line; then base64 runs of 20+ characters (or any length on the line right
/// after a full one), separated by real or JSON-escaped line breaks or, for one-line keys,
/// spaces. Prose after the body is not swallowed.
fn truncated_body_end(b: &[u8], body: usize) -> usize {
    let blanks = |i: usize| b[i..].iter().take_while(|c| matches!(c, b' ' | b'\t')).count();
    let (mut i, mut last, mut prev_run, mut in_headers) = (body, body, 0, true);
    loop {
        let (mut next, mut breaks) = (i, 0);
        loop {
            next += blanks(next);
            let lb = line_break_len(b, next);
            if lb == 0 {
                break;
            }
            next += lb;
            breaks += 1;
        }
        if next == i {
            return last;
        }
        let name = b[next..].iter().take_while(|c| c.is_ascii_alphabetic() || **c == b'-').count();
        if in_headers && breaks > 0 && name > 0 && b.get(next + name) == Some(&b':') {
            let line = b[next..].iter().take_while(|c| !matches!(c, b'\n' | b'\r' | b'\\' | b'"')).count();
            (i, last) = (next + line, next + line);
            continue;
        }
        let run = b[next..].iter().take_while(|c| is_base64(**c)).count();
        if run == 0 || (run < 20 && !(breaks == 1 && prev_run >= 40)) {
            return last;
        }
        (i, last, prev_run, in_headers) = (next + run, next + run, run, false);
    }
}

/// Length of a real (`\r\n`, `\n`, `\r`) or JSON-escaped (`\r\n`, `\n`, `\r`) line break at `i`.
fn line_break_len(b: &[u8], i: usize) -> usize {
    match &b[i.min(b.len())..] {
        [b'\\', b'r', b'\\', b'n', ..] => 4,
        [b'\r', b'\n', ..] | [b'\\', b'n' | b'r', ..] => 2,
        [b'\n' | b'\r', ..] => 1,
        _ => 0,
    }
}
