#!/bin/bash
# Session 2026-12-02 (evening), machine start "l", second call: the device request's programs
# again (the first call's loose files did not all come back: packed this time), then PyTorch.
set -u
t0=$(date +%s)
R=validation/runner/hetsim-runner; w=$(mktemp -d); mkdir -p $w/x/cupti $w/x/events
for f in build-dv/x/*.json; do b=$(basename $f .json)
  $R $f -o $w/x/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 20 > $w/x/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
  $R $f -o $w/x/events/$b.json --runs 5 --warmup 2 --time-limit-s 20 --timing events > $w/x/events/$b.log 2>&1 || echo "events $b rc $?"
done
nvidia-smi --query-gpu=name,driver_version --format=csv > $w/x/nvidia-smi.txt 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ > $w/x/date.txt
tar -C $w -czf $OUT/x.tar.gz x
echo "x done after $(( $(date +%s) - t0 )) s"
validation/pytorch/run_device.sh $OUT/pt --budget 290
echo "all done after $(( $(date +%s) - t0 )) s"
