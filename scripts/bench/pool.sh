#!/usr/bin/env bash
# pool.sh - the temporaries' pool (runner/pool.c), in one run:
#   1. allocations per second (pool_bench, scripts/bench/pool_bench.c): an
#      allocation per step through hipMalloc/hipFree, through hipMallocAsync,
#      and through gflow's resource-aware and naive pools; 1 MiB on one stream,
#      1 MiB taking two streams in turn, and 2 MiB over two streams (each
#      allocation can only reuse what the other stream freed: the
#      resource-aware pool asks that stream's event);
#   2. the seed workload with per-step temporaries (workflows/wave2d_scratch.yaml:
#      a work array and the snapshots' pack buffers as scratch fields, 256^2,
#      640 steps) against the same run with the fields preallocated, and
#      workflows/wave2d.yaml for reference: the loop's time, best and median
#      of ROUNDS rounds in which the variants take turns (the launch-bound
#      loop moves by 10% from run to run on one GPU), the median of the
#      rounds' ratios to the preallocated run (paired) and their quartiles;
#      then the same table for each run's median step on the host
#      (timings.json's host_step_us).
# Targets (issue 13, on the GPU): the resource-aware pool at least 10x the
# per-step rate and no slower than async; per-step temporaries within 1.02x
# of preallocated.
#   scripts/bench/pool.sh                          # GPU: binaries of scripts/gpu/build-nvidia.sh
#   BACKEND=cpu GFLOW=build/gflow POOL_BENCH=build/bench/pool_bench scripts/bench/pool.sh
# Environment: BACKEND (gpu), BIN (.device/bin), GFLOW ($BIN/gflow),
# POOL_BENCH ($BIN/pool_bench), REPEAT (5), PAIRS (100000), ROUNDS (15), PIN
# (a CPU list for taskset: gflow's runs pinned, lib.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
backend=${BACKEND:-gpu}
bin=${BIN:-.device/bin}
gflow=${GFLOW:-$bin/gflow}
bench=${POOL_BENCH:-$bin/pool_bench}
repeat=${REPEAT:-5}
rounds=${ROUNDS:-15}
pairs=${PAIRS:-100000}
. scripts/bench/lib.sh

echo "1. allocations per second"
for row in "1048576:1" "1048576:2" "2097152:2"; do
  IFS=: read -r bytes streams <<<"$row"
  echo
  "$bench" --backend "$backend" --bytes "$bytes" --streams "$streams" --pairs "$pairs" --repeat "$repeat" ||
    echo "pool_bench failed"
done

echo
echo "2. seed workload, 256^2, 640 steps, a snapshot every step (outputs in $out${PIN:+; on CPUs $PIN})"
# The variants take turns, one run each per round, so that drift of the
# machine hits them alike; each keeps its best and median of ROUNDS rounds.
labels=("wave2d_scratch, fields preallocated"
  "wave2d_scratch, per-step temporaries, resource-aware"
  "wave2d_scratch, per-step temporaries, async"
  "wave2d (no work array, no pack buffers)")
variants=("workflows/wave2d_scratch.yaml --set fields.W.scratch=false --set fields.P.scratch=false --set fields.P.ring=5"
  "workflows/wave2d_scratch.yaml --set memory.pool.strategy=resource-aware"
  "workflows/wave2d_scratch.yaml --set memory.pool.strategy=async"
  "workflows/wave2d.yaml")
# Each round starts one variant further on (round r runs r, r+1, ...), so
# that none always follows the same one (a run right after another process
# may find the GPU still busy with that process's end).
declare -a times=() steps=()
count=${#variants[@]}
for r in $(seq 0 $((rounds - 1))); do
  for i in $(seq 0 $((count - 1))); do
    v=$(((r + i) % count))
    # shellcheck disable=SC2086
    read -r ms us <<<"$(gflow_run ${variants[v]} --set check=off)"
    times[v]+="$ms " steps[v]+="$us "
  done
done
# table VALUES_ARRAY UNIT: best and median of each variant's values and
# their ratios to the preallocated run's; paired: the median over rounds of
# the variant's value over the preallocated run's in the same round (drift
# between rounds cancels), and the quartiles of those ratios (how far one
# round's pair moves).
table() {
  local -n values=$1
  printf '%-54s %9s %7s %9s %7s %7s %13s\n' "run" "best $2" "ratio" "median $2" "ratio" "paired" \
    "paired p25-75"
  local pre pre_median best mid ratios
  pre=$(printf '%s\n' ${values[0]} | low)
  pre_median=$(printf '%s\n' ${values[0]} | median)
  for v in "${!variants[@]}"; do
    best=$(printf '%s\n' ${values[v]} | low)
    mid=$(printf '%s\n' ${values[v]} | median)
    ratios=$(paste <(printf '%s\n' ${values[v]}) <(printf '%s\n' ${values[0]}) | awk '{print $1 / $2}')
    printf '%-54s %9.3f %7s %9.3f %7s %7s %13s\n' "${labels[v]}" "$best" "$(calc "$best / $pre")" \
      "$mid" "$(calc "$mid / $pre_median")" "$(calc "$(median <<<"$ratios")")" \
      "$(calc "$(quantile 0.25 <<<"$ratios")")-$(calc "$(quantile 0.75 <<<"$ratios")")"
  done
}
echo "the loop's time (total_s), $rounds rounds"
table times ms
echo
echo "a step's time on the host, the median of the run's steps (host_step_us: the"
echo "loop is bound by the host's issue, and the median leaves out its hiccups)"
table steps us
