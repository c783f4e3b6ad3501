#!/usr/bin/env bash
# pictures.sh - the README's pictures, made by gflow, into docs/ (or DIR):
#   timeline-sync-events.png  the seed workload's timeline under `sync` and
#                             under `events`, one above the other on one time
#                             scale: gflow's traces (--trace, steps STEPS)
#                             drawn by scripts/trace_png.py
#   wave2d-dag.png            a steady-state step's task graph (gflow dag
#                             --format png; needs Graphviz's dot, skipped
#                             without it)
#   wave2d-sheet.png          the wavefield every 80 steps (gflow view --sheet)
# On the GPU machine, with the binaries of scripts/gpu/build-nvidia.sh:
#   scripts/gpu/pictures.sh [DIR]        (BIN=.device/bin, BACKEND=gpu, STEPS=300:306)
# BACKEND=cpu BIN=build makes them here (the DAG and the contact sheet are the
# same bits on either backend; the timeline is the GPU's only on the GPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.device/bin}
backend=${BACKEND:-gpu}
steps=${STEPS:-300:306}
dir=${1:-docs}
mkdir -p "$dir"
scratch=/dev/shm
[ -d $scratch ] && [ -w $scratch ] || scratch=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$scratch/gflow-pictures.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run=("$bin/gflow" run workflows/wave2d.yaml --backend "$backend" --quiet)

for schedule in sync events; do
  "${run[@]}" --set schedule=$schedule --out "$tmp/$schedule" --trace "$tmp/$schedule.json" --trace-steps "$steps"
done
python3 scripts/trace_png.py --out "$dir/timeline-sync-events.png" \
  "sync ($backend, steps $steps)=$tmp/sync.json" "events ($backend, steps $steps)=$tmp/events.json"
echo "$dir/timeline-sync-events.png"

if command -v dot >/dev/null; then
  "$bin/gflow" dag workflows/wave2d.yaml --format png >"$tmp/dag.png"
  mv "$tmp/dag.png" "$dir/wave2d-dag.png"
  echo "$dir/wave2d-dag.png"
else
  echo "no Graphviz dot here: $dir/wave2d-dag.png not made" >&2
fi

"${run[@]}" --out "$tmp/wave"
"$bin/gflow" view "$tmp/wave" --every 80 --sheet >/dev/null
cp "$tmp/wave/view/array_out.dat-sheet.png" "$dir/wave2d-sheet.png"
echo "$dir/wave2d-sheet.png"
