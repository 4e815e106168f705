#!/usr/bin/env python3
"""Measures one configuration of validation/pytorch/workloads.py: the unprofiled step time
(median of >= 5 timed blocks after warm-up) and a PyTorch profiler (Kineto) trace of a few
active steps. Writes OUT/<config>.json and OUT/<config>.trace.json (gzipped to
<config>.trace.json.gz when over --gzip-mb).

  python3 validation/pytorch/measure.py --config cnn_train_w4_pinned_sync --out OUT
  python3 validation/pytorch/measure.py --list [--check]     # the configurations, in run order
  python3 validation/pytorch/measure.py --config mlp_infer_eager --out /tmp/x --device cpu --quick

Exit codes: 0 measured (warnings, if any, are printed and recorded); 1 a check failed;
2 bad arguments.
"""
import argparse
import datetime
import gzip
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def fail(msg):
    print("error: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


def log(msg):
    print("[measure %7.2fs] %s" % (time.perf_counter() - T0, msg), flush=True)


T0 = time.perf_counter()


def driver_version():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        lines = [l.strip() for l in r.stdout.splitlines() if l.strip()]
        return lines[0] if (r.returncode == 0 and lines) else None
    except Exception as e:
        return "unavailable: %r" % (e,)


def environment(torch, device):
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": (torch.backends.cudnn.version() if torch.backends.cudnn.is_available()
                  else None),
        "python": sys.version.split()[0],
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                         else None),
        "torch_threads": torch.get_num_threads(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "env": {k: os.environ.get(k) for k in (
            "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS",
            "PYTORCH_CUDA_ALLOC_CONF", "OMP_NUM_THREADS", "PYTHONUNBUFFERED")},
    }
    try:
        import numpy
        env["numpy"] = numpy.__version__
    except Exception:
        env["numpy"] = None
    if device.type == "cuda":
        try:
            env.update(_gpu_env(torch, device))
        except Exception as e:
            env["gpu_env_error"] = repr(e)
    return env


def _gpu_env(torch, device):
    p = torch.cuda.get_device_properties(device)
    free, total = torch.cuda.mem_get_info(device)
    env = {
        "gpu": torch.cuda.get_device_name(device),
        "gpu_capability": list(torch.cuda.get_device_capability(device)),
        "gpu_sms": p.multi_processor_count,
        "gpu_memory_total": int(total), "gpu_memory_free_at_start": int(free),
        "gpu_count": torch.cuda.device_count(),
        "driver": driver_version(),
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
    }
    for k, f in (("cudnn_allow_tf32", lambda: torch.backends.cudnn.allow_tf32),
                 ("matmul_allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32)):
        try:
            env[k] = bool(f())
        except Exception as e:
            env[k] = repr(e)
    return env


def check_cuda(torch, device):
    """Every CUDA-facing assumption, checked before anything is measured."""
    if os.environ.get("CUDA_LAUNCH_BLOCKING", "0") not in ("", "0"):
        fail("CUDA_LAUNCH_BLOCKING is set: launches would be synchronous; unset it")
    if not torch.cuda.is_available():
        fail("torch.cuda.is_available() is False (torch %s, built for CUDA %s): no usable GPU"
             % (torch.__version__, torch.version.cuda))
    if torch.version.cuda is None:
        fail("this torch build has no CUDA")
    if device.index is None or device.index >= torch.cuda.device_count():
        fail("CUDA device %s does not exist (%d visible)" % (device, torch.cuda.device_count()))
    from torch.profiler import ProfilerActivity, supported_activities
    if ProfilerActivity.CUDA not in supported_activities():
        fail("the profiler does not support CUDA activities here (Kineto/CUPTI missing)")
    free, total = torch.cuda.mem_get_info(device)
    if free < 8 * 2 ** 30:
        fail("only %.1f GiB of %.1f GiB GPU memory free; need 8 GiB" % (free / 2 ** 30,
                                                                       total / 2 ** 30))
    # Pinned memory must really be page-locked (cudaHostAlloc), not silently pageable.
    t = torch.empty(1024, pin_memory=True)
    if not t.is_pinned():
        fail("torch.empty(pin_memory=True) did not give pinned memory")


def summarise_trace(path, active, cuda):
    """Counts the trace's events by category, so that a useless trace is noticed at once."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    if isinstance(doc, dict):
        events = doc.get("traceEvents", [])
    else:  # the legacy (non-Kineto) profiler writes a bare list
        events = doc if isinstance(doc, list) else []
    cats = {}
    steps = []
    streams = set()
    runtime = {}   # cuda_runtime / cuda_driver call name -> count
    gpu_ops = {}   # gpu_memcpy / gpu_memset name -> count
    for e in events:
        c = e.get("cat", "")
        cats[c] = cats.get(c, 0) + 1
        name = str(e.get("name", ""))
        if c in ("cuda_runtime", "cuda_driver"):
            runtime[name] = runtime.get(name, 0) + 1
        elif c in ("gpu_memcpy", "gpu_memset"):
            gpu_ops[name] = gpu_ops.get(name, 0) + 1
        if name.startswith("ProfilerStep#") and e.get("ph") == "X":
            steps.append(name)
        if c in ("kernel", "gpu_memcpy", "gpu_memset"):
            streams.add(str((e.get("args") or {}).get("stream", e.get("tid"))))
    problems = []
    for need in (("cuda_runtime", "kernel", "ac2g") if cuda else ()):
        if cats.get(need, 0) == 0:
            problems.append("no '%s' events" % need)
    if len(set(steps)) != active:
        problems.append("%d distinct ProfilerStep# annotations, expected %d"
                        % (len(set(steps)), active))
    return {"events": len(events), "categories": dict(sorted(cats.items())),
            "profiler_steps": sorted(set(steps)), "gpu_streams": sorted(streams),
            "runtime_calls": dict(sorted(runtime.items())),
            "gpu_copies_memsets": dict(sorted(gpu_ops.items())), "problems": problems}


def workload_trace_checks(workload, flags, summary):
    """What the configuration must show in its trace (copy kinds, graph launches); a miss is a
    warning: the data are kept, but the what-if pair may not be what it claims."""
    copies = summary["gpu_copies_memsets"]
    runtime = summary["runtime_calls"]
    h2d = [n.lower() for n in copies if "htod" in n.lower()]   # "Memcpy HtoD (Pinned -> Device)"
    d2h = [n.lower() for n in copies if "dtoh" in n.lower()]
    out = []
    if workload == "cnn_train":
        want = "pinned" if flags.get("pin_memory") else "pageable"
        if not any(want in n for n in h2d):
            out.append("no HtoD copy from %s memory in the trace (copies: %s)"
                       % (want, sorted(copies)))
    if workload == "mlp_infer" and flags.get("cuda_graph"):
        if not any("GraphLaunch" in n for n in runtime):
            out.append("no cudaGraphLaunch in the trace")
    if workload == "mlp_infer" and flags.get("cuda_graph") is False:
        if any("GraphLaunch" in n for n in runtime):
            out.append("a graph launch in the eager configuration")
    if workload == "offload_adam" and not (h2d and d2h):
        out.append("expected both HtoD and DtoH copies (copies: %s)" % sorted(copies))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", help="configuration name (see --list)")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--list", action="store_true",
                    help="print 'name estimated_seconds' per configuration, in run order")
    ap.add_argument("--check", action="store_true",
                    help="with --list: also check CUDA and print the environment to stderr")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu is only a dry run of the logic")
    ap.add_argument("--gpu", type=int, default=0, help="CUDA device index (default 0)")
    ap.add_argument("--quick", action="store_true", help="tiny models and blocks (dry run)")
    ap.add_argument("--warmup", type=int, default=10, help="warm-up steps (default 10)")
    ap.add_argument("--blocks", type=int, default=7, help="timed blocks, >= 5 (default 7)")
    ap.add_argument("--block-s", type=float, default=0.5,
                    help="target seconds per timed block (default 0.5)")
    ap.add_argument("--windows", type=int, default=5,
                    help="unprofiled windows of exactly the active step count (default 5)")
    ap.add_argument("--active", type=int, default=None,
                    help="profiler active steps (default: the configuration's)")
    ap.add_argument("--gzip-mb", type=float, default=8.0,
                    help="gzip the trace when it is larger than this (default 8)")
    args = ap.parse_args()

    import torch  # after argparse, so that --help works without torch
    import workloads

    if args.list:
        if args.check:
            dev = torch.device("cuda", args.gpu)  # with an index: set_device, mem_get_info need one
            check_cuda(torch, dev)
            print(json.dumps(environment(torch, dev), indent=1), file=sys.stderr, flush=True)
        for name, c in workloads.CONFIGS.items():
            print("%s %d" % (name, c["est_s"]))
        return 0
    if not args.config or not args.out:
        ap.error("--config and --out are needed (or --list)")
    if args.config not in workloads.CONFIGS:
        print("error: unknown configuration %r; known: %s"
              % (args.config, ", ".join(workloads.CONFIGS)), file=sys.stderr)
        return 2
    if args.blocks < 5 and not args.quick:
        ap.error("--blocks must be >= 5")
    if args.quick:
        args.warmup = min(args.warmup, 2)
        args.block_s = min(args.block_s, 0.05)
        args.windows = min(args.windows, 2)
    cfg = workloads.CONFIGS[args.config]
    active = args.active if args.active is not None else cfg["active"]
    if active < 1:
        ap.error("--active must be >= 1")
    os.makedirs(args.out, exist_ok=True)
    # A CUDA device always carries its index (torch.cuda.set_device and mem_get_info refuse a
    # bare torch.device("cuda")).
    device = torch.device("cuda", args.gpu) if args.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        check_cuda(torch, device)
        torch.cuda.set_device(device)
    # Fixed kernel choices across processes, so that configurations compare like with like.
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    env = environment(torch, device)
    log("%s: %s %s on %s (%s)" % (args.config, cfg["workload"], cfg["flags"], device,
                                  env.get("gpu", "cpu")))

    wl = workloads.build(args.config, device, quick=args.quick)
    result = {
        "config": args.config, "workload": cfg["workload"], "flags": cfg["flags"],
        "device": str(device), "quick": args.quick, "info": wl.info,
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        "environment": env, "warnings": [],
    }
    trace_path = os.path.join(args.out, args.config + ".trace.json")
    json_path = os.path.join(args.out, args.config + ".json")
    for p in (trace_path, trace_path + ".gz", json_path):
        if os.path.exists(p):
            os.remove(p)  # a stale file from an earlier run must not pass for this one

    def write_result():
        tmp = json_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, json_path)

    def steps(n):
        for _ in range(n):
            wl.step()

    def timed(n):
        workloads.sync(device)
        t0 = time.perf_counter_ns()
        steps(n)
        workloads.sync(device)
        return time.perf_counter_ns() - t0

    try:
        # ---- warm-up (and the CUDA graph capture)
        t = time.perf_counter_ns()
        if hasattr(wl, "prepare"):
            wl.prepare()
        steps(args.warmup)
        workloads.sync(device)
        result["warmup"] = {"steps": args.warmup, "ns": time.perf_counter_ns() - t}
        log("warm-up: %d steps in %.2f s" % (args.warmup, result["warmup"]["ns"] / 1e9))

        # ---- block size: N steps take about --block-s seconds
        probe = 3
        est = max(timed(probe) / probe, 1.0)
        n = int(max(3, min(20000, round(args.block_s * 1e9 / est))))
        log("probe: %.3f ms a step -> %d steps a block" % (est / 1e6, n))

        # ---- unprofiled step time: blocks of N steps, each synchronized and timed
        blocks = []
        for _ in range(args.blocks):
            blocks.append(timed(n))
        per_step = [b / n for b in blocks]
        result["unprofiled"] = {
            "steps_per_block": n, "block_ns": blocks, "block_step_ns": per_step,
            "median_step_ns": statistics.median(per_step),
            "min_step_ns": min(per_step), "max_step_ns": max(per_step),
            "spread": (max(per_step) - min(per_step)) / statistics.median(per_step),
        }
        log("unprofiled: median %.3f ms a step (blocks: %s ms)" % (
            statistics.median(per_step) / 1e6, ", ".join("%.3f" % (s / 1e6) for s in per_step)))
        if result["unprofiled"]["spread"] > 0.10:
            result["warnings"].append("unprofiled blocks spread %.1f%% (> 10%%)"
                                      % (100 * result["unprofiled"]["spread"]))

        # ---- unprofiled windows of exactly `active` steps from an idle (synchronized) start,
        # the same shape as the profiled window below
        wins = [timed(active) for _ in range(args.windows)]
        result["unprofiled_window"] = {
            "steps": active, "window_ns": wins, "median_window_ns": statistics.median(wins),
            "median_step_ns": statistics.median(wins) / active}
        write_result()

        # ---- profiler trace
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

        step_wall = []
        window_ns = None
        t_prof = time.perf_counter_ns()
        with profile(activities=acts, schedule=schedule(wait=wait, warmup=warm, active=active,
                                                        repeat=1),
                     on_trace_ready=on_ready) as prof:
            total = wait + warm + active
            t_win = None
            for i in range(total):
                if i == wait + warm:
                    t_win = time.perf_counter_ns()
                t = time.perf_counter_ns()
                wl.step()
                if i == total - 1:
                    # The last active step ends with the GPU drained, so that the window is
                    # complete in the trace and its time can be compared.
                    workloads.sync(device)
                    window_ns = time.perf_counter_ns() - t_win
                step_wall.append(time.perf_counter_ns() - t)
                prof.step()
        if not exported:
            raise RuntimeError("the profiler never called on_trace_ready")
        result["profiled"] = {
            "wait": wait, "warmup": warm, "active": active,
            "step_wall_ns": step_wall,
            "active_step_wall_ns": step_wall[wait + warm:],
            "active_window_ns": window_ns, "active_step_ns": window_ns / active,
            "note": "step_wall_ns: host time of each step (no per-step synchronize); "
                    "active_window_ns: from the start of the first active step to the end of "
                    "a torch.cuda.synchronize() after the last one (inside its ProfilerStep)",
            "export_ns": exported[0], "profile_total_ns": time.perf_counter_ns() - t_prof,
        }
        log("profiled: %.3f ms a step over %d active steps (unprofiled window %.3f ms)" % (
            window_ns / active / 1e6, active,
            result["unprofiled_window"]["median_step_ns"] / 1e6))

        # ---- trace size and content
        size = os.path.getsize(trace_path)
        if size > args.gzip_mb * 2 ** 20:
            with open(trace_path, "rb") as fi, gzip.open(trace_path + ".gz", "wb", 6) as fo:
                while True:
                    b = fi.read(1 << 20)
                    if not b:
                        break
                    fo.write(b)
            os.remove(trace_path)
            trace_path_final = trace_path + ".gz"
        else:
            trace_path_final = trace_path
        try:
            summary = summarise_trace(trace_path_final, active, device.type == "cuda")
        except Exception as e:  # keep the timings; the trace itself is kept as it is
            summary = {"events": 0, "categories": {}, "profiler_steps": [], "gpu_streams": [],
                       "runtime_calls": {}, "gpu_copies_memsets": {},
                       "problems": ["unreadable as JSON: %r" % (e,)]}
        summary.update({"file": os.path.basename(trace_path_final), "json_bytes": size,
                        "file_bytes": os.path.getsize(trace_path_final)})
        result["trace"] = summary
        if device.type == "cuda":
            summary["problems"] += workload_trace_checks(cfg["workload"], cfg["flags"], summary)
        for p in summary["problems"]:
            result["warnings"].append("trace: " + p)
        log("trace: %s, %.2f MB, %d events, %s" % (summary["file"], size / 2 ** 20,
                                                    summary["events"], summary["categories"]))
        if device.type == "cuda":
            result["gpu_max_memory_allocated"] = int(torch.cuda.max_memory_allocated(device))
            result["gpu_max_memory_reserved"] = int(torch.cuda.max_memory_reserved(device))
    except BaseException as e:
        result["error"] = repr(e)
        write_result()
        raise
    finally:
        wl.close()
    result["wall_s"] = time.perf_counter() - T0
    write_result()
    for w in result["warnings"]:
        print("WARNING: %s: %s" % (args.config, w), flush=True)
    log("wrote %s and %s" % (json_path, summary["file"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
