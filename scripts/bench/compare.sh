#!/usr/bin/env bash
# compare.sh - two gflow binaries side by side on the benchmarks' workloads, in
# one run: for each workload the two run in turn (OLD NEW OLD NEW ...), REPEAT
# times each, and the table shows the best loop time of each (total_s from
# timings.json) and new/old. Below 1 the new binary is faster.
#   --backend cpu: the gflow runs of cpu.sh (compute-only wave2d with the final
#                  output switched off; the seed workload under each schedule)
#   --backend gpu: the gflow runs of gpu.sh sections 1-3 (the seed workload per
#                  schedule and staging; compute only at 4096^2 and 8192^2; the
#                  memory strategies, whose "device" row repeats "events, staging 640")
# Usage: scripts/bench/compare.sh --backend cpu|gpu OLD_GFLOW NEW_GFLOW
# Environment: REPEAT (default 5); outputs go to /dev/shm, else TMPDIR or /tmp,
# and are removed on exit.
set -euo pipefail

usage() { echo "usage: $0 --backend cpu|gpu OLD_GFLOW NEW_GFLOW" >&2; exit 2; }
[[ $# -eq 4 && $1 == --backend && $2 =~ ^(cpu|gpu)$ ]] || usage
backend=$2
old=$(realpath "$3")
new=$(realpath "$4")
for g in "$old" "$new"; do
  [[ -x $g ]] || { echo "$g: not an executable" >&2; exit 1; }
done
repeat=${REPEAT:-5}
cd "$(dirname "$0")/../.."

out=/dev/shm
[[ -d $out && -w $out ]] || out=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$out/gflow-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run_ms GFLOW WORKFLOW SET...: one run's loop time in ms; on failure, its stderr.
run_ms() {
  local gflow=$1 workflow=$2 kv ms
  local args=()
  for kv in "${@:3}"; do args+=(--set "$kv"); done
  rm -rf "$tmp/run"
  if ! "$gflow" run "$workflow" --backend "$backend" --quiet --out "$tmp/run" "${args[@]}" 2>"$tmp/err"; then
    sed "s|^|  $gflow: |" "$tmp/err" >&2
    return 1
  fi
  ms=$(sed -n 's/.*"total_s": \([0-9.e+-]*\).*/\1/p' "$tmp/run/timings.json" | awk 'NR == 1 { printf "%.3f", $1 * 1000 }')
  [[ -n $ms ]] || { echo "  $gflow: no total_s in $tmp/run/timings.json" >&2; return 1; }
  echo "$ms"
}
# min A B: the smaller number, "" counting as none yet.
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }

# compare LABEL WORKFLOW SET...: one row of the table.
failed=0
ratios=()
compare() {
  local label=$1 best_old="" best_new="" ms ratio
  for _ in $(seq "$repeat"); do
    if ms=$(run_ms "$old" "${@:2}"); then best_old=$(min "$best_old" "$ms"); else best_old=failed; fi
    if ms=$(run_ms "$new" "${@:2}"); then best_new=$(min "$best_new" "$ms"); else best_new=failed; fi
    if [[ $best_old == failed || $best_new == failed ]]; then break; fi
  done
  if [[ $best_old == failed || $best_new == failed ]]; then
    failed=1
    printf '%-30s %12s %12s %9s\n' "$label" "$best_old" "$best_new" "-"
    return
  fi
  ratio=$(awk -v o="$best_old" -v n="$best_new" 'BEGIN { printf "%.3f", n / o }')
  ratios+=("$ratio")
  printf '%-30s %12.3f %12.3f %9s\n' "$label" "$best_old" "$best_new" "$ratio"
}

echo "backend $backend, best of $repeat runs each, interleaved (outputs in $out)"
echo "old: $old ($("$old" --version))"
echo "new: $new ($("$new" --version))"
printf '\n%-30s %12s %12s %9s\n' "workload" "old ms" "new ms" "new/old"
seed=workflows/wave2d.yaml
compute=workflows/wave2d_compute.yaml
if [[ $backend == cpu ]]; then
  compare "compute 1024^2 x 200" $compute "grid.shape=[1024,1024]" params.nt=200 loop.tasks.1.when=0
  compare "compute 4096^2 x 40" $compute "grid.shape=[4096,4096]" params.nt=40 loop.tasks.1.when=0
  for schedule in sync streams events graph auto; do
    compare "seed $schedule" $seed schedule=$schedule
  done
else
  for staging in 8 640; do
    for schedule in sync streams events graph auto; do
      compare "seed $schedule, staging $staging" $seed schedule=$schedule memory.staging=$staging
    done
  done
  compare "compute 4096^2 x 1000" $compute "grid.shape=[4096,4096]" params.nt=1000
  compare "compute 8192^2 x 500" $compute "grid.shape=[8192,8192]" params.nt=500
  # The events schedule (the workflow's own) with each memory strategy.
  compare "memory device" $seed memory.staging=640 memory.default=device
  compare "memory managed" $seed memory.staging=640 memory.default=managed
  compare "memory managed+prefetch" $seed memory.staging=640 memory.default=managed memory.prefetch=true
  compare "memory pinned" $seed memory.staging=640 memory.default=pinned
fi
if [[ ${#ratios[@]} -gt 0 ]]; then
  printf '%-30s %12s %12s %9s\n' "geometric mean" "" "" \
    "$(printf '%s\n' "${ratios[@]}" | awk '{ s += log($1) } END { printf "%.3f", exp(s / NR) }')"
fi
exit $failed
