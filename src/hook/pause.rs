//! Pausing recording: while `$XDG_DATA_HOME/sightline/paused` exists (and, when it holds
//! an end time, until then), hooks read their payload and record nothing. The flusher
//! still ships what was recorded before the pause.

use std::path::PathBuf;

use super::local;

fn pause_path() -> PathBuf {
    local::data_dir().join("paused")
}

/// When recording resumes: `Some(None)` paused until `resume`, `Some(Some(ms))` paused
/// until that time, `None` recording.
pub fn paused_until() -> Option<Option<i64>> {
    let text = std::fs::read_to_string(pause_path()).ok()?;
    match text.trim().parse::<i64>() {
        Ok(until) if until <= crate::clock::system_now_ms() => None,
        Ok(until) => Some(Some(until)),
        Err(_) => Some(None),
    }
}

pub fn pause(until_ms: Option<i64>) -> std::io::Result<()> {
    std::fs::create_dir_all(local::data_dir())?;
    std::fs::write(pause_path(), until_ms.map(|ms| ms.to_string()).unwrap_or_else(|| "indefinitely".into()))
}

pub fn resume() -> std::io::Result<bool> {
    match std::fs::remove_file(pause_path()) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err),
    }
}

/// Parses `90s`, `30m`, `2h`, `1d` into milliseconds.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: i64 = number.parse().map_err(|_| format!("{text:?} is not a duration like 30m, 2h or 1d"))?;
    let unit_ms = match unit {
        "s" => 1_000,
        "m" | "" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("{text:?}: the unit must be s, m, h or d")),
    };
    if number <= 0 || number > 365 * 86_400_000 / unit_ms {
        return Err(format!("{text:?}: must be more than 0 and at most a year"));
    }
    Ok(number * unit_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_bad_ones_are_named() {
        assert_eq!(parse_duration("90s"), Ok(90_000));
        assert_eq!(parse_duration("30m"), Ok(1_800_000));
        assert_eq!(parse_duration("2h"), Ok(7_200_000));
        assert_eq!(parse_duration("1d"), Ok(86_400_000));
        assert!(parse_duration("2w").unwrap_err().contains("unit"));
        assert!(parse_duration("soon").unwrap_err().contains("soon"));
        assert!(parse_duration("0m").is_err());
    }
}
