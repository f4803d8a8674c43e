//! The hook binaries this server hands to developer machines (`GET /install.sh` downloads
//! one): a file per platform in `<data_dir>/bin/`, named `sightline-hook-<platform>`,
//! with its SHA-256 in `<data_dir>/bin/SHA256SUMS` (the `sha256sum` format), and the
//! server's own platform built in.
//!
//! Invariants: a binary enters `bin/` only through [`add`], which reads its platform from
//! its header and refuses a file that is not a Sightline hook binary; the digest served
//! is the one recorded when it was added, so a file changed on disk afterwards fails the
//! install script's check instead of being installed; the file and `SHA256SUMS` are each
//! replaced whole (written aside, then renamed), so a reader sees the old or the new,
//! never half. The built-in binary is `sightline-hook` beside the running program (the
//! package installs both), else the running program itself (it carries every developer
//! command too); its digest is computed once per run.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::model::platform::{self, Platform};

const SUMS: &str = "SHA256SUMS";

/// One hook binary the server can hand out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookBinary {
    pub platform: Platform,
    pub path: PathBuf,
    /// SHA-256 of the file as recorded, lower-case hex.
    pub sha256: String,
    /// False for the built-in one (not in `bin/`).
    pub registered: bool,
}

/// What [`add`] did.
#[derive(Debug)]
pub struct Added {
    pub binary: HookBinary,
    pub version: String,
    /// The digest of the binary it replaced for that platform, if any.
    pub replaced: Option<String>,
}

pub fn bin_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("bin")
}

/// Checks `source` (a Sightline hook binary, for a platform we release) and registers a
/// copy of it as that platform's binary, replacing the one before.
pub fn add(data_dir: &Path, source: &Path) -> anyhow::Result<Added> {
    let bytes = std::fs::read(source).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", source.display()))?;
    let platform = Platform::of_executable(&bytes).map_err(|what| anyhow::anyhow!("{} is {what}", source.display()))?;
    anyhow::ensure!(
        Platform::RELEASED.contains(&platform),
        "{} is for {platform}, a platform Sightline does not release",
        source.display()
    );
    let version = platform::hook_binary_version(&bytes).ok_or_else(|| {
        anyhow::anyhow!(
            "{} is a {platform} executable but not a Sightline hook binary (it does not carry \"{}\")",
            source.display(),
            platform::HOOK_BINARY_MARKER.split('/').next().unwrap_or_default()
        )
    })?;
    let dir = bin_dir(data_dir);
    std::fs::create_dir_all(&dir)?;
    let sha256 = crate::model::sha256_hex(&bytes);
    let path = dir.join(platform.hook_file_name());
    write_whole(&path, &bytes, true)?;
    let mut sums = read_sums(&dir)?;
    let replaced = sums.insert(platform.hook_file_name(), sha256.clone()).filter(|old| *old != sha256);
    let text: String = sums.iter().map(|(file, digest)| format!("{digest}  {file}\n")).collect();
    write_whole(&dir.join(SUMS), text.as_bytes(), false)?;
    Ok(Added { binary: HookBinary { platform, path, sha256, registered: true }, version, replaced })
}

/// Every binary the server can hand out, per platform: the registered ones, and the
/// built-in one for the server's own platform when none is registered for it.
pub fn list(data_dir: &Path) -> anyhow::Result<Vec<HookBinary>> {
    let mut found: BTreeMap<Platform, HookBinary> = BTreeMap::new();
    let dir = bin_dir(data_dir);
    for (file, sha256) in read_sums(&dir)? {
        if let Some(platform) = Platform::RELEASED.into_iter().find(|p| p.hook_file_name() == file) {
            found.insert(platform, HookBinary { platform, path: dir.join(file), sha256, registered: true });
        }
    }
    if let Some(own) = built_in()
        && !found.contains_key(&own.platform)
    {
        found.insert(own.platform, own.clone());
    }
    Ok(found.into_values().collect())
}

/// The binary for `platform`, if the server has one.
pub fn find(data_dir: &Path, platform: Platform) -> anyhow::Result<Option<HookBinary>> {
    Ok(list(data_dir)?.into_iter().find(|binary| binary.platform == platform))
}

/// The server's own platform's binary: `sightline-hook` beside the running program, else
/// the running program.
fn built_in() -> Option<&'static HookBinary> {
    static BUILT_IN: OnceLock<Option<HookBinary>> = OnceLock::new();
    BUILT_IN
        .get_or_init(|| {
            let platform = Platform::current()?;
            let program = std::env::current_exe().ok()?;
            let sibling = program.with_file_name(platform.hook_program_name());
            let path = if sibling.is_file() { sibling } else { program };
            let sha256 = crate::model::sha256_hex(&std::fs::read(&path).ok()?);
            Some(HookBinary { platform, path, sha256, registered: false })
        })
        .as_ref()
}

fn read_sums(dir: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let text = match std::fs::read_to_string(dir.join(SUMS)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => anyhow::bail!("cannot read {}: {e}", dir.join(SUMS).display()),
    };
    Ok(text
        .lines()
        .filter_map(|line| {
            let (digest, file) = line.split_once("  ")?;
            let digest = digest.trim();
            (digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| (file.trim_start_matches('*').to_string(), digest.to_ascii_lowercase()))
        })
        .collect())
}

/// Writes `path` whole: aside first, synced, then renamed over it.
fn write_whole(path: &Path, bytes: &[u8], executable: bool) -> anyhow::Result<()> {
    let aside = path.with_extension("partial");
    let mut file = std::fs::File::create(&aside)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&aside, std::fs::Permissions::from_mode(0o755))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    std::fs::rename(&aside, path).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
