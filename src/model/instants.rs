//! How an instant and a repository read on a page: relative to now ("3 h ago") with the
//! exact UTC time kept for the hover and the CSV, and a git remote as `owner/name` linked
//! to its host. One format for each kind of instant across the pages.
//!
//! Invariants: the exact form is `2026-11-26 08:01:26 UTC` everywhere a person reads it
//! (CSV and JSON keep RFC 3339 with milliseconds); a time in the future (clock skew)
//! reads "just now"; credentials in a remote never reach the display or the link.

/// `2026-11-26 08:01:26 UTC`.
pub fn exact_utc(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).ok().and_then(|t| t.format(&format).ok()).unwrap_or_default()
}

/// How long before `now_ms` the instant `ms` was: "just now", "5 min ago", "3 h ago",
/// "yesterday", "4 days ago", then the date ("26 Nov", with its year when not this one).
pub fn relative(ms: i64, now_ms: i64) -> String {
    let ago = now_ms - ms;
    const MINUTE: i64 = 60_000;
    const HOUR: i64 = 60 * MINUTE;
    const DAY: i64 = 24 * HOUR;
    match ago {
        i64::MIN..MINUTE => "just now".into(),
        MINUTE..HOUR => format!("{} min ago", ago / MINUTE),
        HOUR..DAY => format!("{} h ago", ago / HOUR),
        DAY..172_800_000 => "yesterday".into(),
        172_800_000..2_592_000_000 => format!("{} days ago", ago / DAY),
        _ => {
            let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000);
            let now = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_ms) * 1_000_000);
            match (at, now) {
                (Ok(at), Ok(now)) if at.year() == now.year() => {
                    format!("{} {}", at.day(), &format!("{:?}", at.month())[..3])
                }
                (Ok(at), _) => format!("{} {} {}", at.day(), &format!("{:?}", at.month())[..3], at.year()),
                _ => String::new(),
            }
        }
    }
}

/// A git remote as `owner/name` and a link to it on its host, when it reads as one
/// (`git@github.com:acme/shop.git`, `https://github.com/acme/shop`,
/// `ssh://git@host:22/acme/shop.git`); `None` for anything else (a local path).
pub fn repository(remote: &str) -> Option<(String, String)> {
    let remote = remote.trim();
    let (host, path) = if let Some(rest) = remote.strip_prefix("git@") {
        rest.split_once(':')?
    } else {
        let rest = remote.split_once("://")?.1;
        // Credentials and a port never reach the page.
        let rest = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
        let (host, path) = rest.split_once('/')?;
        (host.split(':').next()?, path)
    };
    let path = path.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = path.split('/').filter(|part| !part.is_empty());
    let (owner, name) = (parts.next()?, parts.next()?);
    let valid = |text: &str| text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if parts.next().is_some() || !valid(owner) || !valid(name) || !valid(host) || host.is_empty() {
        return None;
    }
    Some((format!("{owner}/{name}"), format!("https://{host}/{owner}/{name}")))
}

/// How long after `now_ms` the instant `ms` comes: "in 25 min", "in 3 h", "in 2 days";
/// "now" once it is past (a grant's expiry, a link's end).
pub fn ahead(ms: i64, now_ms: i64) -> String {
    const MINUTE: i64 = 60_000;
    const HOUR: i64 = 60 * MINUTE;
    const DAY: i64 = 24 * HOUR;
    match ms - now_ms {
        i64::MIN..MINUTE => "now".into(),
        left @ MINUTE..HOUR => format!("in {} min", left / MINUTE),
        left @ HOUR..DAY => format!("in {} h", left / HOUR),
        left => format!("in {} days", left / DAY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_ahead_reads_as_how_long_until_it() {
        let now = 1_700_000_000_000;
        assert_eq!(ahead(now - 5, now), "now");
        assert_eq!(ahead(now + 25 * 60_000 + 10, now), "in 25 min");
        assert_eq!(ahead(now + 3 * 3_600_000, now), "in 3 h");
        assert_eq!(ahead(now + 72 * 3_600_000, now), "in 3 days");
    }

    #[test]
    fn instants_read_relative_with_the_exact_time_kept() {
        let now = 1_795_780_800_000; // 2026-11-27 12:00:00 UTC
        assert_eq!(exact_utc(now), "2026-11-27 12:00:00 UTC");
        assert_eq!(relative(now - 5_000, now), "just now");
        assert_eq!(relative(now + 60_000, now), "just now", "a clock ahead is not the future");
        assert_eq!(relative(now - 5 * 60_000, now), "5 min ago");
        assert_eq!(relative(now - 3 * 3_600_000, now), "3 h ago");
        assert_eq!(relative(now - 30 * 3_600_000, now), "yesterday");
        assert_eq!(relative(now - 4 * 86_400_000, now), "4 days ago");
        assert_eq!(relative(now - 60 * 86_400_000, now), "28 Sep");
        assert_eq!(relative(now - 400 * 86_400_000, now), "23 Oct 2025");
    }

    #[test]
    fn remotes_read_as_owner_and_name() {
        let shop = Some(("acme/shop".to_string(), "https://github.com/acme/shop".to_string()));
        assert_eq!(repository("git@github.com:acme/shop.git"), shop);
        assert_eq!(repository("https://github.com/acme/shop"), shop);
        assert_eq!(repository("https://x-access-token:ghs_secret@github.com/acme/shop.git"), shop);
        assert_eq!(
            repository("ssh://git@git.example.com:2222/acme/shop.git"),
            Some(("acme/shop".into(), "https://git.example.com/acme/shop".into()))
        );
        assert_eq!(repository("/home/ada/src/shop"), None);
        assert_eq!(repository("https://github.com/acme"), None);
        assert_eq!(repository("https://github.com/a/b/c"), None);
    }
}
