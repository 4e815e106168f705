#!/bin/bash
# Session 2026-12-02 (afternoon): start "i" (spinning host_wait), 114 variants, PyTorch workloads.
set -u
t0=$(date +%s)
DEVICE_RUN_BUDGET_S=215 validation/device_run.sh build-dv/programs $OUT/v --microbench --runs 5
echo "device_run done after $(( $(date +%s) - t0 )) s"
R=validation/runner/hetsim-runner
mkdir -p /tmp/x114
for f in build-dv/x114/*.json; do b=$(basename $f .json)
  timeout 60 $R $f -o /tmp/x114/$b.json --runs 5 --warmup 2 --time-limit-s 30 2>>/tmp/x114/log.txt || echo "FAIL $b" >> /tmp/x114/log.txt
done
(cd /tmp && tar czf $OUT/x114.tar.gz x114)
echo "x114 done after $(( $(date +%s) - t0 )) s"
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 280 ] && left=280
validation/pytorch/run_device.sh $OUT/pt --budget $left
echo "all done after $(( $(date +%s) - t0 )) s"
