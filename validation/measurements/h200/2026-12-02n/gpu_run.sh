#!/bin/bash
# Session 2026-12-02 (evening), machine start "n", first call: microbench (with the
# host_func_wait section), all programs, then the callback probes and 45/82/83 (packed).
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=330 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "device_run done after $(( $(date +%s) - t0 )) s"
R=validation/runner/hetsim-runner; w=$(mktemp -d); mkdir -p $w/x/cupti
for f in build-dv/x/cb*.json build-dv/x/45_*.json build-dv/x/82_*.json build-dv/x/83_*.json; do b=$(basename $f .json)
  [ $(( $(date +%s) - t0 )) -gt 530 ] && { echo "stop: time at $b"; break; }
  $R $f -o $w/x/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 15 > $w/x/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
done
date -u +%Y-%m-%dT%H:%M:%SZ > $w/x/date.txt
tar -C $w -czf $OUT/x.tar.gz x
echo "all done after $(( $(date +%s) - t0 )) s"
