//! The platforms a hook binary is built for (`linux-x86_64`, `macos-aarch64`, …), how an
//! executable's own header says which one it is, and the marker by which a hook binary
//! names itself and its version.
//!
//! Invariants: a platform's name is `<os>-<arch>` with the names `uname` gives after the
//! install script's normalisation (`Darwin` → `macos`, `arm64` → `aarch64`, `amd64` →
//! `x86_64`); an executable's platform is read from its header (ELF, Mach-O, PE), never
//! from its file name; a universal (fat) Mach-O is refused, since the install script
//! downloads one architecture.

use std::fmt;

/// Every hook binary carries this text with its version (`status` prints it), so a file
/// given to `sightline hook-binaries add` can be told apart from any other executable.
/// The closing `/` ends the version: in the binary the text runs on into the next one.
pub const HOOK_BINARY_MARKER: &str = concat!("sightline-hook-binary/", env!("CARGO_PKG_VERSION"), "/");

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Os {
    Linux,
    Macos,
    Windows,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Arch {
    X86_64,
    Aarch64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Platform {
    pub os: Os,
    pub arch: Arch,
}

impl Platform {
    /// The platforms a release builds (packaging/release.md), in the order pages list them.
    pub const RELEASED: [Platform; 5] = [
        Platform { os: Os::Linux, arch: Arch::X86_64 },
        Platform { os: Os::Linux, arch: Arch::Aarch64 },
        Platform { os: Os::Macos, arch: Arch::Aarch64 },
        Platform { os: Os::Macos, arch: Arch::X86_64 },
        Platform { os: Os::Windows, arch: Arch::X86_64 },
    ];

    /// The platform this program was built for, when it is one we release.
    pub fn current() -> Option<Platform> {
        let os = match std::env::consts::OS {
            "linux" => Os::Linux,
            "macos" => Os::Macos,
            "windows" => Os::Windows,
            _ => return None,
        };
        let arch = match std::env::consts::ARCH {
            "x86_64" => Arch::X86_64,
            "aarch64" => Arch::Aarch64,
            _ => return None,
        };
        Some(Platform { os, arch })
    }

    pub fn parse(name: &str) -> Option<Platform> {
        Platform::RELEASED.into_iter().find(|p| p.to_string() == name)
    }

    /// The file name a hook binary for this platform has in `<data_dir>/bin/`.
    pub fn hook_file_name(self) -> String {
        let exe = if self.os == Os::Windows { ".exe" } else { "" };
        format!("sightline-hook-{self}{exe}")
    }

    /// The hook binary's own name on a machine of this platform.
    pub fn hook_program_name(self) -> &'static str {
        if self.os == Os::Windows { "sightline-hook.exe" } else { "sightline-hook" }
    }

    /// Which platform an executable is for, from its header; an error says what the
    /// file is instead.
    pub fn of_executable(bytes: &[u8]) -> Result<Platform, String> {
        let u16_le = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        let u32_le = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        if bytes.starts_with(b"\x7fELF") {
            if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
                return Err("an ELF file that is not 64-bit little-endian".into());
            }
            return match u16_le(18) {
                Some(0x3E) => Ok(Platform { os: Os::Linux, arch: Arch::X86_64 }),
                Some(0xB7) => Ok(Platform { os: Os::Linux, arch: Arch::Aarch64 }),
                other => Err(format!("an ELF executable for machine {other:?}, neither x86_64 nor aarch64")),
            };
        }
        if bytes.starts_with(&[0xCF, 0xFA, 0xED, 0xFE]) {
            return match u32_le(4) {
                Some(0x0100_0007) => Ok(Platform { os: Os::Macos, arch: Arch::X86_64 }),
                Some(0x0100_000C) => Ok(Platform { os: Os::Macos, arch: Arch::Aarch64 }),
                other => Err(format!("a Mach-O executable for CPU type {other:?}, neither x86_64 nor arm64")),
            };
        }
        if bytes.starts_with(&[0xCA, 0xFE, 0xBA, 0xBE]) {
            return Err("a universal (fat) Mach-O binary; add the arm64 and x86_64 binaries one by one".into());
        }
        if bytes.starts_with(b"MZ") {
            let header = u32_le(0x3C).map(|at| at as usize);
            let signed = header.and_then(|at| bytes.get(at..at + 4)).is_some_and(|sig| sig == b"PE\0\0");
            return match header.filter(|_| signed).and_then(|at| u16_le(at + 4)) {
                Some(0x8664) => Ok(Platform { os: Os::Windows, arch: Arch::X86_64 }),
                Some(0xAA64) => Ok(Platform { os: Os::Windows, arch: Arch::Aarch64 }),
                Some(other) => Err(format!("a Windows executable for machine {other:#06x}, neither x86_64 nor arm64")),
                None => Err("an MZ file without a PE header".into()),
            };
        }
        Err("not an executable (no ELF, Mach-O or PE header)".into())
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = match self.os {
            Os::Linux => "linux",
            Os::Macos => "macos",
            Os::Windows => "windows",
        };
        let arch = match self.arch {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        };
        write!(f, "{os}-{arch}")
    }
}

/// The version a hook binary's marker names, when the bytes carry the marker.
pub fn hook_binary_version(bytes: &[u8]) -> Option<String> {
    let prefix = HOOK_BINARY_MARKER.split('/').next().unwrap_or_default();
    let pattern = format!(r"(?-u){prefix}/([0-9A-Za-z.+\-]{{1,40}})/");
    let found = regex::bytes::Regex::new(&pattern).ok()?.captures(bytes)?;
    Some(String::from_utf8_lossy(&found[1]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(machine: u16) -> Vec<u8> {
        let mut bytes = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
        bytes.resize(18, 0);
        bytes.extend_from_slice(&machine.to_le_bytes());
        bytes.resize(64, 0);
        bytes
    }

    fn pe(machine: u16) -> Vec<u8> {
        let mut bytes = b"MZ".to_vec();
        bytes.resize(0x3C, 0);
        bytes.extend_from_slice(&0x80u32.to_le_bytes());
        bytes.resize(0x80, 0);
        bytes.extend_from_slice(b"PE\0\0");
        bytes.extend_from_slice(&machine.to_le_bytes());
        bytes
    }

    #[test]
    fn headers_name_their_platform() {
        assert_eq!(Platform::of_executable(&elf(0x3E)).unwrap().to_string(), "linux-x86_64");
        assert_eq!(Platform::of_executable(&elf(0xB7)).unwrap().to_string(), "linux-aarch64");
        let macho = |cpu: u32| [[0xCF, 0xFA, 0xED, 0xFE], cpu.to_le_bytes()].concat();
        assert_eq!(Platform::of_executable(&macho(0x0100_000C)).unwrap().to_string(), "macos-aarch64");
        assert_eq!(Platform::of_executable(&macho(0x0100_0007)).unwrap().to_string(), "macos-x86_64");
        assert_eq!(Platform::of_executable(&pe(0x8664)).unwrap().to_string(), "windows-x86_64");
        assert_eq!(Platform::of_executable(&pe(0x8664)).unwrap().hook_file_name(), "sightline-hook-windows-x86_64.exe");
    }

    #[test]
    fn other_files_are_refused_with_what_they_are() {
        assert!(Platform::of_executable(&elf(0x28)).unwrap_err().contains("neither x86_64 nor aarch64"));
        assert!(Platform::of_executable(b"#!/bin/sh\necho hi\n").unwrap_err().contains("not an executable"));
        assert!(Platform::of_executable(&[0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 2]).unwrap_err().contains("universal"));
        assert!(Platform::of_executable(b"MZ").unwrap_err().contains("without a PE header"));
        assert!(Platform::of_executable(&[]).is_err());
    }

    #[test]
    fn the_running_program_is_a_released_platform_and_reads_its_own_header() {
        let current = Platform::current().expect("tests run on a released platform");
        assert_eq!(Platform::parse(&current.to_string()), Some(current));
        let own = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(Platform::of_executable(&own), Ok(current));
        assert_eq!(Platform::parse("linux-mips"), None);
    }

    #[test]
    fn the_marker_names_its_version() {
        let bytes = [b"\0\0junk".as_slice(), HOOK_BINARY_MARKER.as_bytes(), b"\0more"].concat();
        assert_eq!(hook_binary_version(&bytes).as_deref(), Some(env!("CARGO_PKG_VERSION")));
        assert_eq!(hook_binary_version(b"sightline-hook-binary/"), None);
        assert_eq!(hook_binary_version(b"sightline-hook-binary/1.2.3not-ended"), None);
        assert_eq!(hook_binary_version(b"no marker"), None);
    }
}
