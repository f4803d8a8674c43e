//! The search box's language, parsed into clauses before any index is touched:
//!
//! - `word` — messages containing the word (every word must be present);
//! - `"two words"` — the words next to each other, in that order;
//! - `-word`, `-"two words"` — messages without it;
//! - `tool:NAME`, `agent:NAME`, `role:ROLE` — exact, case-insensitive;
//! - `model:PREFIX` — models starting with it (`model:claude-sonnet`);
//! - `session:ID`;
//! - `after:DATE` (from that day on), `before:DATE` (up to, not including, that day);
//!   DATE is `YYYY-MM-DD` (UTC) or an RFC 3339 time.
//!
//! Invariants: a `key:value` whose key is not one of the above is ordinary text (so
//! `http://host` or `std::fs` search as text); a known key with a bad value is an error
//! naming it; parsing never consults the index.

use crate::model::AgentType;
use crate::transcripts::model::Role;

/// One clause of a parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clause {
    /// Text to match: a single word, a compound (`foo.rs`) or a quoted phrase; all of
    /// its words, in order, adjacent. `negated` excludes instead.
    Text {
        text: String,
        negated: bool,
    },
    Tool(String),
    Agent(String),
    Model(String),
    Role(Role),
    Session(String),
    /// Messages at or after this time (ms).
    After(i64),
    /// Messages before this time (ms).
    Before(i64),
}

/// A query the caller wrote wrongly; `term` is the part that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct QueryError {
    pub term: String,
    pub message: String,
}

fn invalid(term: &str, message: impl Into<String>) -> QueryError {
    QueryError { term: term.to_string(), message: message.into() }
}

/// Splits the query into words, keeping quoted phrases (and `key:"quoted value"`) whole.
fn words(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in query.chars() {
        match c {
            '"' => {
                current.push(c);
                quoted = !quoted;
            }
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn unquote(text: &str) -> &str {
    let text = text.strip_prefix('"').unwrap_or(text);
    text.strip_suffix('"').unwrap_or(text)
}

/// Parses a date filter's value: a UTC day (its first millisecond) or an RFC 3339 time.
fn parse_time(word: &str, value: &str) -> Result<i64, QueryError> {
    let day = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(date) = time::Date::parse(value, &day) {
        return Ok(date.midnight().assume_utc().unix_timestamp() * 1000);
    }
    time::OffsetDateTime::parse(value, &time::format_description::well_known::Rfc3339)
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
        .map_err(|_| invalid(word, format!("{word:?}: the date must be YYYY-MM-DD or an RFC 3339 time")))
}

fn filter(word: &str, key: &str, value: &str) -> Result<Option<Clause>, QueryError> {
    if value.is_empty() {
        return Err(invalid(word, format!("{word:?}: {key}: needs a value")));
    }
    let lower = value.to_ascii_lowercase();
    Ok(Some(match key {
        "tool" => Clause::Tool(lower),
        "model" => Clause::Model(lower),
        "session" => Clause::Session(value.to_string()),
        "agent" => match AgentType::parse_lenient(value) {
            Some(agent) => Clause::Agent(agent.as_str().to_string()),
            None => {
                return Err(invalid(
                    word,
                    format!("{word:?}: unknown agent; expected one of {}", AgentType::expected()),
                ));
            }
        },
        "role" => match Role::parse(&lower) {
            Some(role) => Clause::Role(role),
            None => {
                return Err(invalid(
                    word,
                    format!("{word:?}: unknown role; expected user, assistant, reasoning, tool, system or raw"),
                ));
            }
        },
        "after" => Clause::After(parse_time(word, value)?),
        "before" => Clause::Before(parse_time(word, value)?),
        _ => return Ok(None),
    }))
}

/// Parses a query. An empty query, or one with nothing but exclusions, is an error.
pub fn parse(query: &str) -> Result<Vec<Clause>, QueryError> {
    let mut clauses = Vec::new();
    for word in words(query) {
        if let Some((key, value)) = word.split_once(':')
            && !key.starts_with('"')
            && let Some(clause) = filter(&word, &key.to_ascii_lowercase(), unquote(value))?
        {
            clauses.push(clause);
            continue;
        }
        let (negated, text) = match word.strip_prefix('-') {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, word.as_str()),
        };
        let text = unquote(text).trim();
        if !text.is_empty() {
            clauses.push(Clause::Text { text: text.to_string(), negated });
        }
    }
    if clauses.is_empty() {
        return Err(invalid(query, "the query is empty; give words, a \"phrase\" or a filter such as tool:bash"));
    }
    if clauses.iter().all(|c| matches!(c, Clause::Text { negated: true, .. })) {
        return Err(invalid(query, "the query only excludes; say what to look for as well"));
    }
    Ok(clauses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Clause {
        Clause::Text { text: t.into(), negated: false }
    }

    #[test]
    fn words_phrases_and_filters_are_told_apart() {
        let clauses =
            parse(r#"rate limit "login test" -flaky tool:Bash agent:claude-code model:Claude-Sonnet role:user"#)
                .expect("valid");
        assert_eq!(
            clauses,
            vec![
                text("rate"),
                text("limit"),
                text("login test"),
                Clause::Text { text: "flaky".into(), negated: true },
                Clause::Tool("bash".into()),
                Clause::Agent("claude_code".into()),
                Clause::Model("claude-sonnet".into()),
                Clause::Role(Role::User),
            ]
        );
    }

    #[test]
    fn dates_are_utc_days_or_rfc3339_times() {
        let clauses = parse("after:2026-11-01 before:2026-11-02T12:00:00Z deploy").expect("valid");
        assert_eq!(clauses[0], Clause::After(1_793_491_200_000));
        assert_eq!(clauses[1], Clause::Before(1_793_620_800_000));
    }

    #[test]
    fn unknown_keys_are_text_and_quoted_filter_values_are_whole() {
        let clauses = parse(r#"http://example.com std::fs tool:"mcp__github__create_pr""#).expect("valid");
        assert_eq!(
            clauses,
            vec![text("http://example.com"), text("std::fs"), Clause::Tool("mcp__github__create_pr".into())]
        );
    }

    #[test]
    fn bad_values_name_the_word() {
        let err = parse("deploy after:yesterday").expect_err("bad date");
        assert_eq!(err.term, "after:yesterday");
        assert!(err.message.contains("YYYY-MM-DD"), "{}", err.message);
        assert_eq!(parse("agent:vim").expect_err("bad agent").term, "agent:vim");
        assert_eq!(parse("role:robot").expect_err("bad role").term, "role:robot");
        assert_eq!(parse("tool:").expect_err("empty").term, "tool:");
        assert!(parse("   ").is_err());
        assert!(parse("-flaky").expect_err("only excludes").message.contains("only excludes"));
    }
}
