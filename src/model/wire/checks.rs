//! The field checks of wire contract v1 (`super::validate` applies them): required text,
//! enumerations, lengths, ranges and times, and each nested object (tool, usage, git,
//! metadata) with the rejection naming the field that is wrong.

use super::*;

pub(super) fn missing(field: &str) -> Rejection {
    Rejection::new(field, "is required")
}

pub(super) fn required<'a>(field: &str, value: Option<&'a str>) -> Result<&'a str, Rejection> {
    value.ok_or_else(|| missing(field))
}

pub(super) fn parse_enum<T>(
    field: &str,
    value: Option<&str>,
    parse: fn(&str) -> Option<T>,
    expected: fn() -> String,
) -> Result<Option<T>, Rejection> {
    match value {
        None => Ok(None),
        Some(text) => parse(text)
            .map(Some)
            .ok_or_else(|| Rejection::new(field, format!("unknown value {text:?}; expected one of {}", expected()))),
    }
}

pub(super) fn check_text(field: &str, value: &str, min_chars: usize, max_chars: usize) -> Result<(), Rejection> {
    let chars = value.chars().count();
    if chars < min_chars {
        let reason = if min_chars == 1 {
            "must not be empty".to_string()
        } else {
            format!("must be at least {min_chars} characters")
        };
        return Err(Rejection::new(field, reason));
    }
    if chars > max_chars {
        return Err(Rejection::new(field, format!("is longer than {max_chars} characters")));
    }
    if value.chars().any(char::is_control) {
        return Err(Rejection::new(field, "must not contain control characters"));
    }
    Ok(())
}

pub(super) fn check_range(field: &str, value: i64, min: i64, max: i64) -> Result<(), Rejection> {
    if value < min || value > max {
        return Err(Rejection::new(field, format!("must be between {min} and {max}")));
    }
    Ok(())
}

pub(super) fn parse_ts(text: &str, limits: &EventLimits, now_ms: i64) -> Result<i64, Rejection> {
    let ts_ms = crate::model::parse_rfc3339_ms(text)
        .ok_or_else(|| Rejection::new("ts", "must be an RFC 3339 timestamp such as 2026-11-21T09:30:00.123Z"))?;
    if ts_ms > now_ms + limits.max_future_skew_ms {
        return Err(Rejection::new("ts", "is too far in the future (check the machine's clock)"));
    }
    if ts_ms < now_ms - limits.max_age_ms {
        return Err(Rejection::new("ts", "is older than the server accepts"));
    }
    Ok(ts_ms)
}

pub(super) fn validate_tool(tool: DraftTool, agent_type: AgentType) -> Result<ToolFields, Rejection> {
    let name = tool.name.ok_or_else(|| missing("tool.name"))?;
    check_text("tool.name", &name, 3, MAX_NAME_CHARS)?;
    match name.split_once(':') {
        Some((prefix, rest)) if prefix == agent_type.as_str() && !rest.is_empty() => {}
        _ => {
            return Err(Rejection::new(
                "tool.name",
                format!("must be <agent>:<tool> with the event's agent, e.g. {}:Bash", agent_type.as_str()),
            ));
        }
    }
    for (field, value) in [
        ("tool.server", &tool.server),
        ("tool.skill", &tool.skill),
        ("tool.slash_command", &tool.slash_command),
        ("tool.use_id", &tool.use_id),
    ] {
        if let Some(value) = value {
            check_text(field, value, 1, MAX_NAME_CHARS)?;
        }
    }
    let status = parse_enum("tool.status", tool.status.as_deref(), ToolStatus::parse, ToolStatus::expected)?;
    for (field, value) in [
        ("tool.duration_ms", tool.duration_ms),
        ("tool.input_bytes", tool.input_bytes),
        ("tool.output_bytes", tool.output_bytes),
    ] {
        if let Some(value) = value {
            let max = if field == "tool.duration_ms" { MAX_DURATION_MS } else { i64::from(u32::MAX) * 16 };
            check_range(field, value, 0, max)?;
        }
    }
    if let Some(action) = tool.action.as_deref()
        && (action.is_empty() || action.len() > 32 || !action.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
    {
        return Err(Rejection::new("tool.action", "must be 1-32 lowercase letters or underscores"));
    }
    Ok(ToolFields {
        name: crate::model::tool_names::canonical_name(agent_type, name),
        server: tool.server,
        skill: tool.skill,
        slash_command: tool.slash_command,
        use_id: tool.use_id,
        status,
        duration_ms: tool.duration_ms,
        input_sha256: parse_digest("tool.input_sha256", tool.input_sha256.as_deref())?,
        input_bytes: tool.input_bytes,
        output_sha256: parse_digest("tool.output_sha256", tool.output_sha256.as_deref())?,
        output_bytes: tool.output_bytes,
        target_hash: parse_digest("tool.target_hash", tool.target_hash.as_deref())?,
        action: tool.action,
    })
}

pub(super) fn parse_digest(field: &str, value: Option<&str>) -> Result<Option<[u8; 32]>, Rejection> {
    let Some(text) = value else { return Ok(None) };
    let mut digest = [0u8; 32];
    if text.len() != 64 || hex::decode_to_slice(text, &mut digest).is_err() {
        return Err(Rejection::new(field, "must be a SHA-256 digest: 64 hexadecimal characters"));
    }
    Ok(Some(digest))
}

pub(super) fn validate_usage(usage: DraftUsage) -> Result<Usage, Rejection> {
    let checked = |field: &str, value: Option<i64>| -> Result<i64, Rejection> {
        let value = value.unwrap_or(0);
        check_range(field, value, 0, MAX_TOKENS_PER_KIND)?;
        Ok(value)
    };
    Ok(Usage {
        input_tokens: checked("usage.input_tokens", usage.input_tokens)?,
        output_tokens: checked("usage.output_tokens", usage.output_tokens)?,
        cache_read_tokens: checked("usage.cache_read_tokens", usage.cache_read_tokens)?,
        cache_write_5m_tokens: checked("usage.cache_write_5m_tokens", usage.cache_write_5m_tokens)?,
        cache_write_1h_tokens: checked("usage.cache_write_1h_tokens", usage.cache_write_1h_tokens)?,
        reasoning_tokens: checked("usage.reasoning_tokens", usage.reasoning_tokens)?,
    })
}

pub(super) fn validate_client_cost(usd: f64) -> Result<i64, Rejection> {
    if !usd.is_finite() || !(0.0..=1_000_000.0).contains(&usd) {
        return Err(Rejection::new("client_cost_usd", "must be a number between 0 and 1000000"));
    }
    Ok((usd * NUSD_PER_USD as f64).round() as i64)
}

pub(super) fn validate_git(git: DraftGit) -> Result<GitContext, Rejection> {
    if let Some(branch) = git.branch.as_deref() {
        check_text("git.branch", branch, 1, 255)?;
    }
    if let Some(commit) = git.commit.as_deref()
        && !(4..=64).contains(&commit.len()) | !commit.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(Rejection::new("git.commit", "must be a hexadecimal commit id"));
    }
    if let Some(remote) = git.remote.as_deref() {
        check_text("git.remote", remote, 1, 1024)?;
    }
    Ok(GitContext {
        branch: git.branch,
        commit: git.commit.map(|c| c.to_ascii_lowercase()),
        remote: git.remote,
        dirty: git.dirty,
    })
}

pub(super) fn validate_metadata(
    map: serde_json::Map<String, serde_json::Value>,
    limits: &EventLimits,
) -> Result<serde_json::Value, Rejection> {
    let value = serde_json::Value::Object(map);
    if depth(&value) > MAX_METADATA_DEPTH {
        return Err(Rejection::new("metadata", format!("is nested deeper than {MAX_METADATA_DEPTH} levels")));
    }
    // serde_json's compact form is what is stored, so its length is the stored size.
    let size = serde_json::to_string(&value).map(|text| text.len()).unwrap_or(usize::MAX);
    if size > limits.max_metadata_bytes {
        return Err(Rejection::new(
            "metadata",
            format!("is {size} bytes; the limit is {} bytes", limits.max_metadata_bytes),
        ));
    }
    Ok(value)
}

pub(super) fn depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}
