#!/usr/bin/env bash
# hdf5-cost.sh - what `format: hdf5` costs against the raw writer, the two
# side by side in one run, best of REPEAT runs each, for
#   seed: workflows/wave2d.yaml as it is (256^2 x 640 steps, a plane every step)
#   4096^2 x 100: the same with grid.shape=[4096,4096], params.nt=100 (6.2 GiB of planes)
# For each workload and format:
#   writer ms  the writer thread's time in the format's plane writes (the
#              "file write" slices of a --trace run, summed)
#   loop ms    the time loop (timings.json total_s) of a run without --trace:
#              the writes overlap compute, so this should not move
#   wall ms    the whole command, the format's finish included (HDF5: its
#              scales, attributes, close and fsync; raw: its size and fsync)
# and each HDF5 figure over the raw one. Outputs go to /dev/shm when it is
# there (OUT overrides), each run's folder removed before the next.
# Usage: scripts/bench/hdf5-cost.sh [BIN_DIR (default build)] [REPEAT (default 3)]
#   CPU here:   scripts/bench/hdf5-cost.sh build 3
#   on the GPU: scripts/gpu/build-nvidia.sh && scripts/bench/hdf5-cost.sh .device/bin 3
# Environment: BACKEND (auto), OUT (/dev/shm), WORKLOADS ("seed big").
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}
repeat=${2:-3}
gflow=$bin/gflow
backend=${BACKEND:-auto}
[ -x "$gflow" ] || { echo "no $gflow: run scripts/setup.sh (or scripts/gpu/build-nvidia.sh) first" >&2; exit 1; }
out=${OUT:-/dev/shm}
[ -d "$out" ] && [ -w "$out" ] || out=${TMPDIR:-/tmp}
work=$(mktemp -d "$out/gflow-bench-hdf5.XXXXXX")
trap 'rm -rf "$work"' EXIT

json() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -1; }
calc() { awk "BEGIN {printf \"%.6f\", $1}"; } # arithmetic without bc (the GPU machine may lack it)
now_ms() { calc "$(date +%s%N) / 1000000"; }
# the writer's plane writes in a trace, in ms
writer_ms() { sed -n 's/.*"cat": "file write".*"dur": \([0-9.]*\),.*/\1/p' "$1" | awk '{s += $1} END {printf "%.3f", s / 1000}'; }
best() { sort -g | head -1; }

declare -A sets=(
  [seed]=""
  [big]="--set grid.shape=[4096,4096] --set params.nt=100"
)
declare -A label=([seed]="seed 256^2x640" [big]="4096^2 x 100")
raw=(--set loop.tasks.1.output.file=array_out.dat)
hdf5=(--set loop.tasks.1.output.format=hdf5 --set loop.tasks.1.output.file=array_out.h5)

echo "gflow: $("$gflow" --version); outputs in $out; best of $repeat"
"$gflow" run workflows/wave2d.yaml --backend "$backend" --set params.nt=2 --out "$work/probe" 2>&1 |
  sed -n 's/^gflow: backend /backend /p' | head -1
rm -rf "$work/probe"
printf '\n%-16s %-6s %10s %8s %10s %8s %10s %8s %10s\n' workload format "writer ms" ratio "loop ms" \
  ratio "wall ms" ratio "file MiB"
for w in ${WORKLOADS:-seed big}; do
  # shellcheck disable=SC2206
  extra=(${sets[$w]})
  declare -A writer=() loop=() wall=() size=()
  for r in $(seq "$repeat"); do
    # the formats alternate, the first one changing each repeat, so that drift
    # and the order hit both alike
    order="raw hdf5"
    [ $((r % 2)) -eq 0 ] && order="hdf5 raw"
    for f in $order; do
      if [ "$f" = raw ]; then fmt=("${raw[@]}"); else fmt=("${hdf5[@]}"); fi
      "$gflow" run workflows/wave2d.yaml --backend "$backend" --quiet "${extra[@]}" "${fmt[@]}" \
        --out "$work/t" --trace "$work/trace.json"
      writer[$f]+="$(writer_ms "$work/trace.json") "
      rm -rf "$work/t" "$work/trace.json"
      t0=$(now_ms)
      "$gflow" run workflows/wave2d.yaml --backend "$backend" --quiet "${extra[@]}" "${fmt[@]}" \
        --out "$work/u"
      wall[$f]+="$(calc "$(now_ms) - $t0") "
      loop[$f]+="$(calc "$(json "$work/u/timings.json" total_s) * 1000") "
      size[$f]=$(du -m "$work/u"/array_out.* | awk '$2 !~ /json|xdmf/ {print $1}')
      rm -rf "$work/u"
    done
  done
  for f in raw hdf5; do
    writer[$f]=$(printf '%s\n' ${writer[$f]} | best)
    loop[$f]=$(printf '%s\n' ${loop[$f]} | best)
    wall[$f]=$(printf '%s\n' ${wall[$f]} | best)
  done
  for f in raw hdf5; do
    printf '%-16s %-6s %10.2f %8.3f %10.2f %8.3f %10.2f %8.3f %10s\n' "${label[$w]}" "$f" \
      "${writer[$f]}" "$(calc "${writer[$f]} / ${writer[raw]}")" \
      "${loop[$f]}" "$(calc "${loop[$f]} / ${loop[raw]}")" \
      "${wall[$f]}" "$(calc "${wall[$f]} / ${wall[raw]}")" "${size[$f]}"
  done
  unset writer loop wall size
done
echo
echo "ratio: the format's figure over raw's in this run; the target is writer <= 1.1, loop ~ 1.0"
