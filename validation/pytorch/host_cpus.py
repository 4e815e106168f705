"""The host's speed CPU by CPU and over time (issue 12, ground truth): is one vCPU slower than
another (a busy hyperthread sibling, a neighbour VM), and does a CPU's speed move within a few
seconds? The probe is the cnn_train dataset's numpy sample (workloads.SyntheticImages), the
work the cnn_train main process and loader workers do. Two sweeps over every CPU (forward,
then backward), the process pinned to one CPU at a time; per CPU and sweep the median and min
of 9 probes of 8 samples. Then 4 s on the first non-zero CPU, one probe every ~20 ms (drift).
Needs numpy only (torch for the dataset class's tensors). ~7 s on 16 CPUs.

  python3 validation/pytorch/host_cpus.py --out OUT/host_cpus.json
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--drift-s", type=float, default=4.0)
    args = ap.parse_args()
    import workloads
    ds = workloads.SyntheticImages()
    for i in range(16):
        ds[i]

    def probe():
        t = time.perf_counter_ns()
        for i in range(8):
            ds[i]
        return time.perf_counter_ns() - t

    cpus = sorted(os.sched_getaffinity(0))
    out = {"cpus": cpus, "probe": "8 cnn_train numpy samples (ns)", "sweeps": []}
    topo = {}
    for c in cpus:
        p = "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % c
        try:
            topo[c] = open(p).read().strip()
        except OSError:
            topo[c] = None
    out["thread_siblings"] = topo
    for order in (cpus, list(reversed(cpus))):
        sweep = {}
        for c in order:
            os.sched_setaffinity(0, {c})
            probe()
            v = [probe() for _ in range(9)]
            sweep[c] = {"median_ns": statistics.median(v), "min_ns": min(v)}
        out["sweeps"].append(sweep)
    c = cpus[1] if len(cpus) > 1 else cpus[0]
    os.sched_setaffinity(0, {c})
    drift = []
    t_end = time.perf_counter() + args.drift_s
    while time.perf_counter() < t_end:
        drift.append(probe())
        time.sleep(0.02)
    out["drift"] = {"cpu": c, "every_s": 0.02, "probe_ns": drift}
    os.sched_setaffinity(0, set(cpus))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    for k, sw in enumerate(out["sweeps"]):
        print("sweep %d (ms per probe, median): %s" % (k, " ".join(
            "%d:%.2f" % (c, sw[c]["median_ns"] / 1e6) for c in cpus)))
    d = sorted(drift)
    print("drift on cpu %d: %d probes, min %.2f median %.2f max %.2f ms" % (
        c, len(d), d[0] / 1e6, d[len(d) // 2] / 1e6, d[-1] / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
