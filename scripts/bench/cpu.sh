#!/usr/bin/env bash
# cpu.sh - gflow's CPU backend against a plain C + OpenMP loop of the same
# stencil (scripts/bench/wave2d_omp.c), in one run, best of REPEAT runs each:
#   1. compute-only wave2d at 1024^2 and 4096^2: GPts/s and the ratio to the loop
#      (the workflow's one output, the final field, is switched off: the loop
#      writes nothing either);
#   2. the seed workload (256^2, 640 steps, a snapshot every step) under the
#      sync and events schedules: the gap between them.
# Usage: scripts/bench/cpu.sh [BUILD_DIR (default build)] [REPEAT (default 3)]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
repeat=${2:-3}
gflow=$build/gflow
[ -x "$gflow" ] || { echo "no $gflow: run scripts/setup.sh first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gflow-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -O3 -march=native -fopenmp -std=c11 scripts/bench/wave2d_omp.c -lm -o "$tmp/wave2d_omp"

json() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -1; }
best() { sort -g | tail -1; }
best_low() { sort -g | head -1; }

echo "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '\n%-10s %6s %14s %14s %8s\n' "grid" "steps" "loop GPts/s" "gflow GPts/s" "ratio"
for size in 1024:200 4096:40; do
  n=${size%:*} steps=${size#*:}
  loop=$(for _ in $(seq "$repeat"); do "$tmp/wave2d_omp" "$n" "$n" "$steps" | awk '{print $3}'; done | best)
  flow=$(for _ in $(seq "$repeat"); do
    "$gflow" run workflows/wave2d_compute.yaml --backend cpu --quiet --out "$tmp/c" \
      --set "grid.shape=[$n,$n]" --set "params.nt=$steps" --set loop.tasks.1.when=0 2>/dev/null
    json "$tmp/c/timings.json" gpts_per_s
  done | best)
  printf '%-10s %6s %14.4f %14.4f %8.3f\n' "${n}^2" "$steps" "$loop" "$flow" "$(echo "$flow / $loop" | bc -l)"
done

out=/dev/shm
[ -d "$out" ] && [ -w "$out" ] || out=$tmp
odir=$(mktemp -d "$out/gflow-bench-io.XXXXXX")
trap 'rm -rf "$tmp" "$odir"' EXIT
printf '\nseed workload, 256^2 x 640 steps, snapshot every step (output in %s)\n' "$out"
printf '%-10s %12s %12s\n' "schedule" "total ms" "us/step"
declare -A ms
for schedule in sync streams events auto; do
  ms[$schedule]=$(for _ in $(seq "$repeat"); do
    "$gflow" run workflows/wave2d.yaml --backend cpu --quiet --out "$odir/$schedule" --set schedule=$schedule 2>/dev/null
    echo "$(json "$odir/$schedule/timings.json" total_s) * 1000" | bc -l
  done | best_low)
  printf '%-10s %12.2f %12.2f\n' "$schedule" "${ms[$schedule]}" "$(echo "${ms[$schedule]} * 1000 / 640" | bc -l)"
done
printf 'sync / events = %.3f\n' "$(echo "${ms[sync]} / ${ms[events]}" | bc -l)"
