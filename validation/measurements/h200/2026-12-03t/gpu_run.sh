#!/bin/bash
# Session 2026-12-03 (second), machine start "t": what makes a 64 KiB pageable H2D call cost 7 us
# or 15-19 us (probes t1..t10, CUPTI, 5 runs), then the microbenchmarks and the pageable programs.
set -u
t0=$(date +%s)
R=validation/runner/hetsim-runner; w=$(mktemp -d); mkdir -p $w/x/cupti
for f in build-dv/t/*.json; do b=$(basename $f .json)
  $R $f -o $w/x/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 10 > $w/x/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
done
date -u +%Y-%m-%dT%H:%M:%SZ > $w/x/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $w/x/nvidia-smi.txt 2>&1
tar -C $w -czf $OUT/x.tar.gz x
echo "probes done after $(( $(date +%s) - t0 )) s"
DEVICE_RUN_BUDGET_S=$(( 300 - ($(date +%s) - t0) )) validation/device_run.sh build-dv/tprog $OUT/v --microbench --runs 5
echo "all done after $(( $(date +%s) - t0 )) s"
