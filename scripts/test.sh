#!/usr/bin/env bash
# test.sh - the whole test suite: gflow built with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-test/ and its CTest suite (unit tests,
# bad-input corpora, end-to-end wave2d under every schedule, the CLI); then
# valgrind memcheck on a plain build, a minute of fuzzing, and the GPU code's
# compile check. Every stage runs whatever the others did; the summary says
# which passed, failed and were skipped, and the exit status is 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/stages.sh

setup() {
  scripts/setup.sh --deps-only
  # CI installs the test tools as well; elsewhere each stage below runs when
  # its tool is installed and says so when it is not.
  if [ "${CI:-}" = true ]; then
    local missing=() p
    for p in valgrind hdf5-tools libxml2-utils clang-14 libclang-rt-14-dev hipcc libamdhip64-dev python3 slurm-wlm munge; do
      dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
  fi
}

ctest_sanitized() {
  cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_SANITIZE=ON -DGFLOW_GPU=OFF >/dev/null
  cmake --build build-test -j "$(nproc)" >/dev/null
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  (cd build-test && ctest --output-on-failure -j 2)
  # Every tests/test_*.c is a unit test CTest knows (tests/CMakeLists.txt).
  local files registered
  files=$(find tests -maxdepth 1 -name 'test_*.c' | wc -l)
  registered=$(cd build-test && ctest -N -L '^unit$' | grep -c 'Test *#')
  echo "unit tests: $registered registered, $files tests/test_*.c"
  [ "$registered" -ge "$files" ] || { echo "test.sh: $files unit test files but only $registered unit tests registered" >&2; return 1; }
}

# memcheck over a small run and every error path of the bad-input corpora,
# on a build without sanitizers.
valgrind_memcheck() {
  cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_GPU=OFF -DBUILD_TESTING=OFF >/dev/null
  cmake --build build-valgrind -j "$(nproc)" >/dev/null
  tests/integration/valgrind.sh build-valgrind/gflow "$PWD" "$(nproc)"
}

stage "setup (dependencies)" setup
stage "ctest under sanitizers" ctest_sanitized

if command -v valgrind >/dev/null; then
  stage "valgrind memcheck" valgrind_memcheck
elif [ "${CI:-}" = true ]; then
  stage "valgrind memcheck" sh -c 'echo "test.sh: CI needs valgrind" >&2; exit 1'
else
  skip "valgrind memcheck" "valgrind not installed"
fi

# A minute of coverage-guided fuzzing over the loader and planner (clang's
# libFuzzer); any crash, leak or sanitizer report fails the run.
if [ "${CI:-}" = true ] || command -v clang-14 >/dev/null; then
  stage "fuzzing" scripts/fuzz.sh 60
else
  skip "fuzzing" "clang-14 not installed (apt-get install clang-14 libclang-rt-14-dev)"
fi

# Slurm: a one-node cluster started here as root (munged, slurmctld, slurmd
# from a config in a temporary folder, stopped by pid at the end) runs a sweep
# as a job array. A stage of its own, not CTest: it needs root and daemons.
if [ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null && command -v munged >/dev/null; then
  stage "Slurm" tests/integration/slurm.sh build-test/gflow "$PWD"
elif [ "${CI:-}" = true ]; then
  stage "Slurm" sh -c 'echo "test.sh: CI needs root, slurm-wlm and munge" >&2; exit 1'
else
  skip "Slurm" "needs root and apt-get install slurm-wlm munge"
fi

# The GPU code cannot run here, but it must compile: for NVIDIA with nvcc
# (through runner/gf_hip.h) and for AMD with hipcc. CI needs both.
if [ -x "${NVCC:-/usr/local/cuda/bin/nvcc}" ] || [ "${CI:-}" = true ]; then
  stage "GPU compile check, NVIDIA (nvcc)" scripts/gpu/compile-check.sh cuda
else
  skip "GPU compile check, NVIDIA (nvcc)" "nvcc not installed (/usr/local/cuda)"
fi
if command -v hipcc >/dev/null || [ "${CI:-}" = true ]; then
  stage "GPU compile check, AMD (hipcc)" scripts/gpu/compile-check.sh hip
else
  skip "GPU compile check, AMD (hipcc)" "hipcc not installed (apt-get install hipcc libamdhip64-dev)"
fi

stages_summary
