//! A bar chart of one figure over ordered buckets (days), for the platform's pages: spend
//! per day, sessions per day. The page puts the same numbers in a table beside it.

use std::fmt::Write as _;

use super::{ALL, GRID_LINE, PALETTE, escape, line, nice_step, no_data, open_svg, text};

/// The width of a character of an axis label at the charts' 12 px, on average.
const CHAR_WIDTH: f64 = 6.6;
/// Turned labels longer than this are cut (the whole label is in its hover).
const ROTATED_CHARS: usize = 32;

/// One bar: its label on the axis (e.g. `11-24`), its hover text and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub hover: String,
    pub value: f64,
}

/// Bars in the given order with a value axis from 0 (ticks formatted by `tick`), the
/// `title` as the chart's title. At most about twelve axis labels are written, evenly
/// spread, so 90 days stay readable; every bar keeps its hover text. Empty input, or no
/// finite positive value, gives the small "No data" chart.
pub fn bars(title: &str, points: &[Bar], tick: impl Fn(f64) -> String, width: u32, height: u32) -> String {
    let (width, height) = (f64::from(width.max(320)), f64::from(height.max(160)));
    let max = points.iter().map(|p| p.value).filter(|v| v.is_finite()).fold(0.0, f64::max);
    if points.is_empty() || max <= 0.0 {
        return no_data(title, width, height);
    }
    let step = nice_step(max);
    let top_value = (max / step).ceil() * step;
    // Axis labels too wide for their slot are turned 40° and the drawing grows below to
    // hold them (cut past ROTATED_CHARS, whole in their hover), so none overlaps another.
    let slot_width = (width - 12.0 - 64.0) / points.len() as f64;
    let every = points.len().div_ceil(12).max(1);
    let longest = points.iter().step_by(every).map(|p| p.label.chars().count()).max().unwrap_or(0);
    let rotated = longest as f64 * CHAR_WIDTH > slot_width * every as f64 - 4.0;
    let below = if rotated { longest.min(ROTATED_CHARS) as f64 * CHAR_WIDTH * 0.77 + 18.0 } else { 28.0 };
    let height = if rotated { height - 28.0 + below } else { height };
    // A turned label runs down and left from its bar: the first must not leave the drawing.
    let reach = longest.min(ROTATED_CHARS) as f64 * CHAR_WIDTH * 0.77;
    let left = if rotated { (reach - slot_width / 2.0 + 8.0).max(64.0) } else { 64.0 };
    // The value axis says its unit above its ticks: the title's "(unit)", or what
    // follows its ": ".
    let unit = unit_of(title);
    let top = if unit.is_some() { 26.0 } else { 12.0 };
    let (right, bottom) = (width - 12.0, height - below);
    let y = |value: f64| bottom - (value.max(0.0) / top_value).min(1.0) * (bottom - top);
    let mut out = String::new();
    let total: f64 = points.iter().map(|p| p.value).filter(|v| v.is_finite()).sum();
    let summary = format!("{} bars, highest {}, total {}", points.len(), tick(max), tick(total));
    open_svg(&mut out, width, height, title, &summary);
    if let Some(unit) = unit {
        text(&mut out, left - 6.0, 12.0, r#" text-anchor="end""#, unit, ALL);
    }
    let mut value = 0.0;
    while value <= top_value + step / 2.0 {
        line(&mut out, (left, y(value)), (right, y(value)), GRID_LINE);
        text(&mut out, left - 6.0, y(value) + 4.0, r#" text-anchor="end""#, &tick(value), ALL);
        value += step;
    }
    let slot = (right - left) / points.len() as f64;
    for (i, point) in points.iter().enumerate() {
        let x = left + slot * i as f64;
        let value = if point.value.is_finite() { point.value } else { 0.0 };
        let bar_top = y(value);
        let _ = write!(
            out,
            r#"<rect x="{:.1}" y="{bar_top:.1}" width="{:.1}" height="{:.1}" fill="var(--chart-series-1, {})"><title>{}</title></rect>"#,
            x + slot * 0.1,
            (slot * 0.8).max(1.0),
            (bottom - bar_top).max(0.0),
            PALETTE[0],
            escape(&point.hover)
        );
        if i % every == 0 && rotated {
            let (lx, ly) = (x + slot / 2.0 + 4.0, bottom + 12.0);
            let turn = format!(r#" text-anchor="end" transform="rotate(-40 {lx:.1} {ly:.1})""#);
            text(&mut out, lx, ly, &turn, &point.label, ROTATED_CHARS);
        } else if i % every == 0 {
            // A level label never reaches left of the axis, where the ticks are.
            let half = point.label.chars().count() as f64 * CHAR_WIDTH / 2.0;
            let lx = (x + slot / 2.0).max(left + half + 2.0);
            text(&mut out, lx, bottom + 16.0, r#" text-anchor="middle""#, &point.label, ALL);
        }
    }
    out.push_str("</svg>");
    out
}

/// The unit a chart's title gives its values: `Spend per day (USD)` → `USD`,
/// `Tools: calls` → `calls`.
fn unit_of(title: &str) -> Option<&str> {
    if let Some(open) = title.rfind('(')
        && title.ends_with(')')
    {
        return Some(&title[open + 1..title.len() - 1]).filter(|unit| !unit.is_empty());
    }
    title.rsplit_once(": ").map(|(_, unit)| unit).filter(|unit| !unit.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, value: f64) -> Bar {
        Bar { label: label.into(), hover: format!("{label}: {value}"), value }
    }

    #[test]
    fn the_value_axis_says_its_unit() {
        assert_eq!(unit_of("Spend per day (USD)"), Some("USD"));
        assert_eq!(unit_of("Tools: calls"), Some("calls"));
        assert_eq!(unit_of("Spend"), None);
        let svg = bars("Spend per day (USD)", &[bar("a", 1.0), bar("b", 2.0)], |v| format!("{v}"), 600, 200);
        assert!(svg.contains(r#"text-anchor="end">USD</text>"#), "{svg}");
    }

    #[test]
    fn labels_too_wide_for_their_slot_are_turned_and_the_drawing_grows_to_hold_them() {
        let short = [bar("11-22", 1.0), bar("11-23", 2.0)];
        let svg = bars("Spend", &short, |v| format!("{v}"), 600, 200);
        assert!(!svg.contains("rotate("), "short labels stay level");
        assert!(svg.contains(r#"height="200""#));
        let models: Vec<Bar> =
            (0..8).map(|i| bar(&format!("claude-sonnet-4-5-2025092{i}"), f64::from(i) + 1.0)).collect();
        let svg = bars("Spend by model", &models, |v| format!("{v}"), 600, 200);
        assert_eq!(svg.matches("rotate(-40").count(), 8, "every model's label is turned");
        assert!(svg.contains(">claude-sonnet-4-5-20250927<"), "and whole: two models never read the same");
        let height: f64 = svg.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(height > 200.0, "the drawing grew to hold them: {height}");
    }

    #[test]
    fn bars_are_one_svg_with_a_title_every_hover_and_an_axis_from_zero() {
        let points = [bar("11-22", 1.5), bar("11-23", 0.0), bar("<b>", 3.0)];
        let svg = bars("Spend per day", &points, |v| format!("${v:.2}"), 600, 200);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("<title>Spend per day</title>"));
        assert!(svg.contains(r#"aria-label="Spend per day: 3 bars, highest $3.00, total $4.50""#), "{svg}");
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains("&lt;b&gt;: 3") && !svg.contains("<b>"), "labels are escaped");
        assert!(svg.contains(">$0.00<"), "the axis starts at zero");
        assert_eq!(bars("Same", &points, |v| format!("${v:.2}"), 600, 200), svg.replace("Spend per day", "Same"));
    }

    #[test]
    fn no_positive_value_is_no_data_and_ninety_days_keep_a_dozen_labels() {
        assert!(bars("Empty", &[], |v| v.to_string(), 600, 200).contains("No data"));
        assert!(bars("Zeros", &[bar("a", 0.0), bar("b", f64::NAN)], |v| v.to_string(), 600, 200).contains("No data"));
        let days: Vec<Bar> = (0..90).map(|d| bar(&format!("d{d}"), d as f64)).collect();
        let svg = bars("Ninety", &days, |v| format!("{v:.0}"), 800, 200);
        assert_eq!(svg.matches("<rect").count(), 90);
        let labels = (0..90).filter(|d| svg.contains(&format!(">d{d}<"))).count();
        assert!((8..=12).contains(&labels), "{labels} labels");
    }
}
