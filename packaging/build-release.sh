#!/usr/bin/env bash
# Builds the packaged, statically linked release binary (static-pie, rustls, no
# OpenSSL) and smoke-tests it: version, config default, and a serve/healthcheck run.
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-unknown-linux-gnu
# sightline_build_info{commit} on /metrics names the commit built.
SIGHTLINE_COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown) \
    RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --target "$target"
bin="target/$target/release/sightline"
file "$bin" | grep -q "static" || { echo "not statically linked: $(file "$bin")"; exit 1; }
"$bin" --version
"$bin" config default >/dev/null
dir=$(mktemp -d)
"$bin" serve --data-dir "$dir" --ingest-addr 127.0.0.1:0 --web-addr 127.0.0.1:0 --github-addr 127.0.0.1:0 &
pid=$!
for _ in $(seq 1 100); do "$bin" healthcheck --data-dir "$dir" >/dev/null 2>&1 && break; sleep 0.1; done
"$bin" healthcheck --data-dir "$dir"
kill -TERM "$pid"; wait "$pid"
rm -rf "$dir"
echo "packaged binary: $bin"
