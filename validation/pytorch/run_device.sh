#!/usr/bin/env bash
# Runs every configuration of validation/pytorch/workloads.py on the GPU machine, each in its
# own python3 process, and packs OUT_DIR/pytorch.tar.gz (per configuration: <config>.json and
# <config>.trace.json[.gz]; run.log) after each one, so that a cut-off call still returns what
# was measured. Usage, from the repository root:
#   validation/pytorch/run_device.sh OUT_DIR [--budget SECONDS]
# The whole run stays inside the budget (default 330 s, counted from the start): a
# configuration is started only when its estimate fits in what is left, and it is killed at
# its own time limit (twice its estimate, at least estimate + 30 s, never past the budget).
# Environment: PYTHON (default python3); DRY_RUN_CPU=1 runs every configuration with
# --device cpu --quick and skips the CUDA checks (a test of this script without a GPU).
# PROTOCOL=interleaved (the default; measured on the H200 from 2026-12-02a on) runs
# measure_group.py once per group of
# configurations (the cnn_train what-if pairs in one process, blocks interleaved round robin,
# threads and CPUs pinned), after host_cpus.py (the host's speed per CPU), and, with budget
# left, the cnn_train group a second time into OUT's repeat/ (the process-to-process check);
# PROTOCOL=per-process is the protocol of 2026-12-01a..e (measure.py, one process a config).
set -u
t_start=$(date +%s)
usage() { echo "usage: $0 OUT_DIR [--budget SECONDS]" >&2; exit 2; }
[ $# -ge 1 ] || usage
out="$1"; shift
budget=330
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) [ $# -ge 2 ] || usage; budget="$2"; shift ;;
    *) usage ;;
  esac
  shift
done
case "$budget" in ''|*[!0-9]*) echo "--budget needs whole seconds, got '$budget'" >&2; exit 2 ;; esac
export PYTHONUNBUFFERED=1
py="${PYTHON:-python3}"
here="$(cd "$(dirname "$0")" && pwd)"
measure="$here/measure.py"
protocol="${PROTOCOL:-interleaved}"
case "$protocol" in interleaved|per-process) ;; *) echo "PROTOCOL must be interleaved or per-process, got '$protocol'" >&2; exit 2 ;; esac
extra=(); check=(--check)
if [ "${DRY_RUN_CPU:-0}" = 1 ]; then extra=(--device cpu --quick); check=(); fi
left() { echo $(( budget - ($(date +%s) - t_start) )); }
mkdir -p "$out" || exit 2
work="$(mktemp -d)"
log="$work/run.log"
excl="$work/.pack-exclude"; : > "$excl"
pack_limit=${PACK_LIMIT_BYTES:-$(( 15 * 1024 * 1024 ))}   # the tarball must stay under 16 MiB
say() { echo "$*" | tee -a "$log"; }

# Packs the work folder into OUT_DIR/pytorch.tar.gz; when it is too large, leaves the largest
# traces out (logged) until it fits.
pack() {
  local sz big
  while :; do
    cp "$log" "$out/run.log" 2>/dev/null
    if ! tar czf "$out/pytorch.tar.gz.tmp" -C "$work" --exclude=.pack-exclude \
         --exclude-from="$excl" . 2>>"$log"; then
      say "pack: tar failed"; rm -f "$out/pytorch.tar.gz.tmp"; return
    fi
    sz=$(stat -c %s "$out/pytorch.tar.gz.tmp")
    if [ "$sz" -le "$pack_limit" ]; then break; fi
    big=$(cd "$work" && ls -S -- *.trace.json *.trace.json.gz 2>/dev/null | grep -v -x -F -f "$excl" | head -1)
    if [ -z "$big" ]; then say "pack: $sz bytes, over $pack_limit, and no trace left to leave out"; break; fi
    echo "$big" >> "$excl"
    say "pack: $sz bytes is over $pack_limit: leaving $big ($(stat -c %s "$work/$big") bytes) out of the tarball"
  done
  mv "$out/pytorch.tar.gz.tmp" "$out/pytorch.tar.gz"
}

{
  echo "== machine"
  date -u +%Y-%m-%dT%H:%M:%SZ; hostname; uname -a; nproc; free -g | head -2
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,persistence_mode,compute_mode --format=csv 2>&1
  echo "python: $("$py" --version 2>&1) at $(command -v "$py")"
  echo "budget: $budget s; output: $out; work folder: $work"
  echo "command: $0 $out --budget $budget"
  [ "${DRY_RUN_CPU:-0}" = 1 ] && echo "DRY RUN on the CPU: --device cpu --quick, no CUDA checks"
} >> "$log" 2>&1
cat "$log"

say "== preflight: configurations and CUDA checks"
if ! timeout -k 5 120 "$py" "$measure" --list ${check[@]+"${check[@]}"} > "$work/configs.txt" 2>> "$log" < /dev/null; then
  say "preflight FAILED (see run.log): torch, CUDA or the profiler is not usable here; nothing measured"
  tail -20 "$log"
  pack
  exit 1
fi
if [ "$protocol" = interleaved ]; then
  {
    echo "== host: lscpu, CPU speed per CPU (host_cpus.py)"
    lscpu 2>&1 | head -30
    timeout -k 5 40 "$py" "$here/host_cpus.py" --out "$work/host_cpus.json" < /dev/null 2>&1
  } >> "$log" 2>&1
  tail -4 "$log"
  measure="$here/measure_group.py"
  # configs.txt keeps the configuration list (accuracy.py reads it); groups.txt the groups
  timeout -k 5 60 "$py" "$measure" --list > "$work/groups.txt" 2>> "$log" < /dev/null
  extra=(); [ "${DRY_RUN_CPU:-0}" = 1 ] && extra=(--device cpu --quick)
  mapfile -t configs < "$work/groups.txt"
else
  mapfile -t configs < "$work/configs.txt"
fi
say "== protocol: $protocol"
total=0
say "== plan (expected seconds per configuration, in run order)"
for line in "${configs[@]}"; do
  set -- $line
  say "  $1 ~$2 s"
  total=$(( total + $2 ))
done
say "  total ~$total s for ${#configs[@]} configurations; $(left) s of the $budget s budget left"
pack

failed=0; skipped=0; done_n=0
for line in "${configs[@]}"; do
  set -- $line
  name="$1"; est="$2"
  rem=$(left)
  if [ "$rem" -lt $(( est + 10 )) ]; then
    say "== $name SKIPPED: expected ~$est s, only $rem s of the budget left"
    skipped=$(( skipped + 1 ))
    continue
  fi
  lim=$(( 2 * est )); [ "$lim" -lt $(( est + 30 )) ] && lim=$(( est + 30 ))
  [ "$lim" -gt $(( rem - 5 )) ] && lim=$(( rem - 5 ))
  say "== $name (expected ~$est s, limit $lim s, $rem s left)"
  s=$(date +%s%N)
  if [ "$protocol" = interleaved ]; then
    timeout -k 5 "$lim" "$py" "$measure" --group "$name" --out "$work" --time-limit-s "$lim" ${extra[@]+"${extra[@]}"} < /dev/null 2>&1 | tee -a "$log"
  else
    timeout -k 5 "$lim" "$py" "$measure" --config "$name" --out "$work" ${extra[@]+"${extra[@]}"} < /dev/null 2>&1 | tee -a "$log"
  fi
  rc=${PIPESTATUS[0]}
  el=$(( ($(date +%s%N) - s) / 1000000 ))
  if [ "$rc" -eq 0 ]; then
    done_n=$(( done_n + 1 )); say "$name: ok in $el ms"
  else
    failed=$(( failed + 1 ))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      say "$name: TIMED OUT after $el ms (limit $lim s; exit $rc)"
    else
      say "$name: FAILED with exit $rc after $el ms"
    fi
  fi
  pack
done

if [ "$protocol" = interleaved ]; then
  set -- ${configs[0]}
  rem=$(left); est="$2"
  if [ "$rem" -ge $(( est + 10 )) ]; then
    lim=$(( rem - 5 ))
    say "== repeat: $1 again in a new process into repeat/ (expected ~$est s, limit $lim s)"
    mkdir -p "$work/repeat"
    timeout -k 5 "$lim" "$py" "$measure" --group "$1" --out "$work/repeat" --time-limit-s "$lim" ${extra[@]+"${extra[@]}"} < /dev/null 2>&1 | tee -a "$log"
    say "repeat: exit ${PIPESTATUS[0]}"
    pack
  else
    say "== repeat of $1 SKIPPED: only $rem s left"
  fi
fi

say "== summary: $done_n measured, $failed failed, $skipped skipped, in $(( $(date +%s) - t_start )) s"
"$py" - "$work" "$work/repeat" <<'EOF' 2>&1 | tee -a "$log"
import glob, json, os, sys
print("%-30s %12s %12s %12s %9s  %s" % ("config", "unprof ms", "window ms", "profiled ms",
                                         "trace KB", "warnings"))
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json")) +
                glob.glob(os.path.join(sys.argv[2], "*.json"))):
    if p.endswith(".trace.json") or os.path.basename(p) == "host_cpus.json":
        continue
    if os.path.dirname(p) == sys.argv[2]:
        print("repeat/", end="")
    try:
        r = json.load(open(p))
        u = r.get("unprofiled", {}).get("median_step_ns")
        w = r.get("unprofiled_window", {}).get("median_step_ns")
        f = r.get("profiled", {}).get("active_step_ns")
        t = r.get("trace", {}).get("file_bytes")
        ms = lambda v: "%.3f" % (v / 1e6) if v else "-"
        print("%-30s %12s %12s %12s %9s  %s" % (r.get("config"), ms(u), ms(w), ms(f),
              "%d" % (t // 1024) if t else "-",
              "; ".join(r.get("warnings", [])) + (" ERROR " + r["error"] if "error" in r else "")))
    except Exception as e:
        print("%s: unreadable (%r)" % (os.path.basename(p), e))
EOF
ls -la "$work" >> "$log"
pack
say "packed $(stat -c %s "$out/pytorch.tar.gz") bytes into $out/pytorch.tar.gz"
[ "$failed" -eq 0 ] && [ "$skipped" -eq 0 ]
