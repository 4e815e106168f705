#!/bin/bash
# Session 2026-12-03 (fifth, from 17:52 UTC), machine start "ae" (after the block-placement rules of
# edf793f): the full microbenchmarks, all 123 programs (5 runs; 123 isolates rules.refill_deep and
# rules.smem_carveout), then the PyTorch workloads in the same call.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=300 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "programs done after $(( $(date +%s) - t0 )) s"
validation/pytorch/run_device.sh $OUT/pt --budget 235
echo "all done after $(( $(date +%s) - t0 )) s"
