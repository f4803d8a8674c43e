//! Query parameters of the dashboard, parsed by hand from strings so that every bad
//! value is a 422 whose JSON names the parameter (axum's extractors would answer a
//! plain-text 400). Empty values count as absent, as HTML forms send them.

use std::collections::HashMap;

use crate::evals::db::{EvalsError, Filters, Sort};

pub const DEFAULT_PER_PAGE: u32 = 50;
pub const MAX_PER_PAGE: u32 = 500;

#[derive(Clone, Debug, PartialEq)]
pub struct ResultsQuery {
    pub filters: Filters,
    pub sort: Sort,
    pub page: u32,
    pub per_page: u32,
}

fn value<'a>(raw: &'a HashMap<String, String>, key: &str) -> Option<&'a str> {
    raw.get(key).map(|v| v.trim()).filter(|v| !v.is_empty())
}

pub fn text(raw: &HashMap<String, String>, key: &str) -> Option<String> {
    value(raw, key).map(str::to_string)
}

pub fn filters(raw: &HashMap<String, String>) -> Result<Filters, EvalsError> {
    let min_success = match value(raw, "min_success") {
        None => None,
        Some(text) => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Some(v),
            _ => return Err(EvalsError::bad("min_success", format!("{text:?} is not a number"))),
        },
    };
    Ok(Filters { model: text(raw, "model"), harness: text(raw, "harness"), track: text(raw, "track"), min_success })
}

fn integer(
    raw: &HashMap<String, String>,
    key: &'static str,
    default: u32,
    min: u32,
    max: u32,
) -> Result<u32, EvalsError> {
    match value(raw, key) {
        None => Ok(default),
        Some(text) => match text.parse::<u64>() {
            Ok(n) if n >= u64::from(min) && n <= u64::from(max) => Ok(n as u32),
            _ => Err(EvalsError::bad(key, format!("{text:?} must be a whole number from {min} to {max}"))),
        },
    }
}

pub fn results_query(raw: &HashMap<String, String>) -> Result<ResultsQuery, EvalsError> {
    Ok(ResultsQuery {
        filters: filters(raw)?,
        sort: Sort::parse(value(raw, "sort"), value(raw, "order"))?,
        page: integer(raw, "page", 1, 1, u32::MAX / MAX_PER_PAGE)?,
        per_page: integer(raw, "per_page", DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)?,
    })
}

/// The query string for links that keep the filters (and sort) but change one thing.
pub fn link_query(query: &ResultsQuery, sort: Option<(&str, bool)>, page: Option<u32>) -> String {
    let mut pairs: Vec<(&str, String)> = Vec::new();
    let f = &query.filters;
    for (key, v) in [("model", &f.model), ("harness", &f.harness), ("track", &f.track)] {
        if let Some(v) = v {
            pairs.push((key, v.clone()));
        }
    }
    if let Some(min) = f.min_success {
        pairs.push(("min_success", min.to_string()));
    }
    let (column, descending) = sort.unwrap_or((query.sort.column, query.sort.descending));
    pairs.push(("sort", column.to_string()));
    pairs.push(("order", if descending { "desc" } else { "asc" }.to_string()));
    pairs.push(("per_page", query.per_page.to_string()));
    pairs.push(("page", page.unwrap_or(query.page).to_string()));
    pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect::<Vec<_>>().join("&")
}

/// Percent-encodes a query value (RFC 3986 unreserved characters pass).
pub use crate::model::percent_encode as encode;

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_and_bounds() {
        let q = results_query(&raw(&[])).unwrap();
        assert_eq!((q.page, q.per_page), (1, 50));
        for (key, bad) in [("per_page", "0"), ("per_page", "501"), ("per_page", "x"), ("page", "0"), ("page", "-1")] {
            let err = results_query(&raw(&[(key, bad)])).unwrap_err();
            assert!(matches!(err, EvalsError::BadParameter { parameter, .. } if parameter == key), "{key}={bad}");
        }
        assert_eq!(results_query(&raw(&[("per_page", "500")])).unwrap().per_page, 500);
    }

    #[test]
    fn unknown_sort_columns_and_orders_are_refused() {
        for (key, pairs) in [
            ("sort", [("sort", "success; DROP TABLE run_results"), ("order", "")]),
            ("order", [("sort", "success"), ("order", "sideways")]),
        ] {
            let err = results_query(&raw(&pairs)).unwrap_err();
            assert!(matches!(err, EvalsError::BadParameter { parameter, .. } if parameter == key));
        }
    }

    #[test]
    fn empty_form_values_count_as_absent() {
        let q = results_query(&raw(&[("model", ""), ("min_success", " "), ("page", "")])).unwrap();
        assert_eq!(q.filters, Filters::default());
        assert!(results_query(&raw(&[("min_success", "NaN")])).is_err());
    }

    #[test]
    fn links_encode_values() {
        let q = results_query(&raw(&[("model", "a&b c")])).unwrap();
        assert!(link_query(&q, None, Some(2)).contains("model=a%26b%20c"));
    }
}
