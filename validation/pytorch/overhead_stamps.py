#!/usr/bin/env python3
"""The profiler's cost per recorded boundary, measured in the traced process itself: for a run
of the interleaved protocol (measure_group.py), each step's host phases are time-stamped in the
timed (unprofiled) blocks and in the traced steps alike (workloads.PHASES), so

    per boundary = (profiled - unprofiled host time of the pure-host phases) / boundaries

where the boundaries are the starts and ends the trace recorded, on every host thread, inside
the same phases (cpu_op / user_annotation spans other than ProfilerStep#N, and CUDA runtime /
driver calls), per active step. Pure-host phases: those where the host neither waits for the GPU
nor for a loader worker (cnn_train: zero_grad .. opt.step(), i.e. from the end of the step's last
`aten::to` to the start of `aten::item` or the step's end; mlp_infer: the forward, between the
two `aten::copy_`; transformer_train: the whole step; offload_adam: forward, backward and the
D2H enqueue, up to the first `cudaEventSynchronize`).

This is docs/import.md's rule (a fixed cost per boundary) measured directly, per configuration,
without a replay, for `hetsim import --span-overhead X --call-overhead X`.

    validation/pytorch/overhead_stamps.py validation/measurements/h200/pytorch/START
"""
import gzip
import json
import os
import statistics
import sys

PHASES = {  # workload -> the pure-host phases (names of workloads.PHASES)
    "cnn_train": ("forward_loss", "backward", "optimizer"),
    "mlp_infer": ("forward",),
    "transformer_train": ("forward_loss", "backward", "optimizer"),
    "offload_adam": ("forward_backward", "d2h_enqueue"),
}
HOST_CATS = ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", None)  # None: old CPU torch


def windows(workload, step, main_events):
    """[t0, t1) of the pure-host phases of one ProfilerStep span (trace microseconds)."""
    t0, t1 = step["ts"], step["ts"] + step["dur"]
    ev = [e for e in main_events if t0 <= e["ts"] < t1]
    if workload == "cnn_train":
        to = [e for e in ev if e["name"] == "aten::to"]
        item = [e for e in ev if e["name"] in ("aten::item", "aten::_local_scalar_dense")]
        a = max(e["ts"] + e["dur"] for e in to) if to else t0
        b = min(e["ts"] for e in item) if item else t1
        return a, b
    if workload == "mlp_infer":
        cp = sorted((e for e in ev if e["name"] == "aten::copy_"), key=lambda e: e["ts"])
        if len(cp) < 2:
            return None
        return cp[0]["ts"] + cp[0]["dur"], cp[-1]["ts"]
    if workload == "offload_adam":
        es = [e for e in ev if e["name"] == "cudaEventSynchronize"]
        return t0, (min(e["ts"] for e in es) if es else t1)
    return t0, t1


def boundaries(path, workload):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = sorted((e for e in ev if e.get("ph") == "X" and
                    str(e.get("name", "")).startswith("ProfilerStep#") and
                    e.get("cat") in ("user_annotation", None)), key=lambda e: e["ts"])
    if not steps:
        return None
    main = steps[0]["tid"]
    host = [e for e in ev if e.get("ph") == "X" and e.get("cat") in HOST_CATS and
            not str(e.get("name", "")).startswith("ProfilerStep#")]
    main_ev = [e for e in host if e.get("tid") == main]
    counts = []
    for s in steps:
        w = windows(workload, s, main_ev)
        if w is None:
            continue
        a, b = w
        n = 0
        for e in host:
            n += (a <= e["ts"] < b) + (a <= e["ts"] + e["dur"] < b)
        counts.append(n)
    return statistics.mean(counts) if counts else None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    run = sys.argv[1]
    rows = []
    print("| configuration | pure-host phases | unprofiled us | profiled us | boundaries a step "
          "| us per boundary |")
    print("|---|---|---|---|---|---|")
    for f in sorted(os.listdir(run)):
        if not f.endswith(".json") or f.endswith(".trace.json") or f == "host_cpus.json":
            continue
        with open(os.path.join(run, f)) as fh:
            r = json.load(fh)
        up = r.get("unprofiled", {}).get("phase_ns")
        pp = r.get("profiled", {}).get("phase_ns")
        tr = r.get("trace", {}).get("file")
        if not (up and pp and tr):
            continue
        ph = PHASES[r["workload"]]
        u = sum(up[p] for p in ph if up.get(p) is not None)
        p = sum(pp[p] for p in ph if pp.get(p) is not None)
        n = boundaries(os.path.join(run, tr), r["workload"])
        if not n:
            continue
        per = (p - u) / n
        rows.append(per)
        print("| %s | %s | %.1f | %.1f | %.0f | %.3f |" % (r["config"], " + ".join(ph), u / 1e3,
                                                          p / 1e3, n, per / 1e3))
    if rows:
        print()
        print("Per boundary: median %.3f us, min %.3f, max %.3f over %d configurations."
              % (statistics.median(rows) / 1e3, min(rows) / 1e3, max(rows) / 1e3, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
