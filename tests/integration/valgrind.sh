#!/usr/bin/env bash
# valgrind.sh GFLOW REPO [JOBS] - memcheck over a small wave2d run (raw and hdf5), a run with
# checkpoints and a stateful Lua hook, and over
# every error path of the bad-input corpora: zero errors and zero definite or
# indirect leaks. GFLOW must be a build without sanitizers.
set -uo pipefail
gflow=$1 repo=$2 jobs=${3:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export gflow tmp

# One memcheck: CASE EXPECTED_STATUS ARGS... -> a line in $tmp/verdicts
memcheck() {
  local name=$1 want=$2 log
  shift 2
  log=$(mktemp "$tmp/vg.XXXXXX")
  valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --track-origins=yes --log-file="$log" \
    "$gflow" "$@" >/dev/null 2>"$log.err"
  local status=$?
  if [ $status -eq 99 ] || [ -s "$log" ]; then
    echo "FAIL: $name: valgrind reports: $(head -20 "$log")"
  elif [ $status -ne "$want" ]; then
    echo "FAIL: $name: exit $status, expected $want: $(head -3 "$log.err")"
  else
    echo "pass: $name"
  fi
}
export -f memcheck

{
  printf '%s\0' "wave2d 32x32 run|0|run|$repo/workflows/wave2d.yaml|--backend|cpu|--threads|2|--set|grid.shape=[32,32]|--out|$tmp/small|--quiet"
  printf '%s\0' "wave2d 32x32 hdf5 run|0|run|$repo/workflows/wave2d.yaml|--backend|cpu|--threads|2|--set|grid.shape=[32,32]|--set|loop.tasks.1.output.format=hdf5|--out|$tmp/small-hdf5|--quiet"
  printf '%s\0' "checkpoints and a stateful hook|0|run|$repo/tests/integration/noisy.yaml|--set|loop.steps=100|--set|loop.tasks.1.output.planes=10|--out|$tmp/noisy|--quiet"
  printf '%s\0' "wave2d validate|0|validate|$repo/workflows/wave2d.yaml"
  printf '%s\0' "seed events dag|0|dag|$repo/workflows/wave2d_seed_events.yaml"
  printf '%s\0' "kernels|0|kernels"
  printf '%s\0' "missing file|66|validate|$tmp/none.yaml"
  printf '%s\0' "bad --set|65|validate|$repo/workflows/wave2d.yaml|--set|grid.shap=[1]"
  for f in "$repo"/tests/bad/*.yaml "$repo"/tests/bad_plan/*.yaml; do
    printf '%s\0' "${f#"$repo"/tests/}|65|validate|$f"
  done
} | xargs -0 -P "$jobs" -I{} bash -c 'IFS="|" read -r -a a <<<"$1"; memcheck "${a[@]}"' _ {} >"$tmp/verdicts"

grep '^FAIL' "$tmp/verdicts" >&2
passed=$(grep -c '^pass' "$tmp/verdicts")
failed=$(grep -c '^FAIL' "$tmp/verdicts")
echo "valgrind memcheck: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
