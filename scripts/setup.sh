#!/usr/bin/env bash
# setup.sh - installs what gflow needs from Debian 12, then configures and
# builds it into build/. The GPU backend is built when a GPU and its compiler
# are found (nvcc + an NVIDIA driver, or hipcc + /dev/kfd); otherwise gflow is
# built for the CPU backend alone. Override with GFLOW_GPU=OFF|CUDA|HIP.
#
#   scripts/setup.sh              # then: build/gflow run workflows/wave2d.yaml
#   scripts/setup.sh --deps-only  # install the packages, build nothing
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libyaml-dev liblua5.4-dev libpng-dev libhdf5-dev graphviz libopenmpi-dev
  openmpi-bin libhdf5-openmpi-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ "${1:-}" = "--deps-only" ] && exit 0

gpu=${GFLOW_GPU:-}
if [ -z "$gpu" ]; then
  gpu=OFF
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if [ -x "$nvcc" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    gpu=CUDA
  elif command -v hipcc >/dev/null 2>&1 && [ -e /dev/kfd ]; then
    gpu=HIP
  fi
fi
echo "setup: GPU backend: $gpu"
cuda_flags=()
[ "$gpu" = CUDA ] && cuda_flags=(-DCMAKE_CUDA_COMPILER="${nvcc:-/usr/local/cuda/bin/nvcc}")
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGFLOW_GPU="$gpu" "${cuda_flags[@]}" >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
echo "setup: built build/gflow ($(build/gflow --version))"
