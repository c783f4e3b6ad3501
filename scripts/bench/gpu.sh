#!/usr/bin/env bash
# gpu.sh - gflow on the GPU against the hand-written seed programs, in one run
# (binaries from scripts/gpu/build-nvidia.sh in .device/bin, or BIN=DIR):
#   1. the seed workload (256^2, 640 steps, a snapshot every step): each seed
#      schedule's program and gflow's equivalent workflow;
#   2. compute only at 4096^2 and 8192^2: effective bandwidth (16 B per cell)
#      against a device-to-device copy measured in the same run;
#   3. the memory strategies on the seed workload;
#   4. the runner's own host time per task.
# Times are the best of REPEAT runs (default 5). gflow's time is its time loop
# (until every kernel and copy has finished), as the seed programs time theirs;
# writing the file afterwards is outside both.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.device/bin}
repeat=${REPEAT:-5}
. scripts/bench/lib.sh

# seed programs: "The ... calculation took X milliseconds."
seed_ms() {
  for _ in $(seq "$repeat"); do
    "$bin/$1" "${@:2}" | sed -n 's/.*took \([0-9.]*\) milliseconds.*/\1/p'
  done | low
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
"$bin/gflow" --version

echo
echo "1. seed workload: 256^2, 640 steps, snapshot every step (outputs in $out)"
printf '%-34s %10s %10s %10s\n' "program" "ms" "us/step" "ratio"
declare -A base
for s in sync async_streams async_events; do
  base[$s]=$(seed_ms "wave2d_$s" --out "$tmp/seed_$s.dat")
  printf '%-34s %10.3f %10.2f %10s\n' "hand-written $s" "${base[$s]}" "$(calc "${base[$s]} * 1000 / 640")" "1.000"
done
for row in "sync:sync:8" "streams:async_streams:8" "events:async_events:8" "auto:async_events:8" \
           "sync:sync:640" "streams:async_streams:640" "events:async_events:640" "auto:async_events:640"; do
  IFS=: read -r schedule against staging <<<"$row"
  ms=$(gflow_ms workflows/wave2d.yaml --set schedule=$schedule --set memory.staging=$staging)
  printf '%-34s %10.3f %10.2f %10s\n' "gflow $schedule, staging $staging" "$ms" "$(calc "$ms * 1000 / 640")" \
    "$(calc "$ms / ${base[$against]}")"
done
echo "(ratio: against the hand-written program of the same schedule; auto against async_events."
echo " staging 640 gives gflow the pinned memory the seed programs use for their output array.)"

echo
echo "2. compute only (16 B per cell: read U0, U1, V, write U2)"
copy=$("$bin/copy_bw" | sed -n 's/^device-to-device.*, \([0-9.]*\) GB\/s read+written.*/\1/p')
echo "device-to-device copy: $copy GB/s (bytes read + written)"
printf '%-34s %10s %10s %10s %12s\n' "program" "ms" "GPts/s" "GB/s" "of copy"
for size in 4096:1000 8192:500; do
  n=${size%:*} nt=${size#*:}
  points=$(calc "($n - 4) * ($n - 4) * $nt")
  ms=$(seed_ms wave2d_async_events --no-io --n0 "$n" --n1 "$n" --nt "$nt")
  printf '%-34s %10.3f %10.1f %10.1f %12.3f\n' "hand-written events ${n}^2 x $nt" "$ms" \
    "$(calc "$points / $ms / 1e6")" "$(calc "16 * $points / $ms / 1e6")" "$(calc "16 * $points / $ms / 1e6 / $copy")"
  ms=$(gflow_ms workflows/wave2d_compute.yaml --set "grid.shape=[$n,$n]" --set "params.nt=$nt")
  printf '%-34s %10.3f %10.1f %10.1f %12.3f\n' "gflow ${n}^2 x $nt" "$ms" \
    "$(calc "$points / $ms / 1e6")" "$(calc "16 * $points / $ms / 1e6")" "$(calc "16 * $points / $ms / 1e6 / $copy")"
done

echo
echo "3. memory strategies, seed workload, events schedule, staging 640"
printf '%-34s %10s %10s %10s\n' "strategy" "ms" "us/step" "vs device"
dev=""
for strategy in device managed managed+prefetch pinned; do
  case $strategy in
    managed+prefetch) sets=(--set memory.default=managed --set memory.prefetch=true) ;;
    *) sets=(--set "memory.default=$strategy") ;;
  esac
  ms=$(gflow_ms workflows/wave2d.yaml --set memory.staging=640 "${sets[@]}")
  [ -n "$dev" ] || dev=$ms
  printf '%-34s %10.3f %10.2f %10s\n' "$strategy" "$ms" "$(calc "$ms * 1000 / 640")" "$(calc "$ms / $dev")"
done

echo
echo "4. runner overhead (host time outside HIP calls, per task), seed workload"
for schedule in sync events auto; do
  "$bin/gflow" run workflows/wave2d.yaml --backend gpu --quiet --out "$tmp/o" --set schedule=$schedule --set memory.staging=640 2>/dev/null
  printf '%-10s %8.3f us per task\n' "$schedule" "$(json "$tmp/o/timings.json" runner_overhead_us_per_task)"
done
echo
echo "timing report of one run (events, staging 8, per-task timing on):"
"$bin/gflow" run workflows/wave2d.yaml --backend gpu --timing --out "$tmp/t"
