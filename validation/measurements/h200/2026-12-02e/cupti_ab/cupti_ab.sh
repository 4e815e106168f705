#!/bin/sh
# A/B: CUPTI loaded (default) vs never loaded (--timing events), same programs, alternating.
set -u
R=validation/runner/hetsim-runner
mkdir -p $OUT/cupti $OUT/events
for p in 60 61 104 43 105 106 98 84 27 09 37 51 64 82 114 01 13 88; do
  f=$(ls build-dv/programs/${p}_*.json | head -1); b=$(basename $f .json)
  $R $f -o $OUT/cupti/$b.json --runs 5 --warmup 2 --time-limit-s 60 2>>$OUT/log.txt || echo "FAIL cupti $b" >> $OUT/log.txt
  $R $f -o $OUT/events/$b.json --runs 5 --warmup 2 --time-limit-s 60 --timing events 2>>$OUT/log.txt || echo "FAIL events $b" >> $OUT/log.txt
done
cd $OUT && gzip -9 -n cupti/*.json events/*.json
