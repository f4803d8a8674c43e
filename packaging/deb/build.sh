#!/usr/bin/env bash
# Builds Sightline's Debian package with cargo-deb (installed if missing): the server
# (release profile), the slim hook binary it hands to developer machines (hook profile),
# the systemd unit with its hardening (packaging/sightline.service, at /usr/bin), and
# /etc/sightline/sightline.toml. Prints the .deb's path on its last line.
#
#   packaging/deb/build.sh [--no-build] [--deb-version VERSION]
set -euo pipefail
cd "$(dirname "$0")/../.."

build=1
version_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build=0 ;;
        --deb-version) version_args=(--deb-version "$2"); shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

command -v cargo-deb >/dev/null || cargo install cargo-deb --locked --version "^3"
if [ "$build" = 1 ]; then
    cargo build --release --bin sightline
    cargo build --profile hook --bin sightline-hook
fi
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

# cargo-deb reads the binaries and the unit from here (packaging/deb/stage, not in git).
stage=packaging/deb/stage
rm -rf "$stage" && mkdir -p "$stage/unit"
cp "$target_dir/release/sightline" "$target_dir/hook/sightline-hook" "$stage/"
sed 's#/usr/local/bin/sightline#/usr/bin/sightline#g' packaging/sightline.service >"$stage/unit/sightline.service"

out_dir="$target_dir/debian"
mkdir -p "$out_dir"
cargo deb --no-build --no-strip "${version_args[@]}" --output "$out_dir" | tail -n 1
