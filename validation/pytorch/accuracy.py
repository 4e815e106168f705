#!/usr/bin/env python3
"""Replay and what-if errors of `hetsim import` against the H200 PyTorch measurements.

For every configuration measured by run_device.sh (validation/measurements/h200/pytorch/RUN/):
import its Kineto trace, replay it with `--set steps=N` (N = the steps of one timed block of the
unprofiled measurement, so the prediction is a block from an idle GPU to its final sync, as
measured), and compare the predicted step (end to end / N) with the measured unprofiled step
(`unprofiled.median_step_ns`). Then the what-if pairs of validation/pytorch/README.md: the
trace of one configuration, with one knob set, predicting another configuration's measured step.

Runs here, without a GPU, on committed data only:

    validation/pytorch/accuracy.sh [RUN_DIR] [--hetsim BUILD/hetsim] [--out FILE.md]

Prints Markdown tables (the ones in README.md, "From a PyTorch profile"); for a run of the
interleaved protocol (measure_group.py) also how stable its ground truth is (block spread, host
probes, the repeat process under repeat/) and the phase stamps, unprofiled against profiled.
`--measured-from RUN_DIR/repeat` replays this run's traces against the repeat process's blocks.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_RUN = os.path.join("validation", "measurements", "h200", "pytorch", "2026-12-02b")  # held out: the import's constants are fitted on 12-02a and 12-01a

# (what-if, from configuration, knob settings, to configuration)
PAIRS = []
for _w in (0, 4):
    for _s in ("sync", "nosync"):
        PAIRS.append(("pageable -> pinned", "cnn_train_w%d_pageable_%s" % (_w, _s), {"pin_memory": "true"},
                      "cnn_train_w%d_pinned_%s" % (_w, _s)))
for _m in ("pageable", "pinned"):
    for _s in ("sync", "nosync"):
        PAIRS.append(("workers 0 -> 4", "cnn_train_w0_%s_%s" % (_m, _s), {"loader_workers": "4"},
                      "cnn_train_w4_%s_%s" % (_m, _s)))
for _w in (0, 4):
    for _m in ("pageable", "pinned"):
        PAIRS.append(("per-step sync -> none", "cnn_train_w%d_%s_sync" % (_w, _m), {"step_sync": "false"},
                      "cnn_train_w%d_%s_nosync" % (_w, _m)))
PAIRS.append(("eager -> CUDA graph", "mlp_infer_eager", {"cuda_graph": "true"}, "mlp_infer_graph"))


ENV = dict(os.environ)


def run(cmd):
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=ENV)
    return p.returncode, p.stdout, p.stderr


def calibrated_profiles(hetsim, microbench, tmp):
    """The documented workflow on a user's own machine: `hetsim calibrate` on that machine's
    microbench.json first. A copy of the shipped profiles with h200.yaml replaced by the
    profile calibrated from `microbench` alone (base: the shipped h200), for HETSIM_PROFILES."""
    import shutil
    pdir = os.path.join(tmp, "profiles")
    os.makedirs(pdir)
    src = os.path.join(ROOT, "hw", "profiles")
    for f in os.listdir(src):
        if f.endswith(".yaml"):
            shutil.copy(os.path.join(src, f), pdir)
    out = os.path.join(pdir, "h200.yaml")
    rc, _, err = run([hetsim, "calibrate", microbench, "--base", os.path.join(src, "h200.yaml"),
                      "-o", out + ".new"])
    if rc != 0:
        raise SystemExit("error: hetsim calibrate %s failed: %s" % (microbench, err.strip()))
    os.replace(out + ".new", out)
    return pdir


def run_configs(run_dir):
    """The configurations of a run, in run order: its configs.txt; a folder without one (the
    interleaved protocol's repeat/, which holds the cnn_train group only) takes the order of the
    configs.txt above it, for the configurations that have a JSON here."""
    d = os.path.join(ROOT, run_dir)
    for listing in (os.path.join(d, "configs.txt"), os.path.join(d, "..", "configs.txt")):
        if os.path.exists(listing):
            names = [line.split()[0] for line in open(listing) if line.strip()]
            names = [c for c in names if os.path.exists(os.path.join(d, c + ".json"))]
            if names:
                return names
    names = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json") and f != "host_cpus.json")
    if not names:
        raise SystemExit("error: %s: no configs.txt and no <config>.json" % run_dir)
    return names


def corr(x, y):
    """Pearson's r of two equally long lists (0 when either is constant)."""
    if len(x) < 3 or len(x) != len(y):
        return None
    mx, my = statistics.mean(x), statistics.mean(y)
    sx = sum((v - mx) ** 2 for v in x) ** 0.5
    sy = sum((v - my) ** 2 for v in y) ** 0.5
    return sum((u - mx) * (v - my) for u, v in zip(x, y)) / (sx * sy) if sx and sy else 0.0


def stability_lines(run_dir, configs, meta, repeat_dir):
    """How stable the interleaved protocol's ground truth is (measure_group.py): per configuration
    the spread of its timed blocks, the host probes before them (8 numpy samples on the main
    thread: the host's speed at that moment), how the block times follow the probes, the blocks
    after the traces were taken, the probe before the profiled steps, and the repeat process."""
    if not any("host_probe_ns" in meta[c].get("unprofiled", {}) for c in configs):
        return []
    rep = {}
    if repeat_dir:
        for c in configs:
            f = os.path.join(ROOT, repeat_dir, c + ".json")
            if os.path.exists(f):
                with open(f) as fh:
                    rep[c] = json.load(fh)
    out = ["", "Ground truth (interleaved protocol, one process per group; `%s`):" % run_dir, ""]
    out.append("| configuration | N x rounds | median ms | block spread | probe median ms | probes' range ms "
               "| r(block, probe) | after traces / median | profiled probe / probes |"
               + (" repeat median ms | repeat / first |" if rep else ""))
    out.append("|---|---|---|---|---|---|---|---|---|" + ("---|---|" if rep else ""))
    spreads, probe_ranges, rs, after, ratios = [], [], [], [], []
    for c in configs:
        u = meta[c]["unprofiled"]
        bp = u.get("host_probe_ns") or []
        if not bp:
            continue
        m = u["median_step_ns"]
        pm = statistics.median(bp)
        r = corr(u["block_step_ns"], bp)
        ap = meta[c].get("unprofiled_after_profile", {}).get("median_step_ns")
        tp = meta[c].get("profiled", {}).get("host_probe_ns")
        spreads.append(u.get("spread", 0.0))
        probe_ranges.append(max(bp) / min(bp))
        if r is not None:
            rs.append(r)
        if ap:
            after.append(ap / m)
        row = "| %s | %d x %d | %.3f | %.0f%% | %.2f | %.2f-%.2f | %s | %s | %s |" % (
            c, u["steps_per_block"], len(u["block_step_ns"]), m / 1e6, 100 * u.get("spread", 0.0), pm / 1e6,
            min(bp) / 1e6, max(bp) / 1e6, "%+.2f" % r if r is not None else "",
            "%.2f" % (ap / m) if ap else "", "%.2f" % (tp / pm) if tp else "")
        if rep:
            if c in rep:
                rm = rep[c]["unprofiled"]["median_step_ns"]
                ratios.append(rm / m)
                row += " %.3f | %.2f |" % (rm / 1e6, rm / m)
            else:
                row += " | |"
        out.append(row)
    out.append("")
    text = ("Blocks' spread (max - min) / median: median %.0f%%, %.0f-%.0f%%; the host probes before the blocks "
            "vary %.1f-%.1fx within a configuration (max / min), and the block times follow them only loosely "
            "(r median %+.2f)" % (100 * statistics.median(spreads), 100 * min(spreads), 100 * max(spreads),
                                 min(probe_ranges), max(probe_ranges), statistics.median(rs) if rs else 0.0))
    if after:
        text += "; the blocks after the traces / the median: %.2f-%.2f" % (min(after), max(after))
    if ratios:
        text += ("; the repeat process / the first: %.2f-%.2f (median |difference| %.1f%%)"
                 % (min(ratios), max(ratios), 100 * statistics.median(abs(x - 1) for x in ratios)))
    out.append(text + ".")
    return out


def phase_lines(configs, meta, replay):
    """The phase stamps (workloads.py PHASES): each phase's host time unprofiled (median over the
    timed blocks) and under the profiler (the traced steps), with the host probes' ratio and the
    configuration's replay error beside them."""
    rows = [c for c in configs if meta[c].get("unprofiled", {}).get("phase_ns")
            and meta[c].get("profiled", {}).get("phase_ns")]
    if not rows:
        return []
    out = ["", "Phase stamps (host time of each phase a step, ms: unprofiled timed blocks / profiled traced steps = "
           "ratio; the host probe before the traced steps / the blocks' median probe):", ""]
    out.append("| configuration | probe ratio | phases unprofiled / profiled ms (ratio) | sum unprofiled / profiled ms (ratio) "
               "| replay error | loader shift | error less the shift |")
    out.append("|---|---|---|---|---|---|---|")
    shifted = []
    for c in rows:
        u, p = meta[c]["unprofiled"]["phase_ns"], meta[c]["profiled"]["phase_ns"]
        bp = meta[c]["unprofiled"].get("host_probe_ns")
        tp = meta[c]["profiled"].get("host_probe_ns")
        cells = []
        for k in u:
            if u[k] is None or p.get(k) is None:
                continue
            cells.append("%s %.2f / %.2f (%.2f)" % (k, u[k] / 1e6, p[k] / 1e6, p[k] / u[k] if u[k] else float("nan")))
        su = sum(v for v in u.values() if v)
        sp = sum(v for v in p.values() if v)
        e = replay.get(c, {}).get("error_pct")
        # A single-process DataLoader's numpy work carries no profiler events: its traced length
        # differs from the blocks' only by the host's speed at that moment. Its shift, as a share of
        # the measured step, is how much of the replay error that is.
        shift = None
        if meta[c].get("flags", {}).get("num_workers") == 0 and u.get("loader_next") and p.get("loader_next"):
            shift = 100.0 * (p["loader_next"] - u["loader_next"]) / meta[c]["unprofiled"]["median_step_ns"]
            if e is not None:
                shifted.append((e, e - shift))
        out.append("| %s | %s | %s | %.2f / %.2f (%.2f) | %s | %s | %s |" % (
            c, "%.2f" % (tp / statistics.median(bp)) if bp and tp else "", ", ".join(cells), su / 1e6, sp / 1e6, sp / su,
            "%+.1f%%" % e if e is not None else "", "%+.1f%%" % shift if shift is not None else "",
            "%+.1f%%" % (e - shift) if shift is not None and e is not None else ""))
    if shifted:
        out.append("")
        out.append("Loader shift: (profiled - unprofiled `loader_next`) / measured step, for num_workers 0 (the DataLoader's "
                   "numpy work in the main thread, which the profiler records nothing inside: the host's speed at the "
                   "traced steps against the blocks'). Replay |error| of those %d configurations: median %.1f%%; less the "
                   "shift: median %.1f%%, max %.1f%%."
                   % (len(shifted), statistics.median(abs(x) for x, _ in shifted),
                      statistics.median(abs(y) for _, y in shifted), max(abs(y) for _, y in shifted)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", nargs="?", default=DEFAULT_RUN)
    ap.add_argument("--hetsim", default=os.path.join(ROOT, "hetsim"))
    ap.add_argument("--out", default="")
    ap.add_argument("--json", default="", help="also write the errors as JSON here")
    ap.add_argument("--replay-only", action="store_true", help="only the replay table (no what-if pairs)")
    ap.add_argument("--import-arg", action="append", default=[],
                    help="an extra argument of `hetsim import` (repeatable), e.g. --import-arg=--span-overhead=0")
    ap.add_argument("--calibrate", default="", metavar="MICROBENCH.json",
                    help="replay with the h200 profile calibrated from this microbench.json (the "
                         "same machine start's: hetsim calibrate FILE --base hw/profiles/h200.yaml) "
                         "instead of the shipped one")
    ap.add_argument("--measured-from", default="", metavar="DIR",
                    help="take the measured step times from this folder (the same configurations measured "
                         "in another process, e.g. RUN_DIR/repeat) instead of RUN_DIR")
    ap.add_argument("--repeat", default="", metavar="DIR",
                    help="the ground-truth section compares the medians with this folder's (default: "
                         "RUN_DIR/repeat when it exists)")
    a = ap.parse_args()
    run_dir = a.run_dir
    tmp = tempfile.mkdtemp(prefix="hetsim-accuracy-")
    if a.calibrate:
        ENV["HETSIM_PROFILES"] = calibrated_profiles(a.hetsim, a.calibrate, tmp)
    configs = run_configs(run_dir)
    meta = {}
    for c in configs:
        with open(os.path.join(ROOT, run_dir, c + ".json")) as f:
            meta[c] = json.load(f)
    # The measured side: this run's own JSON, or (--measured-from) the same configurations of
    # another process of the same machine start (repeat/), as a process-to-process check.
    truth = meta
    if a.measured_from:
        truth = {}
        for c in configs:
            f = os.path.join(ROOT, a.measured_from, c + ".json")
            if os.path.exists(f):
                with open(f) as fh:
                    truth[c] = json.load(fh)
    yaml = {}
    problems = []
    for c in configs:
        trace = None
        for ext in (".trace.json.gz", ".trace.json"):
            if os.path.exists(os.path.join(ROOT, run_dir, c + ext)):
                trace = os.path.join(run_dir, c + ext)
        if trace is None:
            problems.append("%s: no trace" % c)
            continue
        out = os.path.join(tmp, c + ".yaml")
        rc, _, err = run([a.hetsim, "import", trace, "-o", out] + a.import_arg)
        if rc != 0:
            problems.append("%s: import failed: %s" % (c, err.strip()))
            continue
        yaml[c] = out

    def predict(c, sets, steps):
        cmd = [a.hetsim, "run", yaml[c], "--format", "json", "--no-suggest", "--set", "steps=%d" % steps]
        for k, v in sets.items():
            cmd += ["--set", "%s=%s" % (k, v)]
        rc, out, err = run(cmd)
        if rc != 0:
            last = err.strip().splitlines()[-1] if err.strip() else "exit %d" % rc
            for k in sets:
                if "has no param '%s'" % k in last:
                    return None, "the imported scenario has no `%s` knob" % k
            return None, last
        return json.loads(out)["end_to_end_ns"] / steps, ""

    def measured(c):
        return truth[c]["unprofiled"]["median_step_ns"]

    def spread(c):
        return truth[c]["unprofiled"].get("spread", 0.0)

    data = {"run": run_dir, "replay": {}, "whatif": []}
    lines = []
    lines.append("Run: `%s`%s; `hetsim import` %s; profile: %s." % (
        run_dir, "; measured step times from `%s` (a process-to-process check: this run's traces, "
        "that process's timed blocks)" % a.measured_from if a.measured_from else "", " ".join("`%s`" % x for x in a.import_arg) if a.import_arg else "with its defaults",
        "h200 calibrated from `%s`" % a.calibrate if a.calibrate else "the shipped h200"))
    lines.append("")
    lines.append("Replay (the trace of a configuration predicting its own unprofiled step; N = steps of a timed block):")
    lines.append("")
    probes = any(meta[c]["unprofiled"].get("host_probe_ns") for c in configs) and not a.measured_from
    lines.append("| configuration | N | measured ms | block spread | blocks' range ms | predicted ms | error | in range |"
                 + (" host probe trace / blocks |" if probes else ""))
    lines.append("|---|---|---|---|---|---|---|---|" + ("---|" if probes else ""))

    def probe_ratio(c):
        bp = meta[c]["unprofiled"].get("host_probe_ns")
        tp = meta[c].get("profiled", {}).get("host_probe_ns")
        return " %.2f |" % (tp / statistics.median(bp)) if bp and tp else " |"
    replay = []
    in_range = []
    for c in configs:
        if c not in yaml or c not in truth:
            continue
        n = int(truth[c]["unprofiled"]["steps_per_block"])
        p, why = predict(c, {}, n)
        m = measured(c)
        if p is None:
            lines.append("| %s | %d | %.3f | %.0f%% | | failed: %s | | |" % (c, n, m / 1e6, 100 * spread(c), why))
            continue
        e = 100.0 * (p - m) / m
        replay.append(abs(e))
        data["replay"][c] = {"measured_ns": m, "predicted_ns": p, "error_pct": e, "spread": spread(c),
                             "min_ns": truth[c]["unprofiled"]["min_step_ns"], "max_ns": truth[c]["unprofiled"]["max_step_ns"]}
        lo, hi = truth[c]["unprofiled"]["min_step_ns"], truth[c]["unprofiled"]["max_step_ns"]
        inside = lo <= p <= hi
        in_range.append(inside)
        lines.append("| %s | %d | %.3f | %.0f%% | %.3f-%.3f | %.3f | %+.1f%% | %s |"
                     % (c, n, m / 1e6, 100 * spread(c), lo / 1e6, hi / 1e6, p / 1e6, e, "yes" if inside else "no")
                     + (probe_ratio(c) if probes else ""))
    if replay:
        lines.append("")
        lines.append("Replay |error|: median %.1f%%, max %.1f%% over %d configurations (targets: median 3%%, max 8%%); "
                     "%d of %d predictions inside the range of their unprofiled blocks (min to max step)."
                     % (statistics.median(replay), max(replay), len(replay), sum(in_range), len(in_range)))
    lines.append("")
    lines.append("What-if (the trace of `from` with the knob set, predicting `to`'s measured unprofiled step):")
    lines.append("")
    lines.append("| what-if | from | knob | to | measured ms | to's blocks' range ms | predicted ms | error | in range | scaled error |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    whatif = []
    wi_range = []
    for what, src, sets, dst in ([] if a.replay_only else PAIRS):
        if src not in yaml or dst not in truth or src not in truth:
            continue
        n = int(truth[dst]["unprofiled"]["steps_per_block"])
        knob = " ".join("%s=%s" % kv for kv in sets.items())
        p, why = predict(src, sets, n)
        m = measured(dst)
        if p is None:
            lines.append("| %s | %s | `%s` | %s | %.3f | | not predicted: %s | | | |" % (what, src, knob, dst, m / 1e6, why))
            continue
        e = 100.0 * (p - m) / m
        whatif.append(abs(e))
        data["whatif"].append({"what": what, "from": src, "knob": knob, "to": dst, "measured_ns": m, "predicted_ns": p, "error_pct": e})
        # Diagnostic: the knob's predicted ratio applied to the source's measured step (the
        # replay's own error divided out), which isolates the transform from the replay.
        base, _ = predict(src, {}, n)
        scaled = measured(src) * p / base if base else None
        se = "%+.1f%%" % (100.0 * (scaled - m) / m) if scaled else ""
        lo, hi = truth[dst]["unprofiled"]["min_step_ns"], truth[dst]["unprofiled"]["max_step_ns"]
        inside = lo <= p <= hi
        wi_range.append(inside)
        lines.append("| %s | %s | `%s` | %s | %.3f | %.3f-%.3f | %.3f | %+.1f%% | %s | %s |"
                     % (what, src, knob, dst, m / 1e6, lo / 1e6, hi / 1e6, p / 1e6, e, "yes" if inside else "no", se))
    if whatif:
        lines.append("")
        lines.append("Scaled error (a diagnostic, not the target): the source's measured step times the predicted "
                     "ratio knob / no knob, so that the source replay's own error drops out.")
        lines.append("")
        lines.append("What-if |error|: median %.1f%%, max %.1f%%, %d of %d within 10%% (target: each within 10%%); "
                     "%d of %d inside the range of the measured configuration's unprofiled blocks."
                     % (statistics.median(whatif), max(whatif), sum(1 for e in whatif if e <= 10), len(whatif),
                        sum(wi_range), len(wi_range)))
    if not a.measured_from:
        rdir = a.repeat or (os.path.join(run_dir, "repeat") if os.path.isdir(os.path.join(ROOT, run_dir, "repeat")) else "")
        lines += stability_lines(run_dir, configs, meta, rdir)
        lines += phase_lines(configs, meta, data["replay"])
    for p in problems:
        lines.append("")
        lines.append("Problem: " + p)
    text = "\n".join(lines) + "\n"
    if a.json:
        with open(a.json, "w") as f:
            json.dump(data, f, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
