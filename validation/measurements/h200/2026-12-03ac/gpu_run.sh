#!/bin/bash
# Session 2026-12-03 (fourth, from 12:03 UTC), machine start "ac" (after the warm-staging fit of 26e823c): the microbenchmarks with the
# pageable_steady section (a program's own pageable buffer copied again and again) and the
# blocking_sync steady sweep, all 122 programs (5 runs), then the multi-thread request probes.
set -u
t0=$(date +%s)
R=validation/runner/hetsim-runner
DEVICE_RUN_BUDGET_S=470 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "programs done after $(( $(date +%s) - t0 )) s"
w=$(mktemp -d); mkdir -p $w/x/cupti
for f in build-dv/xp/*.json; do b=$(basename $f .json)
  [ $(( $(date +%s) - t0 )) -gt 540 ] && { echo "probes: out of time at $b"; break; }
  $R $f -o $w/x/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 10 > $w/x/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
done
date -u +%Y-%m-%dT%H:%M:%SZ > $w/x/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $w/x/nvidia-smi.txt 2>&1
tar -C $w -czf $OUT/x.tar.gz x
echo "all done after $(( $(date +%s) - t0 )) s"
