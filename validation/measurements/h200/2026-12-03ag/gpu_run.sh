#!/bin/bash
# Session 2026-12-03 (sixth, from 21:03 UTC), machine start "ag": the full microbenchmarks with the
# new sections alloc_sizes (cudaMalloc/cudaFree of 4-512 MiB, idle and in a step loop) and
# copy_stream_switch (back-to-back pinned copies round robin over 1-16 streams), all 123 programs
# (5 runs), then the PyTorch workloads in the same call.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=300 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "programs done after $(( $(date +%s) - t0 )) s"
validation/pytorch/run_device.sh $OUT/pt --budget 235
echo "all done after $(( $(date +%s) - t0 )) s"
