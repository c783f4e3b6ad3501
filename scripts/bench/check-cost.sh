#!/usr/bin/env bash
# check-cost.sh - what the default numerical check costs: the same gflow with
# its default check (a backend scan of every written field every 128 steps)
# and with `check: off`, interleaved, best of REPEAT runs each, on
#   the seed workload (256^2 x 640, a snapshot every step, events), and
#   compute only at 4096^2 (CPU) or 8192^2 (GPU), no outputs.
# Usage: scripts/bench/check-cost.sh GFLOW cpu|gpu   (REPEAT, default 7)
set -euo pipefail
gflow=$(realpath "$1")
backend=${2:-cpu}
repeat=${REPEAT:-7}
cd "$(dirname "$0")/../.."
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$out/gflow-check-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ms() { # a run's loop time in ms
  rm -rf "$tmp/o"
  "$gflow" run "$@" --backend "$backend" --quiet --out "$tmp/o" >/dev/null
  sed -n 's/.*"total_s": \([0-9.e+-]*\).*/\1/p' "$tmp/o/timings.json" | awk 'NR == 1 { printf "%.4f", $1 * 1000 }'
}
best() { sort -g | head -1; }
row() { # LABEL WORKFLOW SET...
  local label=$1 wf=$2 sets=() on=() off=()
  shift 2
  for kv in "$@"; do sets+=(--set "$kv"); done
  for _ in $(seq "$repeat"); do
    on+=("$(ms "$wf" "${sets[@]}")")
    off+=("$(ms "$wf" "${sets[@]}" --set check=off)")
  done
  local a b
  a=$(printf '%s\n' "${on[@]}" | best)
  b=$(printf '%s\n' "${off[@]}" | best)
  printf '%-32s %12s %12s %8s\n' "$label" "$b" "$a" "$(awk "BEGIN { printf \"%.3f\", $a / $b }")"
}
echo "backend $backend, best of $repeat runs each, interleaved"
printf '%-32s %12s %12s %8s\n' workload "check off ms" "default ms" ratio
row "seed, events" workflows/wave2d.yaml
if [ "$backend" = gpu ]; then
  row "compute only, 8192^2 x 500" workflows/wave2d_compute.yaml 'grid.shape=[8192,8192]' params.nt=500 loop.tasks.1.when=0
else
  row "compute only, 4096^2 x 40" workflows/wave2d_compute.yaml 'grid.shape=[4096,4096]' params.nt=40 loop.tasks.1.when=0
  row "compute only, 1024^2 x 200" workflows/wave2d_compute.yaml 'grid.shape=[1024,1024]' params.nt=200 loop.tasks.1.when=0
fi
