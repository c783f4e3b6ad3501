#!/usr/bin/env bash
# scaling.sh - weak and strong scaling of the GhostExchange seed (f64 blur,
# halo 2, corners) and of wave2d (compute only, f32, 4th order) over MPI ranks,
# one table per workload and kind, every row measured in the same run.
#
#   scripts/bench/scaling.sh                  # GPUs: 1, 2, 4, ... up to the GPUs here
#   RANKS="1 2 4 8" scripts/bench/scaling.sh  # the rank counts to run
#   BACKEND=cpu scripts/bench/scaling.sh      # the CPU backend, small sizes
#
# On the GPU backend every rank takes its own GPU (the node-local rank picks
# it); ranks beyond the GPUs share them, which measures nothing about scaling,
# so the default stops at the GPU count. Ranks are laid out [P, 1], [2, 2],
# [4, 2] (the slow axis first: the exchanged rows are contiguous).
#   weak:   a fixed block per rank (WEAK_GE, WEAK_WAVE cells per axis, default
#           10000, the seed's block on 4 GPUs, and 8192); efficiency t1 / tP;
#   strong: a fixed grid (STRONG_GE, STRONG_WAVE, default 20000 and 16384);
#           efficiency t1 / (P tP).
# The time is the loop's (timings.json total_s, the slowest rank's), the best
# of REPEAT (default 3) runs; the ghost-cell column is the exchange's busy
# time on the slowest rank (timers.ghost_cell_s), with overlap on (schedule
# auto). Binaries: BIN (default .device/bin when it holds gflow, else build).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-}
[ -n "$bin" ] || { [ -x .device/bin/gflow ] && bin=.device/bin || bin=build; }
gflow=$bin/gflow
repeat=${REPEAT:-3}
. scripts/bench/lib.sh # tmp, json, calc
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

backend=${BACKEND:-}
gpus=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L | wc -l)
fi
[ -n "$backend" ] || { [ "$gpus" -gt 0 ] && backend=gpu || backend=cpu; }
if [ -z "${RANKS:-}" ]; then
  RANKS=1
  limit=$gpus
  [ "$backend" = cpu ] && limit=$(( $(nproc) >= 4 ? 4 : $(nproc) ))
  for p in 2 4 8; do [ "$p" -le "$limit" ] && RANKS="$RANKS $p"; done
fi
if [ "$backend" = cpu ]; then
  weak_ge=${WEAK_GE:-1000} weak_wave=${WEAK_WAVE:-1024}
  strong_ge=${STRONG_GE:-2000} strong_wave=${STRONG_WAVE:-2048}
else
  weak_ge=${WEAK_GE:-10000} weak_wave=${WEAK_WAVE:-8192}
  strong_ge=${STRONG_GE:-20000} strong_wave=${STRONG_WAVE:-16384}
fi

dims() { # P -> "d0 d1"
  case $1 in 1) echo "1 1" ;; 2) echo "2 1" ;; 4) echo "2 2" ;; 8) echo "4 2" ;;
    *) echo "$1 1" ;; esac
}

# run P SHAPE0 SHAPE1 WORKFLOW ARGS...: "total_s ghost_s" of the best run
run() {
  local p=$1 s0=$2 s1=$3 wf=$4 best="" best_total=1e30 d0 d1 threads
  shift 4
  read -r d0 d1 <<<"$(dims "$p")"
  threads=$(( $(nproc) / p ))
  [ "$threads" -ge 1 ] || threads=1
  for _ in $(seq "$repeat"); do
    rm -rf "$tmp/r"
    local cmd=("$gflow" run "$wf" --backend "$backend" --quiet --out "$tmp/r" --timing
      --set "grid.shape=[$s0,$s1]" --set "decomposition=[$d0,$d1]" --set schedule=auto "$@")
    [ "$backend" = cpu ] && cmd+=(--threads "$threads")
    if [ "$p" -eq 1 ]; then
      OMP_NUM_THREADS=$threads "${cmd[@]}" 2>"$tmp/err"
    else
      OMP_NUM_THREADS=$threads mpirun -np "$p" --bind-to none -x OMP_NUM_THREADS "${cmd[@]}" \
        2>"$tmp/err"
    fi || { sed -n 1,5p "$tmp/err" >&2; continue; }
    local t=$tmp/r/timings.json total ghost
    total=$(json "$t" total_s)
    ghost=$(sed -n 's/.*"timers": {.*"ghost_cell_s": \([0-9.e+-]*\),.*/\1/p' "$t" | head -1)
    if awk "BEGIN { exit !($total < $best_total) }"; then
      best_total=$total
      best="$total ${ghost:-0}"
    fi
  done
  echo "$best"
}

# table KIND NAME WORKFLOW HALO SIZE ARGS...
table() {
  local kind=$1 name=$2 wf=$3 halo=$4 size=$5 one=""
  shift 5
  echo
  echo "$name, $kind scaling ($backend backend, $([ "$kind" = weak ] &&
    echo "${size}^2 cells a rank" || echo "${size}^2 cells in all"), best of $repeat)"
  echo
  echo "| ranks | layout | grid | loop s | ghost cell s | ghost / loop | efficiency |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for p in $RANKS; do
    local d0 d1 s0 s1 total ghost eff
    read -r d0 d1 <<<"$(dims "$p")"
    if [ "$kind" = weak ]; then
      s0=$((size * d0 + 2 * halo)) s1=$((size * d1 + 2 * halo))
    else
      s0=$((size + 2 * halo)) s1=$((size + 2 * halo))
    fi
    read -r total ghost <<<"$(run "$p" "$s0" "$s1" "$wf" "$@")"
    [ -n "${total:-}" ] || { echo "| $p | [$d0, $d1] | ${s0}x${s1} | failed | | | |"; continue; }
    [ -n "$one" ] || one=$total
    if [ "$kind" = weak ]; then eff=$(calc "$one / $total"); else eff=$(calc "$one / ($p * $total)"); fi
    echo "| $p | [$d0, $d1] | ${s0}x${s1} | $(awk "BEGIN { printf \"%.4f\", $total }") |" \
      "$(awk "BEGIN { printf \"%.4f\", $ghost }") | $(calc "$ghost / $total") | $eff |"
  done
}

"$gflow" --version
mpirun --version 2>/dev/null | head -1
[ "$gpus" -gt 0 ] && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sort | uniq -c
echo "ranks: $RANKS; $(nproc) cores"
table weak GhostExchange workflows/ghost_exchange.yaml 2 "$weak_ge"
table strong GhostExchange workflows/ghost_exchange.yaml 2 "$strong_ge"
table weak "wave2d (compute only, 200 steps)" workflows/wave2d_compute.yaml 2 "$weak_wave" \
  --set params.nt=200
table strong "wave2d (compute only, 200 steps)" workflows/wave2d_compute.yaml 2 "$strong_wave" \
  --set params.nt=200
