//! Where a sign-in may send the browser next: only a path on this site.

/// The longest `next` a sign-in keeps (longer ones fall back to the default page).
pub const MAX_LOCAL_REDIRECT_BYTES: usize = 1024;

/// `next` when it is a path on this site, else `None`: the one redirect check after
/// sign-in, for the web app and the eval dashboard alike.
///
/// A browser reads `//host`, `/\host` and `\\host` as another site, and drops tab, CR and
/// LF anywhere in a URL before reading it (WHATWG URL parsing), so `/\t/host` is
/// `//host` too: a local path starts with one `/`, and has no backslash and no
/// control character anywhere.
pub fn local_redirect_target(next: Option<&str>) -> Option<&str> {
    let path = next?;
    let local = path.starts_with('/')
        && !path.starts_with("//")
        && !path.contains('\\')
        && !path.chars().any(char::is_control)
        && path.len() <= MAX_LOCAL_REDIRECT_BYTES;
    local.then_some(path)
}

/// [`local_redirect_target`] of `next`, or `fallback` (each app's own landing page).
pub fn safe_next(next: Option<&str>, fallback: &str) -> String {
    local_redirect_target(next).unwrap_or(fallback).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_targets_stay_on_this_site() {
        assert_eq!(local_redirect_target(Some("/run/x?page=2")), Some("/run/x?page=2"));
        let evil = [
            "//evil.example",
            "/\\evil.example",
            "\\\\evil",
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r\n/evil.example",
            "/a\\b",
            "https://evil.example",
            "javascript:alert(1)",
            "me",
            "",
        ];
        for next in evil {
            assert_eq!(local_redirect_target(Some(next)), None, "{next:?}");
        }
        assert_eq!(local_redirect_target(Some(&format!("/{}", "a".repeat(MAX_LOCAL_REDIRECT_BYTES)))), None);
        assert_eq!(local_redirect_target(None), None);
    }
}
