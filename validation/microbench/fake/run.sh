#!/bin/sh
# Smoke test without a GPU: builds the microbenchmark's host code against a fake CUDA runtime
# (fake_cudart.cpp: every operation runs at once on the host) with sanitizers, runs it, and checks
# the JSON. The numbers are meaningless; this only exercises control flow and the output format.
#   validation/microbench/fake/run.sh [extra args, e.g. --quick]
set -e
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/hetsim-microbench-fake
mkdir -p "$out"
srcs=""
for f in *.cu; do case "$f" in kernels*.cu) ;; *) srcs="$srcs $f" ;; esac; done
g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -Wall -Wextra -pthread \
    -I/usr/local/cuda/include -x c++ $srcs -x none fake/fake_cudart.cpp -o "$out/fake-microbench"
"$out/fake-microbench" -o "$out/results.json" "$@"
python3 - "$out/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hetsim.microbench" and d["version"] == 1, "schema"
for k in ("gpu", "driver", "cuda_runtime", "date", "host", "command"):
    assert k in d["metadata"], k
for name, b in d["benchmarks"].items():
    assert "fits" in b and "elapsed_s" in b, name
print("fake run OK:", len(d["benchmarks"]), "benchmarks,", sum(len(b.get("preview", {})) for b in d["benchmarks"].values()), "previews")
PY
