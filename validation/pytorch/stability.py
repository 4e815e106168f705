#!/usr/bin/env python3
"""How stable is a run's ground truth? Per configuration of validation/measurements/h200/
pytorch/RUN: the unprofiled median step, the blocks' spread (max-min)/median and IQR/median,
and, for runs of the interleaved protocol (measure_group.py), the host probe (8 numpy samples
in the main thread) before the blocks and before the trace, the blocks after the profiling
(`unprofiled_after_profile`) against those before, and the repeat/ process against the first.
For runs of the per-process protocol (measure.py) the per-sample cost each process measured at
its start (`info.sample_cpu_ns_main_process`, cnn_train only) stands in for the probe.

    validation/pytorch/stability.py validation/measurements/h200/pytorch/START [--json F]
"""
import argparse
import json
import os
import statistics
import sys


def load(d):
    out = {}
    if not os.path.isdir(d):
        return out
    for f in sorted(os.listdir(d)):
        if f.endswith(".json") and not f.endswith(".trace.json") and f != "host_cpus.json":
            with open(os.path.join(d, f)) as fh:
                r = json.load(fh)
            if "unprofiled" in r:
                out[r["config"]] = r
    return out


def q(v, p):
    s = sorted(v)
    k = (len(s) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    main_r = load(a.run_dir)
    rep = load(os.path.join(a.run_dir, "repeat"))
    if not main_r:
        print("error: no configuration results in %s" % a.run_dir, file=sys.stderr)
        return 2
    rows = {}
    print("| configuration | protocol | blocks | median ms | spread | IQR/median | host probe ms "
          "(blocks; trace) | after profiling | repeat process |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c, r in main_r.items():
        u = r["unprofiled"]
        per = u["block_step_ns"]
        med = u["median_step_ns"]
        iqr = (q(per, 0.75) - q(per, 0.25)) / med
        proto = "interleaved" if "group" in r else "per-process"
        probes = u.get("host_probe_ns")
        if probes:
            tp = r.get("profiled", {}).get("host_probe_ns")
            probe = "%.2f; %s" % (statistics.median(probes) / 1e6,
                                  "%.2f" % (tp / 1e6) if tp else "-")
        elif r.get("info", {}).get("sample_cpu_ns_main_process"):
            probe = "(start: %.2f)" % (8 * r["info"]["sample_cpu_ns_main_process"] / 1e6)
        else:
            probe = "-"
        after = r.get("unprofiled_after_profile", {}).get("median_step_ns")
        after_s = "%+.1f%%" % (100.0 * (after - med) / med) if after else "-"
        rp = rep.get(c, {}).get("unprofiled", {}).get("median_step_ns")
        rep_s = "%+.1f%%" % (100.0 * (rp - med) / med) if rp else "-"
        rows[c] = {"median_ns": med, "spread": u["spread"], "iqr": iqr, "blocks": len(per),
                   "after_pct": 100.0 * (after - med) / med if after else None,
                   "repeat_pct": 100.0 * (rp - med) / med if rp else None,
                   "probe_ns": statistics.median(probes) if probes else None}
        print("| %s | %s | %d | %.3f | %.0f%% | %.1f%% | %s | %s | %s |" % (
            c, proto, len(per), med / 1e6, 100 * u["spread"], 100 * iqr, probe, after_s, rep_s))
    sp = [v["spread"] for v in rows.values()]
    iq = [v["iqr"] for v in rows.values()]
    print()
    print("Blocks' spread: median %.1f%%, max %.1f%%; IQR/median: median %.1f%%, max %.1f%% "
          "over %d configurations." % (100 * statistics.median(sp), 100 * max(sp),
                                       100 * statistics.median(iq), 100 * max(iq), len(rows)))
    reps = [abs(v["repeat_pct"]) for v in rows.values() if v["repeat_pct"] is not None]
    if reps:
        print("Repeat process against the first: |difference| median %.1f%%, max %.1f%% over %d."
              % (statistics.median(reps), max(reps), len(reps)))
    hc = os.path.join(a.run_dir, "host_cpus.json")
    if os.path.exists(hc):
        with open(hc) as fh:
            h = json.load(fh)
        for k, sw in enumerate(h["sweeps"]):
            v = sorted(x["median_ns"] for x in sw.values())
            print("host_cpus sweep %d: per-CPU probe median %.2f ms, min %.2f, max %.2f "
                  "(max/min %.2f)" % (k, statistics.median(v) / 1e6, v[0] / 1e6, v[-1] / 1e6,
                                      v[-1] / v[0]))
        d = sorted(h["drift"]["probe_ns"])
        print("host_cpus drift on CPU %d: %d probes, p10 %.2f, median %.2f, p90 %.2f ms"
              % (h["drift"]["cpu"], len(d), q(d, 0.1) / 1e6, q(d, 0.5) / 1e6, q(d, 0.9) / 1e6))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
