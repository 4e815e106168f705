#!/usr/bin/env python3
"""Fits the importer's two measured corrections on one run of the H200 PyTorch measurements
(docs/import.md, "Profiler overhead" and "Worker hand-off"); the constants in
import/workload.hpp are what this prints for 2026-12-01a. No GPU: python3 and the hetsim build.

    validation/pytorch/fit_import.py [RUN_DIR] [--hetsim build/hetsim] [--grid-only|--handoff-only]

1. Worker hand-off (loader_workers). In the num_workers=4 traces the main thread's
   `DataLoader.__next__` span is the hand-off alone (the workers fetch and collate): with
   pin_memory off the main thread unpickles the worker's batch (shared-memory tensors), with it on
   it takes the batch from the pin-memory thread. Fitted: the median span over the pageable
   configurations per KiB of the step's host-to-device bytes (the batch), and the median span
   over the pinned ones (a fixed cost: the pin-memory thread did the unpickling).
2. Profiler overhead per boundary: one time for every boundary, span or call. Every
   configuration of the run is imported with `--span-overhead V --call-overhead V` for V on a
   grid and replayed as accuracy.sh does; the fit is the grid point where the median signed
   replay error over the run's configurations is nearest 0 (the rule that makes the replay
   unbiased; the median |error| is flat in V, dominated by run-to-run host speed). Every
   point's median signed error, median |error| and max are printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import gzip

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_RUN = os.path.join("validation", "measurements", "h200", "pytorch", "2026-12-01a")


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def handoff(run_dir):
    pageable, pinned = [], []
    for c in sorted(os.listdir(run_dir)):
        if not (c.startswith("cnn_train_w4_") and c.endswith(".trace.json.gz")):
            continue
        ev = [e for e in load_trace(os.path.join(run_dir, c)) if e.get("ph") == "X"]
        steps = sorted((e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
                       key=lambda e: e["ts"])
        main = steps[0]["tid"]
        ws, we = steps[0]["ts"], steps[-1]["ts"] + steps[-1]["dur"]
        spans = [e["dur"] for e in ev if e["tid"] == main and ws <= e["ts"] <= we and "DataLoader" in e["name"]
                 and "__next__" in e["name"]]
        s0 = steps[0]
        h2d = [e for e in ev if e.get("cat") == "gpu_memcpy" and "HtoD" in e["name"]]
        # the batch: the host-to-device bytes of the first step (the runtime call ids of its copies)
        corr = {e["args"].get("correlation") for e in ev if e.get("cat") == "cuda_runtime" and e["tid"] == main
                and s0["ts"] <= e["ts"] <= s0["ts"] + s0["dur"] and "Memcpy" in e["name"]}
        nbytes = sum(e["args"].get("bytes", 0) for e in h2d if e["args"].get("correlation") in corr)
        kib = (nbytes + 1023) // 1024
        name = c[: -len(".trace.json.gz")]
        print("  %-30s __next__ on main (us): %s; batch %d KiB" % (name, " ".join("%.0f" % x for x in spans), kib))
        (pinned if "_pinned_" in c else pageable).extend([1e3 * x / kib for x in spans] if "_pinned_" not in c else [1e3 * x for x in spans])
    per_kib_ps = statistics.median(pageable) * 1e3 if pageable else 0
    pinned_ns = statistics.median(pinned) if pinned else 0
    print("hand-off: pageable %.0f ps/KiB (median of %d spans), pinned %.0f ns (median of %d spans)"
          % (per_kib_ps, len(pageable), pinned_ns, len(pinned)))
    return per_kib_ps, pinned_ns


def grid(run_dir, hetsim, values):
    best = None
    for v in values:
        out = "/tmp/hetsim-fit-%d.json" % os.getpid()
        subprocess.run([sys.executable, os.path.join(HERE, "accuracy.py"), run_dir, "--hetsim", hetsim, "--replay-only",
                        "--json", out, "--import-arg=--span-overhead=%dns" % v, "--import-arg=--call-overhead=%dns" % v],
                       cwd=ROOT, capture_output=True, text=True)
        with open(out) as f:
            r = json.load(f)["replay"]
        signed = [x["error_pct"] for x in r.values()]
        med_signed = statistics.median(signed)
        med, mx = statistics.median(abs(x) for x in signed), max(abs(x) for x in signed)
        print("  %5d ns a boundary: replay error median %+6.1f%% (signed), |error| median %5.1f%%, max %5.1f%%"
              % (v, med_signed, med, mx), flush=True)
        if best is None or abs(med_signed) < best[0]:
            best = (abs(med_signed), v)
    print("fit: %d ns a boundary (the grid point with the median signed replay error nearest 0)" % best[1])
    return best[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", nargs="?", default=DEFAULT_RUN)
    ap.add_argument("--hetsim", default=os.path.join(ROOT, "build", "hetsim"))
    ap.add_argument("--values", default="0,1000,1200,1400", help="ns a boundary, the grid")
    ap.add_argument("--grid-only", action="store_true")
    ap.add_argument("--handoff-only", action="store_true")
    a = ap.parse_args()
    run_dir = os.path.join(ROOT, a.run_dir)
    if not a.grid_only:
        handoff(run_dir)
    if not a.handoff_only:
        grid(a.run_dir, a.hetsim, [int(x) for x in a.values.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
