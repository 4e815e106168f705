#!/bin/bash
# Session 2026-12-04 (from 02:24 UTC), machine start "aj": the full microbenchmarks with the new
# section call_context (API call times in the context programs make them) and the second start
# of call_gap and um_tail_faults (heads up to 1 GiB), all 123 programs (5 runs), then the PyTorch
# workloads in the same call.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=300 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "programs done after $(( $(date +%s) - t0 )) s"
validation/pytorch/run_device.sh $OUT/pt --budget 230
echo "all done after $(( $(date +%s) - t0 )) s"
