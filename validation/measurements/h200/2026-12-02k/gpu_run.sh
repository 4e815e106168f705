#!/bin/bash
# Session 2026-12-02 (afternoon), third machine start "k": microbench (with graph_copy_kernel), all programs, PyTorch.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=380 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "device_run done after $(( $(date +%s) - t0 )) s"
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 280 ] && left=280
[ $left -gt 120 ] && validation/pytorch/run_device.sh $OUT/pt --budget $left
echo "all done after $(( $(date +%s) - t0 )) s"
