#!/bin/bash
# Session 2026-12-04 (from 02:24 UTC), machine start "ai": the full microbenchmarks with the new
# section call_gap (what makes an API call slow after a gap: the edge between 200 and 500 us of
# host spin, and what happens during the gap) and all 123 programs (5 runs); no PyTorch.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=330 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "all done after $(( $(date +%s) - t0 )) s"
