#!/usr/bin/env bash
# The ingest measurements of issue 2, reproducible: each scenario runs the release
# binary on a fresh data directory, drives it with `sightline bench ingest` for 60 s,
# verifies every acknowledged event is stored, and reports the largest WAL seen and
# the writer's blocking checkpoints. Usage: benches/ingest.sh [scenario ...]
# Scenarios: reference fivex max-v7 max-v4 (default: all; ~5 minutes); tenx: 2,000
# developers at 20,000 events/s (issue 34's ten-times organisation; with RUN_DIR=<data dir>
# it loads that directory, e.g. a `sightline demo --developers 2000 --days 90`); otlp: the
# agents' OTLP logs (`bench otlp`, Claude Code's records, protobuf) at the maximum for 60 s,
# then max-v7, on fresh directories (issue 35's figure beside the hook's); history: the
# reference and 5x loads (30 s each) on a fresh directory and on a year of history, in
# turn, with the ratio. The year is `sightline demo` (200 developers, 365 days, ~7 minutes
# to make) in $SIGHTLINE_HISTORY_DIR (default /tmp/sightline-history/data), reused if
# present; the bench's events go into it, a few hundred thousand beside its 8.6 million.
# Each history run starts the load $SIGHTLINE_BENCH_SETTLE seconds (default 20) after
# the server answers, so the start-up upkeep is not in the figures (0 to include it).
# SIGHTLINE_BENCH_BIN=<binary> measures that binary instead of building this tree: run
# two builds in turn to compare them on the same machine state (see docs/benchmarks.md);
# the first line names each binary with the start of its MD5 sum.
# SIGHTLINE_BENCH_CLIENT=<binary> drives the load with that binary's `bench ingest` (default:
# the measured one): the client shares the machine's cores with the server, so comparing
# servers with one client keeps the client's own cost out of the difference.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${SIGHTLINE_BENCH_BIN:-}" ]; then
  B=$SIGHTLINE_BENCH_BIN
else
  cargo build --release --quiet
  B=target/release/sightline
fi
C=${SIGHTLINE_BENCH_CLIENT:-$B}
# Which binaries these figures are of: two builds compared in turn must print two sums
# (with one shared target directory, a second build can be "fresh" and the same file).
echo "server $B $(md5sum < "$B" | cut -c1-12); client $C $(md5sum < "$C" | cut -c1-12)"
port=${SIGHTLINE_BENCH_PORT:-4100}

run() {
  local name=$1; shift
  local dir; dir=${RUN_DIR:-$(mktemp -d)/data}
  # (grep reads the whole list: -q would end the pipe early, and pipefail would see it.)
  if ! $B user list --data-dir "$dir" 2>/dev/null | grep bench@example.com >/dev/null; then
    $B user add --data-dir "$dir" --email bench@example.com --name Bench >/dev/null
  fi
  local token; token=$($B token create --data-dir "$dir" --user bench@example.com --kind hook 2>/dev/null)
  # The last run's dirty pages reach the disk now, not during this run's fsyncs.
  sync
  SIGHTLINE_LOG=warn $B serve --data-dir "$dir" --ingest-addr 127.0.0.1:$port --web-addr 127.0.0.1:0 --github-addr 127.0.0.1:0 &
  local pid=$!
  for _ in $(seq 1 100); do $B healthcheck --data-dir "$dir" >/dev/null 2>&1 && break; sleep 0.1; done
  # Let the start-up upkeep (one refresh, compaction and index pass as the server starts)
  # finish first when asked: on a year of history it reads for a few seconds.
  sleep "${SETTLE:-0}"
  ( set +e +o pipefail; while kill -0 $pid 2>/dev/null; do
      ls -l "$dir"/events/*.db-wal "$dir"/main.db-wal 2>/dev/null | awk '{print $5}' | sort -n | tail -1; sleep 1
    done > "$dir.wal" ) &
  # The refresh lag (how long the oldest dirty mark has waited), once a second.
  ( set +e +o pipefail; while kill -0 $pid 2>/dev/null; do
      curl -s 127.0.0.1:$port/metrics | awk '/^sightline_aggregate_refresh_lag_seconds/ {print $2}'; sleep 1
    done > "$dir.lag" ) &
  echo "== $name: sightline bench ${BENCH:-ingest} $*"
  $C bench "${BENCH:-ingest}" --url http://127.0.0.1:$port --token "$token" --verify-data-dir "$dir" "$@" || true
  local metrics; metrics=$(curl -s 127.0.0.1:$port/metrics)
  echo "max WAL bytes sampled: $(sort -n "$dir.wal" | tail -1); blocking checkpoints: $(awk '/^sightline_wal_blocking_checkpoints_total/ {print $2}' <<<"$metrics"); max refresh lag sampled: $(sort -g "$dir.lag" | tail -1) s"
  # Where the writer's time went, per commit of a group (builds without the step metrics print nothing).
  awk '/^sightline_writer_step_duration_seconds_(sum|count)/ {
         match($0, /step="[a-z_]+"/); step = substr($0, RSTART + 6, RLENGTH - 7)
         if ($0 ~ /_sum/) sum[step] = $2; else count[step] = $2 }
       END { line = ""; for (s in sum) if (count[s] > 0) line = line sprintf(" %s %.3f", s, 1000 * sum[s] / count[s])
             if (line != "") print "writer ms per commit:" line }' <<<"$metrics"
  kill -TERM $pid; wait $pid || true
  rm -f "$dir.wal" "$dir.lag"
  [ -n "${RUN_DIR:-}" ] || rm -rf "$(dirname "$dir")"
}

# The p50 and p99 of a run's output (the `latency ms:` line).
percentiles() { awk '/latency ms:/ {print $4, $8, $10}' "$1"; }

history() {
  local year=${SIGHTLINE_HISTORY_DIR:-/tmp/sightline-history/data}
  if [ ! -f "$year/main.db" ]; then
    echo "== making the year of history in $year (sightline demo, about 7 minutes)"
    mkdir -p "$(dirname "$year")"
    echo history-bench | $B demo --data-dir "$year" --password-stdin >/dev/null
  fi
  local out; out=$(mktemp -d)
  local settle=${SIGHTLINE_BENCH_SETTLE:-20}
  for load in "reference --developers 200 --rate 2000" "fivex --developers 200 --rate 10000"; do
    set -- $load; local name=$1; shift
    SETTLE=$settle run "$name-fresh" "$@" --duration 30s --zstd | tee "$out/fresh"
    SETTLE=$settle RUN_DIR=$year run "$name-year" "$@" --duration 30s --zstd | tee "$out/year"
    read -r f50 f99 fmax < <(percentiles "$out/fresh")
    read -r y50 y99 ymax < <(percentiles "$out/year")
    awk -v n="$name" -v f50="$f50" -v f99="$f99" -v y50="$y50" -v y99="$y99" -v fmax="$fmax" -v ymax="$ymax" \
      'BEGIN { printf "%s: year/fresh p50 %.2f/%.2f = %.2fx, p99 %.2f/%.2f = %.2fx, max %.1f/%.1f ms\n", n, y50, f50, y50/f50, y99, f99, y99/f99, ymax, fmax }' \
      | tee -a "$out/ratios"
  done
  echo "== history ratios"; cat "$out/ratios"; rm -rf "$out"
}

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(reference fivex max-v7 max-v4)
for scenario in "${scenarios[@]}"; do
  case $scenario in
    reference) run reference --developers 200 --rate 2000 --duration 60s --zstd ;;
    fivex) run fivex --developers 200 --rate 10000 --duration 60s --zstd ;;
    tenx) run tenx --developers 2000 --rate 20000 --duration 60s --zstd ;;
    max-v7) run max-v7 --rate max --concurrency 8 --duration 60s --zstd --id-version 7 ;;
    max-v4) run max-v4 --rate max --concurrency 8 --duration 60s --zstd --id-version 4 ;;
    history) history ;;
    # Issue 35: the agents' own OTLP logs at the maximum, then the hook's maximum, in one run.
    otlp) BENCH=otlp run otlp-max --rate max --concurrency 8 --duration 60s
          run max-v7 --rate max --concurrency 8 --duration 60s --zstd --id-version 7 ;;
    *) echo "unknown scenario $scenario"; exit 2 ;;
  esac
done
