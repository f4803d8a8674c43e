//! A unified diff as the cell page shows it: split into files and hunks, each line
//! marked added, removed or context, and the code coloured by syntect with the
//! language of the file's extension, parse state carried through each hunk.
//!
//! Invariant: every text fragment in [`Line::html`] is HTML-escaped here; it is the
//! only markup the templates pass through unescaped (`|safe`), so nothing from a diff
//! can inject markup. Colours are a dark theme on a dark panel in both page themes,
//! given as classes (`c-rrggbb`, [`palette_css`] in the one stylesheet), never as
//! `style` attributes, which the pages' CSP refuses.

use std::sync::LazyLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
static THEME: LazyLock<Theme> = LazyLock::new(|| {
    let mut themes = ThemeSet::load_defaults();
    themes.themes.remove("base16-ocean.dark").unwrap_or_default()
});

/// Lines longer than this are not coloured (a minified file would stall the page).
const MAX_HIGHLIGHT_LINE: usize = 2000;
/// Past this many lines the rest of a diff is shown uncoloured.
const MAX_HIGHLIGHT_LINES: usize = 5000;

pub struct FileDiff {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    pub hunks: Vec<Hunk>,
}

pub struct Hunk {
    pub header: String,
    pub lines: Vec<Line>,
}

pub struct Line {
    /// `add`, `del`, `ctx` or `meta`.
    pub kind: &'static str,
    pub marker: char,
    pub html: String,
}

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

fn syntax_for(path: &str) -> &'static SyntaxReference {
    let extension = path.rsplit('.').next().unwrap_or("");
    SYNTAXES.find_syntax_by_extension(extension).unwrap_or_else(|| SYNTAXES.find_syntax_plain_text())
}

fn file_path(header: &str) -> String {
    // "diff --git a/x b/x" → "x"; fall back to the whole header.
    header.rsplit(" b/").next().map(str::to_string).unwrap_or_else(|| header.to_string())
}

/// Parses and colours a unified diff. Text outside any file header becomes one file
/// with an empty path, so a bare hunk still shows.
pub fn render(diff: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut highlighter: Option<HighlightLines<'static>> = None;
    let mut coloured = 0usize;
    for raw in diff.lines() {
        if let Some(rest) = raw.strip_prefix("diff --git ") {
            files.push(FileDiff { path: file_path(rest), added: 0, removed: 0, hunks: Vec::new() });
            highlighter = None;
            continue;
        }
        if files.is_empty() {
            files.push(FileDiff { path: String::new(), added: 0, removed: 0, hunks: Vec::new() });
        }
        let file = files.last_mut().expect("pushed above");
        if let Some(path) = raw.strip_prefix("+++ b/") {
            file.path = path.to_string();
            continue;
        }
        if raw.starts_with("--- ") || raw.starts_with("+++ ") || raw.starts_with("index ") {
            continue;
        }
        if raw.starts_with("@@") {
            file.hunks.push(Hunk { header: raw.to_string(), lines: Vec::new() });
            highlighter = Some(HighlightLines::new(syntax_for(&file.path), &THEME));
            continue;
        }
        if file.hunks.is_empty() {
            file.hunks.push(Hunk { header: String::new(), lines: Vec::new() });
        }
        let (kind, marker, code) = match raw.chars().next() {
            Some('+') => ("add", '+', &raw[1..]),
            Some('-') => ("del", '-', &raw[1..]),
            Some(' ') => ("ctx", ' ', &raw[1..]),
            Some('\\') => ("meta", '\\', &raw[1..]),
            _ => ("ctx", ' ', raw),
        };
        match kind {
            "add" => file.added += 1,
            "del" => file.removed += 1,
            _ => {}
        }
        let html = match highlighter.as_mut() {
            Some(h) if kind != "meta" && code.len() <= MAX_HIGHLIGHT_LINE && coloured < MAX_HIGHLIGHT_LINES => {
                coloured += 1;
                colour(h, code)
            }
            _ => escape(code),
        };
        if let Some(hunk) = file.hunks.last_mut() {
            hunk.lines.push(Line { kind, marker, html });
        }
    }
    files
}

fn colour(highlighter: &mut HighlightLines<'static>, code: &str) -> String {
    let line = format!("{code}\n");
    match highlighter.highlight_line(&line, &SYNTAXES) {
        Ok(regions) => {
            let mut out = String::with_capacity(line.len() * 2);
            for (style, text) in regions {
                let text = text.trim_end_matches('\n');
                if text.is_empty() {
                    continue;
                }
                out.push_str(&format!("<span class=\"{}\">{}</span>", class_of(style.foreground), escape(text)));
            }
            out
        }
        Err(_) => escape(code),
    }
}

/// The class of a foreground colour: `c-` and its hex.
fn class_of(colour: syntect::highlighting::Color) -> String {
    format!("c-{:02x}{:02x}{:02x}", colour.r, colour.g, colour.b)
}

/// A rule for every colour the theme can give a token (its default and each scope's),
/// for the stylesheet: the only colours [`colour`] emits. Kept as
/// `assets/templates/diff-palette.css` (a test proves the file is this).
pub fn palette_css() -> String {
    let mut colours: Vec<syntect::highlighting::Color> =
        THEME.scopes.iter().filter_map(|item| item.style.foreground).collect();
    colours.extend(THEME.settings.foreground);
    colours.sort_by_key(|c| (c.r, c.g, c.b));
    colours.dedup_by_key(|c| (c.r, c.g, c.b));
    colours.into_iter().fold(
        String::from("/* The diff highlighter's colours (evals::dashboard::diff::palette_css). */\n"),
        |mut css, c| {
            css.push_str(&format!(".diff .{} {{ color: #{:02x}{:02x}{:02x}; }}\n", class_of(c), c.r, c.g, c.b));
            css
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "diff --git a/src/app.py b/src/app.py\nindex 1..2 100644\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n def f():\n-    return \"<old>\"\n+    return \"<script>alert(1)</script>\"\n";

    #[test]
    fn the_stylesheet_carries_the_palette() {
        let want = palette_css();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/templates/diff-palette.css");
        if std::env::var_os("SIGHTLINE_WRITE_PALETTE").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            want,
            "rewrite it: SIGHTLINE_WRITE_PALETTE=1 cargo test palette"
        );
    }

    #[test]
    fn files_hunks_and_counts_are_found() {
        let files = render(SAMPLE);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "src/app.py");
        assert_eq!((files[0].added, files[0].removed), (1, 1));
        let kinds: Vec<&str> = files[0].hunks[0].lines.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, ["ctx", "del", "add"]);
    }

    #[test]
    fn code_is_coloured_and_always_escaped() {
        let files = render(SAMPLE);
        let added = &files[0].hunks[0].lines[2].html;
        assert!(added.contains("<span class=\"c-") && !added.contains("style="), "{added}");
        let class = &added[added.find("class=\"").unwrap() + 7..];
        let class = &class[..class.find('"').unwrap()];
        assert!(palette_css().contains(&format!(".diff .{class} {{")), "every colour emitted has its rule: {class}");
        assert!(!added.contains("<script>"), "{added}");
        assert!(added.contains("&lt;script&gt;"), "{added}");
    }

    #[test]
    fn a_bare_hunk_and_garbage_still_render_escaped() {
        let files = render("@@ -1 +1 @@\n-<b>\n+<i>\nnot a diff line <img src=x>\n");
        assert_eq!(files.len(), 1);
        let all: String = files[0].hunks.iter().flat_map(|h| h.lines.iter().map(|l| l.html.clone())).collect();
        assert!(!all.contains("<img") && !all.contains("<b>"), "{all}");
    }
}
