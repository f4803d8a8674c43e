#!/usr/bin/env bash
# The eval-results measurements of issue 3, reproducible: a 200,000-cell run written by
# `sightline evals demo --cells`, then `results`, the three reports, and the dashboard's
# paged API and run page (p50/p95/p99 over 200 requests each). Needs ~2 GB of disk in
# $TMPDIR and about 2 minutes. Usage: benches/evals.sh [cells]
set -euo pipefail
cd "$(dirname "$0")/.."
cells=${1:-200000}
cargo build --release --quiet
B=target/release/sightline
work=$(mktemp -d)
trap 'kill $dash 2>/dev/null || true; rm -rf "$work"' EXIT
db="$work/results.db"
/usr/bin/time -f "generate $cells cells: %e s" $B evals demo --out "$db" --cells "$cells" >/dev/null
run="bench-$cells"
/usr/bin/time -f "results $run: %e s, max RSS %M KB" $B results "$run" --db "$db" >/dev/null
/usr/bin/time -f "report $run (html, json, csv): %e s, max RSS %M KB" $B report "$run" --db "$db" --output "$work/reports" >/dev/null
ls -l "$work/reports"
$B dashboard --db "$db" --port 0 > "$work/dash.out" 2>/dev/null &
dash=$!
for _ in $(seq 1 100); do grep -q http "$work/dash.out" 2>/dev/null && break; sleep 0.1; done
url=$(head -1 "$work/dash.out" | awk '{print $2}')
/usr/bin/time -f "first run page (cold cache): %e s" curl -s -o /dev/null "${url}run/$run"
$B bench dashboard --url "$url" --run "$run" --requests 200
