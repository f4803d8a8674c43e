//! The machine's own environment: where a developer's agents keep their files, the host's
//! name, the terminal's width, the CI run's ref. These are not Sightline settings (a
//! developer's `HOME` is not configured in `sightline.toml`), but they are read here, by
//! name from one list, so that every environment read of the program lives in `config/`
//! and `grep MachineVariable` finds them all.
//!
//! Invariant: nothing outside `config/` calls `std::env::var`; a new machine variable is
//! one more [`MachineVariable`] and is listed in `docs/hook-cli.md`.

use std::path::PathBuf;

/// A variable the machine sets, not Sightline's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineVariable {
    /// The person's home directory.
    Home,
    /// Windows' home directory, when `HOME` is not set (as it usually is not there).
    UserProfile,
    /// The XDG base directories; relative values are ignored, as the specification says.
    XdgConfigHome,
    XdgDataHome,
    /// Where Claude Code, Codex and Copilot CLI keep their configuration and sessions.
    ClaudeConfigDir,
    CodexHome,
    CopilotHome,
    /// opencode's session database, when moved from its default.
    OpenCodeDb,
    /// The host's name when `/proc` does not say it (and Windows' `COMPUTERNAME`).
    Hostname,
    ComputerName,
    /// GitHub Actions' ref of the run (`refs/pull/<n>/merge` on a pull request).
    GithubRef,
    /// The terminal's width in columns.
    Columns,
    /// Set (to anything) to keep the hook from starting a background flusher: tests and
    /// the benchmarks flush themselves.
    NoFlusher,
    /// Set by a CI job or an evaluation harness in the agent's environment: the run kind
    /// of every event the hook records (`INTERACTIVE`, `CI` or `EVAL`).
    SightlineRunKind,
    /// Set by an evaluation harness: the cell (`<harness>__<model>__<task_id>__r<repeat>`),
    /// run and phase the agent's session is run for (`hook::eval_tag`).
    SightlineEvalCell,
    SightlineEvalRun,
    SightlineEvalPhase,
}

impl MachineVariable {
    pub const ALL: &'static [MachineVariable] = &[
        Self::Home,
        Self::UserProfile,
        Self::XdgConfigHome,
        Self::XdgDataHome,
        Self::ClaudeConfigDir,
        Self::CodexHome,
        Self::CopilotHome,
        Self::OpenCodeDb,
        Self::Hostname,
        Self::ComputerName,
        Self::GithubRef,
        Self::Columns,
        Self::NoFlusher,
        Self::SightlineRunKind,
        Self::SightlineEvalCell,
        Self::SightlineEvalRun,
        Self::SightlineEvalPhase,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Home => "HOME",
            Self::UserProfile => "USERPROFILE",
            Self::XdgConfigHome => "XDG_CONFIG_HOME",
            Self::XdgDataHome => "XDG_DATA_HOME",
            Self::ClaudeConfigDir => "CLAUDE_CONFIG_DIR",
            Self::CodexHome => "CODEX_HOME",
            Self::CopilotHome => "COPILOT_HOME",
            Self::OpenCodeDb => "OPENCODE_DB",
            Self::Hostname => "HOSTNAME",
            Self::ComputerName => "COMPUTERNAME",
            Self::GithubRef => "GITHUB_REF",
            Self::Columns => "COLUMNS",
            Self::NoFlusher => "SIGHTLINE_NO_FLUSHER",
            Self::SightlineRunKind => "SIGHTLINE_RUN_KIND",
            Self::SightlineEvalCell => "SIGHTLINE_EVAL_CELL",
            Self::SightlineEvalRun => "SIGHTLINE_EVAL_RUN",
            Self::SightlineEvalPhase => "SIGHTLINE_EVAL_PHASE",
        }
    }

    /// The value as a path, when set and not empty.
    pub fn path(self) -> Option<PathBuf> {
        std::env::var_os(self.name()).filter(|value| !value.is_empty()).map(PathBuf::from)
    }

    /// The value as text, when set and valid UTF-8.
    pub fn text(self) -> Option<String> {
        std::env::var(self.name()).ok()
    }

    pub fn is_set(self) -> bool {
        std::env::var_os(self.name()).is_some()
    }
}

/// The person's home directory: `HOME`, else on Windows `USERPROFILE`, else `.`.
pub fn home_dir() -> PathBuf {
    MachineVariable::Home
        .path()
        .or_else(|| if cfg!(windows) { MachineVariable::UserProfile.path() } else { None })
        .unwrap_or_else(|| PathBuf::from("."))
}

/// A directory an agent lets a variable move, else `~/<fallback>`; with `absolute_only`
/// a relative value is ignored (the XDG rule).
pub fn directory(variable: MachineVariable, fallback: &str, absolute_only: bool) -> PathBuf {
    variable.path().filter(|path| !absolute_only || path.is_absolute()).unwrap_or_else(|| home_dir().join(fallback))
}

/// The process's whole environment, for the configuration's environment layer.
pub fn process_environment() -> impl Iterator<Item = (String, String)> {
    std::env::vars()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_machine_variable_has_its_own_name() {
        let mut names: Vec<&str> = MachineVariable::ALL.iter().map(|v| v.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), MachineVariable::ALL.len());
    }
}
