#!/bin/bash
# Session 2026-12-02 (evening), machine start "n", second call: the PyTorch workloads.
set -u
t0=$(date +%s)
validation/pytorch/run_device.sh $OUT/pt --budget 260
echo "all done after $(( $(date +%s) - t0 )) s"
