#!/usr/bin/env bash
# Runs the microbenchmarks and the validation programs on the GPU machine, in one command
# (the machine's start costs minutes). Usage, from the repository root there:
#   validation/device_run.sh PROGRAM_DIR OUT_DIR [--microbench] [--runs N]
# PROGRAM_DIR holds lowered programs (`hetsim lower X.yaml -o PROGRAM_DIR/X.json`). Writes
# OUT_DIR/results.tar.gz with measured/<name>.json, microbench.json and the logs.
set -u
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
  timeout 300 "$bench" -o "$work/microbench.json" >> "$log" 2>&1; echo "microbench exit $?" >> "$log"
fi
t0=$(date +%s)
budget="${DEVICE_RUN_BUDGET_S:-480}"   # stop starting programs after this many seconds
pack() { cp "$log" "$out/device.log"; tar czf "$out/results.tar.gz.tmp" -C "$work" . && mv "$out/results.tar.gz.tmp" "$out/results.tar.gz"; }
pack
for p in "$progs"/*.json; do
  name=$(basename "$p" .json)
  if [ $(( $(date +%s) - t0 )) -gt "$budget" ]; then echo "== $name skipped: over the time budget" >> "$log"; continue; fi
  echo "== $name" >> "$log"
  start=$(date +%s%N)
  timeout 120 "$runner" "$p" -o "$work/measured/$name.json" --runs "$runs" --warmup 2 --time-limit-s 100 >> "$log" 2>&1
  echo "$name exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$log"
  pack
done
pack
