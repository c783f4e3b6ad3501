#!/usr/bin/env bash
# Compile-checks the GPU code on a machine without a GPU (for CI): gflow, the
# GPU backend's test and the baselines (scripts/bench/), built through CMake
# (cmake/gpu.cmake holds the GPU compilers' flags, cmake/sources.txt the
# sources) for NVIDIA (nvcc, sm_90, through runner/gf_hip.h) and for AMD
# (Debian's hipcc, gfx90a), plus the build without GPU support; warnings are
# errors (CMAKE_COMPILE_WARNING_AS_ERROR). Everything is linked; nothing runs
# on a GPU here.
#   scripts/gpu/compile-check.sh            both paths
#   scripts/gpu/compile-check.sh cuda|hip   one of them
# Environment: CUDA_HOME (/usr/local/cuda), NVCC, HIPCC, JOBS (nproc).
set -euo pipefail
cd "$(dirname "$0")/../.."

which=${1:-all}
work=$(mktemp -d /tmp/gflow-compile-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
HIPCC=${HIPCC:-hipcc}
JOBS=${JOBS:-$(nproc)}

# build NAME TARGETS -- CMAKE_OPTIONS...: configure and build into $work/NAME;
# on failure, the log's end.
build() {
  local name=$1 targets=() log=$work/$1.log
  shift
  while [[ $1 != -- ]]; do targets+=("$1"); shift; done
  shift
  if ! { cmake -S . -B "$work/$name" -DCMAKE_BUILD_TYPE=Release -DCMAKE_COMPILE_WARNING_AS_ERROR=ON "$@" &&
    cmake --build "$work/$name" -j "$JOBS" --target "${targets[@]}"; } >"$log" 2>&1; then
    echo FAILED
    tail -n 40 "$log" >&2
    exit 1
  fi
  echo ok
}
step() { printf '%-60s' "$1"; }
# plugin_outside BUILD GPU_COMPILER FLAGS_OPTION LIBS_OPTION: the README's one
# line for a plugin with a GPU launcher (plugins/sponge.*), with BUILD's
# gflow-config; the result must export gflow_plugin and define the launcher.
plugin_outside() {
  local config=$work/$1/gflow-config dir=$work/$1-plugin log=$work/$1-plugin.log
  mkdir -p "$dir"
  # shellcheck disable=SC2046
  if ! { "$2" $("$config" "$3") -c plugins/sponge.hip -o "$dir/sponge_gpu.o" &&
    cc -O2 -Werror -Wall -Wextra -DSPONGE_GPU $("$config" --cflags) plugins/sponge.c "$dir/sponge_gpu.o" \
      $("$config" --libs "$4") -o "$dir/sponge.so" &&
    nm -D "$dir/sponge.so" >"$dir/dynamic.txt" && grep -q ' D gflow_plugin$' "$dir/dynamic.txt" &&
    nm "$dir/sponge.so" >"$dir/symbols.txt" && grep -q ' sponge_launch_gpu$' "$dir/symbols.txt"; } >"$log" 2>&1; then
    echo FAILED
    tail -n 40 "$log" >&2
    exit 1
  fi
  echo ok
}

step "C, no GPU support: gflow, test_backend_gpu"
build nogpu gflow test_backend_gpu -- -DGFLOW_GPU=OFF

if [[ $which == all || $which == cuda ]]; then
  step "NVIDIA (CUDA $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), sm_90): gflow, GPU tests, bench, nvtx, sponge"
  build cuda gflow test_backend_gpu fd_random bench nvtx_count gflow_sponge -- -DGFLOW_GPU=CUDA -DCMAKE_CUDA_COMPILER="$NVCC" \
    -DCMAKE_CUDA_ARCHITECTURES=90-real
  step "NVIDIA: the GPU plugin outside the tree (gflow-config)"
  plugin_outside cuda "$NVCC" --nvcc-flags --cuda-libs
fi

if [[ $which == all || $which == hip ]]; then
  if ! command -v "$HIPCC" > /dev/null; then
    echo "hipcc not found (apt-get install hipcc libamdhip64-dev)" >&2
    exit 1
  fi
  step "AMD (hipcc, gfx90a): gflow, GPU test, bench, sponge"
  build hip gflow test_backend_gpu bench gflow_sponge -- -DGFLOW_GPU=HIP -DGFLOW_HIPCC="$(command -v "$HIPCC")" \
    -DGFLOW_HIP_ARCH=gfx90a
  step "AMD: the GPU plugin outside the tree (gflow-config)"
  HCC_AMDGPU_TARGET=gfx90a plugin_outside hip "$HIPCC" --hipcc-flags --hip-libs
fi
echo "compile check passed"
