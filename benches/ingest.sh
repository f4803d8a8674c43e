#!/usr/bin/env bash
# The ingest measurements of issue 2, reproducible: each scenario runs the release
# binary on a fresh data directory, drives it with `sightline bench ingest` for 60 s,
# verifies every acknowledged event is stored, and reports the largest WAL seen and
# the writer's blocking checkpoints. Usage: benches/ingest.sh [scenario ...]
# Scenarios: reference fivex max-v7 max-v4 (default: all). Needs ~5 minutes.
# SIGHTLINE_BENCH_BIN=<binary> measures that binary instead of building this tree: run
# two builds in turn to compare them on the same machine state (see docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${SIGHTLINE_BENCH_BIN:-}" ]; then
  B=$SIGHTLINE_BENCH_BIN
else
  cargo build --release --quiet
  B=target/release/sightline
fi
port=${SIGHTLINE_BENCH_PORT:-4100}

run() {
  local name=$1; shift
  local dir; dir=$(mktemp -d)/data
  $B user add --data-dir "$dir" --email bench@example.com --name Bench >/dev/null
  local token; token=$($B token create --data-dir "$dir" --user bench@example.com --kind hook 2>/dev/null)
  SIGHTLINE_LOG=warn $B serve --data-dir "$dir" --ingest-addr 127.0.0.1:$port --web-addr 127.0.0.1:0 --github-addr 127.0.0.1:0 &
  local pid=$!
  for _ in $(seq 1 100); do $B healthcheck --data-dir "$dir" >/dev/null 2>&1 && break; sleep 0.1; done
  ( set +e +o pipefail; while kill -0 $pid 2>/dev/null; do
      ls -l "$dir"/events/*.db-wal "$dir"/main.db-wal 2>/dev/null | awk '{print $5}' | sort -n | tail -1; sleep 1
    done > "$dir.wal" ) &
  echo "== $name: sightline bench ingest $*"
  $B bench ingest --url http://127.0.0.1:$port --token "$token" --verify-data-dir "$dir" "$@" || true
  echo "max WAL bytes sampled: $(sort -n "$dir.wal" | tail -1); blocking checkpoints: $(curl -s 127.0.0.1:$port/metrics | awk '/^sightline_wal_blocking_checkpoints_total/ {print $2}')"
  kill -TERM $pid; wait $pid || true
  rm -rf "$(dirname "$dir")"
}

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(reference fivex max-v7 max-v4)
for scenario in "${scenarios[@]}"; do
  case $scenario in
    reference) run reference --developers 200 --rate 2000 --duration 60s --zstd ;;
    fivex) run fivex --developers 200 --rate 10000 --duration 60s --zstd ;;
    max-v7) run max-v7 --rate max --concurrency 8 --duration 60s --zstd --id-version 7 ;;
    max-v4) run max-v4 --rate max --concurrency 8 --duration 60s --zstd --id-version 4 ;;
    *) echo "unknown scenario $scenario"; exit 2 ;;
  esac
done
