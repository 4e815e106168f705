#!/bin/bash
# Session 2026-12-03 (third, from 08:50 UTC), machine start "aa": the blocking_sync section alone
# (with its steady sweep: blocks of syncs after kernels of one length), then the blocking-sync
# programs 50/121/122 and the multi-thread request probes of x (CUPTI, 5 runs each).
set -u
t0=$(date +%s)
w=$(mktemp -d); mkdir -p $w/aa/cupti
timeout -k 5 120 validation/microbench/hetsim-microbench --only blocking_sync -o $w/aa/microbench.json > $w/aa/microbench.log 2>&1 || echo "microbench rc $?"
for f in build-dv/aa/*.json; do b=$(basename $f .json)
  validation/runner/hetsim-runner $f -o $w/aa/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 10 > $w/aa/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
done
date -u +%Y-%m-%dT%H:%M:%SZ > $w/aa/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $w/aa/nvidia-smi.txt 2>&1
tar -C $w -czf $OUT/aa.tar.gz aa
echo "all done after $(( $(date +%s) - t0 )) s"
