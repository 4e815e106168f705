#!/usr/bin/env python3
"""Two costs that `hetsim import` models and the workloads of workloads.py cannot isolate
(issue 12): the PyTorch profiler's own cost per recorded op and per CUDA launch, and the main
thread's cost of receiving a batch from a DataLoader worker process.

    python3 validation/pytorch/overhead.py --out OUT_DIR [--device cuda:0] [--quick]

Writes OUT_DIR/overhead.json (and prints it). ~60-90 s on the H200 machine. Parts:

1. profiler: loops of K identical ops, each loop timed unprofiled and under
   torch.profiler.profile(activities=[CPU, CUDA]) with the settings of measure.py (no shapes,
   no stacks), R times alternately; per loop: the ns per iteration each way, and the profiled
   trace's records per iteration (cpu_op + user_annotation spans, CUDA runtime calls), so that
   (profiled - unprofiled) / records is the overhead per record. Loops: `x.view(-1)` on a CPU
   tensor (1 cpu_op), `x.t()` (3 nested cpu_ops: t, transpose, as_strided), `y.add_(1)` on a
   one-element CUDA tensor (1 cpu_op + 1 cudaLaunchKernel), `y.add_(1)` 40 times per iteration
   inside a record_function (an annotation around launches).
2. handoff: a DataLoader over precomputed samples (no per-sample work: the hand-off alone),
   batch B of 3xHxW float32, num_workers 4, persistent, prefetch_factor 2, pin_memory off/on;
   after the workers have filled the queue (a sleep before each next()), the main thread's
   time of next(it); for two batch sizes (3 MiB and 12 MiB) to separate a fixed and a per-byte
   part; num_workers 0 for reference (the collate on the main thread).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def per_iter(fn, k):
    t = time.perf_counter_ns()
    for _ in range(k):
        fn()
    return (time.perf_counter_ns() - t) / k


def profiler_part(torch, device, quick):
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    x = torch.randn(64, 64)
    y = torch.zeros(1, device=device)
    k = 200 if quick else 2000
    reps = 2 if quick else 5

    def launches40():
        with torch.profiler.record_function("block40"):
            for _ in range(40):
                y.add_(1)

    loops = {
        "view": (lambda: x.view(-1), k),
        "t": (lambda: x.t(), k),
        "add_launch": (lambda: y.add_(1), k),
        "block40_launch": (launches40, max(10, k // 40)),
    }
    out = {}
    for name, (fn, n) in loops.items():
        for _ in range(3):
            per_iter(fn, n)  # warm-up
        sync = (lambda: torch.cuda.synchronize()) if device.startswith("cuda") else (lambda: None)
        un, pr, recs = [], [], None
        for r in range(reps):
            sync()
            un.append(per_iter(fn, n))
            sync()
            with profile(activities=acts) as prof:
                pr.append(per_iter(fn, n))
                sync()
            if recs is None:
                path = os.path.join(tempfile.mkdtemp(), "t.json")
                prof.export_chrome_trace(path)
                with open(path) as f:
                    ev = json.load(f)["traceEvents"]
                ops = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation"))
                rt = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"))
                recs = {"cpu_op_per_iter": ops / n, "cuda_calls_per_iter": rt / n}
        out[name] = {
            "iterations": n, "repeats": reps,
            "unprofiled_ns": un, "profiled_ns": pr,
            "unprofiled_median_ns": statistics.median(un), "profiled_median_ns": statistics.median(pr),
            "overhead_per_iter_ns": statistics.median(pr) - statistics.median(un),
            "records": recs,
        }
    return out


class Pre:
    def __init__(self, torch, hw, n=256):
        self.s = [torch.randn(3, hw, hw) for _ in range(n)]

    def __len__(self):
        return 10 ** 9

    def __getitem__(self, i):
        return self.s[i % len(self.s)], i % 10


def handoff_part(torch, quick):
    out = {}
    batch = 64
    n = 10 if quick else 40
    for hw in (64, 128):
        for workers in (0, 4):
            for pin in (False, True):
                if workers == 0 and pin:
                    continue
                ds = Pre(torch, hw)
                kw = dict(batch_size=batch, num_workers=workers, pin_memory=pin)
                if workers:
                    kw.update(persistent_workers=True, prefetch_factor=2)
                it = iter(torch.utils.data.DataLoader(ds, **kw))
                for _ in range(10):
                    next(it)
                ts = []
                for _ in range(n):
                    time.sleep(0.02 if workers else 0.0)  # the workers fill the queue
                    t = time.perf_counter_ns()
                    b = next(it)
                    ts.append(time.perf_counter_ns() - t)
                nbytes = b[0].numel() * b[0].element_size()
                out["hw%d_w%d_%s" % (hw, workers, "pinned" if pin else "pageable")] = {
                    "batch_bytes": nbytes, "workers": workers, "pin_memory": pin,
                    "next_ns": ts, "median_next_ns": statistics.median(ts), "min_next_ns": min(ts),
                }
                del it
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    import torch
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print("overhead.py: CUDA is not available", file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    res = {"torch": torch.__version__, "device": a.device, "cpu_count": os.cpu_count(),
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if a.device.startswith("cuda"):
        res["gpu"] = torch.cuda.get_device_name(0)
    res["profiler"] = profiler_part(torch, a.device, a.quick)
    res["handoff"] = handoff_part(torch, a.quick)
    res["wall_s"] = time.time() - t0
    with open(os.path.join(a.out, "overhead.json"), "w") as f:
        json.dump(res, f, indent=1)
    json.dump(res, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
