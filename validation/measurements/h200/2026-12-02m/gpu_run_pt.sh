#!/bin/bash
# Session 2026-12-02 (evening), machine start "m", second call: the PyTorch workloads.
set -u
t0=$(date +%s)
validation/pytorch/run_device.sh $OUT/pt --budget 300
echo "all done after $(( $(date +%s) - t0 )) s"
