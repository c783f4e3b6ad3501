#!/usr/bin/env bash
# ceilings-3d.sh - 3-D order 8 on this GPU beside what its walk could move
# at most, in one call (one device session): each figure a fraction of a
# device-to-device copy that the same program measures.
#   1. ring_move: the ring of kernels/fd_gpu.h moving its planes and
#      computing nothing, for its slot, fewer halo rows and none, f32 and
#      f64 (what any kernel on the ring runs at most);
#   2. march_copy --shapes: the box copied by a march with no halo and no
#      shared memory, from blocks reading runs of 16 vectors of a row up to
#      a whole row, marches of 45, 100 and 400 planes (what any tile that
#      walks the box down axis 0 runs at most, if a run's length sets it);
#   3. kernels.sh --gpu: gflow's heat, declared stencil and wave, 3-D order
#      8, f32 and f64.
# Binaries from scripts/gpu/build-nvidia.sh in .device/bin, or BIN=DIR;
# REPS (3): best of how many runs each.
#   scripts/bench/ceilings-3d.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.device/bin}
reps=${REPS:-3}
for p in ring_move march_copy copy_bw gflow; do
  [[ -x $bin/$p ]] || { echo "ceilings-3d.sh: $bin/$p is missing (scripts/gpu/build-nvidia.sh builds it)" >&2; exit 66; }
done
echo "== ring_move: the ring's planes moving, computing nothing"
"$bin/ring_move" --reps "$reps"
echo "== march_copy: the box marched down axis 0, no halo"
"$bin/march_copy" --march 45,100,400 --shapes --reps "$reps"
echo "== gflow, 3-D order 8 (kernels.sh)"
BIN=$bin REPEAT=$reps \
  VARIANTS="heat:f32:8:3 stencil:f32:8:3 wave:f32:8:3 heat:f64:8:3 stencil:f64:8:3 wave:f64:8:3" \
  scripts/bench/kernels.sh --gpu
