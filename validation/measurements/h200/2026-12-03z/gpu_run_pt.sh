#!/bin/bash
# Session 2026-12-03 (third), machine start "z", second call: the PyTorch workloads.
set -u
t0=$(date +%s)
validation/pytorch/run_device.sh $OUT/pt --budget 260
echo "all done after $(( $(date +%s) - t0 )) s"
