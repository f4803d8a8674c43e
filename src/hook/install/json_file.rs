//! Editing an agent's JSON settings file without disturbing what the person wrote: key
//! order is kept (serde_json `preserve_order`), the indentation unit and the trailing
//! newline are detected and reused, and a file that ends up semantically equal to an
//! earlier backup is restored byte for byte from it.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

/// How a JSON file was laid out, so it can be written back the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    indent: Vec<u8>,
    trailing_newline: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout { indent: b"  ".to_vec(), trailing_newline: true }
    }
}

impl Layout {
    /// The indentation of the first indented line (spaces or tabs), else two spaces.
    pub fn detect(text: &str) -> Layout {
        let indent = text
            .lines()
            .skip(1)
            .map(|line| line.len() - line.trim_start_matches([' ', '\t']).len())
            .zip(text.lines().skip(1))
            .find(|(width, _)| *width > 0)
            .map(|(width, line)| line.as_bytes()[..width].to_vec())
            .unwrap_or_else(|| b"  ".to_vec());
        Layout { indent, trailing_newline: text.is_empty() || text.ends_with('\n') }
    }

    pub fn render(&self, value: &Value) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&self.indent);
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        value.serialize(&mut serializer).expect("a JSON value always serializes");
        let mut text = String::from_utf8(out).expect("serde_json writes UTF-8");
        if self.trailing_newline {
            text.push('\n');
        }
        text
    }
}

/// Reads a JSON settings file: `None` when it does not exist; an error naming the file
/// when it is not a JSON object (the installer must not overwrite what it cannot read).
pub fn read_object(path: &Path) -> anyhow::Result<Option<(Value, String)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(anyhow::anyhow!("cannot read {}: {err}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Some((Value::Object(Default::default()), text)));
    }
    let value: Value = serde_json::from_str(&text)
        .map_err(|err| anyhow::anyhow!("{} is not valid JSON ({err}); fix it and run install again", path.display()))?;
    anyhow::ensure!(value.is_object(), "{} is not a JSON object; not touching it", path.display());
    Ok(Some((value, text)))
}

/// Writes `text` to `path` through a temporary file and a rename, keeping the file's
/// permissions when it existed.
pub fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    let temp = path.with_extension("sightline-partial");
    std::fs::write(&temp, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", temp.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).map_err(|e| anyhow::anyhow!("cannot replace {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_round_trips_common_styles() {
        for text in [
            "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n",
            "{\n    \"z\": {\n        \"y\": true\n    },\n    \"a\": null\n}",
            "{\n\t\"hooks\": {}\n}\n",
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(Layout::detect(text).render(&value), text);
        }
    }
}
