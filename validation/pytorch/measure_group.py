"""Measures a GROUP of configurations of validation/pytorch/workloads.py in ONE process, with
the timed blocks of the configurations interleaved (round robin), so that a what-if pair is
measured under the same host speed (issue 12, the "interleaved" protocol; measure.py is the
older one-configuration-per-process protocol, kept as it was).

Why: on the H200 machine (a 16-vCPU VM) the host's speed moves by up to ~2x between processes
and over seconds within one (the per-sample numpy cost `sample_cpu_ns_main_process` of the
2026-12-01a..d runs is 0.20-0.43 ms for the same code), so two configurations measured in two
processes a minute apart differ by more than the knob between them. Here:

1. Threads are fixed: `torch.set_num_threads(T)` (the group's T), the process is pinned to CPUs
   1..T (CPU 0 is left to the system) and DataLoader worker w to CPU T+1+w (so intra-op threads, the pin-memory thread and the
   loader workers never share a CPU), recorded under `pinning`.
2. Every configuration is built, warmed up (10 steps) and sized (N steps for ~--block-s).
3. R rounds (--rounds); in round r the configurations run in an order rotated by r; per
   configuration: a host probe (the main thread's time for 8 numpy samples of the cnn_train
   dataset, `host_probe_ns`), F untimed flush steps (F = 3 x workers x prefetch_factor for a
   loader with workers, whose queue filled up while the other configurations ran; else 2),
   then a timed block of N steps between `torch.cuda.synchronize()` + `perf_counter_ns()`.
   `unprofiled.median_step_ns` is the median over the R blocks.
4. Then per configuration (in the reverse order: a CUDA graph configuration, the last of its
   group, is profiled first, in a process not profiled before): 5 unprofiled windows of the profiler's active step
   count, a host probe, and the profiler trace (as measure.py: wait 1, warm-up 2, active A).
5. Then 2 more rounds of blocks after all the profiling (`unprofiled_after_profile`, a check
   that the profiler leaves nothing behind; not used for the median).

Output: OUT/<config>.json (the same fields as measure.py writes, plus `protocol`, `group`,
`pinning`, `host_probe_ns` per block, `round_order`) and OUT/<config>.trace.json[.gz].

  python3 validation/pytorch/measure_group.py --list                 # 'group est_s configs...'
  python3 validation/pytorch/measure_group.py --group cnn_train --out OUT
  python3 validation/pytorch/measure_group.py --group mlp_infer --out /tmp/x --device cpu --quick
"""
import argparse
import gzip
import json
import os
import shlex
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import measure  # noqa: E402  (helpers: environment, check_cuda, summarise_trace, ...)

T0 = time.perf_counter()

# group -> (configurations, torch intra-op threads or None for the default, estimated seconds)
GROUPS = {
    "cnn_train": (["cnn_train_w0_pageable_sync", "cnn_train_w0_pinned_sync",
                   "cnn_train_w4_pageable_sync", "cnn_train_w4_pinned_sync",
                   "cnn_train_w0_pageable_nosync", "cnn_train_w0_pinned_nosync",
                   "cnn_train_w4_pageable_nosync", "cnn_train_w4_pinned_nosync"], 4, 60),
    "mlp_infer": (["mlp_infer_eager", "mlp_infer_graph"], 4, 22),
    "transformer_train": (["transformer_train"], 4, 24),
    "offload_adam": (["offload_adam"], 8, 26),
}


def log(msg):
    print("[group %7.2fs] %s" % (time.perf_counter() - T0, msg), flush=True)


def pin_process(threads):
    """CPUs 0..threads-1 for this process (and the threads it starts); workers get their own."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 1 + threads + 4:
        return {"note": "only %d CPUs: not pinned" % len(cpus), "cpus": cpus}
    mine = set(cpus[1:1 + threads])  # the first CPU is left to the system (interrupts)
    os.sched_setaffinity(0, mine)
    return {"main_cpus": sorted(mine), "worker_cpus_from": cpus[1 + threads],
            "all_cpus": len(cpus)}


def make_worker_init(first_cpu):
    def init(worker_id):
        if first_cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {first_cpu + worker_id})
    return init


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--group", help="group name (see --list)")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--list", action="store_true",
                    help="print 'group estimated_seconds config...' per group, in run order")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu is only a dry run of the logic")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="tiny models and blocks (dry run)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=11, help="timed rounds, >= 5 (default 11)")
    ap.add_argument("--after-rounds", type=int, default=2,
                    help="rounds after the profiling (a check; default 2)")
    ap.add_argument("--block-s", type=float, default=0.25,
                    help="target seconds per timed block (default 0.25)")
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--gzip-mb", type=float, default=8.0)
    ap.add_argument("--time-limit-s", type=float, default=0.0,
                    help="the process's own time limit (run_device.sh's timeout): the timed "
                         "rounds stop (after at least 5) past 55%% of it, so that the traces are "
                         "still taken, and the rounds after the traces are left out past 85%%")
    args = ap.parse_args()

    if args.list:
        for g, (cfgs, _, est) in GROUPS.items():
            print("%s %d %s" % (g, est, " ".join(cfgs)))
        return 0
    if not args.group or not args.out:
        ap.error("--group and --out are needed (or --list)")
    if args.group not in GROUPS:
        print("error: unknown group %r; known: %s" % (args.group, ", ".join(GROUPS)),
              file=sys.stderr)
        return 2
    if args.rounds < 5 and not args.quick:
        ap.error("--rounds must be >= 5")
    if args.quick:
        args.warmup = min(args.warmup, 2)
        args.block_s = min(args.block_s, 0.03)
        args.windows = min(args.windows, 2)
        args.rounds = min(args.rounds, 5)
        args.after_rounds = min(args.after_rounds, 1)
    names, threads, _ = GROUPS[args.group]
    pinning = pin_process(threads)  # before torch starts its thread pools

    import torch
    import workloads
    torch.set_num_threads(threads)
    if pinning is not None:
        pinning["torch_threads"] = torch.get_num_threads()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda", args.gpu) if args.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        measure.check_cuda(torch, device)
        torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    env = measure.environment(torch, device)
    log("group %s on %s (%s): %s; pinning %s" % (args.group, device, env.get("gpu", "cpu"),
                                                ", ".join(names), pinning))
    probe_ds = workloads.SyntheticImages(size=32 if args.quick else 64)

    def host_probe():
        t = time.perf_counter_ns()
        for i in range(8):
            probe_ds[i]
        return time.perf_counter_ns() - t

    worker_init = make_worker_init(pinning.get("worker_cpus_from") if pinning else None)
    cmd = " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv)
    failed = []
    runs = []   # per configuration: dict(name, cfg, wl, result, n, flush, ...)
    for name in names:
        cfg = workloads.CONFIGS[name]
        trace_path = os.path.join(args.out, name + ".trace.json")
        json_path = os.path.join(args.out, name + ".json")
        for p in (trace_path, trace_path + ".gz", json_path):
            if os.path.exists(p):
                os.remove(p)
        overrides = {}
        if cfg["workload"] == "cnn_train":
            overrides["worker_init_fn"] = worker_init
        try:
            wl = workloads.build(name, device, quick=args.quick, **overrides)
        except (Exception, SystemExit) as e:  # the others of the group are still measured
            failed.append(name)
            log("%s: not built: %s" % (name, e))
            with open(json_path, "w") as f:
                json.dump({"config": name, "workload": cfg["workload"], "flags": cfg["flags"],
                           "protocol": "interleaved (measure_group.py)", "group": args.group,
                           "error": "not built: %s" % (e,)}, f, indent=1)
            continue
        result = {"config": name, "workload": cfg["workload"], "flags": cfg["flags"],
                  "device": str(device), "quick": args.quick, "info": wl.info,
                  "command": cmd, "environment": env, "warnings": [],
                  "protocol": "interleaved (measure_group.py)", "group": args.group,
                  "group_configs": names, "pinning": pinning}
        nw = int(cfg["flags"].get("num_workers", 0) or 0)
        flush = 3 * nw * 2 if nw else 2
        runs.append({"name": name, "cfg": cfg, "wl": wl, "result": result, "flush": flush,
                     "trace_path": trace_path, "json_path": json_path,
                     "active": cfg["active"], "blocks": [], "probes": [], "after": [],
                     "phase_blocks": []})

    def write(r):
        tmp = r["json_path"] + ".tmp"
        with open(tmp, "w") as f:
            json.dump(r["result"], f, indent=1)
        os.replace(tmp, r["json_path"])

    def steps(wl, n):
        for _ in range(n):
            wl.step()

    def timed(wl, n):
        workloads.sync(device)
        t0 = time.perf_counter_ns()
        steps(wl, n)
        workloads.sync(device)
        return time.perf_counter_ns() - t0

    try:
        for r in runs:
            wl = r["wl"]
            t = time.perf_counter_ns()
            if hasattr(wl, "prepare"):
                wl.prepare()
            steps(wl, args.warmup)
            workloads.sync(device)
            r["result"]["warmup"] = {"steps": args.warmup, "ns": time.perf_counter_ns() - t}
            est = max(timed(wl, 3) / 3, 1.0)
            r["n"] = int(max(3, min(20000, round(args.block_s * 1e9 / est))))
            log("%s: warm-up %.2f s; probe %.3f ms a step -> %d steps a block, %d flush steps"
                % (r["name"], r["result"]["warmup"]["ns"] / 1e9, est / 1e6, r["n"], r["flush"]))

        def one_round(k, into):
            order = runs[k % len(runs):] + runs[:k % len(runs)]
            for r in order:
                p = host_probe()
                steps(r["wl"], r["flush"])
                r["wl"].stamps_reset()
                b = timed(r["wl"], r["n"])
                r["phase_blocks"].append(r["wl"].phase_times()[0])
                into(r, b, p)
            return [r["name"] for r in order]

        for r in runs:  # a record of the run so far, should the process be cut off
            r["result"]["error"] = "incomplete: the process ended before the timed rounds"
            write(r)
            del r["result"]["error"]

        def past(frac):
            return args.time_limit_s > 0 and time.perf_counter() - T0 > frac * args.time_limit_s

        orders = []
        for k in range(args.rounds):
            if k >= 5 and past(0.55):
                log("time: %d of %d rounds done at %.0f s of the %.0f s limit; on to the traces"
                    % (k, args.rounds, time.perf_counter() - T0, args.time_limit_s))
                break
            orders.append(one_round(k, lambda r, b, p: (r["blocks"].append(b),
                                                        r["probes"].append(p))))
        for r in runs:
            n, blocks = r["n"], r["blocks"]
            per_step = [b / n for b in blocks]
            med = statistics.median(per_step)
            r["result"]["unprofiled"] = {
                "steps_per_block": n, "flush_steps": r["flush"], "rounds": len(blocks),
                "block_ns": blocks, "block_step_ns": per_step, "median_step_ns": med,
                "min_step_ns": min(per_step), "max_step_ns": max(per_step),
                "spread": (max(per_step) - min(per_step)) / med,
                "host_probe_ns": r["probes"],
                "host_probe_note": "main thread's time for 8 cnn_train numpy samples, just "
                                   "before each block (before its flush steps)",
            }
            r["result"]["round_order"] = orders
            r["result"]["unprofiled"]["phase_ns"] = phase_medians(r["phase_blocks"])
            r["result"]["unprofiled"]["phase_note"] = (
                "per phase of the step (workloads.py PHASES, host time stamps at its "
                "boundaries): the median over the blocks of each block's median over its steps")
            r["phase_blocks"] = []
            if r["result"]["unprofiled"]["spread"] > 0.10:
                r["result"]["warnings"].append("unprofiled blocks spread %.1f%% (> 10%%)"
                                               % (100 * r["result"]["unprofiled"]["spread"]))
            log("%s: unprofiled median %.3f ms a step (blocks %s ms; probes %s ms)" % (
                r["name"], med / 1e6, ", ".join("%.3f" % (s / 1e6) for s in per_step),
                ", ".join("%.2f" % (p / 1e6) for p in r["probes"])))
            write(r)

        # Traces in the reverse order, so that a CUDA graph configuration (the last of its
        # group) is profiled first, in a process not profiled before, as measure.py did.
        for r in reversed(runs):
            trace_one(args, torch, workloads, device, r, timed, host_probe, steps)
            write(r)

        for k in range(args.after_rounds):
            if past(0.85):
                log("time: the rounds after the traces are left out")
                break
            one_round(k, lambda r, b, p: r["after"].append((b, p)))
        for r in runs:
            per = [b / r["n"] for b, _ in r["after"]]
            r["result"]["unprofiled_after_profile"] = {
                "block_step_ns": per, "host_probe_ns": [p for _, p in r["after"]],
                "median_step_ns": statistics.median(per) if per else None,
                "note": "blocks after every trace of the group was taken: a check that the "
                        "profiler leaves no cost behind; not part of unprofiled"}
            if device.type == "cuda":
                r["result"]["gpu_max_memory_allocated"] = int(torch.cuda.max_memory_allocated(device))
                r["result"]["gpu_max_memory_reserved"] = int(torch.cuda.max_memory_reserved(device))
            r["result"]["wall_s"] = time.perf_counter() - T0
            write(r)
    except BaseException as e:
        for r in runs:
            r["result"].setdefault("error", repr(e))
            write(r)
        raise
    finally:
        for r in runs:
            try:
                r["wl"].close()
            except Exception as e:  # pragma: no cover
                print("note: close %s: %r" % (r["name"], e))
    bad = 0
    for r in runs:
        for w in r["result"]["warnings"]:
            print("WARNING: %s: %s" % (r["name"], w), flush=True)
        if "error" in r["result"]:
            bad += 1
    log("wrote %d configurations to %s%s" % (len(runs), args.out,
                                            "; not built: " + ", ".join(failed) if failed else ""))
    return 1 if (bad or failed) else 0


def phase_medians(blocks):
    out = {}
    for name in (blocks[0] if blocks else {}):
        v = [b[name] for b in blocks if b.get(name) is not None]
        out[name] = statistics.median(v) if v else None
    return out


def trace_one(args, torch, workloads, device, r, timed, host_probe, steps):
    """Unprofiled windows, then the profiler trace, exactly as measure.py takes them."""
    wl, active, result, trace_path = r["wl"], r["active"], r["result"], r["trace_path"]
    steps(wl, r["flush"])
    wins = [timed(wl, active) for _ in range(args.windows)]
    result["unprofiled_window"] = {
        "steps": active, "window_ns": wins, "median_window_ns": statistics.median(wins),
        "median_step_ns": statistics.median(wins) / active}
    from torch.profiler import ProfilerActivity, profile, schedule
    acts = [ProfilerActivity.CPU]
    if device.type == "cuda":
        acts.append(ProfilerActivity.CUDA)
    wait, warm = 1, 2
    exported = []

    def on_ready(prof):
        t = time.perf_counter_ns()
        prof.export_chrome_trace(trace_path)
        exported.append(time.perf_counter_ns() - t)

    probe = host_probe()
    step_wall = []
    window_ns = None
    t_prof = time.perf_counter_ns()
    try:
        with profile(activities=acts, schedule=schedule(wait=wait, warmup=warm, active=active,
                                                        repeat=1),
                     on_trace_ready=on_ready) as prof:
            total = wait + warm + active
            t_win = None
            for i in range(total):
                if i == wait + warm:
                    wl.stamps_reset()
                    t_win = time.perf_counter_ns()
                t = time.perf_counter_ns()
                wl.step()
                if i == total - 1:
                    workloads.sync(device)
                    window_ns = time.perf_counter_ns() - t_win
                step_wall.append(time.perf_counter_ns() - t)
                prof.step()
        if not exported:
            raise RuntimeError("the profiler never called on_trace_ready")
    except Exception as e:
        result["error"] = "profiling failed: %r" % (e,)
        log("%s: %s" % (r["name"], result["error"]))
        return
    result["profiled"] = {
        "wait": wait, "warmup": warm, "active": active, "step_wall_ns": step_wall,
        "active_step_wall_ns": step_wall[wait + warm:],
        "active_window_ns": window_ns, "active_step_ns": window_ns / active,
        "host_probe_ns": probe,
        "phase_ns": wl.phase_times()[0],
        "note": "step_wall_ns: host time of each step (no per-step synchronize); "
                "active_window_ns: from the start of the first active step to the end of "
                "a torch.cuda.synchronize() after the last one (inside its ProfilerStep); "
                "host_probe_ns: the host probe just before the profiled steps",
        "export_ns": exported[0], "profile_total_ns": time.perf_counter_ns() - t_prof,
    }
    up = result.get("unprofiled", {}).get("phase_ns", {})
    log("%s: phases unprofiled / profiled (us): %s" % (r["name"], ", ".join(
        "%s %s/%s" % (k, "%.1f" % (up[k] / 1e3) if up.get(k) is not None else "-",
                      "%.1f" % (v / 1e3) if v is not None else "-")
        for k, v in result["profiled"]["phase_ns"].items())))
    size = os.path.getsize(trace_path)
    if size > args.gzip_mb * 2 ** 20:
        with open(trace_path, "rb") as fi, gzip.open(trace_path + ".gz", "wb", 6) as fo:
            while True:
                b = fi.read(1 << 20)
                if not b:
                    break
                fo.write(b)
        os.remove(trace_path)
        final = trace_path + ".gz"
    else:
        final = trace_path
    try:
        summary = measure.summarise_trace(final, active, device.type == "cuda")
    except Exception as e:
        summary = {"events": 0, "categories": {}, "profiler_steps": [], "gpu_streams": [],
                   "runtime_calls": {}, "gpu_copies_memsets": {},
                   "problems": ["unreadable as JSON: %r" % (e,)]}
    summary.update({"file": os.path.basename(final), "json_bytes": size,
                    "file_bytes": os.path.getsize(final)})
    if device.type == "cuda":
        summary["problems"] += measure.workload_trace_checks(r["cfg"]["workload"],
                                                             r["cfg"]["flags"], summary)
    result["trace"] = summary
    for p in summary["problems"]:
        result["warnings"].append("trace: " + p)
    log("%s: profiled %.3f ms a step (window %.3f ms, probe %.2f ms); trace %s, %.2f MB, %d "
        "events" % (r["name"], window_ns / active / 1e6,
                    result["unprofiled_window"]["median_step_ns"] / 1e6, probe / 1e6,
                    summary["file"], size / 2 ** 20, summary["events"]))


if __name__ == "__main__":
    sys.exit(main())
