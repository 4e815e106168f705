#!/bin/bash
# Session 2026-12-03 (third, from 08:50 UTC), machine start "z": the multi-thread request probes of x again (
# spinning and blocking-sync scheduling, CUPTI, 5 runs), then the microbenchmarks (with the blocking_sync
# sleep sweep) and all 122 programs
# on the runner that uses the host buffer each copy names (cf9184c).
set -u
t0=$(date +%s)
R=validation/runner/hetsim-runner; w=$(mktemp -d); mkdir -p $w/x/cupti
if ! $R --help > /dev/null 2>&1; then validation/runner/build.sh > $w/x/runner_build.log 2>&1; fi
for f in build-dv/xp/*.json; do b=$(basename $f .json)
  $R $f -o $w/x/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 10 > $w/x/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
done
date -u +%Y-%m-%dT%H:%M:%SZ > $w/x/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $w/x/nvidia-smi.txt 2>&1
tar -C $w -czf $OUT/x.tar.gz x
echo "probes done after $(( $(date +%s) - t0 )) s"
DEVICE_RUN_BUDGET_S=$(( 540 - ($(date +%s) - t0) )) validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "all done after $(( $(date +%s) - t0 )) s"
