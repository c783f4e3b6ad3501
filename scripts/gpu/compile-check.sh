#!/usr/bin/env bash
# Compile-checks the GPU code on a machine without a GPU (for CI): every file
# of the GPU backend, its test and the baselines, for NVIDIA (nvcc, sm_90,
# through runner/gf_hip.h) and for AMD (Debian's hipcc, gfx90a), plus the
# build without GPU support; warnings are errors. Links the test both ways.
# Nothing runs on a GPU here.
#   scripts/gpu/compile-check.sh            both paths
#   scripts/gpu/compile-check.sh cuda|hip   one of them
set -euo pipefail
cd "$(dirname "$0")/../.."

which=${1:-all}
work=$(mktemp -d /tmp/gflow-compile-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
HIPCC=${HIPCC:-hipcc}
CFLAGS=(-std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Irunner -Ikernels -Itests)
BENCH=(wave2d_sync wave2d_async_streams wave2d_async_events copy_bw)
GPU_C=(runner/backend.c runner/backend_gpu.c runner/error.c kernels/wave2d.c tests/gpu/test_backend_gpu.c)

step() { printf '%-60s' "$1"; }
ok() { echo ok; }

step "C, no GPU support"
for f in "${GPU_C[@]}"; do gcc "${CFLAGS[@]}" -fopenmp -c "$f" -o "$work/$(basename "$f").nogpu.o"; done
ok

if [[ $which == all || $which == cuda ]]; then
  defs=(-DGFLOW_WITH_GPU -DGFLOW_HIP_ON_CUDA)
  step "NVIDIA: C against gf_hip.h (CUDA $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"
  for f in "${GPU_C[@]}"; do
    gcc "${CFLAGS[@]}" "${defs[@]}" -I"$CUDA_HOME/include" -fopenmp -c "$f" -o "$work/$(basename "$f").cuda.o"
  done
  ok
  step "NVIDIA: kernels/wave2d.hip for sm_90"
  "$NVCC" -x cu -std=c++17 -arch=sm_90 -O3 --fmad=false -Werror all-warnings \
    -Xcompiler=-Wall,-Wextra,-Werror "${defs[@]}" -Irunner -Ikernels \
    -c kernels/wave2d.hip -o "$work/wave2d.cuda.o"
  ok
  step "NVIDIA: link test_backend_gpu"
  g++ -o "$work/test_backend_gpu.cuda" "$work"/*.c.cuda.o "$work/wave2d.cuda.o" \
    -L"$CUDA_HOME/lib64" -lcudart_static -fopenmp -ldl -lrt -lpthread -lm
  ok
  for b in "${BENCH[@]}"; do
    step "NVIDIA: scripts/bench/$b.hip"
    "$NVCC" -x cu -std=c++17 -arch=sm_90 -O3 -Werror all-warnings -Xcompiler=-Wall,-Wextra,-Werror \
      -DGFLOW_HIP_ON_CUDA -Irunner -c "scripts/bench/$b.hip" -o "$work/$b.cuda.o"
    ok
  done
  step "NVIDIA: scripts/bench/wave2d_gflow_kernel.hip"
  "$NVCC" -x cu -std=c++17 -arch=sm_90 -O3 --fmad=false -Werror all-warnings \
    -Xcompiler=-Wall,-Wextra,-Werror "${defs[@]}" -Irunner -Ikernels \
    -c scripts/bench/wave2d_gflow_kernel.hip -o "$work/wave2d_gflow_kernel.cuda.o"
  ok
fi

if [[ $which == all || $which == hip ]]; then
  if ! command -v "$HIPCC" > /dev/null; then
    echo "hipcc not found (apt-get install hipcc libamdhip64-dev)" >&2
    exit 1
  fi
  defs=(-DGFLOW_WITH_GPU -D__HIP_PLATFORM_AMD__)
  export HCC_AMDGPU_TARGET=gfx90a # no GPU probe (rocm_agent_enumerator)
  step "AMD: C against /usr/include/hip"
  for f in "${GPU_C[@]}"; do
    gcc "${CFLAGS[@]}" "${defs[@]}" -fopenmp -c "$f" -o "$work/$(basename "$f").hip.o"
  done
  ok
  step "AMD: kernels/wave2d.hip for gfx90a"
  "$HIPCC" --offload-arch=gfx90a -O3 -ffp-contract=off -Wall -Wextra -Werror -DGFLOW_WITH_GPU \
    -Irunner -Ikernels -c kernels/wave2d.hip -o "$work/wave2d.hip.o"
  ok
  step "AMD: link test_backend_gpu"
  g++ -o "$work/test_backend_gpu.hip" "$work"/*.c.hip.o "$work/wave2d.hip.o" -lamdhip64 -fopenmp -lm
  ok
  for b in "${BENCH[@]}"; do
    step "AMD: scripts/bench/$b.hip"
    "$HIPCC" --offload-arch=gfx90a -O3 -Wall -Wextra -Werror -Irunner -c "scripts/bench/$b.hip" \
      -o "$work/$b.amd.o"
    ok
  done
  step "AMD: scripts/bench/wave2d_gflow_kernel.hip"
  "$HIPCC" --offload-arch=gfx90a -O3 -ffp-contract=off -Wall -Wextra -Werror "${defs[@]}" \
    -Irunner -Ikernels -c scripts/bench/wave2d_gflow_kernel.hip -o "$work/wave2d_gflow_kernel.amd.o"
  ok
fi
echo "compile check passed"
