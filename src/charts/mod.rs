//! The one chart module of every page (the platform's and the eval viewer's): inline SVG
//! strings drawn on the server, so pages and static reports show them offline and without
//! JavaScript. For eval results: average cost against success rate with the Pareto frontier
//! ([`cost_vs_success`]) and a heat-map of success per model × task ([`model_task_matrix`]);
//! for the platform's pages, bars of one figure over days ([`bars`]).
//!
//! Invariants: every piece of user text goes through [`escape`] (labels are cut before they are
//! escaped, so an entity is never split); each chart is one self-contained `<svg>` element with
//! `role="img"`, a `<title>` and an `aria-label`, and has no ids, scripts or external references,
//! so any number of charts can share a page; colours come from CSS custom properties with
//! fallbacks (`--chart-series-1` … `--chart-series-8`, `--chart-text`, `--chart-grid`,
//! `--chart-frontier`, `--chart-missing`, then the page's `--bg`, `--fg` and `--card`) so pages
//! theme them for dark and light — except the heat-map's data colours, which encode the value on a
//! fixed red–amber–green scale; every coordinate written is finite; the same input always yields
//! the same string.

mod bars;
pub use bars::{Bar, bars};
mod waterfall;
pub use waterfall::{Span, SpanKind, offset, waterfall};

use std::collections::HashMap;
use std::f64::consts::FRAC_1_SQRT_2;
use std::fmt::Write as _;

/// One (model, harness) point of the cost chart.
#[derive(Clone, Debug, PartialEq)]
pub struct CostPoint {
    /// What the point is, e.g. the harness.
    pub label: String,
    /// The group it is coloured by, e.g. the model.
    pub series: String,
    /// Average cost per cell in USD.
    pub cost: f64,
    /// Success rate, 0..=1.
    pub success: f64,
}

/// One square of the heat-map.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixCell {
    /// Model, or model·harness.
    pub row: String,
    /// Task id.
    pub column: String,
    /// Mean success, 0..=1; `None` when there is no result for this pair.
    pub success: Option<f64>,
    /// Repeats behind the mean.
    pub cells: usize,
}

/// Most squares the heat-map draws; past it, trailing tasks are left out and a note says so.
pub const MAX_SQUARES: usize = 20_000;
/// Labels longer than this many characters are cut with an ellipsis (full text in a `<title>`).
pub const MAX_LABEL_CHARS: usize = 28;
/// Costs whose max/min exceeds this ratio (with min > 0) are drawn on a log-scale axis.
pub const LOG_SCALE_RATIO: f64 = 50.0;

const PALETTE: [&str; 8] = ["#3b82f6", "#f97316", "#10b981", "#a855f7", "#ef4444", "#eab308", "#06b6d4", "#ec4899"];
const TEXT: &str = "var(--chart-text, #59636e)";
const HALO: &str = "var(--bg, #ffffff)";
const FRONTIER: &str = "var(--chart-frontier, var(--fg, #1f2328))";
const MISSING: &str = "var(--chart-missing, var(--card, #f6f8fa))";
/// Heat-map stops, interpolated linearly in sRGB: red at 0, amber at 0.5, green at 1.
const RED: [u8; 3] = [0xdc, 0x26, 0x26];
const AMBER: [u8; 3] = [0xf5, 0x9e, 0x0b];
const GREEN: [u8; 3] = [0x16, 0xa3, 0x4a];
/// Legend entries are cut shorter than axis labels: the legend column is narrow.
const LEGEND_CHARS: usize = 20;
const LEGEND_WIDTH: f64 = 170.0;
// Attribute sets (each after a space) repeating the colours above: `concat!` takes literals only.
const GRID_LINE: &str = r#" stroke="var(--chart-grid, #d1d9e0)""#;
const HATCH: &str = r#" stroke="var(--chart-text, #59636e)" stroke-opacity="0.5""#;
const STEP_LINE: &str =
    r#" fill="none" stroke="var(--chart-frontier, var(--fg, #1f2328))" stroke-width="1.5" stroke-dasharray="5 3""#;
/// `max_chars` for text that is never cut.
const ALL: usize = usize::MAX;

pub use crate::model::escape_markup as escape;

/// Scatter of average cost (x) against success rate (y), one point per (model, harness),
/// coloured by `series` from a palette of 8 colours (cycling; from the 9th series on, markers
/// alternate between circles and squares so cycled colours stay apart). The Pareto `frontier`
/// (indices into `points`, computed by the caller: not dominated — lower cost and higher success)
/// is drawn as a step line through exactly its points in cost order, and its points are enlarged
/// and ringed. Axes have ticks and the labels "Average cost per cell (USD)" and "Success rate";
/// the cost axis is log-scale (and says so) when max/min > [`LOG_SCALE_RATIO`] and min > 0,
/// linear otherwise (equal costs get a padded range). A legend lists the series in order of
/// first appearance; each point has a hover `<title>` like "harness · model: 83.3% at $0.1234".
///
/// Empty input (or only points with a non-finite cost or success, which are left out) gives a
/// small SVG saying "No data". Frontier indices that are out of range, repeated or point at a
/// left-out point are ignored. `width` and `height` are at least 400 × 260.
pub fn cost_vs_success(points: &[CostPoint], frontier: &[usize], width: u32, height: u32) -> String {
    const TITLE: &str = "Average cost per cell vs success rate";
    let (width, height) = (f64::from(width.max(400)), f64::from(height.max(260)));
    let valid: Vec<bool> = points.iter().map(|p| p.cost.is_finite() && p.success.is_finite()).collect();
    let shown: Vec<&CostPoint> = points.iter().zip(&valid).filter(|(_, ok)| **ok).map(|(p, _)| p).collect();
    if shown.is_empty() {
        return no_data(TITLE, width, height);
    }
    let (series, series_of) = first_appearance(shown.iter().map(|p| p.series.as_str()));
    let mut front: Vec<usize> = frontier.iter().copied().filter(|&i| valid.get(i) == Some(&true)).collect();
    front.sort_by(|&a, &b| {
        let (p, q) = (&points[a], &points[b]);
        p.cost.total_cmp(&q.cost).then(p.success.total_cmp(&q.success)).then(a.cmp(&b))
    });
    front.dedup();
    let min = shown.iter().map(|p| p.cost).fold(f64::INFINITY, f64::min);
    let max = shown.iter().map(|p| p.cost).fold(f64::NEG_INFINITY, f64::max);
    let axis = CostAxis::fit(min, max);

    let (left, right, top, bottom) = (64.0, width - LEGEND_WIDTH, 16.0, height - 48.0);
    let px = |cost: f64| left + axis.unit(cost) * (right - left);
    let py = |success: f64| bottom - success.clamp(0.0, 1.0) * (bottom - top);
    let (n, scale) = (shown.len(), if axis.log { "log scale" } else { "linear" });
    let summary =
        format!("{n} points, {} models, {} on the Pareto frontier; cost axis {scale}", series.len(), front.len());
    let mut out = String::new();
    open_svg(&mut out, width, height, TITLE, &summary);

    // Grid, ticks and axes.
    for k in 0..=5 {
        let y = py(f64::from(k) * 0.2);
        line(&mut out, (left, y), (right, y), GRID_LINE);
        text(&mut out, left - 6.0, y + 4.0, r#" text-anchor="end""#, &format!("{}%", k * 20), ALL);
    }
    for (value, tick) in &axis.ticks {
        let x = left + axis.at(*value) * (right - left);
        line(&mut out, (x, top), (x, bottom), GRID_LINE);
        // Low enough that a tick on the y axis clears its "0%".
        text(&mut out, x, bottom + 20.0, r#" text-anchor="middle""#, tick, ALL);
    }
    let x_label = if axis.log { "Average cost per cell (USD, log scale)" } else { "Average cost per cell (USD)" };
    let (mid_x, mid_y) = ((left + right) / 2.0, (top + bottom) / 2.0);
    let _ = write!(out, r#"<path d="M{left:.1} {top:.1}V{bottom:.1}H{right:.1}" fill="none" stroke="{TEXT}"/>"#);
    text(&mut out, mid_x, height - 10.0, r#" text-anchor="middle""#, x_label, ALL);
    let rotate = format!(r#" text-anchor="middle" transform="rotate(-90 16 {mid_y:.1})""#);
    text(&mut out, 16.0, mid_y, &rotate, "Success rate", ALL);

    // Points: the rest first, then the frontier's step line, then its points on top.
    let hover = |p: &CostPoint| {
        format!(
            "{} · {}: {}% at {}",
            p.label,
            p.series,
            crate::model::decimal::decimal(p.success * 100.0, 1),
            usd(p.cost)
        )
    };
    for (_, p) in points.iter().enumerate().filter(|(i, _)| valid[*i] && !front.contains(i)) {
        marker(&mut out, series_of[p.series.as_str()], px(p.cost), py(p.success), false, Some(&hover(p)));
    }
    if !front.is_empty() {
        let mut vertices = Vec::with_capacity(front.len() * 2);
        for (n, &i) in front.iter().enumerate() {
            let (x, y) = (px(points[i].cost), py(points[i].success));
            if n > 0 {
                let previous_y = py(points[front[n - 1]].success);
                vertices.push(format!("{x:.1},{previous_y:.1}"));
            }
            vertices.push(format!("{x:.1},{y:.1}"));
        }
        let vertices = vertices.join(" ");
        let _ = write!(out, r#"<polyline class="frontier-line" points="{vertices}"{STEP_LINE}/>"#);
        for &i in &front {
            let p = &points[i];
            let title = format!("{} (Pareto frontier)", hover(p));
            marker(&mut out, series_of[p.series.as_str()], px(p.cost), py(p.success), true, Some(&title));
        }
    }

    // Legend: one row per series, then the frontier; "+N more" when the column is full.
    let x0 = right + 24.0;
    let capacity = ((bottom - top) / 18.0).floor().max(2.0) as usize;
    let reserved = usize::from(!front.is_empty());
    let fits = if series.len() + reserved <= capacity { series.len() } else { capacity - reserved - 1 };
    let mut y = top + 6.0;
    for (k, name) in series.iter().enumerate().take(fits) {
        marker(&mut out, k, x0, y, false, None);
        text(&mut out, x0 + 12.0, y + 4.0, "", name, LEGEND_CHARS);
        y += 18.0;
    }
    if fits < series.len() {
        text(&mut out, x0 + 12.0, y + 4.0, "", &format!("+{} more", series.len() - fits), ALL);
        y += 18.0;
    }
    if !front.is_empty() {
        line(&mut out, (x0 - 8.0, y), (x0 + 8.0, y), STEP_LINE);
        let _ =
            write!(out, r#"<circle cx="{x0:.1}" cy="{y:.1}" r="5" fill="none" stroke="{FRONTIER}" stroke-width="2"/>"#);
        text(&mut out, x0 + 12.0, y + 4.0, "", "Pareto frontier", ALL);
    }
    out.push_str("</svg>");
    out
}

/// Heat-map of success per row × task: one square per (row, column), its colour interpolated
/// from red (0) through amber (0.5) to green (1); no result (`None`, a non-finite mean, or a pair
/// missing from `cells`) is a light fill with a diagonal hatch line. Rows and columns keep the
/// order of first appearance; when a pair repeats, its first cell wins. Row labels sit on the
/// left and column labels, rotated -45°, at the top; labels longer than [`MAX_LABEL_CHARS`] are
/// cut with an ellipsis and carry the full text in a `<title>`. Each square has a `<title>` like
/// "model × task: 67% over 3 runs".
///
/// Squares shrink to fit about 1,200 px of tasks but never below 6 px, after which the SVG grows
/// wide (its `width` and `viewBox` say how wide); below 14 px rows stay 16 px tall so their labels
/// stay legible, and only every k-th column is labelled (every square keeps its own title). At
/// most [`MAX_SQUARES`] squares are drawn: past that the trailing tasks (and, for absurdly many
/// rows, trailing rows) are left out with a note "showing first N tasks (of M)". Empty input gives
/// a small SVG saying "No data".
pub fn model_task_matrix(cells: &[MatrixCell]) -> String {
    const TITLE: &str = "Success rate by model and task";
    if cells.is_empty() {
        return no_data(TITLE, 400.0, 120.0);
    }
    let (rows, row_of) = first_appearance(cells.iter().map(|c| c.row.as_str()));
    let (cols, col_of) = first_appearance(cells.iter().map(|c| c.column.as_str()));
    let shown_cols = cols.len().min((MAX_SQUARES / rows.len()).max(1));
    let shown_rows = rows.len().min(MAX_SQUARES / shown_cols);
    let mut grid: Vec<Option<&MatrixCell>> = vec![None; shown_rows * shown_cols];
    for cell in cells {
        let (r, c) = (row_of[cell.row.as_str()], col_of[cell.column.as_str()]);
        if r < shown_rows && c < shown_cols && grid[r * shown_cols + c].is_none() {
            grid[r * shown_cols + c] = Some(cell);
        }
    }

    let side = (1200 / shown_cols).clamp(6, 24) as f64;
    let row_h = side.max(16.0);
    let label_every = (14.0 / side).ceil() as usize;
    let chars = |text: &&str| text.chars().count().min(MAX_LABEL_CHARS);
    let row_chars = rows[..shown_rows].iter().map(chars).max().unwrap_or(0);
    let col_chars = cols[..shown_cols].iter().step_by(label_every).map(chars).max().unwrap_or(0);
    let left = 16.0 + row_chars as f64 * 7.0;
    let diagonal = col_chars as f64 * 6.0 * FRAC_1_SQRT_2 + 12.0;
    let top = diagonal + 8.0;
    let (grid_w, grid_h) = (shown_cols as f64 * side, shown_rows as f64 * row_h);
    let capped =
        [(shown_cols, cols.len(), "tasks"), (shown_rows, rows.len(), "rows")].into_iter().filter(|c| c.0 < c.1);
    let note: Vec<String> =
        capped.map(|(shown, all, what)| format!("showing first {shown} {what} (of {all})")).collect();
    let note = note.join("; ");
    let width = (left + grid_w + diagonal).max(440.0) + 12.0;
    let height = top + grid_h + if note.is_empty() { 44.0 } else { 64.0 };
    let (n, m, sep) = (rows.len(), cols.len(), if note.is_empty() { "" } else { "; " });
    let summary = format!("{n} rows × {m} tasks, red (0%) through amber to green (100%){sep}{note}");
    let mut out = String::new();
    open_svg(&mut out, width, height, TITLE, &summary);

    for (r, name) in rows[..shown_rows].iter().enumerate() {
        let y = top + r as f64 * row_h + row_h / 2.0 + 4.0;
        text(&mut out, left - 8.0, y, r#" text-anchor="end""#, name, MAX_LABEL_CHARS);
    }
    for (c, name) in cols[..shown_cols].iter().enumerate().step_by(label_every) {
        let (x, y) = (left + c as f64 * side + side / 2.0, top - 6.0);
        let rotate = format!(r#" font-size="11" transform="rotate(-45 {x:.1} {y:.1})""#);
        text(&mut out, x, y, &rotate, name, MAX_LABEL_CHARS);
    }
    let gap = if side >= 10.0 { 1.0 } else { 0.0 };
    for (i, cell) in grid.iter().enumerate() {
        let (r, c) = (i / shown_cols, i % shown_cols);
        let (x, y, w, h) = (left + c as f64 * side, top + r as f64 * row_h, side - gap, row_h - gap);
        let result = cell.and_then(|cell| cell.success.filter(|s| s.is_finite()).map(|s| (s, cell.cells)));
        let rect = format!(r#"x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}""#);
        if let Some((success, runs)) = result {
            let (pct, plural) = (success.clamp(0.0, 1.0) * 100.0, if runs == 1 { "run" } else { "runs" });
            let title = format!("{} × {}: {pct:.0}% over {runs} {plural}", rows[r], cols[c]);
            let _ = write!(out, r#"<rect {rect} fill="{}"><title>{}</title></rect>"#, heat(success), escape(&title));
        } else {
            let title = format!("{} × {}: no result", rows[r], cols[c]);
            let _ = write!(
                out,
                r#"<rect class="missing" {rect} fill="{MISSING}"><title>{}</title></rect>"#,
                escape(&title)
            );
            line(&mut out, (x, y + h), (x + w, y), &format!(r#"{HATCH} pointer-events="none""#));
        }
    }

    // Legend: the colour scale in 11 steps, the no-result swatch, then the cap note.
    let y = top + grid_h + 16.0;
    text(&mut out, 8.0, y + 9.0, "", "0%", ALL);
    for k in 0..=10 {
        let x = 32.0 + f64::from(k) * 16.0;
        let fill = heat(f64::from(k) / 10.0);
        let _ = write!(out, r#"<rect x="{x}" y="{y:.1}" width="16" height="10" fill="{fill}"/>"#);
    }
    text(&mut out, 214.0, y + 9.0, "", "100%", ALL);
    let _ = write!(out, r#"<rect x="264" y="{y:.1}" width="16" height="10" fill="{MISSING}"{HATCH}/>"#);
    line(&mut out, (264.0, y + 10.0), (280.0, y), HATCH);
    text(&mut out, 286.0, y + 9.0, "", "no result", ALL);
    if !note.is_empty() {
        text(&mut out, 8.0, y + 30.0, r#" font-style="italic""#, &note, ALL);
    }
    out.push_str("</svg>");
    out
}

/// The x axis of the cost chart: `lo`/`hi` are costs, or powers of ten when `log`.
struct CostAxis {
    log: bool,
    lo: f64,
    hi: f64,
    /// (position in axis units, label).
    ticks: Vec<(f64, String)>,
}

impl CostAxis {
    fn fit(min: f64, max: f64) -> CostAxis {
        if min > 0.0 && max / min > LOG_SCALE_RATIO {
            let (lo, hi) = (min.log10().floor(), max.log10().ceil());
            let decades = (hi - lo) as i32;
            let every = ((decades + 7) / 8).max(1) as usize;
            let ticks =
                (0..=decades).step_by(every).map(|k| lo as i32 + k).map(|e| (f64::from(e), decade(e))).collect();
            return CostAxis { log: true, lo, hi, ticks };
        }
        let (mut lo, mut hi) = (if min >= 0.0 && min <= max * 0.5 { 0.0 } else { min }, max);
        if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
            // All costs equal: pad around them (never below zero for costs that are not).
            let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.5 };
            (lo, hi) = (if min >= 0.0 { (lo - pad).max(0.0) } else { lo - pad }, hi + pad);
        }
        let step = nice_step(hi - lo);
        if !step.is_finite() || step <= 0.0 {
            return CostAxis { log: false, lo: 0.0, hi: 1.0, ticks: Vec::new() };
        }
        let (first, last) = ((lo / step).floor() as i64, (hi / step).ceil() as i64);
        let decimals = (-step.log10().floor()).clamp(0.0, 12.0) as usize;
        let ticks = (first..=last).map(|k| k as f64 * step).map(|v| (v, format!("${v:.decimals$}"))).collect();
        CostAxis { log: false, lo: first as f64 * step, hi: last as f64 * step, ticks }
    }

    /// Where `cost` falls along the axis, 0..=1.
    fn unit(&self, cost: f64) -> f64 {
        self.at(if self.log { cost.log10() } else { cost })
    }

    fn at(&self, value: f64) -> f64 {
        let unit = (value - self.lo) / (self.hi - self.lo);
        if unit.is_finite() { unit.clamp(0.0, 1.0) } else { 0.5 }
    }
}

/// A 1-2-5 step giving about five intervals over `span`.
fn nice_step(span: f64) -> f64 {
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0].into_iter().find(|n| raw / magnitude <= *n).unwrap_or(10.0) * magnitude
}

/// Label of the log-axis tick at 10^`exponent` USD.
fn decade(exponent: i32) -> String {
    match exponent {
        -6..=0 => format!("${:.*}", exponent.unsigned_abs() as usize, 10f64.powi(exponent)),
        1..=9 => format!("${}", 10u64.pow(exponent.unsigned_abs())),
        _ => format!("$1e{exponent}"),
    }
}

/// A cost for hover text: four decimals, or three significant digits below $0.0001.
fn usd(cost: f64) -> String {
    if cost == 0.0 || cost.abs() >= 0.0001 {
        format!("${cost:.4}")
    } else {
        let decimals = (-cost.abs().log10().floor()) as usize + 2;
        format!("${cost:.decimals$}")
    }
}

/// Heat-map colour of `success` (clamped to 0..=1) as `#rrggbb`.
fn heat(success: f64) -> String {
    let s = success.clamp(0.0, 1.0);
    let (from, to, t) = if s <= 0.5 { (RED, AMBER, s * 2.0) } else { (AMBER, GREEN, (s - 0.5) * 2.0) };
    let channel = |i: usize| (f64::from(from[i]) + (f64::from(to[i]) - f64::from(from[i])) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", channel(0), channel(1), channel(2))
}

/// Distinct values in order of first appearance, and each one's index.
fn first_appearance<'a>(values: impl Iterator<Item = &'a str>) -> (Vec<&'a str>, HashMap<&'a str, usize>) {
    let (mut order, mut index) = (Vec::new(), HashMap::new());
    for value in values {
        index.entry(value).or_insert_with(|| {
            order.push(value);
            order.len() - 1
        });
    }
    (order, index)
}

fn open_svg(out: &mut String, width: f64, height: f64, title: &str, summary: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{}" font-size="12" fill="{TEXT}"><title>{}</title>"#,
        escape(&format!("{title}: {summary}")),
        escape(title)
    );
}

fn no_data(title: &str, width: f64, height: f64) -> String {
    let (width, height) = (width.min(400.0), height.min(120.0));
    let mut out = String::new();
    open_svg(&mut out, width, height, title, "No data");
    let (w, h) = (width - 1.0, height - 1.0);
    let _ = write!(out, r#"<rect x="0.5" y="0.5" width="{w}" height="{h}" fill="none"{GRID_LINE}/>"#);
    text(&mut out, width / 2.0, height / 2.0 + 4.0, r#" text-anchor="middle""#, "No data", ALL);
    out + "</svg>"
}

/// A `<text>` at (`x`, `y`) with `extra` attributes (each after a space) and `content`, escaped;
/// content longer than `max_chars` is cut with an ellipsis and keeps its full text in a `<title>`.
fn text(out: &mut String, x: f64, y: f64, extra: &str, content: &str, max_chars: usize) {
    let _ = write!(out, r#"<text x="{x:.1}" y="{y:.1}"{extra}>"#);
    if content.chars().count() <= max_chars {
        let _ = write!(out, "{}</text>", escape(content));
    } else {
        let cut: String = content.chars().take(max_chars - 1).collect();
        let _ = write!(out, "{}…<title>{}</title></text>", escape(&cut), escape(content));
    }
}

fn line(out: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), extra: &str) {
    let _ = write!(out, r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}"{extra}/>"#);
}

/// The marker of series `k`: its palette colour, a circle (or a square once the palette has
/// cycled an odd number of times); enlarged and ringed on the frontier.
fn marker(out: &mut String, k: usize, x: f64, y: f64, frontier: bool, title: Option<&str>) {
    let fill = format!("var(--chart-series-{}, {})", k % 8 + 1, PALETTE[k % 8]);
    let (r, class, stroke, stroke_width) =
        if frontier { (7.0, "point frontier", FRONTIER, 2.0) } else { (5.0, "point", HALO, 1.0) };
    let paint = format!(r#"class="{class}" fill="{fill}" stroke="{stroke}" stroke-width="{stroke_width}""#);
    let (tag, d) = if (k / 8).is_multiple_of(2) { ("circle", 0.0) } else { ("rect", 2.0 * r) };
    let _ = match tag {
        "circle" => write!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r:.1}" {paint}"#),
        _ => write!(out, r#"<rect x="{:.1}" y="{:.1}" width="{d:.1}" height="{d:.1}" {paint}"#, x - r, y - r),
    };
    let _ = match title {
        Some(title) => write!(out, "><title>{}</title></{tag}>", escape(title)),
        None => write!(out, "/>"),
    };
}

#[cfg(test)]
mod tests;
