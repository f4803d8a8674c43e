#!/usr/bin/env bash
# Builds Sightline's Debian package with cargo-deb (installed if missing): the server
# (release profile), the slim hook binary it hands to developer machines (hook profile),
# the systemd unit with its hardening (packaging/sightline.service, at /usr/bin),
# /etc/sightline/sightline.toml, a manual page per binary, the changelog and the lintian
# overrides (packaging/deb/lintian-overrides). Prints the .deb's path on its last line.
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
    # sightline_build_info{commit} on /metrics names the commit built.
    SIGHTLINE_COMMIT=$(git rev-parse --short=12 HEAD) cargo build --release --bin sightline
    cargo build --profile hook --bin sightline-hook
fi
metadata=$(cargo metadata --format-version 1 --no-deps)
target_dir=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' <<<"$metadata")

# cargo-deb reads the binaries, the unit, the manual pages and the changelog from here
# (packaging/deb/stage, not in git).
stage=packaging/deb/stage
rm -rf "$stage" && mkdir -p "$stage/unit" "$stage/man"
cp "$target_dir/release/sightline" "$target_dir/hook/sightline-hook" "$stage/"
sed 's#/usr/local/bin/sightline#/usr/bin/sightline#g' packaging/sightline.service >"$stage/unit/sightline.service"
# The price catalogue as of this build (the pinned LiteLLM release, tests/pins/litellm.txt),
# for `sightline prices import --litellm /usr/share/sightline/model_prices_and_context_window.json`.
cp "$(scripts/fetch-litellm-catalogue)" "$stage/model_prices_and_context_window.json"

# A manual page per binary, from its own --help (cargo-deb compresses them), and the
# Debian changelog a non-native package must carry: one entry, this version, naming the
# commit it was built from. Both are dated by the commit, so a rebuild is the same.
commit_date=$(git log -1 --format=%cs)
for binary in sightline sightline-hook; do
    python3 packaging/deb/manpage.py "$stage/$binary" "$commit_date" >"$stage/man/$binary.1"
done
cargo_version=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])' <<<"$metadata")
maintainer=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["metadata"]["deb"]["maintainer"])' <<<"$metadata")
cat >"$stage/changelog" <<EOF
sightline (${version_args[1]:-$cargo_version-1}) stable; urgency=medium

  * Sightline $cargo_version, built from commit $(git rev-parse --short=12 HEAD).

 -- $maintainer  $(git log -1 --format=%cD)
EOF

out_dir="$target_dir/debian"
mkdir -p "$out_dir"
cargo deb --no-build --no-strip "${version_args[@]}" --output "$out_dir" | tail -n 1
