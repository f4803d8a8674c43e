//! Files that are wholly ours: Copilot CLI's `~/.copilot/hooks/sightline.json`, the
//! OpenCode plugin, Cline's hook executables. Installing writes them (or leaves them when
//! they already say the same); a file of the same name that is not ours is left alone and
//! reported, never overwritten; uninstalling removes only files that are ours.

use std::path::PathBuf;

use super::Outcome;
use super::json_file::write_atomically;

#[derive(Debug, Clone)]
pub struct OwnedFile {
    pub path: PathBuf,
    pub content: String,
    pub executable: bool,
    /// Whether existing text at `path` was written by us.
    pub is_ours: fn(&str) -> bool,
}

/// The marker our plugin and scripts carry.
pub const MARKER: &str = "sightline-managed";

pub fn has_marker(text: &str) -> bool {
    text.contains(MARKER)
}

pub fn install(file: &OwnedFile) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::default();
    match std::fs::read_to_string(&file.path) {
        Ok(existing) if existing == file.content => {
            outcome.lines.push(format!("{}: already installed, nothing changed", file.path.display()));
            return Ok(outcome);
        }
        Ok(existing) if !(file.is_ours)(&existing) => {
            outcome.lines.push(format!(
                "{}: exists and was not written by sightline; left alone (move it aside to install ours)",
                file.path.display()
            ));
            return Ok(outcome);
        }
        _ => {}
    }
    write_atomically(&file.path, &file.content)?;
    #[cfg(unix)]
    if file.executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file.path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| anyhow::anyhow!("cannot make {} executable: {e}", file.path.display()))?;
    }
    outcome.lines.push(format!("{}: written", file.path.display()));
    Ok(outcome)
}

pub fn uninstall(file: &OwnedFile) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::default();
    match std::fs::read_to_string(&file.path) {
        Ok(existing) if (file.is_ours)(&existing) => {
            std::fs::remove_file(&file.path)
                .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", file.path.display()))?;
            outcome.lines.push(format!("{}: removed", file.path.display()));
        }
        Ok(_) => outcome.lines.push(format!("{}: not written by sightline; left alone", file.path.display())),
        Err(_) => outcome.lines.push(format!("{}: not installed, nothing to remove", file.path.display())),
    }
    Ok(outcome)
}
