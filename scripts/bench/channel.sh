#!/usr/bin/env bash
# channel.sh - issue 13's memory channel (backend.h, MSCCL++'s MemoryChannel,
# seed 004): the seed's bidirectional copy table at 1 KiB, 1 MiB and 128 MiB (and 64
# and 256 KiB, where packets give way to the put with signal),
# BW = bytes / (time per iteration), through gflow's channel (each iteration
# a put, a signal and a wait, or a put with signal and a wait) and, side by
# side, through hipMemcpyPeerAsync into the other rank's memory (GPU) or an
# MPI exchange (CPU); two ranks (scripts/bench/channel_bench.c), issued one
# by one and, on a GPU, captured into a graph and replayed as the seed does. Then the ghost-cell exchange itself:
# GhostExchange's blur on 2 ranks with exchange.transport mpi and channel.
#   scripts/bench/channel.sh                  # GPU: binaries of scripts/gpu/build-nvidia.sh
#   GPUS=2 scripts/bench/channel.sh           # two GPUs, one per rank (issue 15's figures)
#   BACKEND=cpu BIN=build/bench GFLOW=build/gflow scripts/bench/channel.sh
# Targets (issue 13, two GPUs): the channel at least 0.9 of the peer copy's
# bandwidth at 128 MiB, and its 1 KiB time no worse than the peer copy's. On
# one GPU both ranks share it, so the figures say what IPC on one device and
# the signal/wait kernels cost, not what NVLink gives.
# Environment: BACKEND (gpu), GPUS (1), BIN (.device/bin), GFLOW ($BIN/gflow),
# CHANNEL_BENCH ($BIN/channel_bench), REPEAT (5), SCALE (1: iterations), TIMEOUT (300 s a run).
set -uo pipefail
cd "$(dirname "$0")/../.."
backend=${BACKEND:-gpu}
gpus=${GPUS:-1}
bin=${BIN:-.device/bin}
gflow=${GFLOW:-$bin/gflow}
bench=${CHANNEL_BENCH:-$bin/channel_bench}
repeat=${REPEAT:-5}
scale=${SCALE:-1}
. scripts/bench/lib.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
np2() { timeout "${TIMEOUT:-300}" mpirun -np 2 "$@"; } # a wait that never ends is a timeout

echo "1. bidirectional copy, 2 ranks, $backend, $gpus GPU(s)"
np2 "$bench" --backend "$backend" --gpus "$gpus" --repeat "$repeat" --scale "$scale" ||
  echo "channel_bench failed"
if [ "$backend" = gpu ]; then
  echo
  echo "1b. the same, each loop captured into a graph and replayed (the seed's program does so)"
  np2 "$bench" --backend "$backend" --gpus "$gpus" --repeat "$repeat" --scale "$scale" --graph ||
    echo "channel_bench --graph failed"
fi

echo
echo "2. the ghost-cell exchange on 2 ranks: GhostExchange's blur, loop time, best of $repeat"
# gflow_ms under mpirun: rank 0 writes timings.json
mpi_ms() {
  for _ in $(seq "$repeat"); do
    rm -rf "$tmp/g"
    np2 "$gflow" run workflows/ghost_exchange.yaml --backend "$backend" --quiet \
      --out "$tmp/g" --set 'decomposition=[1,2]' "$@" 2>"$tmp/err" || { cat "$tmp/err" >&2; echo nan; continue; }
    calc "$(json "$tmp/g/timings.json" total_s) * 1000"
    echo
  done | low
}
size=${SIZE:-4004}
[ "$backend" = cpu ] && size=${SIZE:-1004}
printf '%-44s %10s %10s\n' "transport (${size}^2, 100 iterations)" "ms" "ratio"
common=(--set "grid.shape=[$size,$size]" --set check=off)
mpi=$(mpi_ms "${common[@]}" --set exchange.transport=mpi)
printf '%-44s %10.3f %10s\n' "mpi" "$mpi" "1.000"
chan=$(mpi_ms "${common[@]}" --set exchange.transport=channel)
printf '%-44s %10.3f %10s\n' "channel" "$chan" "$(calc "$chan / $mpi")"
