//! A bar chart of one figure over ordered buckets (days), for the platform's pages: spend
//! per day, sessions per day. The page puts the same numbers in a table beside it.

use std::fmt::Write as _;

use super::{ALL, GRID_LINE, PALETTE, escape, line, nice_step, no_data, open_svg, text};

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
    let (left, right, top, bottom) = (64.0, width - 12.0, 12.0, height - 28.0);
    let y = |value: f64| bottom - (value.max(0.0) / top_value).min(1.0) * (bottom - top);
    let mut out = String::new();
    let total: f64 = points.iter().map(|p| p.value).filter(|v| v.is_finite()).sum();
    let summary = format!("{} bars, highest {}, total {}", points.len(), tick(max), tick(total));
    open_svg(&mut out, width, height, title, &summary);
    let mut value = 0.0;
    while value <= top_value + step / 2.0 {
        line(&mut out, (left, y(value)), (right, y(value)), GRID_LINE);
        text(&mut out, left - 6.0, y(value) + 4.0, r#" text-anchor="end""#, &tick(value), ALL);
        value += step;
    }
    let slot = (right - left) / points.len() as f64;
    let every = points.len().div_ceil(12).max(1);
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
        if i % every == 0 {
            text(&mut out, x + slot / 2.0, bottom + 16.0, r#" text-anchor="middle""#, &point.label, ALL);
        }
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, value: f64) -> Bar {
        Bar { label: label.into(), hover: format!("{label}: {value}"), value }
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
