#!/usr/bin/env bash
# fuzz.sh [SECONDS] [JOBS] - builds the libFuzzer target tests/fuzz/fuzz_workflow.c
# (YAML bytes -> loader -> planner, under ASan + UBSan) with clang into
# build-fuzz/ (CMake with -DGFLOW_FUZZ=ON), seeds a working corpus from every workflow and test input of the
# repository, fuzzes for SECONDS (default 60) with JOBS parallel workers
# (default 1), and ends with one summary line. Exits non-zero on any crash,
# leak, timeout or sanitizer report; the input that caused it is left in
# build-fuzz/artifacts/STAMP/ (minimise it with `build-fuzz/fuzz_workflow
# -minimize_crash=1 -runs=10000 FILE`, then keep it as tests/fuzz/regressions/NAME.yaml).
#
#   scripts/fuzz.sh 60          # what CI runs
#   scripts/fuzz.sh 3600 2      # the long run: an hour on two cores; the corpus
#                               # in build-fuzz/corpus/ grows across runs
#
# Needs clang with libFuzzer (Debian: apt-get install clang-14 libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
jobs=${2:-1}
out=build-fuzz

cc=${CC_FUZZ:-}
if [ -z "$cc" ]; then
  for c in clang-14 clang; do command -v "$c" >/dev/null && cc=$c && break; done
fi
if [ -z "$cc" ] && [ "${CI:-}" = true ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null
  cc=clang-14
fi
if [ -z "$cc" ]; then
  echo "fuzz.sh: clang not found (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
fi

# ---- build: CMake with GFLOW_FUZZ (the whole core with coverage, ASan + UBSan) ----
mkdir -p "$out/logs"
buildlog=$out/logs/build.log
cmake -S . -B "$out" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGFLOW_FUZZ=ON \
  -DGFLOW_GPU=OFF -DBUILD_TESTING=ON >"$buildlog" 2>&1 &&
  cmake --build "$out" -j "$(nproc)" --target fuzz_workflow >>"$buildlog" 2>&1 ||
  { tail -n 40 "$buildlog" >&2; echo "fuzz.sh: build failed ($buildlog)" >&2; exit 1; }

# ---- corpus: the kept corpus, plus every workflow and test input as seeds ----
corpus=$out/corpus
stamp=$(date +%Y%m%d-%H%M%S)
artifacts=$out/artifacts/$stamp # this run's crashes only
mkdir -p "$corpus" "$out/seeds" "$artifacts" "$out/logs"
rm -f "$out/seeds"/*
for f in workflows/*.yaml tests/bad/*.yaml tests/bad_plan/*.yaml tests/good/*.yaml \
  tests/fuzz/seeds/*.yaml tests/fuzz/regressions/*.yaml; do
  [ -e "$f" ] && cp "$f" "$out/seeds/$(echo "$f" | tr / _)"
done
# One seed that exercises the `--set` part of an input.
{
  cat workflows/wave2d.yaml
  printf '# --set\ngrid.shape=[64,48]\nschedule=events\nparams.cfl=0.3\nloop.tasks.1.stream=io[0]\n'
} >"$out/seeds/wave2d_with_overrides.yaml"
seeds=$(ls "$out/seeds" | wc -l)
before=$(ls "$corpus" | wc -l)

# ---- fuzz ----
log=$out/logs/fuzz-$stamp.log
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
opts=(-max_len=65536 -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds"
  -dict=tests/fuzz/yaml.dict -artifact_prefix="$artifacts/" -print_final_stats=1
  -close_fd_mask=2) # hooks' print() writes to stderr; crash reports still reach the log
start=$(date +%s)
set +e
if [ "$jobs" -gt 1 ]; then
  # -fork: one supervisor, JOBS children sharing one corpus; stats in one log.
  "$out/fuzz_workflow" "${opts[@]}" -fork="$jobs" -ignore_crashes=0 -ignore_timeouts=0 \
    -ignore_ooms=0 "$corpus" "$out/seeds" >"$log" 2>&1
else
  "$out/fuzz_workflow" "${opts[@]}" "$corpus" "$out/seeds" >"$log" 2>&1
fi
rc=$?
set -e
elapsed=$(($(date +%s) - start))

# ---- report ----
after=$(ls "$corpus" | wc -l)
if [ "$jobs" -gt 1 ]; then # -fork: the supervisor's `#EXECS: cov: ...` lines count all jobs
  execs=$(grep -oE '^#[0-9]+:' "$log" | tr -d '#:' | tail -1)
else
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
fi
execs=${execs:-0}
cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
crashes=$(find "$artifacts" -type f | wc -l)
grep -q -E '^==[0-9]+==ERROR|runtime error:|SUMMARY: |ERROR: libFuzzer' "$log" && [ "$crashes" -eq 0 ] && crashes=1
rate=$((elapsed > 0 ? execs / elapsed : execs))
echo "fuzz.sh: log $log; crash inputs go to $artifacts/"
tail -n 25 "$log" | grep -E '^(#|stat::|==|SUMMARY|INFO: fuzzed|MS:|artifact_prefix|Test unit)' || true
if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
  echo "fuzz.sh: FAILED: $execs executions in ${elapsed}s ($rate/s), corpus $before -> $after" \
    "(+$seeds seeds), coverage ${cov:-?} edges ${ft:-?} features, $crashes crash(es), libFuzzer exit $rc"
  ls -1 "$artifacts"/* 2>/dev/null || true
  exit 1
fi
echo "fuzz.sh: ok: $execs executions in ${elapsed}s ($rate/s), corpus $before -> $after" \
  "(+$seeds seeds), coverage ${cov:-?} edges ${ft:-?} features, 0 crashes"
