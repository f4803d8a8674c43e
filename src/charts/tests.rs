//! Tests of the SVG charts: escaping of hostile labels, frontier drawing, scales,
//! matrix colours, label truncation, the square cap, determinism.

use super::*;

const HOSTILE: [&str; 4] = ["<script>alert(1)</script>", "\"&'", "]]>", "a<b>c&d\u{1}e"];

fn point(label: &str, series: &str, cost: f64, success: f64) -> CostPoint {
    CostPoint { label: label.into(), series: series.into(), cost, success }
}

fn cell(row: &str, column: &str, success: Option<f64>, cells: usize) -> MatrixCell {
    MatrixCell { row: row.into(), column: column.into(), success, cells }
}

/// A small XML well-formedness check: one root element, balanced and properly nested tags,
/// quoted attributes with unique names, no `<` in attribute values, `&` only as a known entity
/// or character reference, no `]]>` and no non-whitespace text outside the root.
fn assert_well_formed(xml: &str) {
    fn check_references(text: &str) {
        assert!(!text.contains("]]>"), "raw ]]> in {text:?}");
        for (at, _) in text.match_indices('&') {
            let rest = &text[at + 1..];
            let end = rest.find(';').unwrap_or_else(|| panic!("unterminated reference in {text:?}"));
            let name = &rest[..end];
            let numeric = name
                .strip_prefix("#x")
                .map(|h| u32::from_str_radix(h, 16).is_ok())
                .or_else(|| name.strip_prefix('#').map(|d| d.parse::<u32>().is_ok()));
            assert!(
                numeric == Some(true) || ["amp", "lt", "gt", "quot", "apos"].contains(&name),
                "bad reference &{name};"
            );
        }
        assert!(!text.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')), "control char in {text:?}");
    }
    fn is_name(name: &str) -> bool {
        !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
    }
    let mut stack: Vec<&str> = Vec::new();
    let mut roots = 0;
    let mut rest = xml;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('<') {
            let end = after.find('>').expect("unterminated tag");
            let tag = &after[..end];
            rest = &after[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop(), Some(name), "mismatched closing tag");
                continue;
            }
            let (body, self_closing) = match tag.strip_suffix('/') {
                Some(body) => (body, true),
                None => (tag, false),
            };
            let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
            let name = &body[..name_end];
            assert!(is_name(name), "bad element name {name:?}");
            let mut attributes = body[name_end..].trim_start();
            let mut seen = Vec::new();
            while !attributes.is_empty() {
                let eq = attributes.find('=').expect("attribute without value");
                let attribute = attributes[..eq].trim();
                assert!(is_name(attribute) && !seen.contains(&attribute), "bad or repeated attribute {attribute:?}");
                seen.push(attribute);
                let value = attributes[eq + 1..].strip_prefix('"').expect("unquoted attribute");
                let close = value.find('"').expect("unterminated attribute");
                assert!(!value[..close].contains('<'), "< in attribute value");
                check_references(&value[..close]);
                attributes = value[close + 1..].trim_start();
            }
            if stack.is_empty() {
                roots += 1;
            }
            if !self_closing {
                stack.push(name);
            }
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let text = &rest[..end];
            if stack.is_empty() {
                assert!(text.trim().is_empty(), "text outside the root: {text:?}");
            }
            check_references(text);
            rest = &rest[end..];
        }
    }
    assert!(stack.is_empty(), "unclosed tags {stack:?}");
    assert_eq!(roots, 1, "exactly one root element");
}

fn assert_accessible_svg(svg: &str) {
    assert_well_formed(svg);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.ends_with("</svg>"));
    assert!(svg.contains(r#"role="img""#) && svg.contains("aria-label=\"") && svg.contains("<title>"));
    assert!(!svg.contains(" id=\"") && !svg.contains("<script") && !svg.contains("href"));
}

fn assert_finite(svg: &str) {
    for bad in ["NaN", "inf"] {
        assert!(!svg.contains(bad), "{bad} in output");
    }
}

/// The value of attribute `name` in the first element of `svg` that has `marker` in its tag.
fn attribute<'a>(svg: &'a str, marker: &str, name: &str) -> &'a str {
    let at = svg.find(marker).unwrap_or_else(|| panic!("{marker} not found"));
    let tag_start = svg[..=at].rfind('<').unwrap();
    let tag = &svg[tag_start..tag_start + svg[tag_start..].find('>').unwrap()];
    let key = format!(" {name}=\"");
    let from = tag.find(&key).unwrap_or_else(|| panic!("no {name} in {tag}")) + key.len();
    &tag[from..from + tag[from..].find('"').unwrap()]
}

/// The tag of the element whose `<title>` is exactly `title`.
fn element_titled<'a>(svg: &'a str, title: &str) -> &'a str {
    let at = svg.find(&format!("<title>{title}</title>")).unwrap_or_else(|| panic!("no title {title:?}"));
    let start = svg[..at].rfind('<').unwrap();
    &svg[start..at]
}

fn sample_points() -> Vec<CostPoint> {
    vec![
        point("claude-code", "opus", 0.80, 0.90),
        point("aider", "opus", 0.50, 0.70),
        point("claude-code", "sonnet", 0.20, 0.80),
        point("aider", "sonnet", 0.30, 0.60),
        point("codex", "haiku", 0.05, 0.40),
    ]
}

#[test]
fn escape_replaces_the_five_xml_specials_and_forbidden_characters() {
    assert_eq!(escape(r#"<a href="x">&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
    assert_eq!(escape("tab\tline\nnul\u{0}"), "tab line nul\u{FFFD}");
    assert_eq!(escape("plain · ünïcode"), "plain · ünïcode");
}

#[test]
fn hostile_labels_never_appear_unescaped_and_output_is_well_formed() {
    let points: Vec<CostPoint> =
        HOSTILE.iter().enumerate().map(|(i, h)| point(h, h, 0.1 * (i + 1) as f64, 0.2 * i as f64)).collect();
    let cells: Vec<MatrixCell> =
        HOSTILE.iter().flat_map(|r| HOSTILE.iter().map(move |c| cell(r, c, Some(0.5), 2))).collect();
    let long = format!("{}{}", "x".repeat(25), "<script>alert(1)</script>");
    let long_cells = vec![cell(&long, &long, None, 0)];
    for svg in
        [cost_vs_success(&points, &[0, 1, 2, 3], 640, 400), model_task_matrix(&cells), model_task_matrix(&long_cells)]
    {
        assert_accessible_svg(&svg);
        for raw in ["<script", "alert(1)</", "]]>", "\"&'", "\u{1}"] {
            assert!(!svg.contains(raw), "raw {raw:?} in output");
        }
    }
    let svg = cost_vs_success(&points, &[], 640, 400);
    assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(svg.contains("&quot;&amp;&apos;") && svg.contains("]]&gt;"));
}

#[test]
fn frontier_points_are_emphasised_and_the_step_line_passes_through_exactly_them_in_cost_order() {
    let points = sample_points();
    // Given out of cost order and with a repeat and an out-of-range index, which are ignored.
    let svg = cost_vs_success(&points, &[0, 2, 4, 2, 99], 640, 400);
    assert_accessible_svg(&svg);
    let centre = |title: &str| {
        let tag = element_titled(&svg, title);
        assert!(tag.contains(r#"class="point frontier""#) && tag.contains(r#"r="7.0""#), "not emphasised: {tag}");
        let value = |name: &str| {
            let from = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            tag[from..from + tag[from..].find('"').unwrap()].to_string()
        };
        format!("{},{}", value("cx"), value("cy"))
    };
    let expected = [
        centre("codex · haiku: 40.0% at $0.0500 (Pareto frontier)"),
        centre("claude-code · sonnet: 80.0% at $0.2000 (Pareto frontier)"),
        centre("claude-code · opus: 90.0% at $0.8000 (Pareto frontier)"),
    ];
    assert_eq!(svg.matches("point frontier").count(), 3);
    let line = attribute(&svg, "class=\"frontier-line\"", "points");
    let vertices: Vec<&str> = line.split(' ').collect();
    // Frontier points at even positions, the steps' corners between them.
    assert_eq!(vertices.iter().step_by(2).copied().collect::<Vec<_>>(), expected);
    assert_eq!(vertices.len(), 2 * expected.len() - 1);
    for corner in vertices.iter().skip(1).step_by(2) {
        assert!(!svg.contains(&format!(
            "cx=\"{}\" cy=\"{}\"",
            &corner[..corner.find(',').unwrap()],
            &corner[corner.find(',').unwrap() + 1..]
        )));
    }
    for plain in ["aider · opus: 70.0% at $0.5000", "aider · sonnet: 60.0% at $0.3000"] {
        let tag = element_titled(&svg, plain);
        assert!(tag.contains(r#"class="point""#) && tag.contains(r#"r="5.0""#));
        let (cx, cy) = (attribute(tag, "circle", "cx"), attribute(tag, "circle", "cy"));
        assert!(!vertices.contains(&format!("{cx},{cy}").as_str()));
    }
    assert!(svg.contains(">Pareto frontier</text>"));
}

#[test]
fn hover_text_names_label_series_success_and_cost() {
    let svg = cost_vs_success(
        &[point("claude-code", "opus", 0.1234, 0.8333), point("x", "y", 0.00001234, 0.5)],
        &[],
        640,
        400,
    );
    assert!(svg.contains("<title>claude-code · opus: 83.3% at $0.1234</title>"));
    assert!(svg.contains("<title>x · y: 50.0% at $0.0000123</title>"));
}

#[test]
fn empty_input_says_no_data() {
    for svg in [
        cost_vs_success(&[], &[], 640, 400),
        cost_vs_success(&[point("a", "b", f64::NAN, 0.5)], &[0], 640, 400),
        model_task_matrix(&[]),
    ] {
        assert_accessible_svg(&svg);
        assert!(svg.contains(">No data</text>"));
        assert_finite(&svg);
    }
}

#[test]
fn single_point_and_equal_costs_produce_finite_coordinates() {
    let cases = [
        vec![point("a", "m", 0.25, 0.5)],
        vec![point("a", "m", 0.0, 1.0)],
        vec![point("a", "m", 0.1, 0.2), point("b", "m", 0.1, 0.9), point("c", "n", 0.1, 0.5)],
        vec![point("a", "m", 0.0, 0.0), point("b", "n", 0.0, 1.0)],
        vec![point("a", "m", 1e-9, 0.3), point("b", "n", 1e6, 1.5)],
    ];
    for points in &cases {
        let svg = cost_vs_success(points, &[0], 10, 10);
        assert_accessible_svg(&svg);
        assert_finite(&svg);
        assert!(svg.contains(r#"width="400" height="260""#), "small sizes are raised to the minimum");
    }
}

#[test]
fn wide_cost_ranges_use_a_log_scale_and_narrow_ones_a_linear_scale() {
    let wide = cost_vs_success(&[point("a", "m", 0.001, 0.2), point("b", "m", 2.0, 0.9)], &[], 640, 400);
    assert!(wide.contains("Average cost per cell (USD, log scale)"));
    for tick in [">$0.001<", ">$0.01<", ">$0.1<", ">$1<", ">$10<"] {
        assert!(wide.contains(tick), "missing tick {tick}");
    }
    let narrow = cost_vs_success(&[point("a", "m", 0.04, 0.2), point("b", "m", 1.9, 0.9)], &[], 640, 400);
    let with_zero = cost_vs_success(&[point("a", "m", 0.0, 0.2), point("b", "m", 20.0, 0.9)], &[], 640, 400);
    for svg in [&narrow, &with_zero] {
        assert!(svg.contains(">Average cost per cell (USD)<") && !svg.contains("log scale"));
    }
    assert!(narrow.contains(">$0.0<") && narrow.contains(">$2.0<"));
}

#[test]
fn series_are_coloured_from_a_palette_of_eight_that_cycles() {
    let points: Vec<CostPoint> =
        (0..10).map(|i| point("h", &format!("model-{i}"), 0.1 + i as f64 * 0.01, 0.5)).collect();
    let svg = cost_vs_success(&points, &[], 800, 600);
    for (i, colour) in PALETTE.iter().enumerate() {
        assert!(svg.contains(&format!("var(--chart-series-{}, {colour})", i + 1)));
    }
    let ninth = element_titled(&svg, "h · model-8: 50.0% at $0.1800");
    assert!(ninth.contains("var(--chart-series-1, ") && ninth.starts_with("<rect"), "cycled colour, new shape");
    assert!(svg.contains(">model-9</text>"), "legend lists every series");
}

#[test]
fn matrix_colours_run_from_red_through_amber_to_green_and_missing_is_distinct() {
    let cells = [
        cell("m", "zero", Some(0.0), 3),
        cell("m", "half", Some(0.5), 2),
        cell("m", "one", Some(1.0), 1),
        cell("m", "none", None, 0),
    ];
    let svg = model_task_matrix(&cells);
    assert_accessible_svg(&svg);
    let fill = |title: &str| attribute(element_titled(&svg, title), "<rect", "fill").to_string();
    assert_eq!(fill("m × zero: 0% over 3 runs"), "#dc2626");
    assert_eq!(fill("m × half: 50% over 2 runs"), "#f59e0b");
    assert_eq!(fill("m × one: 100% over 1 run"), "#16a34a");
    assert_eq!(fill("m × none: no result"), MISSING);
    assert!(element_titled(&svg, "m × none: no result").contains(r#"class="missing""#));
    assert_eq!(heat(0.25), "#e96219", "interpolated between red and amber");
    assert_eq!(heat(-1.0), "#dc2626");
    assert_eq!(heat(7.0), "#16a34a");
}

#[test]
fn matrix_rows_and_columns_follow_first_appearance_and_missing_pairs_are_drawn_as_no_result() {
    let cells = [cell("b", "t2", Some(1.0), 1), cell("a", "t1", Some(0.0), 1), cell("b", "t1", Some(0.5), 1)];
    let svg = model_task_matrix(&cells);
    let at = |needle: &str| svg.find(needle).unwrap_or_else(|| panic!("{needle} missing"));
    assert!(at(">b</text>") < at(">a</text>"));
    assert!(at(">t2</text>") < at(">t1</text>"));
    assert!(svg.contains("<title>a × t2: no result</title>"));
    assert_eq!(svg.matches("<title>").count(), 1 + 4);
}

#[test]
fn long_labels_are_truncated_with_the_full_text_in_a_title() {
    let long = "a-really-long-task-identifier-that-goes-on";
    let svg = model_task_matrix(&[cell(long, long, Some(0.75), 4)]);
    let cut = format!("{}…", &long[..MAX_LABEL_CHARS - 1]);
    assert_eq!(svg.matches(&format!(">{cut}<title>{long}</title></text>")).count(), 2, "row and column label");
    assert!(!svg.contains(&format!(">{long}</text>")));
    assert!(svg.contains(&format!("<title>{long} × {long}: 75% over 4 runs</title>")));
    let short = model_task_matrix(&[cell("model", "exactly-twenty-eight-chars-x", Some(1.0), 1)]);
    assert!(short.contains(">exactly-twenty-eight-chars-x</text>"));
}

#[test]
fn many_columns_keep_squares_at_least_6px_and_grow_the_svg_wide() {
    let cells: Vec<MatrixCell> =
        (0..300).flat_map(|t| ["opus", "sonnet"].map(|m| cell(m, &format!("task-{t:03}"), Some(0.5), 1))).collect();
    let svg = model_task_matrix(&cells);
    assert_accessible_svg(&svg);
    let width: f64 = attribute(&svg, "<svg", "width").parse().unwrap();
    assert!(width >= 300.0 * 6.0, "width {width}");
    assert!(attribute(&svg, "<svg", "viewBox").starts_with(&format!("0 0 {width} ")));
    let square = element_titled(&svg, "opus × task-000: 50% over 1 run");
    assert!(attribute(square, "<rect", "width").parse::<f64>().unwrap() >= 6.0);
    assert!(!svg.contains("showing first"));
}

#[test]
fn matrix_caps_squares_and_notes_it() {
    let cells: Vec<MatrixCell> =
        (0..3000).flat_map(|t| (0..10).map(move |m| cell(&format!("m{m}"), &format!("t{t}"), Some(1.0), 1))).collect();
    let svg = model_task_matrix(&cells);
    assert_accessible_svg(&svg);
    assert!(svg.contains(">showing first 2000 tasks (of 3000)</text>"));
    assert_eq!(svg.matches("% over 1 run</title>").count(), MAX_SQUARES);
    assert!(svg.contains("m9 × t1999: ") && !svg.contains("m0 × t2000: "));
}

#[test]
fn same_input_gives_the_same_string() {
    let points = sample_points();
    assert_eq!(cost_vs_success(&points, &[4, 2, 0], 640, 400), cost_vs_success(&points, &[4, 2, 0], 640, 400));
    let cells: Vec<MatrixCell> =
        (0..50).map(|i| cell(&format!("m{}", i % 7), &format!("t{}", i % 11), Some(f64::from(i) / 50.0), 2)).collect();
    assert_eq!(model_task_matrix(&cells), model_task_matrix(&cells));
}
