#!/bin/bash
# Session 2026-12-03 (second), machine start "v": is the slow 64 KiB upload after a pageable download
# the buffers' placement (64 KiB heap neighbours vs 4 MiB mappings) or the process? Each probe three
# times, alternating, a process each.
set -u
t0=$(date +%s)
R=validation/runner/hetsim-runner; mkdir -p $OUT/v/cupti
for i in 1 2 3; do for b in t1_up_after_pageable_down t4_up_alone_named t11_up_after_pageable_down_big_buffers t12_up_alone_big_buffer; do
  $R build-dv/v/$b.json -o $OUT/v/cupti/${b}_$i.json --runs 5 --warmup 2 --time-limit-s 10 > $OUT/v/cupti/${b}_$i.log 2>&1 || echo "cupti $b rc $?"
done; done
date -u +%Y-%m-%dT%H:%M:%SZ > $OUT/v/date.txt
echo "all done after $(( $(date +%s) - t0 )) s"
