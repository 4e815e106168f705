#!/usr/bin/env bash
# bench/peers/run.sh [--reps R] [--simpy-max-n M] [N ...]
#
# The pipeline of bench/peers/pipeline.yaml on hetsim, SimGrid and SimPy, side by side: for each N
# (default 10000 100000 1000000 chunks, 3 ops each) every simulator runs R times (default 3)
# under GNU time; the table gives the medians of wall and CPU time and of peak RSS, the ratios to
# hetsim and each simulator's predicted end-to-end time. Then it checks that the peers agree with
# hetsim run with the rules they do not model switched off (within 0.5%; exit 1 if not).
# SimPy is skipped above M chunks (default 1000000; 0: no limit). README.md here explains it all.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${HETSIM_BUILD_DIR:-$root/build}"

# The rules of docs/model.md that act on this pipeline and that the peers do not model (README.md).
rules_off=(duplex launch_queue)
peer_rules=()
for r in "${rules_off[@]}"; do peer_rules+=(--set "hardware.rules.$r=off"); done
tolerance=0.005

reps=3
simpy_max=1000000
sizes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --simpy-max-n) simpy_max="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) sizes+=("$1"); shift ;;
  esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
for v in "$reps" "$simpy_max" "${sizes[@]}"; do
  case "$v" in (*[!0-9]*|'') echo "run.sh: error: expected a whole number, got '$v'" >&2; exit 2;; esac
done
[ "$reps" -gt 0 ] || { echo "run.sh: error: --reps must be at least 1" >&2; exit 2; }

# As the ./hetsim launcher's ensure_packages; env carries DEBIAN_FRONTEND through sudo.
ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "run.sh: installing missing packages: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

ensure_packages libsimgrid-dev python3-simpy3 time pkg-config
"$root/hetsim" build
# Configure again: a build directory configured before SimGrid was installed lacks the target.
cmake -S "$root" -B "$build" -DHETSIM_BUILD_BENCH=ON > "$build/peers-configure.log" 2>&1 || {
  cat "$build/peers-configure.log" >&2; echo "run.sh: cmake configure failed" >&2; exit 1; }
cmake --build "$build" --target bench_peer_simgrid -j "$(nproc 2>/dev/null || echo 2)" > "$build/peers-build.log" 2>&1 || {
  cat "$build/peers-build.log" >&2; echo "run.sh: building bench_peer_simgrid failed" >&2; exit 1; }

scenario="$here/pipeline.yaml"
simgrid="$build/bench/peers/bench_peer_simgrid"
simpy=(/usr/bin/python3 "$here/pipeline_simpy.py")  # Debian's python: python3-simpy3 is installed there
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# measure CMD...: runs CMD $reps times under GNU time; prints the medians of wall seconds, CPU
# seconds (user + system: steadier than wall time on a shared machine) and peak RSS in KiB.
# CMD's stdout of the last run is left in $tmp/out.
measure() {
  : > "$tmp/times"
  for ((r = 0; r < reps; r++)); do
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" > "$tmp/out"
    tail -n 1 "$tmp/time" | awk '{print $1, $2 + $3, $4}' >> "$tmp/times"
  done
  local col medians=()
  for col in 1 2 3; do
    medians+=("$(cut -d' ' -f$col "$tmp/times" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')")
  done
  echo "${medians[*]}"
}

# hetsim_e2e N [--set ...]: hetsim's end-to-end in ns, exact (the text summary rounds it), from a
# one-point sweep's CSV.
hetsim_e2e() {
  local n="$1"; shift
  "$build/hetsim" sweep "$scenario" --vary "n=$n" -j 1 "$@" 2>/dev/null |
    awk -F, '/^#/ {next} $1 == "point" {for (i = 1; i <= NF; i++) if ($i == "end_to_end_ns") c = i; next} {print $c}'
}

rows=()
checks=()
notes=()
failed=0
for n in "${sizes[@]}"; do
  echo "run.sh: N = $n: hetsim x$reps" >&2
  row="$n $(measure "$build/hetsim" run "$scenario" --set "n=$n" --format text --no-suggest) $(hetsim_e2e "$n")"
  echo "run.sh: N = $n: SimGrid x$reps" >&2
  row+=" $(measure "$simgrid" "$n")"
  g_e2e="$(cat "$tmp/out")"
  row+=" $g_e2e"
  if [ "$simpy_max" -eq 0 ] || [ "$n" -le "$simpy_max" ]; then
    echo "run.sh: N = $n: SimPy x$reps" >&2
    row+=" $(measure "${simpy[@]}" "$n")"
    p_e2e="$(cat "$tmp/out")"
    row+=" $p_e2e"
  else
    p_e2e=-
    row+=" - - - -"
    notes+=("SimPy skipped at N = $n (above --simpy-max-n $simpy_max; pass --simpy-max-n 0 to run it)")
  fi
  rows+=("$row")  # N, then wall s, CPU s, RSS KiB, e2e ns of hetsim, SimGrid, SimPy
  a_e2e="$(hetsim_e2e "$n" "${peer_rules[@]}")"
  check="$(awk -v n="$n" -v a="$a_e2e" -v g="$g_e2e" -v p="$p_e2e" -v tol="$tolerance" 'BEGIN {
    dg = (g - a) / a; ok = (dg < 0 ? -dg : dg) <= tol
    line = sprintf("%9d %20.3f %20.3f %+10.2e", n, a, g, dg)
    if (p == "-") line = line sprintf(" %20s %10s", "-", "-")
    else { dp = (p - a) / a; ok = ok && (dp < 0 ? -dp : dp) <= tol; line = line sprintf(" %20.3f %+10.2e", p, dp) }
    print line (ok ? "  ok" : "  DIFFERS") }')"
  case "$check" in (*DIFFERS) failed=1;; esac
  checks+=("$check")
done

echo
echo "pipeline of bench/peers/pipeline.yaml; medians of $reps runs; wall and CPU (user + sys) s, peak RSS MiB from GNU time"
printf '%9s %9s | %-31s | %-32s | %-32s | %s\n' "" "" hetsim SimGrid SimPy "predicted end-to-end"
printf '%9s %9s | %7s %7s %7s %7s | %7s %7s %7s %4s %4s | %7s %7s %7s %4s %4s | %18s %10s %10s\n' \
  N ops wall CPU MiB B/op wall CPU MiB x xCPU wall CPU MiB x xCPU "hetsim ns" SimGrid SimPy
for row in "${rows[@]}"; do
  awk -v r="$row" 'function ratio(a, b) { return b > 0 ? sprintf("%.1f", a / b) : "-" }  # time has 10 ms steps
  BEGIN {
    split(r, f, " "); n = f[1]; ops = 3 * n + 1  # 3 ops a chunk and the device sync
    out = sprintf("%9d %9d | %7.2f %7.2f %7.1f %7.0f |", n, ops, f[2], f[3], f[4] / 1024, f[4] * 1024 / ops)
    for (k = 6; k <= 10; k += 4) {
      if (f[k] == "-") { out = out sprintf(" %7s %7s %7s %4s %4s |", "-", "-", "-", "-", "-"); continue }
      out = out sprintf(" %7.2f %7.2f %7.1f %4s %4s |", f[k], f[k + 1], f[k + 2] / 1024, ratio(f[k], f[2]), ratio(f[k + 1], f[3]))
    }
    out = out sprintf(" %18.3f", f[5])
    for (k = 9; k <= 13; k += 4) out = out (f[k] == "-" ? sprintf(" %10s", "-") : sprintf(" %+10.2e", (f[k] - f[5]) / f[5]))
    print out }'
done
echo "(x, xCPU: wall and CPU time / hetsim's; SimGrid, SimPy: e2e relative to hetsim's with every rule on)"
echo
echo "agreement: hetsim with rules ${rules_off[*]} off against the peers (tolerance $(awk -v t="$tolerance" 'BEGIN {print t * 100}')%)"
printf '%9s %20s %20s %10s %20s %10s\n' N "hetsim e2e ns" "SimGrid e2e ns" diff "SimPy e2e ns" diff
printf '%s\n' "${checks[@]}"
for note in "${notes[@]+"${notes[@]}"}"; do echo "note: $note"; done
[ "$failed" -eq 0 ] || { echo "run.sh: the peers differ from hetsim by more than $(awk -v t="$tolerance" 'BEGIN {print t * 100}')%" >&2; exit 1; }
