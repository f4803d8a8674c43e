use super::*;
use crate::model::platform::{Arch, HOOK_BINARY_MARKER, Os};

/// A minimal arm64 Linux ELF header followed by the marker, as a hook binary for another
/// platform than this machine's would look to `add`.
fn hook_for_linux_aarch64(extra: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
    bytes.resize(18, 0);
    bytes.extend_from_slice(&0xB7u16.to_le_bytes());
    bytes.resize(64, 0);
    bytes.extend_from_slice(HOOK_BINARY_MARKER.as_bytes());
    bytes.extend_from_slice(extra);
    bytes
}

#[test]
fn a_hook_binary_is_registered_with_its_digest_and_replaced_whole() {
    let data = tempfile::tempdir().unwrap();
    let source = data.path().join("downloaded");
    std::fs::write(&source, hook_for_linux_aarch64(b"first")).unwrap();
    let added = add(data.path(), &source).unwrap();
    let arm = Platform { os: Os::Linux, arch: Arch::Aarch64 };
    assert_eq!(added.binary.platform, arm);
    assert_eq!(added.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(added.replaced, None);
    let stored = data.path().join("bin/sightline-hook-linux-aarch64");
    assert_eq!(std::fs::read(&stored).unwrap(), std::fs::read(&source).unwrap());
    let sums = std::fs::read_to_string(data.path().join("bin/SHA256SUMS")).unwrap();
    assert_eq!(sums, format!("{}  sightline-hook-linux-aarch64\n", added.binary.sha256));

    std::fs::write(&source, hook_for_linux_aarch64(b"second")).unwrap();
    let again = add(data.path(), &source).unwrap();
    assert_eq!(again.replaced.as_deref(), Some(added.binary.sha256.as_str()));
    let found = find(data.path(), arm).unwrap().unwrap();
    assert_eq!(found.sha256, crate::model::sha256_hex(&std::fs::read(&stored).unwrap()));
    assert!(found.registered);
    let leftovers: Vec<_> =
        std::fs::read_dir(data.path().join("bin")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 2, "only the binary and SHA256SUMS: {leftovers:?}");
}

#[test]
fn files_that_are_not_hook_binaries_are_refused_and_nothing_is_written() {
    let data = tempfile::tempdir().unwrap();
    let script = data.path().join("install.sh");
    std::fs::write(&script, "#!/bin/sh\necho hello\n").unwrap();
    let refused = add(data.path(), &script).unwrap_err().to_string();
    assert!(refused.contains("not an executable"), "{refused}");

    // A real executable of this platform, but not ours.
    let other = add(data.path(), Path::new("/bin/sh")).unwrap_err().to_string();
    assert!(other.contains("not a Sightline hook binary"), "{other}");
    let missing = add(data.path(), &data.path().join("nowhere")).unwrap_err().to_string();
    assert!(missing.contains("cannot read"), "{missing}");
    assert!(!data.path().join("bin/SHA256SUMS").exists());
}

#[test]
fn the_servers_own_platform_is_built_in_until_one_is_registered() {
    let data = tempfile::tempdir().unwrap();
    let own = Platform::current().unwrap();
    let built_in = find(data.path(), own).unwrap().expect("the own platform is built in");
    assert!(!built_in.registered);
    assert_eq!(built_in.sha256, crate::model::sha256_hex(&std::fs::read(&built_in.path).unwrap()));
    assert_eq!(list(data.path()).unwrap().len(), 1);

    // A SHA256SUMS line with a bad digest or an unknown file is ignored, not served.
    std::fs::create_dir_all(bin_dir(data.path())).unwrap();
    std::fs::write(bin_dir(data.path()).join(SUMS), "xyz  sightline-hook-linux-aarch64\n0000  other\n").unwrap();
    assert_eq!(list(data.path()).unwrap(), vec![built_in.clone()]);
}
