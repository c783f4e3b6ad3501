#!/usr/bin/env bash
# ghost_exchange.sh - the GhostExchange seed's benchmark, in one run:
#   1. GPU (BACKEND=gpu, the default when a GPU answers), the seed's size
#      (20000^2 doubles, halo 2, corners, 100 iterations) on RANKS_GPU ranks
#      (default "1"; "1 2 4" on a machine with 4 GPUs: one GPU per rank, or
#      ranks sharing the GPUs there are): the seed's four timers (the maximum
#      over the ranks) next to its published MI210 figures, with overlap on
#      and off; what the split costs the loop (its total past the first
#      one-rank total / ranks, and that over the one-rank stencil's share:
#      with overlap the busy times run side by side and do not add up); and
#      the blur's effective bandwidth a GPU (16 B per cell) against a
#      device-to-device copy measured in the same run (copy_bw); with
#      TRANSPORTS="mpi channel" the ghost cells over MPI and over channels;
#   2. the CPU backend, strong scaling at CPU_SHAPE (default 4004^2) over
#      RANKS_CPU ranks (default "1 2 4"; "" skips it), overlap on and off: time, speed-up,
#      parallel efficiency, and the ghost-cell share of the time.
# Times are the best of REPEAT (default 3) runs; every figure of a table is
# measured in the same run as the others. Binaries: BIN (default
# .device/bin when it holds gflow, else build).
#   scripts/bench/ghost_exchange.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-}
[ -n "$bin" ] || { [ -x .device/bin/gflow ] && bin=.device/bin || bin=build; }
gflow=$bin/gflow
repeat=${REPEAT:-3}
. scripts/bench/lib.sh # tmp, json, calc
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
wf=workflows/ghost_exchange.yaml

# run RANKS ARGS...: the best run's timings.json fields, "stencil bc ghost total gpts"
run() {
  local ranks=$1 best="" best_total=1e30
  shift
  for _ in $(seq "$repeat"); do
    rm -rf "$tmp/r"
    if [ "$ranks" -eq 1 ]; then
      "$gflow" run "$wf" --quiet --out "$tmp/r" "$@" --set 'decomposition=[1,1]' 2>"$tmp/err"
    else
      OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} mpirun -np "$ranks" --bind-to none \
        -x OMP_NUM_THREADS "$gflow" run "$wf" --quiet --out "$tmp/r" "$@" \
        --set decomposition=auto 2>"$tmp/err"
    fi || { cat "$tmp/err" >&2; continue; }
    local t=$tmp/r/timings.json total
    total=$(sed -n 's/.*"timers": {.*"total_s": \([0-9.e+-]*\)}.*/\1/p' "$t")
    if awk "BEGIN { exit !($total < $best_total) }"; then
      best_total=$total
      best="$(sed -n 's/.*"stencil_s": \([0-9.e+-]*\), "boundary_condition_s": \([0-9.e+-]*\), "ghost_cell_s": \([0-9.e+-]*\), "total_s": \([0-9.e+-]*\)}.*/\1 \2 \3 \4/p' "$t" | head -1) $(json "$t" gpts_per_s)"
    fi
  done
  echo "$best"
}

"$gflow" --version
mpirun --version 2>/dev/null | head -1
backend=${BACKEND:-}
if [ -z "$backend" ]; then
  backend=cpu
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && backend=gpu
fi

if [ "$backend" = gpu ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  copy=$("$bin/copy_bw" | sed -n 's/^device-to-device.*, \([0-9.]*\) GB\/s read+written.*/\1/p')
  echo
  echo "1. GPU, the seed's run: 20000^2 doubles, halo 2, corners, 100 iterations (seconds)"
  echo "   device-to-device copy in this run: $copy GB/s (read + written)"
  echo
  echo "| run | ranks | stencil | boundary condition | ghost cell | total | over one GPU's share | of its stencil | blur GB/s a GPU | of copy |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  echo "| seed, MI210 (published) | 4 | 1.163 | 0.005 | 0.045 | 1.523 | | | | |"
  one_total="" one_stencil=""
  for ranks in ${RANKS_GPU:-1}; do
    for transport in ${TRANSPORTS:-mpi}; do
      [ "$ranks" -gt 1 ] || [ "$transport" = mpi ] || continue # one rank exchanges nothing
      label="gflow"
      [ "$ranks" -eq 1 ] || label="gflow, $transport"
      for overlap in true false; do
        read -r st bc gc total gpts <<<"$(run "$ranks" --backend gpu --timing --set exchange.overlap=$overlap \
          --set exchange.transport=$transport)"
        [ -n "${total:-}" ] || { echo "| $label, overlap $overlap | $ranks | failed | | | | | | | |"; continue; }
        # What splitting costs the loop: its time past one GPU's loop / ranks.
        [ "$ranks" -gt 1 ] || [ -n "$one_total" ] || one_total=$total one_stencil=$st
        over="" of=""
        if [ "$ranks" -gt 1 ] && [ -n "$one_total" ]; then
          over=$(awk "BEGIN { printf \"%.4f\", $total - $one_total / $ranks }")
          of=$(calc "($total - $one_total / $ranks) / ($one_stencil / $ranks)")
        fi
        gbs=$(calc "$gpts * 16 / $ranks")
        echo "| $label, overlap $overlap | $ranks | $st | $bc | $gc | $total | $over | $of | $gbs | $(calc "$gbs / $copy") |"
      done
    done
  done
fi

echo
shape=${CPU_SHAPE:-4004}
echo "2. CPU backend, strong scaling: ${shape}^2 doubles, 100 iterations, $(nproc) cores"
echo
echo "| ranks | overlap | total s | speed-up | efficiency | ghost cell s | ghost share |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
one=""
for ranks in ${RANKS_CPU-1 2 4}; do
  for overlap in true false; do
    threads=$(( $(nproc) / ranks ))
    [ "$threads" -ge 1 ] || threads=1
    read -r st bc gc total gpts <<<"$(OMP_NUM_THREADS=$threads run "$ranks" --backend cpu \
      --threads "$threads" --set "grid.shape=[$shape,$shape]" --set exchange.overlap=$overlap)"
    [ -n "${total:-}" ] || { echo "| $ranks | $overlap | failed | | | | |"; continue; }
    [ -n "$one" ] || one=$total
    echo "| $ranks | $overlap | $total | $(calc "$one / $total") | $(calc "$one / $total / $ranks") | $gc | $(calc "$gc / $total") |"
  done
done
