#!/bin/bash
# Session 2026-12-02 (night), machine start "p": the device-copy probes again, a synchronous D2D
# probe, and validation 38/39/115-118 (+59/62/64/76), CUPTI, 5 runs: a held-out start for the
# device-copy rule fitted on o.
set -u
t0=$(date +%s)
R=validation/runner/hetsim-runner; w=$(mktemp -d); mkdir -p $w/p/cupti $w/p/measured
for f in build-dv/p/*.json; do b=$(basename $f .json)
  $R $f -o $w/p/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 10 > $w/p/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
done
for f in build-dv/p/programs/*.json; do b=$(basename $f .json)
  [ $(( $(date +%s) - t0 )) -gt 400 ] && { echo "stop: time at $b"; break; }
  $R $f -o $w/p/measured/$b.json --runs 5 --warmup 2 --time-limit-s 20 > $w/p/measured/$b.log 2>&1 || echo "prog $b rc $?"
done
date -u +%Y-%m-%dT%H:%M:%SZ > $w/p/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $w/p/nvidia-smi.txt 2>&1
tar -C $w -czf $OUT/p.tar.gz p
echo "all done after $(( $(date +%s) - t0 )) s"
