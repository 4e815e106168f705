#!/bin/bash
# Session 2026-12-03 (second), machine start "u": the new microbenchmark section pageable_turnaround.
set -u
t0=$(date +%s)
mkdir -p $OUT/u
validation/microbench/hetsim-microbench -o $OUT/u/microbench_turnaround.json --only pageable_turnaround > $OUT/u/log.txt 2>&1; echo "rc $?"
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/u/nvidia-smi.txt 2>&1
echo "all done after $(( $(date +%s) - t0 )) s"
