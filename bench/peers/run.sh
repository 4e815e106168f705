#!/usr/bin/env bash
# bench/peers/run.sh [--reps R] [--simpy-max-n M] [N ...]
#
# The pipeline of bench/peers/pipeline.yaml on hetsim, SimGrid and SimPy, side by side: for each N
# (default 10000 100000 1000000 chunks, 3 ops each) every simulator runs R times (default 3)
# under GNU time; the table gives the medians of wall time and peak RSS, the ratios to hetsim and
# each simulator's predicted end-to-end time. Then it checks that the peers agree with hetsim
# run with the rules they do not model switched off (within 0.5%; exit 1 if not).
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
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# measure CMD...: runs CMD $reps times under GNU time; prints "median_wall_s median_peak_rss_kb";
# CMD's stdout of the last run is left in $tmp/out.
measure() {
  : > "$tmp/times"
  for ((r = 0; r < reps; r++)); do
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" > "$tmp/out"
    tail -n 1 "$tmp/time" >> "$tmp/times"
  done
  local wall rss
  wall="$(cut -d' ' -f1 "$tmp/times" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')"
  rss="$(cut -d' ' -f2 "$tmp/times" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')"
  echo "$wall $rss"
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
  m="$(measure "$build/hetsim" run "$scenario" --set "n=$n" --format text)"; read -r h_wall h_rss <<< "$m"
  h_e2e="$(hetsim_e2e "$n")"
  echo "run.sh: N = $n: SimGrid x$reps" >&2
  m="$(measure "$simgrid" "$n")"; read -r g_wall g_rss <<< "$m"
  g_e2e="$(cat "$tmp/out")"
  if [ "$simpy_max" -eq 0 ] || [ "$n" -le "$simpy_max" ]; then
    echo "run.sh: N = $n: SimPy x$reps" >&2
    m="$(measure "${simpy[@]}" "$n")"; read -r p_wall p_rss <<< "$m"
    p_e2e="$(cat "$tmp/out")"
  else
    p_wall=- p_rss=- p_e2e=-
    notes+=("SimPy skipped at N = $n (above --simpy-max-n $simpy_max; pass --simpy-max-n 0 to run it)")
  fi
  rows+=("$n $h_wall $h_rss $h_e2e $g_wall $g_rss $g_e2e $p_wall $p_rss $p_e2e")
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

# The ops of a run: 3 per chunk plus the device sync.
echo
echo "pipeline of bench/peers/pipeline.yaml; medians of $reps runs; wall s and peak RSS MiB from GNU time"
printf '%9s %9s | %8s %8s %7s | %8s %8s %6s | %8s %8s %6s | %18s %10s %10s\n' \
  N ops "hetsim s" MiB B/op "SimGrid" MiB "x" "SimPy" MiB "x" "hetsim e2e ns" "SimGrid" "SimPy"
for row in "${rows[@]}"; do
  awk -v r="$row" 'BEGIN {
    split(r, f, " "); n = f[1]; ops = 3 * n + 1
    hw = f[2]; hr = f[3] * 1024; he = f[4]
    out = sprintf("%9d %9d | %8.2f %8.1f %7.0f |", n, ops, hw, hr / 1048576, hr / ops)
    for (k = 5; k <= 8; k += 3) {
      if (f[k] == "-") { out = out sprintf(" %8s %8s %6s |", "-", "-", "-"); continue }
      out = out sprintf(" %8.2f %8.1f %6.1f |", f[k], f[k + 1] / 1024, hw > 0 ? f[k] / hw : 0)
    }
    out = out sprintf(" %18.3f", he)
    for (k = 7; k <= 10; k += 3) out = out (f[k] == "-" ? sprintf(" %10s", "-") : sprintf(" %+10.2e", (f[k] - he) / he))
    print out }'
done
echo "(x: wall time / hetsim's; SimGrid and SimPy e2e: relative difference to hetsim's, every rule on)"
echo
echo "agreement: hetsim with rules ${rules_off[*]} off against the peers (tolerance $(awk -v t="$tolerance" 'BEGIN {print t * 100}')%)"
printf '%9s %20s %20s %10s %20s %10s\n' N "hetsim e2e ns" "SimGrid e2e ns" diff "SimPy e2e ns" diff
printf '%s\n' "${checks[@]}"
for note in "${notes[@]+"${notes[@]}"}"; do echo "note: $note"; done
[ "$failed" -eq 0 ] || { echo "run.sh: the peers differ from hetsim by more than $(awk -v t="$tolerance" 'BEGIN {print t * 100}')%" >&2; exit 1; }
