#!/bin/bash
# Session 2026-12-03 (second), machine start "w": the runner that honours named host buffers
# (programs with named pageable buffers, 5 runs; probes t1/t4/t7 again).
set -u
t0=$(date +%s)
R=validation/runner/hetsim-runner; w=$(mktemp -d); mkdir -p $w/w/cupti $w/w/measured
for b in t1_up_after_pageable_down t4_up_alone_named t7_down_sync_then_up; do
  $R build-dv/t/$b.json -o $w/w/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 10 > $w/w/cupti/$b.log 2>&1 || echo "cupti $b rc $?"
done
echo "probes done after $(( $(date +%s) - t0 )) s"
for f in build-dv/wprog/*.json; do b=$(basename $f .json)
  [ $(( $(date +%s) - t0 )) -gt 150 ] && { echo "stop: time at $b"; break; }
  $R $f -o $w/w/measured/$b.json --runs 5 --warmup 2 --time-limit-s 100 > $w/w/measured/$b.log 2>&1 || echo "$b rc $?"
done
date -u +%Y-%m-%dT%H:%M:%SZ > $w/w/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $w/w/nvidia-smi.txt 2>&1
tar -C $w -czf $OUT/w.tar.gz w
echo "all done after $(( $(date +%s) - t0 )) s"
