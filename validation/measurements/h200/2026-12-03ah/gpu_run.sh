#!/bin/bash
# Session 2026-12-03 (sixth, from 21:03 UTC), machine start "ah" (after the size-dependent
# cudaMalloc/cudaFree of 8712ad9): the full microbenchmarks (alloc_sizes, copy_stream_switch and
# call_after_host_work on a second start) and all 123 programs (5 runs); no PyTorch.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=300 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "all done after $(( $(date +%s) - t0 )) s"
