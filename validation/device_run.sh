#!/usr/bin/env bash
# Runs the microbenchmarks and the validation programs on the GPU machine, in one command
# (the machine's start costs minutes). Usage, from the repository root there:
#   validation/device_run.sh PROGRAM_DIR OUT_DIR [--microbench] [--runs N]
# PROGRAM_DIR holds lowered programs (`hetsim lower X.yaml -o PROGRAM_DIR/X.json`). Writes
# OUT_DIR/results.tar.gz with measured/<name>.json.gz, microbench.json and the logs.
# With --microbench the full microbenchmark runs first (every section, including those that
# re-execute it as child processes: hw_queues, module_load, blocking_sync, queues_streams; about
# 45-80 s of GPU time with the issue-14 sections), then the programs (01-77 at --runs 5: about
# 70 s, 0.4-1.3 s each, mostly process start and setup); with packing about 2-2.5 min in all,
# plus the builds when the binaries do not start there. The whole call stays inside
# DEVICE_RUN_BUDGET_S (default 450 s, counted from the start): a program is started only when it
# can finish within the budget at its own time limit, and results are packed after every step,
# so a cut-off call still returns what was measured.
set -u
t_start=$(date +%s)
budget="${DEVICE_RUN_BUDGET_S:-450}"
left() { echo $(( budget - ($(date +%s) - t_start) )); }
progs="$1"; out="$2"; shift 2
micro=0; runs=5
while [ $# -gt 0 ]; do
  case "$1" in
    --microbench) micro=1 ;;
    --runs) runs="$2"; shift ;;
  esac
  shift
done
work=$(mktemp -d)
mkdir -p "$work/measured" "$out"
log="$work/device.log"
{
  echo "== machine"; date -u +%Y-%m-%dT%H:%M:%SZ; uname -a; ldd --version | head -1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nproc
} > "$log" 2>&1
runner=validation/runner/hetsim-runner
bench=validation/microbench/hetsim-microbench
if ! "$runner" --help > /dev/null 2>&1; then
  echo "== runner binary does not start here; building it" >> "$log"
  validation/runner/build.sh >> "$log" 2>&1
fi
if [ "$micro" = 1 ]; then
  if ! "$bench" --list > /dev/null 2>&1; then
    echo "== microbench binary does not start here; building it" >> "$log"
    validation/microbench/build.sh >> "$log" 2>&1
  fi
  echo "== microbench" >> "$log"
  mstart=$(date +%s)
  mlimit=$(( $(left) - 60 )); [ "$mlimit" -gt 240 ] && mlimit=240; [ "$mlimit" -lt 30 ] && mlimit=30
  timeout -k 5 "$mlimit" "$bench" -o "$work/microbench.json" >> "$log" 2>&1
  echo "microbench exit $? in $(( $(date +%s) - mstart )) s (limit $mlimit s)" >> "$log"
  # A failed run leaves what it measured in microbench.json.partial; keep it.
  [ -f "$work/microbench.json" ] || { [ -f "$work/microbench.json.partial" ] && echo "== microbench incomplete: microbench.json.partial kept" >> "$log"; }
  rm -f "$work"/microbench.json.child.* "$work"/microbench.json.tmp.*
fi
pack() { cp "$log" "$out/device.log"; tar czf "$out/results.tar.gz.tmp" -C "$work" . && mv "$out/results.tar.gz.tmp" "$out/results.tar.gz"; }
pack
for p in "$progs"/*.json; do
  name=$(basename "$p" .json)
  rem=$(left)
  if [ "$rem" -lt 20 ]; then echo "== $name skipped: over the time budget ($budget s)" >> "$log"; continue; fi
  lim=$(( rem - 10 )); [ "$lim" -gt 100 ] && lim=100
  echo "== $name" >> "$log"
  start=$(date +%s%N)
  timeout -k 5 $(( lim + 20 )) "$runner" "$p" -o "$work/measured/$name.json" --runs "$runs" --warmup 2 --time-limit-s "$lim" >> "$log" 2>&1
  echo "$name exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$log"
  # Committed as NAME.json.gz (hetsim reads either): a start's timelines are ~10 MB as text.
  [ -f "$work/measured/$name.json" ] && gzip -9 -n -f "$work/measured/$name.json"
  pack
done
pack
