#!/usr/bin/env python3
"""Fits the importer's measured corrections on one run of the H200 PyTorch measurements
(docs/import.md, "Kernel records", "Profiler overhead" and "Worker hand-off"); the constants in
import/workload.hpp are what this prints for 2026-12-01a (hand-off), 2026-12-02a (kernel record
excess) and --pooled (overhead, below). No GPU: python3 and the hetsim build.

    validation/pytorch/fit_import.py [RUN_DIR] [--hetsim build/hetsim] [--grid-only|--handoff-only|--excess-only]
    validation/pytorch/fit_import.py --pooled RUN,RUN,... --values 600,800,1000,1200,1400 [--hetsim build/hetsim]

The profiler overhead default in import/workload.hpp (1.0 us) is the --pooled fit over the nine
interleaved runs 2026-12-02a, b, c, e, i, j, k, l, m (docs/import.md, "Profiler overhead"), which
also prints each run's replay error at the value fitted on the other eight.

0. Kernel record excess (fast, from the traces alone): how much longer CUPTI's kernel record is
   than the kernel's blocks, the profile's stream and graph-node gaps less the records' gaps
   (kernel_excess() says how).

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


def profile_value(key):
    """A time parameter of the shipped h200 profile, in us."""
    import re
    with open(os.path.join(ROOT, "hw", "profiles", "h200.yaml")) as f:
        for line in f:
            m = re.match(r"\s*%s:\s*\{value:\s*([0-9.]+)us" % re.escape(key), line)
            if m:
                return float(m.group(1))
    raise SystemExit("error: hw/profiles/h200.yaml has no %s" % key)


def kernel_excess(run_dir):
    """How much longer CUPTI's kernel record is than the kernel's blocks: the profile's gaps
    (gpu.stream_gap between kernels queued back to back in one stream, graph.node_gap between the
    kernel nodes of a graph) are measured between the kernels' own %globaltimer stamps (first
    block start, last block end), the trace's between CUPTI's records. Per trace: the median over
    its pairs of (profile gap - the records' gap), for two kernels of one stream where the second
    one's launch call returned more than 5 us before the first ended (queued: the gap is the
    GPU's own), and for consecutive kernel nodes of one graph launch; the fit: the median over
    the run's traces that have 20 pairs or more."""
    stream_gap, node_gap = profile_value("gpu.stream_gap"), profile_value("graph.node_gap")
    per_trace = []
    for c in sorted(os.listdir(run_dir)):
        if not c.endswith((".trace.json.gz", ".trace.json")):
            continue
        ev = [e for e in load_trace(os.path.join(run_dir, c)) if e.get("ph") == "X"]
        calls = {e["args"]["correlation"]: e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")
                 and "correlation" in e.get("args", {})}
        streams = {}
        for e in ev:
            if e.get("cat") == "kernel":
                streams.setdefault(e["args"].get("stream"), []).append(e)
        ex = []
        for ks in streams.values():
            ks.sort(key=lambda e: e["ts"])
            for k0, k1 in zip(ks, ks[1:]):
                c0, c1 = calls.get(k0["args"].get("correlation")), calls.get(k1["args"].get("correlation"))
                if c1 is None:
                    continue
                gap = k1["ts"] - (k0["ts"] + k0["dur"])
                if c1["name"] == "cudaGraphLaunch":
                    if c0 is c1:
                        ex.append(node_gap - gap)
                elif c1["ts"] + c1["dur"] < k0["ts"] + k0["dur"] - 5:
                    ex.append(stream_gap - gap)
        name = c.split(".trace.json")[0]
        if len(ex) >= 20:
            per_trace.append(statistics.median(ex))
            print("  %-30s %4d pairs: excess median %.3f us" % (name, len(ex), statistics.median(ex)))
        else:
            print("  %-30s %4d pairs: too few" % (name, len(ex)))
    fit = statistics.median(per_trace) if per_trace else 0.0
    print("kernel record excess: %.0f ns (median over %d traces; profile gaps: stream %.3f us, graph node %.3f us)"
          % (1e3 * fit, len(per_trace), stream_gap, node_gap))
    return fit


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


def replay_errors(run_dir, hetsim, v):
    """Signed replay errors (%) of every configuration of run_dir at v ns a boundary."""
    out = "/tmp/hetsim-fit-%d.json" % os.getpid()
    subprocess.run([sys.executable, os.path.join(HERE, "accuracy.py"), run_dir, "--hetsim", hetsim, "--replay-only",
                    "--json", out, "--import-arg=--span-overhead=%dns" % v, "--import-arg=--call-overhead=%dns" % v],
                   cwd=ROOT, capture_output=True, text=True)
    with open(out) as f:
        return [x["error_pct"] for x in json.load(f)["replay"].values()]


def pooled_grid(run_dirs, hetsim, values):
    """The overhead fitted on several runs at once (the grid point whose median signed replay error
    over all their configurations is nearest 0), and leave-one-run-out: each run's replay |error|
    at the value fitted on the others."""
    err = {}
    for r in run_dirs:
        for v in values:
            err[(r, v)] = replay_errors(r, hetsim, v)
            e = err[(r, v)]
            print("  %s %5d ns: signed median %+6.1f%%, |error| median %5.1f%%, max %5.1f%%"
                  % (r, v, statistics.median(e), statistics.median(abs(x) for x in e), max(abs(x) for x in e)), flush=True)

    def fit(runs):
        return min(values, key=lambda v: (abs(statistics.median([x for r in runs for x in err[(r, v)]])), v))

    best = fit(run_dirs)
    print("fit over %d runs: %d ns a boundary" % (len(run_dirs), best))
    held = []
    for r in run_dirs:
        v = fit([o for o in run_dirs if o != r])
        e = [abs(x) for x in err[(r, v)]]
        held += e
        print("  held out %s: %d ns fitted on the others; replay |error| median %.1f%%, max %.1f%%"
              % (r, v, statistics.median(e), max(e)))
    print("leave-one-run-out, pooled: replay |error| median %.1f%%, max %.1f%%" % (statistics.median(held), max(held)))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", nargs="?", default=DEFAULT_RUN)
    ap.add_argument("--hetsim", default=os.path.join(ROOT, "build", "hetsim"))
    ap.add_argument("--values", default="0,1000,1200,1400", help="ns a boundary, the grid")
    ap.add_argument("--grid-only", action="store_true")
    ap.add_argument("--handoff-only", action="store_true")
    ap.add_argument("--excess-only", action="store_true", help="only the kernel record excess (fast)")
    ap.add_argument("--pooled", default="", metavar="RUN,RUN,...",
                    help="fit the overhead on these runs together, and report leave-one-run-out (grid from --values)")
    a = ap.parse_args()
    if a.pooled:
        pooled_grid(a.pooled.split(","), a.hetsim, [int(x) for x in a.values.split(",")])
        return 0
    run_dir = os.path.join(ROOT, a.run_dir)
    if not a.grid_only:
        kernel_excess(run_dir)
        if a.excess_only:
            return 0
        handoff(run_dir)
    if not a.handoff_only:
        grid(a.run_dir, a.hetsim, [int(x) for x in a.values.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
