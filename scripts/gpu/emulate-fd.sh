#!/usr/bin/env bash
# emulate-fd.sh - tests/gpu/fd_random.cpp: the GPU launchers of wave, heat
# and stencil run on the CPU through HIP-CPU (github.com/ROCm/HIP-CPU, its
# include/, src/ and external/ in HIP_CPU; it needs libtbb-dev) against the
# CPU loops, bit for bit, for a machine without a GPU.
#   HIP_CPU=DIR scripts/gpu/emulate-fd.sh [TRIALS (3000)] [nvcc -D flags, e.g. -DGF_FD_MARCH=8]
# Ends with `N passed, N failed`.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ -n ${HIP_CPU:-} && -f $HIP_CPU/include/hip/hip_runtime.h ]] ||
  { echo "emulate-fd.sh: HIP_CPU must name a HIP-CPU checkout (include/hip/hip_runtime.h)" >&2; exit 64; }
trials=${1:-3000}
shift || true
work=$(mktemp -d /tmp/gflow-emulate-fd.XXXXXX)
trap 'rm -rf "$work"' EXIT
# NDEBUG: HIP-CPU's __forceinline__ is inline only then.
flags=(-O1 -DNDEBUG -ffp-contract=off -Irunner -Ikernels)
for c in wave heat stencil fd; do gcc -std=c11 "${flags[@]}" -c kernels/$c.c -o "$work/$c.o" & done
for h in wave heat stencil; do
  # HIP-CPU's simd-clone attributes warn about every kernel argument
  g++ -std=c++17 "${flags[@]}" -w -I"$HIP_CPU/include" -include hip/hip_runtime.h "$@" \
    -x c++ -c kernels/$h.hip -o "$work/${h}_hip.o" &
done
g++ -std=c++17 "${flags[@]}" -I"$HIP_CPU/include" -c tests/gpu/fd_random.cpp -o "$work/main.o"
wait
g++ "$work"/*.o -o "$work/fd_random" -ltbb -lpthread -lm
"$work/fd_random" "$trials"
