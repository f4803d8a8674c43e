//! The Prometheus text exposition format 0.0.4, from the OpenMetrics text that
//! `prometheus-client` writes (the only text it writes).
//!
//! The two differ only where a family's name is not its samples' name: OpenMetrics names
//! a counter family `x` and its sample `x_total`, where 0.0.4 names both `x_total` (read
//! as 0.0.4, `x_total` is then a second family with no HELP or TYPE, which is what
//! `promtool check metrics` warns about). 0.0.4 also has no `# UNIT` or `# EOF`, no
//! `info` or `unknown` types, and escapes only `\\` and `\n` in HELP.

/// The Content-Type of [`from_openmetrics`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Rewrites the OpenMetrics text of `prometheus_client::encoding::text::encode` as 0.0.4.
pub fn from_openmetrics(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // HELP comes before TYPE, and only TYPE says whether the family's name changes.
    let mut help: Option<(&str, &str)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            if let Some((name, text)) = help.take() {
                push_help(&mut out, name, "", text);
            }
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            help = Some((name, text));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let (suffix, kind) = match kind {
                "counter" => ("_total", "counter"),
                "info" => ("_info", "gauge"),
                "unknown" | "stateset" | "gaugehistogram" => ("", "untyped"),
                other => ("", other),
            };
            if let Some((help_name, text)) = help.take() {
                push_help(&mut out, help_name, if help_name == name { suffix } else { "" }, text);
            }
            out.push_str("# TYPE ");
            out.push_str(name);
            out.push_str(suffix);
            out.push(' ');
            out.push_str(kind);
            out.push('\n');
        } else if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if let Some((name, text)) = help.take() {
        push_help(&mut out, name, "", text);
    }
    out
}

/// A HELP line in 0.0.4's escaping: OpenMetrics' `\"` is a plain quote there.
fn push_help(out: &mut String, name: &str, suffix: &str, text: &str) {
    out.push_str("# HELP ");
    out.push_str(name);
    out.push_str(suffix);
    out.push(' ');
    out.push_str(&text.replace("\\\"", "\""));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_take_their_samples_name_and_openmetrics_only_lines_go() {
        let openmetrics = "# HELP a_requests Requests, \\\"quoted\\\" \\\\ and\\nlined.\n\
                           # TYPE a_requests counter\n\
                           a_requests_total{route=\"/x\"} 3\n\
                           # HELP a_depth Queue depth.\n\
                           # TYPE a_depth gauge\n\
                           # UNIT a_depth bytes\n\
                           a_depth 2\n\
                           # HELP a_seconds Latency.\n\
                           # TYPE a_seconds histogram\n\
                           a_seconds_sum 0.5\n\
                           a_seconds_count 1\n\
                           a_seconds_bucket{le=\"+Inf\"} 1\n\
                           # HELP a_build Build.\n\
                           # TYPE a_build info\n\
                           a_build_info{version=\"1\"} 1\n\
                           # EOF\n";
        assert_eq!(
            from_openmetrics(openmetrics),
            "# HELP a_requests_total Requests, \"quoted\" \\\\ and\\nlined.\n\
             # TYPE a_requests_total counter\n\
             a_requests_total{route=\"/x\"} 3\n\
             # HELP a_depth Queue depth.\n\
             # TYPE a_depth gauge\n\
             a_depth 2\n\
             # HELP a_seconds Latency.\n\
             # TYPE a_seconds histogram\n\
             a_seconds_sum 0.5\n\
             a_seconds_count 1\n\
             a_seconds_bucket{le=\"+Inf\"} 1\n\
             # HELP a_build_info Build.\n\
             # TYPE a_build_info gauge\n\
             a_build_info{version=\"1\"} 1\n"
        );
    }
}
