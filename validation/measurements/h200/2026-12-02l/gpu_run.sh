#!/bin/bash
# Session 2026-12-02 (evening), machine start "l": microbench, all programs, then the device
# request (x114 + 45/82/83/114 with CUPTI and with --timing events; callback-latency probes).
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=370 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "device_run done after $(( $(date +%s) - t0 )) s"
R=validation/runner/hetsim-runner; mkdir -p $OUT/x/cupti $OUT/x/events
for f in build-dv/x/*.json; do b=$(basename $f .json)
  [ $(( $(date +%s) - t0 )) -gt 520 ] && { echo "stop: time at $b"; break; }
  $R $f -o $OUT/x/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 20 > $OUT/x/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
  $R $f -o $OUT/x/events/$b.json --runs 5 --warmup 2 --time-limit-s 20 --timing events > $OUT/x/events/$b.log 2>&1 || echo "events $b rc $?"
done
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/x/nvidia-smi.txt 2>&1
echo "all done after $(( $(date +%s) - t0 )) s"
