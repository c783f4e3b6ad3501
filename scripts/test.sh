#!/usr/bin/env bash
# test.sh - the whole test suite: gflow built with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-test/ and its CTest suite (unit tests,
# bad-input corpora, end-to-end wave2d under every schedule, the CLI); then
# valgrind memcheck on a plain build, a minute of fuzzing, and the GPU code's
# compile check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps-only
# CI installs the test tools as well; elsewhere each stage below runs when its
# tool is installed and says so when it is not.
if [ "${CI:-}" = true ]; then
  missing=()
  for p in valgrind clang-14 libclang-rt-14-dev hipcc libamdhip64-dev python3; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_SANITIZE=ON -DGFLOW_GPU=OFF >/dev/null
cmake --build build-test -j "$(nproc)" >/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd build-test && ctest --output-on-failure -j 2)
passed=1 skipped=0

# memcheck over a small run and every error path of the bad-input corpora,
# on a build without sanitizers.
if command -v valgrind >/dev/null; then
  cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_GPU=OFF -DBUILD_TESTING=OFF >/dev/null
  cmake --build build-valgrind -j "$(nproc)" >/dev/null
  tests/integration/valgrind.sh build-valgrind/gflow "$PWD" "$(nproc)"
  passed=$((passed + 1))
else
  echo "test.sh: valgrind not installed; memcheck skipped"
  skipped=$((skipped + 1))
fi

# A minute of coverage-guided fuzzing over the loader and planner (clang's
# libFuzzer); any crash, leak or sanitizer report fails the run.
if [ "${CI:-}" = true ] || command -v clang-14 >/dev/null; then
  scripts/fuzz.sh 60
  passed=$((passed + 1))
else
  echo "test.sh: clang-14 not installed; fuzzing skipped (apt-get install clang-14 libclang-rt-14-dev)"
  skipped=$((skipped + 1))
fi

# Slurm: a one-node cluster started here as root (munged, slurmctld, slurmd
# from a config in a temporary folder, stopped by pid at the end) runs a sweep
# as a job array. A stage of its own, not CTest: it needs root and daemons.
# CI installs the packages on this line:
[ "${CI:-}" = true ] && ! command -v slurmctld >/dev/null && apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
if [ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null && command -v munged >/dev/null; then
  tests/integration/slurm.sh build-test/gflow "$PWD"
  passed=$((passed + 1))
else
  echo "test.sh: Slurm test skipped (needs root and apt-get install slurm-wlm munge)"
  skipped=$((skipped + 1))
fi

# The GPU code cannot run here, but it must compile: for NVIDIA with nvcc
# (through runner/gf_hip.h) and for AMD with hipcc. CI installs both.
checks=()
[ -x "${NVCC:-/usr/local/cuda/bin/nvcc}" ] && checks+=(cuda)
command -v hipcc >/dev/null && checks+=(hip)
if [ "${CI:-}" = true ] && [ ${#checks[@]} -ne 2 ]; then
  echo "test.sh: CI needs both nvcc and hipcc for the GPU compile check" >&2
  exit 1
fi
for c in "${checks[@]}"; do scripts/gpu/compile-check.sh "$c"; done
passed=$((passed + ${#checks[@]}))
if [ ${#checks[@]} -ne 2 ]; then
  echo "test.sh: GPU compile check skipped for what is not installed (nvcc: /usr/local/cuda, hipcc: apt-get install hipcc libamdhip64-dev)"
  skipped=$((skipped + 2 - ${#checks[@]}))
fi

# Every stage above stops the script when it fails (set -e): reaching here
# means all of them passed.
echo "(stages: ctest under sanitizers, valgrind memcheck, fuzzing, Slurm, GPU compile check for NVIDIA and for AMD)"
echo "stages: $passed passed, 0 failed, $skipped skipped"
