#!/usr/bin/env bash
# Builds, here (Debian 12, nvcc 13), x86-64 programs for the H200 machine
# (Ubuntu 24.04, CUDA 13, driver 580, no libyaml or Lua there) into the
# ignored folder .device/, through CMake (-DGFLOW_GPU=CUDA
# -DGFLOW_STATIC_DEPS=ON; cmake/gpu.cmake holds the GPU flags, cmake/sources.txt
# the sources) in .device/build:
#   .device/bin/gflow              the runner (skipped with --no-gflow)
#   .device/bin/test_backend_gpu   the GPU backend's test
#   .device/bin/wave2d_sync, wave2d_async_streams, wave2d_async_events,
#               wave2d_graph, wave2d_batched, copy_bw, march_copy, ring_move, pool_bench (the baselines,
#               scripts/bench/README.md)
#   .device/bin/compare_raw, wave2d_seed (tests/reference/, for check.sh)
#   .device/plugins/*.so           the plugins (skipped with --no-gflow)
# With --gflow-only, gflow alone (scripts/bench/fd-tiles.sh builds variants
# of its kernels so).
# Everything links cudart, libgomp, libstdc++ and libgcc statically, so the
# programs need only glibc there (checked below). libyaml and Lua come from
# their static archives through GFLOW_STATIC_DEPS.
#   scripts/gpu/build-nvidia.sh [--no-gflow | --gflow-only]
# Environment: CUDA_HOME (/usr/local/cuda), GFLOW_CUDA_ARCH (90), JOBS (2),
# GFLOW_CMAKE_ARGS (more -D options for gflow's CMake), GFLOW_CUDA_FLAGS
# (nvcc's, e.g. "-DGF_FD_MARCH=64"), GFLOW_DEVICE_OUT (.device: the folder
# written).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_gflow=1 only_gflow=0
[[ ${1:-} == --no-gflow ]] && build_gflow=0
[[ ${1:-} == --gflow-only ]] && only_gflow=1
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
ARCH=${GFLOW_CUDA_ARCH:-90}
JOBS=${JOBS:-2}
OUT=${GFLOW_DEVICE_OUT:-.device}
LIBGOMP_A=$(gcc -print-file-name=libgomp.a)
[[ -f $LIBGOMP_A ]] || { echo "no static libgomp ($LIBGOMP_A)" >&2; exit 1; }
mkdir -p "$OUT/bin"

targets=(test_backend_gpu fd_random bench nvtx_count)
[[ $build_gflow == 1 ]] && targets+=(gflow gflow_heat2d gflow_sponge)
[[ $only_gflow == 1 ]] && targets=(gflow)
echo "== CMake (GFLOW_GPU=CUDA, static dependencies): ${targets[*]}"
# ARCH: sm_ARCH machine code plus compute_ARCH PTX (for a newer chip's driver
# to compile). OpenMP_gomp_LIBRARY: FindOpenMP links the static libgomp
# instead of the .so.
# shellcheck disable=SC2086
cmake -S . -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DGFLOW_GPU=CUDA \
  -DGFLOW_STATIC_DEPS=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
  -DCMAKE_CUDA_COMPILER="$NVCC" -DOpenMP_gomp_LIBRARY="$LIBGOMP_A" \
  -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
  -DCMAKE_MODULE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" -DBUILD_TESTING=ON \
  -DCMAKE_CUDA_FLAGS="${GFLOW_CUDA_FLAGS:-}" ${GFLOW_CMAKE_ARGS:-}
cmake --build "$OUT/build" -j"$JOBS" --target "${targets[@]}"
if [[ $only_gflow == 1 ]]; then
  cp "$OUT/build/gflow" "$OUT/bin/gflow"
  exit 0
fi
cp "$OUT/build/tests/gpu/test_backend_gpu" "$OUT/build/tests/gpu/fd_random" "$OUT/build/tests/gpu/libnvtx_count.so" "$OUT/build/bench/"* "$OUT/bin/"
if [[ $build_gflow == 1 ]]; then
  cp "$OUT/build/gflow" "$OUT/bin/gflow"
  mkdir -p "$OUT/plugins"
  find "$OUT/build/plugins" -name '*.so' -exec cp {} "$OUT/plugins/" \;
fi

echo "== reference tools (compare_raw, wave2d_seed)"
for t in compare_raw wave2d_seed; do
  gcc -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE "tests/reference/$t.c" -lm -o "$OUT/bin/$t"
done

# What the programs need at run time there: glibc, the driver and Open MPI's
# libmpi.so.40 (the H200 machine has Open MPI 4.1.6, the same ABI as Debian's
# 4.1.4) with what it brings along, nothing else.
echo "== run-time libraries"
status=0
libmpi=$(ldd "$OUT/bin/gflow" | awk '$1 == "libmpi.so.40" {print $3}')
mpi_closure=$([ -n "$libmpi" ] && ldd "$libmpi" | awk '{print $1}' | sed 's/\.so.*//' |
  sort -u | paste -sd'|')
for p in "$OUT"/bin/* "$OUT"/plugins/*.so; do
  [[ -e $p ]] || continue
  extra=$(ldd "$p" | awk '{print $1}' |
    grep -Ev '^(linux-vdso\.so|/lib64/ld-linux-x86-64\.so|lib(c|m|dl|rt|pthread)\.so|libmpi\.so)' |
    grep -Ev "^(${mpi_closure:-none})\.so" || true)
  if [[ -n $extra ]]; then
    echo "$p needs: $extra" >&2
    status=1
  fi
done
ls -la "$OUT/bin"
exit $status
