#!/usr/bin/env bash
# An hour under load (issue 33; docs/benchmarks.md, "Soak"), not in CI. On a fresh data
# directory with people in five roles, the release binary serves for SOAK_MINUTES (60):
#   - the reference load, `bench ingest` at 2,000 events/s from 200 developers, one
#     60-second run per minute (each minute's p50/p99/max is that run's);
#   - every tier-1 job every 5 minutes (backup every 10, into a directory keeping 3),
#     besides the fixed timers, the 15-second aggregate refresh and hourly compaction;
#   - GitHub webhooks at 5/s (`bench webhooks`);
#   - page reads: every 20 s each of five people (administrator, investigator, lead,
#     developer, viewer of aggregates) walks the pages `bench web` knows, once each;
#   - transcript uploads: every 30 s a Claude Code session through the real hook CLI,
#     its transcript shipped by `sightline flusher --once`.
# Each minute it samples the server's resident memory, open files and the largest WAL.
# At the end: a table per minute, the first and last minutes compared, and a count of
# the load's events in the partitions against those acknowledged (0 lost is the goal).
# Usage: benches/soak.sh; SOAK_MINUTES=5 for a short run; SIGHTLINE_BENCH_BIN=<binary>.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${SIGHTLINE_BENCH_BIN:-}" ]; then
  B=$(realpath "$SIGHTLINE_BENCH_BIN")
else
  cargo build --release --quiet
  B=$PWD/target/release/sightline
fi
minutes=${SOAK_MINUTES:-60}
work=$(mktemp -d); dir=$work/data; out=${SOAK_OUT:-$work}
password="soak passphrase of the bench"
secret="soak-webhook-secret-5f2c"
echo "soak: $minutes minutes; working in $work"

add() { echo "$password" | $B user add --data-dir "$dir" --email "$1" --name "$2" --role "$3" --password-stdin >/dev/null; }
add admin@soak.example Admin ADMIN
add investigator@soak.example Investigator INVESTIGATOR
add lead@soak.example Lead MEMBER
add dev@soak.example Developer MEMBER
add finance@soak.example Finance VIEWER_AGGREGATE
$B team add --data-dir "$dir" --slug soak --name Soak >/dev/null
$B team add-member --data-dir "$dir" --team soak --email lead@soak.example --role lead >/dev/null
$B team add-member --data-dir "$dir" --team soak --email dev@soak.example >/dev/null
token=$($B token create --data-dir "$dir" --user dev@soak.example --kind hook 2>/dev/null)
for job in sweep-retention index-transcripts compute-effectiveness compute-trajectory-scores compute-subject-scores evaluate-alerts; do
  $B jobs set --data-dir "$dir" "$job" --cron "*/5 * * * *" --enabled true >/dev/null
done
$B jobs set --data-dir "$dir" backup --cron "*/10 * * * *" --enabled true >/dev/null

SIGHTLINE_LOG=warn SIGHTLINE_BACKUP_DIR=$work/backups SIGHTLINE_BACKUP_KEEP=3 SIGHTLINE_GITHUB_WEBHOOK_SECRET=$secret \
  $B serve --data-dir "$dir" --ingest-addr 127.0.0.1:0 --web-addr 127.0.0.1:0 --github-addr 127.0.0.1:0 2>"$work/server.log" &
pid=$!
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do $B healthcheck --data-dir "$dir" >/dev/null 2>&1 && break; sleep 0.1; done
address() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$dir/run/addresses.json" "$1"; }
ingest=http://$(address ingest); web=http://$(address web); github=http://$(address github)
deadline=$(( $(date +%s) + minutes * 60 ))

# Webhooks, for the whole run.
SIGHTLINE_GITHUB_WEBHOOK_SECRET=$secret $B bench webhooks --url "$github" --data-dir "$dir" --rate 5 \
  --duration "${minutes}m" >"$work/webhooks.log" 2>&1 &
# Page reads by five roles.
( set +e; walks=0; failed=0
  while [ "$(date +%s)" -lt "$deadline" ]; do
    for who in admin investigator lead dev finance; do
      echo "$password" | $B bench web --url "$web" --email "$who@soak.example" --requests 1 >/dev/null 2>&1 || failed=$((failed + 1))
      walks=$((walks + 1))
    done
    echo "$walks $failed" >"$work/readers.count"; sleep 20
  done ) &
# Transcript uploads through the hook CLI.
home=$work/home; mkdir -p "$home"
HOME=$home XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data $B login --server "$ingest" --token "$token" >/dev/null
( set +e; sessions=0
  while [ "$(date +%s)" -lt "$deadline" ]; do
    python3 benches/soak_replay.py "$B" "$home" && sessions=$((sessions + 1))
    HOME=$home XDG_CONFIG_HOME=$home/config XDG_DATA_HOME=$home/data $B flusher --once >/dev/null 2>&1
    echo "$sessions" >"$work/uploads.count"; sleep 30
  done ) &
# A sample a minute: resident memory, open files, the largest WAL.
( set +e
  while kill -0 $pid 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
    rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status); files=$(ls /proc/$pid/fd | wc -l)
    wal=$( (ls -l "$dir"/events/*.db-wal "$dir"/main.db-wal 2>/dev/null || true) | awk '{print $5}' | sort -n | tail -1)
    echo "$rss $files ${wal:-0}" >>"$work/samples"; sleep 60
  done ) &

printf 'minute\tevents/s\tp50_ms\tp99_ms\tmax_ms\terrors\trss_kib\topen_files\tmax_wal_bytes\n' >"$out/soak.tsv"
accepted_total=0
for minute in $(seq 1 "$minutes"); do
  report=$($B bench ingest --url "$ingest" --token "$token" --developers 200 --rate 2000 --duration 60s --zstd --json || true)
  sample=$(tail -1 "$work/samples" 2>/dev/null || echo "0 0 0")
  line=$(python3 -c '
import json, sys
r = json.loads(sys.argv[1]); l = r["latency_ms"]
print("\t".join([sys.argv[2], "%.0f" % r["events_per_second"], "%.2f" % l["p50"], "%.2f" % l["p99"], "%.1f" % l["max"], str(r["errors"]), *sys.argv[3].split()]))
print(r["accepted"], file=sys.stderr)' "$report" "$minute" "$sample" 2>"$work/accepted")
  accepted_total=$((accepted_total + $(cat "$work/accepted")))
  echo "$line" | tee -a "$out/soak.tsv"
done
wait_for_quiet() { sleep 20; }
wait_for_quiet
stored=0
for partition in "$dir"/events/*.db; do
  n=$(sqlite3 -readonly "$partition" "SELECT count(*) FROM events WHERE session_id LIKE 'bench-%'")
  stored=$((stored + n))
done
runs=$(sqlite3 -readonly "$dir/main.db" "SELECT job || ' ' || outcome || ' ' || count(*) FROM job_runs GROUP BY job, outcome ORDER BY job")
backups=$( (ls "$work/backups" 2>/dev/null || true) | wc -l)
kill -TERM $pid; wait $pid || true
python3 - "$out/soak.tsv" "$accepted_total" "$stored" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
first, last = rows[0], rows[-1]
p99 = lambda r: float(r[3]); rss = lambda r: int(r[6])
print(f"minute 1 p99 {p99(first):.2f} ms, minute {last[0]} p99 {p99(last):.2f} ms: {p99(last) / p99(first):.2f}x (goal <= 1.2x)")
base = next((rss(r) for r in rows if rss(r) > 0), 0)
warm = rss(rows[min(4, len(rows) - 1)])
print(f"RSS {base} KiB at minute 1, {warm} KiB at minute {rows[min(4, len(rows) - 1)][0]}, {rss(last)} KiB at the last: "
      f"{100 * (rss(last) - base) / max(base, 1):+.1f} % from minute 1, {100 * (rss(last) - warm) / max(warm, 1):+.1f} % from minute 5 (goal < 10 %)")
print(f"open files {rows[0][7]} -> {last[7]}; largest WAL sampled {max(int(r[8]) for r in rows)} bytes")
accepted, stored = int(sys.argv[2]), int(sys.argv[3])
print(f"events acknowledged {accepted}, stored {stored}: {accepted - stored} lost (goal 0)")
PY
echo "page walks (failed): $(cat "$work/readers.count" 2>/dev/null); transcript sessions replayed: $(cat "$work/uploads.count" 2>/dev/null); backups kept: $backups"
echo "webhooks: $(tail -3 "$work/webhooks.log" | tr '\n' ' ')"
echo "job runs:"; echo "$runs"
echo "per-minute table: $out/soak.tsv; server log: $work/server.log"
