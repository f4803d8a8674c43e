//! A waterfall of spans on one time axis, for a session's trace: one row per span, its
//! label indented by its depth at the left, a bar from its start to its end on the
//! right (a span too short to see keeps a 2 px bar), the offset from the axis's start in
//! ticks above. Waits are hatched, failures red; every bar's hover says what it was.
//!
//! Invariants: labels and hovers are escaped (`text`, `escape`); no more than
//! [`MAX_ROWS`] rows are drawn (the last row says how many more the table holds); the
//! drawing's width is the caller's and its height follows the rows.

use std::fmt::Write as _;

use super::{ALL, GRID_LINE, HATCH, PALETTE, RED, escape, line, no_data, open_svg, text};

/// Rows past this are left to the table beside the chart.
pub const MAX_ROWS: usize = 300;
const ROW: f64 = 18.0;
const LABEL_WIDTH: f64 = 240.0;
const LABEL_CHARS: usize = 34;
const TOP: f64 = 24.0;

/// What a span was, for its colour. Spelt in snake case where a span travels as JSON
/// (the platform hands the eval dashboard a session's trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpanKind {
    /// A turn: from the prompt to the agent's answer.
    Turn,
    /// A tool call.
    Call,
    /// Waiting on the person (a permission prompt, an idle notification).
    Wait,
    /// A subagent's work.
    Subagent,
}

/// One row of the waterfall.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub label: String,
    /// Indentation: 0 for a turn, 1 for what happened in it.
    pub depth: usize,
    pub start_ms: i64,
    pub end_ms: i64,
    pub kind: SpanKind,
    /// An error or a denial: drawn red.
    pub failed: bool,
    /// What the bar says on hover.
    pub hover: String,
}

/// The waterfall of `spans` over `[from_ms, to_ms]`, `width` px wide.
pub fn waterfall(title: &str, spans: &[Span], from_ms: i64, to_ms: i64, width: u32) -> String {
    let width = f64::from(width.max(480));
    if spans.is_empty() {
        return no_data(title, width, 120.0);
    }
    let shown = spans.len().min(MAX_ROWS);
    let more = spans.len() - shown;
    let rows = shown + usize::from(more > 0);
    let height = TOP + ROW * rows as f64 + 8.0;
    let span_ms = (to_ms - from_ms).max(1) as f64;
    let plot = width - LABEL_WIDTH - 12.0;
    let x_of = |ms: i64| LABEL_WIDTH + (ms - from_ms).clamp(0, to_ms - from_ms) as f64 / span_ms * plot;

    let mut out = String::new();
    let summary = format!("{} spans over {}", spans.len(), offset(to_ms - from_ms));
    open_svg(&mut out, width, height, title, &summary);
    out.push_str(r#"<defs><pattern id="wait" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="none"/><line x1="0" y1="0" x2="0" y2="6""#);
    out.push_str(HATCH);
    out.push_str("/></pattern></defs>");
    // Ticks: about six, at round offsets.
    let step = tick_step(to_ms - from_ms);
    let mut tick = 0;
    while tick <= to_ms - from_ms {
        let x = x_of(from_ms + tick);
        line(&mut out, (x, TOP - 6.0), (x, height - 4.0), GRID_LINE);
        // A label near the right edge ends at its tick rather than run past the drawing.
        let anchor = if x > width - 48.0 { r#" text-anchor="end""# } else { "" };
        text(&mut out, if anchor.is_empty() { x + 2.0 } else { x - 2.0 }, 12.0, anchor, &offset(tick), ALL);
        tick += step;
    }
    for (row, span) in spans.iter().take(shown).enumerate() {
        let y = TOP + ROW * row as f64;
        let indent = 8.0 + 12.0 * span.depth as f64;
        text(&mut out, indent, y + 13.0, "", &span.label, LABEL_CHARS.saturating_sub(span.depth * 2));
        let (x1, x2) = (x_of(span.start_ms), x_of(span.end_ms.max(span.start_ms)));
        let bar = (x2 - x1).max(2.0);
        let fill = match (span.failed, span.kind) {
            (true, _) => format!("rgb({},{},{})", RED[0], RED[1], RED[2]),
            (false, SpanKind::Turn) => PALETTE[0].to_string(),
            (false, SpanKind::Call) => PALETTE[2].to_string(),
            (false, SpanKind::Subagent) => PALETTE[3].to_string(),
            (false, SpanKind::Wait) => "url(#wait)".to_string(),
        };
        let opacity = if span.kind == SpanKind::Turn { r#" fill-opacity="0.35""# } else { "" };
        let _ = write!(
            out,
            r#"<rect x="{x1:.1}" y="{:.1}" width="{bar:.1}" height="{:.1}" fill="{fill}"{opacity}><title>{}</title></rect>"#,
            y + 3.0,
            ROW - 6.0,
            escape(&span.hover)
        );
    }
    if more > 0 {
        let y = TOP + ROW * shown as f64;
        text(
            &mut out,
            8.0,
            y + 13.0,
            r#" font-style="italic""#,
            &format!("… {more} more rows in the table below"),
            ALL,
        );
    }
    out + "</svg>"
}

/// `m:ss`, or `h:mm:ss` from an hour.
pub fn offset(ms: i64) -> String {
    let seconds = ms.max(0) / 1000;
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 { format!("{h}:{m:02}:{s:02}") } else { format!("{m}:{s:02}") }
}

/// A round tick interval giving about six ticks over `span_ms`.
fn tick_step(span_ms: i64) -> i64 {
    const STEPS: [i64; 14] = [
        1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000,
        7_200_000,
    ];
    STEPS.iter().copied().find(|step| span_ms / step <= 6).unwrap_or(span_ms.max(1) / 6 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(label: &str, depth: usize, start_ms: i64, end_ms: i64, kind: SpanKind, failed: bool) -> Span {
        Span { label: label.into(), depth, start_ms, end_ms, kind, failed, hover: format!("{label} <hover>") }
    }

    #[test]
    fn rows_follow_the_spans_and_failures_are_red() {
        let spans = [
            span("Turn 1", 0, 0, 60_000, SpanKind::Turn, false),
            span("Bash", 1, 5_000, 20_000, SpanKind::Call, true),
            span("waiting for permission", 1, 20_000, 30_000, SpanKind::Wait, false),
        ];
        let svg = waterfall("Trace", &spans, 0, 60_000, 900);
        assert_eq!(svg.matches("<rect x=").count(), 3);
        assert!(svg.contains("fill=\"rgb(220,38,38)\""), "the failed call is red");
        assert!(svg.contains("fill=\"url(#wait)\""), "the wait is hatched");
        assert!(svg.contains("Bash &lt;hover&gt;"), "hovers are escaped");
        assert!(svg.contains(">1:00<"), "the axis reaches the end");
    }

    #[test]
    fn a_long_trace_is_cut_and_says_how_much_is_left() {
        let spans: Vec<Span> =
            (0..MAX_ROWS as i64 + 5).map(|i| span("call", 1, i, i + 1, SpanKind::Call, false)).collect();
        let svg = waterfall("Trace", &spans, 0, 1_000, 900);
        assert_eq!(svg.matches("<rect x=").count(), MAX_ROWS);
        assert!(svg.contains("… 5 more rows"));
        assert!(waterfall("Trace", &[], 0, 1, 900).contains("No data"));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(60_000), 10_000);
        assert_eq!(tick_step(3_000), 1_000);
        assert_eq!(tick_step(4 * 3_600_000), 3_600_000);
        assert_eq!(offset(3_725_000), "1:02:05");
    }
}
