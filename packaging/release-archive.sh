#!/usr/bin/env bash
# Builds one platform's release archive into dist/: the server (release profile, on the
# platforms it runs on) and the slim hook binary (hook profile), with README and licence
# text, plus the archive's SHA-256. The release workflow (.github/workflows/release.yml)
# calls it once per platform; on this machine it runs for x86_64-unknown-linux-gnu.
#
#   packaging/release-archive.sh <rust target> [--hook-only]
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:?usage: packaging/release-archive.sh <rust target> [--hook-only]}"
hook_only="${2:-}"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
case "$target" in
    x86_64-unknown-linux-gnu) platform=linux-x86_64 ;;
    aarch64-unknown-linux-gnu) platform=linux-aarch64 ;;
    aarch64-apple-darwin) platform=macos-aarch64 ;;
    x86_64-apple-darwin) platform=macos-x86_64 ;;
    x86_64-pc-windows-msvc) platform=windows-x86_64 ;;
    *) echo "no release platform for $target" >&2; exit 2 ;;
esac
exe=""
[ "$platform" = windows-x86_64 ] && exe=".exe"

cargo build --locked --profile hook --bin sightline-hook --target "$target"
binaries=("target/$target/hook/sightline-hook$exe")
if [ "$hook_only" != --hook-only ]; then
    cargo build --locked --release --bin sightline --target "$target"
    binaries+=("target/$target/release/sightline$exe")
fi

name="sightline-$version-$platform"
stage="dist/$name"
rm -rf "$stage" && mkdir -p "$stage"
cp "${binaries[@]}" README.md "$stage/"
cp packaging/sightline.service packaging/sightline.toml "$stage/"
if [ "${#binaries[@]}" -gt 1 ]; then
    # The server's archive carries the price catalogue as of its build (the pinned LiteLLM
    # release, tests/pins/litellm.txt), for `sightline prices import --litellm`.
    cp "$(scripts/fetch-litellm-catalogue)" "$stage/model_prices_and_context_window.json"
fi
# The hook binary must say what it is, or `sightline hook-binaries add` refuses it.
grep -aq "sightline-hook-binary/$version/" "$stage/sightline-hook$exe" || { echo "the hook binary lacks its marker" >&2; exit 1; }

cd dist
if [ -n "$exe" ]; then
    archive="$name.zip"
    rm -f "$archive"
    if command -v 7z >/dev/null 2>&1; then 7z a -bd "$archive" "$name" >/dev/null; else zip -qr "$archive" "$name"; fi
else
    archive="$name.tar.gz"
    tar -czf "$archive" "$name"
fi
if command -v sha256sum >/dev/null 2>&1; then sha256sum "$archive" >"$archive.sha256"; else shasum -a 256 "$archive" >"$archive.sha256"; fi
cat "$archive.sha256"
ls -l "$name"
