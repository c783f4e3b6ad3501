#!/usr/bin/env bash
# test.sh - builds gflow with AddressSanitizer and UndefinedBehaviorSanitizer
# into build-test/ and runs the whole test suite (unit, bad-input corpus,
# end-to-end wave2d under every schedule) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps-only
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_SANITIZE=ON -DGFLOW_GPU=OFF >/dev/null
cmake --build build-test -j "$(nproc)" >/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd build-test && ctest --output-on-failure -j 2
