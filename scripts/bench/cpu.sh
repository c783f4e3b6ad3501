#!/usr/bin/env bash
# cpu.sh - gflow's CPU backend against a plain C + OpenMP loop of the same
# stencil (scripts/bench/wave2d_omp.c), in one run:
#   1. compute-only wave2d at 256^2 x 5000 steps (launch-bound: what the
#      backend costs per step), 1024^2 and 4096^2: the loop and gflow run
#      interleaved (loop, gflow, loop, gflow, ...), best of REPEAT each; the
#      GPts/s of each, gflow / loop, and the time per step of each and their
#      difference, gflow's overhead per step in microseconds (the workflow's
#      one output, the final field, is switched off: the loop writes nothing
#      either; the Ricker hook runs every step, the loop computes it in C);
#   2. the seed workload (256^2, 640 steps, a snapshot every step) under each
#      schedule, and with batched snapshots under events, graph and auto,
#      each over the time of events with a copy per plane: best over best,
#      and the median over the rounds of each round's ratio.
# Usage: scripts/bench/cpu.sh [BUILD_DIR (default build)] [REPEAT (default 3)]
#   BUILD_DIR holds `gflow`: a CPU build (build) or a GPU one (.device/bin; run
#   with --backend cpu). THREADS="1 2 16": the compute rows once per OpenMP
#   thread count (default: one pass, OMP_NUM_THREADS as set, else every core).
#   SIZES="256:5000 1024:200" (N:STEPS) and SEED=0 (leave out part 2) shorten it.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
repeat=${2:-3}
gflow=$build/gflow
[ -x "$gflow" ] || { echo "no $gflow: run scripts/setup.sh first" >&2; exit 1; }
. scripts/bench/lib.sh # tmp (in /dev/shm where it can), json, low, calc
cc -O3 -march=native -fopenmp -std=c11 scripts/bench/wave2d_omp.c -lm -o "$tmp/wave2d_omp"

echo "CPU: $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset} OMP_PROC_BIND=${OMP_PROC_BIND:-unset}; best of $repeat, interleaved"
printf '\n%-8s %6s %7s %11s %12s %7s %12s %13s %12s\n' grid steps threads "loop GPts/s" "gflow GPts/s" \
  ratio "loop us/step" "gflow us/step" "overhead us"
for threads in ${THREADS:-default}; do
  for size in ${SIZES:-256:5000 1024:200 4096:40}; do
    n=${size%:*} steps=${size#*:}
    (
      [ "$threads" = default ] || export OMP_NUM_THREADS=$threads
      for _ in $(seq "$repeat"); do
        echo "loop $("$tmp/wave2d_omp" "$n" "$n" "$steps" | awk '{print $1}')"
        rm -rf "$tmp/c"
        "$gflow" run workflows/wave2d_compute.yaml --backend cpu --quiet --out "$tmp/c" \
          --set "grid.shape=[$n,$n]" --set "params.nt=$steps" --set loop.tasks.1.when=0 >/dev/null
        echo "gflow $(json "$tmp/c/timings.json" total_s)"
      done
    ) >"$tmp/times"
    loop=$(awk '$1 == "loop" {print $2}' "$tmp/times" | low)
    flow=$(awk '$1 == "gflow" {print $2}' "$tmp/times" | low)
    points=$(calc "($n - 4) * ($n - 4) * $steps")
    printf '%-8s %6s %7s %11.3f %12.3f %7.3f %12.2f %13.2f %12.2f\n' "${n}^2" "$steps" "$threads" \
      "$(calc "$points / $loop / 1e9")" "$(calc "$points / $flow / 1e9")" "$(calc "$loop / $flow")" \
      "$(calc "$loop / $steps * 1e6")" "$(calc "$flow / $steps * 1e6")" \
      "$(calc "($flow - $loop) / $steps * 1e6")"
  done
done
[ "${SEED:-1}" = 0 ] && exit 0

printf '\nseed workload, 256^2 x 640 steps, snapshot every step (output in %s)\n' "$tmp"
printf '%-30s %12s %12s %10s %14s\n' "schedule, output" "total ms" "us/step" "/ events 1" "paired median"
# events with a copy per plane (the reference), then each schedule with the
# batch it chooses (on the CPU backend a copy per plane; auto: batches of 16
# read straight from U's grown ring), batches of 16 given (staged directly,
# each plane copied once into its place in the batch's staging buffer) under
# events and graph, and auto with a copy per plane; the rows take turns,
# best of REPEAT each, and the median of each round's row over that round's
# reference (this machine's speed moves by 10-20% between runs, less within
# a round)
rows=("events, a copy per plane|1" "sync|" "streams|" "events|" "graph|" "auto|"
  "events, batches of 16|16" "graph, batches of 16|16" "auto, a copy per plane|1")
: >"$tmp/seed-times"
for round in $(seq "$repeat"); do
  for row in "${rows[@]}"; do
    label=${row%|*} batch=${row#*|} schedule=${label%%,*}
    sets=(--set "schedule=$schedule")
    [ -z "$batch" ] || sets+=(--set "loop.tasks.1.output.batch=$batch")
    rm -rf "$tmp/seed"
    "$gflow" run workflows/wave2d.yaml --backend cpu --quiet --out "$tmp/seed" "${sets[@]}" >/dev/null
    echo "$round|$label|$(calc "$(json "$tmp/seed/timings.json" total_s) * 1000")" >>"$tmp/seed-times"
  done
done
times() { awk -F'|' -v l="$1" '$2 == l {print $1, $3}' "$tmp/seed-times"; }
ref_best=$(times "events, a copy per plane" | awk '{print $2}' | low)
for row in "${rows[@]}"; do
  label=${row%|*}
  best=$(times "$label" | awk '{print $2}' | low)
  paired=$(join <(times "$label" | sort) <(times "events, a copy per plane" | sort) | awk '{print $2 / $3}' | median)
  printf '%-30s %12.2f %12.2f %10.3f %14.3f\n' "$label" "$best" "$(calc "$best * 1000 / 640")" \
    "$(calc "$best / $ref_best")" "$paired"
done
