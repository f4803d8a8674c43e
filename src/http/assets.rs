//! The static files every page links, on the web and the eval dashboard listeners: the
//! one stylesheet and the theme switch's script, each at `/static/<name>-<hash>.<ext>`.
//!
//! Invariants: an address names its content (the first 12 hex digits of its SHA-256),
//! so a browser may keep a file for a year (`immutable`) and a release with new styles
//! is fetched at once; no page carries a `<style>` element or a `style` attribute, which
//! lets the CSP refuse inline styles; the same bytes are inlined only into a report
//! saved to disk, which has no server to fetch them from.

use std::sync::LazyLock;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The stylesheet: the pages' rules, then a rule per colour of the diff highlighter.
pub const STYLESHEET: &str = concat!(
    include_str!("../../assets/templates/sightline.css"),
    include_str!("../../assets/templates/diff-palette.css")
);

/// The theme switch (System, Light, Dark), run in each page's head.
pub const THEME_SCRIPT: &str = include_str!("../../assets/static/theme.js");

struct Asset {
    href: String,
    content_type: &'static str,
    body: &'static str,
}

fn asset(name: &str, ext: &str, content_type: &'static str, body: &'static str) -> Asset {
    let digest = crate::model::sha256(body.as_bytes());
    let hash: String = digest.iter().take(6).map(|byte| format!("{byte:02x}")).collect();
    Asset { href: format!("/static/{name}-{hash}.{ext}"), content_type, body }
}

static ASSETS: LazyLock<[Asset; 2]> = LazyLock::new(|| {
    [
        asset("sightline", "css", "text/css; charset=utf-8", STYLESHEET),
        asset("theme", "js", "text/javascript; charset=utf-8", THEME_SCRIPT),
    ]
});

/// Where the stylesheet is served (templates link it).
pub fn stylesheet_href() -> &'static str {
    &ASSETS[0].href
}

/// Where the theme script is served (templates load it).
pub fn theme_script_href() -> &'static str {
    &ASSETS[1].href
}

/// `GET /static/{file}`: an asset by its hashed name, cached for a year; any other
/// name (an older release's hash included) is a 404, and the page that asked is reloaded
/// with the current address.
pub async fn serve(axum::extract::Path(file): axum::extract::Path<String>) -> Response {
    let wanted = format!("/static/{file}");
    match ASSETS.iter().find(|asset| asset.href == wanted) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            asset.body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such file\n").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_names_its_content() {
        let css = stylesheet_href();
        assert!(css.starts_with("/static/sightline-") && css.ends_with(".css"), "{css}");
        assert_eq!(css.len(), "/static/sightline-".len() + 12 + ".css".len());
        assert!(theme_script_href().starts_with("/static/theme-"));
        assert_ne!(asset("x", "css", "", "a").href, asset("x", "css", "", "b").href);
    }

    #[test]
    fn no_rule_of_the_stylesheet_is_lost_between_its_parts() {
        assert!(STYLESHEET.contains(":root[data-theme=\"dark\"]"));
        assert!(STYLESHEET.contains(".diff ."), "the diff palette is appended");
        assert!(!STYLESHEET.contains("<style"), "no markup in the stylesheet");
    }
}
