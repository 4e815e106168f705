#!/bin/bash
# Session 2026-12-03 (fifth), machine start "af": the runner without its fixed carveout preference
# (the default, as a program's kernels have it), validation 30 and 123 (5 runs each), then the
# block_placement microbenchmark section again.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=200 validation/device_run.sh build-dv/programs2 $OUT/v --runs 5
validation/microbench/hetsim-microbench --only device,block_placement -o $OUT/microbench.json > $OUT/microbench.log 2>&1; echo "microbench rc $?"
echo "all done after $(( $(date +%s) - t0 )) s"
