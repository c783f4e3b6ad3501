#!/usr/bin/env bash
# Builds, here (Debian 12, nvcc 13), x86-64 programs for the H200 machine
# (Ubuntu 24.04, CUDA 13, driver 580, no libyaml or Lua there) into the
# ignored folder .device/:
#   .device/bin/test_backend_gpu   the GPU backend's test, built directly
#   .device/bin/wave2d_sync, wave2d_async_streams, wave2d_async_events, copy_bw,
#               wave2d_gflow_kernel (the baselines, scripts/bench/README.md)
#   .device/bin/gflow              when runner/main.c exists: CMake with
#                                  -DGFLOW_GPU=CUDA -DGFLOW_STATIC_DEPS=ON
#   .device/plugins/*.so           the plugins that build produces
# Everything links cudart, libgomp, libstdc++ and libgcc statically, so the
# programs need only glibc there (checked below). libyaml and Lua come from
# their static archives through GFLOW_STATIC_DEPS.
#   scripts/gpu/build-nvidia.sh [--no-gflow]
# Environment: CUDA_HOME (/usr/local/cuda), GFLOW_CUDA_ARCH (90), JOBS (2),
# GFLOW_CMAKE_ARGS (more -D options for gflow's CMake).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_gflow=1
[[ ${1:-} == --no-gflow ]] && build_gflow=0
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
ARCH=${GFLOW_CUDA_ARCH:-90}
JOBS=${JOBS:-2}
OUT=.device
LIBGOMP_A=$(gcc -print-file-name=libgomp.a)
[[ -f $LIBGOMP_A ]] || { echo "no static libgomp ($LIBGOMP_A)" >&2; exit 1; }
mkdir -p "$OUT/bin" "$OUT/obj"

# sm_90 machine code plus compute_90 PTX (for a newer chip's driver to compile).
GENCODE=(-gencode "arch=compute_$ARCH,code=[sm_$ARCH,compute_$ARCH]")
# shellcheck disable=SC2054 # the commas belong to -Xcompiler
NVFLAGS=(-x cu -std=c++17 -O3 "${GENCODE[@]}" -Xcompiler=-Wall,-Wextra -DGFLOW_HIP_ON_CUDA)
CFLAGS=(-std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -DGFLOW_WITH_GPU -DGFLOW_HIP_ON_CUDA
  -Irunner -Ikernels -Itests -I"$CUDA_HOME/include")
# Static C++/gcc runtimes and libgomp; cudart_static needs dl, rt, pthread.
LINK=(-static-libstdc++ -static-libgcc -L"$CUDA_HOME/lib64" -lcudart_static "$LIBGOMP_A"
  -lpthread -ldl -lrt -lm)

echo "== test_backend_gpu"
"$NVCC" "${NVFLAGS[@]}" --fmad=false -DGFLOW_WITH_GPU -Irunner -Ikernels \
  -c kernels/wave2d.hip -o "$OUT/obj/wave2d_hip.o"
objects=("$OUT/obj/wave2d_hip.o")
for f in runner/backend.c runner/backend_gpu.c runner/error.c kernels/wave2d.c tests/gpu/test_backend_gpu.c; do
  o="$OUT/obj/$(basename "$f" .c).o"
  gcc "${CFLAGS[@]}" -fopenmp -c "$f" -o "$o"
  objects+=("$o")
done
g++ -o "$OUT/bin/test_backend_gpu" "${objects[@]}" "${LINK[@]}"

for b in wave2d_sync wave2d_async_streams wave2d_async_events copy_bw; do
  echo "== $b"
  "$NVCC" "${NVFLAGS[@]}" -Irunner -c "scripts/bench/$b.hip" -o "$OUT/obj/$b.o"
  g++ -o "$OUT/bin/$b" "$OUT/obj/$b.o" "${LINK[@]}"
done
echo "== wave2d_gflow_kernel"
"$NVCC" "${NVFLAGS[@]}" --fmad=false -DGFLOW_WITH_GPU -Irunner -Ikernels \
  -c scripts/bench/wave2d_gflow_kernel.hip -o "$OUT/obj/wave2d_gflow_kernel.o"
g++ -o "$OUT/bin/wave2d_gflow_kernel" "$OUT/obj/wave2d_gflow_kernel.o" "${LINK[@]}"

echo "== reference tools (compare_raw, wave2d_seed)"
for t in compare_raw wave2d_seed; do
  gcc -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE "tests/reference/$t.c" -lm -o "$OUT/bin/$t"
done

if [[ $build_gflow == 1 && -f runner/main.c ]]; then
  echo "== gflow (CMake, GFLOW_GPU=CUDA, static dependencies)"
  # OpenMP_gomp_LIBRARY: FindOpenMP links the static libgomp instead of the .so.
  # shellcheck disable=SC2086
  cmake -S . -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DGFLOW_GPU=CUDA \
    -DGFLOW_STATIC_DEPS=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
    -DCMAKE_CUDA_COMPILER="$NVCC" -DOpenMP_gomp_LIBRARY="$LIBGOMP_A" \
    -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" -DBUILD_TESTING=OFF \
    ${GFLOW_CMAKE_ARGS:-}
  cmake --build "$OUT/build" -j"$JOBS"
  cp "$OUT/build/gflow" "$OUT/bin/gflow"
  mkdir -p "$OUT/plugins"
  find "$OUT/build/plugins" -name '*.so' -exec cp {} "$OUT/plugins/" \; 2> /dev/null || true
fi

# What the programs need at run time there: glibc and the driver, nothing else.
echo "== run-time libraries"
status=0
for p in "$OUT"/bin/*; do
  extra=$(ldd "$p" | awk '{print $1}' |
    grep -Ev '^(linux-vdso\.so|/lib64/ld-linux-x86-64\.so|lib(c|m|dl|rt|pthread)\.so)' || true)
  if [[ -n $extra ]]; then
    echo "$p needs: $extra" >&2
    status=1
  fi
done
ls -la "$OUT/bin"
exit $status
