#!/usr/bin/env bash
# trace-cost.sh - what seeing a run costs: the same gflow run plain, with
# --timing (sampled: one in 16 instances of each task timed on a GPU), with
# --timing --timing-sample 1 (every launch and copy timed: what --timing cost
# before sampling) and with --trace (every operation of every step, counters,
# launch arguments), interleaved, best of REPEAT runs each, on
#   the seed workload (256^2 x 640, a snapshot every step, events), and
#   compute only (GPU 8192^2 x 500, CPU 1024^2 x 200; no outputs).
# The time is the loop's (timings.json total_s: until every kernel and copy
# has finished); writing the trace file comes after it. The ratios are to the
# plain run of the same workload in the same run. The CPU backend reads its
# clock around every operation whatever the flags (there --timing changes
# nothing); the GPU backend records timing events only when asked.
# METRIC=cpu measures instead the whole process's CPU time (user + sys, with
# OMP_WAIT_POLICY=passive so that waiting threads do not spin): the work
# each variant does, writing the trace included, which a machine shared with
# other jobs disturbs far less than the wall clock.
# Usage: BACKEND=cpu|gpu REPEAT=N METRIC=loop|cpu scripts/bench/trace-cost.sh [GFLOW]
#   (GFLOW default: build/gflow, with BACKEND=gpu .device/bin/gflow from
#   scripts/gpu/build-nvidia.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
backend=${BACKEND:-cpu}
repeat=${REPEAT:-5}
metric=${METRIC:-loop}
default=build/gflow
[ "$backend" = gpu ] && default=.device/bin/gflow
gflow=$(realpath "${1:-$default}")
[ -x "$gflow" ] || { echo "no $gflow" >&2; exit 1; }
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$out/gflow-trace-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ms() { # a run's loop time (or CPU time) in ms; arguments: the workflow and options
  rm -rf "$tmp/o"
  if [ "$metric" = cpu ]; then
    local TIMEFORMAT=%U+%S t
    t=$( { time OMP_WAIT_POLICY=passive "$gflow" run "$@" --backend "$backend" --quiet --out "$tmp/o" >/dev/null; } 2>&1)
    awk "BEGIN { printf \"%.1f\", ($t) * 1000 }"
    return
  fi
  "$gflow" run "$@" --backend "$backend" --quiet --out "$tmp/o" >/dev/null
  sed -n 's/.*"total_s": \([0-9.e+-]*\).*/\1/p' "$tmp/o/timings.json" | awk 'NR == 1 { printf "%.4f", $1 * 1000 }'
}
best() { sort -g | head -1; }
ratio() { awk "BEGIN { printf \"%.3f\", $1 / $2 }"; }
modes=(plain timing timing-all trace)
flags() {
  case $1 in
    plain) ;;
    timing) echo --timing ;;
    timing-all) echo --timing --timing-sample 1 ;;
    trace) echo --trace "$tmp/trace.json" ;;
  esac
}
row() { # LABEL WORKFLOW SET...
  local label=$1 wf=$2 sets=()
  shift 2
  for kv in "$@"; do sets+=(--set "$kv"); done
  declare -A runs=()
  for _ in $(seq "$repeat"); do
    for m in "${modes[@]}"; do
      # shellcheck disable=SC2046 # flags are words
      runs[$m]+="$(ms "$wf" "${sets[@]}" $(flags "$m")) "
    done
  done
  declare -A b=()
  for m in "${modes[@]}"; do b[$m]=$(printf '%s\n' ${runs[$m]} | best); done
  printf '%-28s %9s %9s %6s %9s %6s %9s %6s\n' "$label" "${b[plain]}" \
    "${b[timing]}" "$(ratio "${b[timing]}" "${b[plain]}")" \
    "${b[timing-all]}" "$(ratio "${b[timing-all]}" "${b[plain]}")" \
    "${b[trace]}" "$(ratio "${b[trace]}" "${b[plain]}")"
}

"$gflow" --version
what="loop ms"
[ "$metric" = cpu ] && what="process CPU ms (user + sys)"
echo "backend $backend, best of $repeat runs each, interleaved; $what and ratio to plain"
printf '%-28s %9s %9s %6s %9s %6s %9s %6s\n' workload plain --timing ratio "sample 1" ratio --trace ratio
row "seed 256^2 x 640, events" workflows/wave2d.yaml
row "seed 256^2 x 640, sync" workflows/wave2d.yaml schedule=sync
if [ "$backend" = gpu ]; then
  row "compute 8192^2 x 500" workflows/wave2d_compute.yaml 'grid.shape=[8192,8192]' params.nt=500 loop.tasks.1.when=0
else
  row "compute 1024^2 x 200" workflows/wave2d_compute.yaml 'grid.shape=[1024,1024]' params.nt=200 loop.tasks.1.when=0
fi
