#!/usr/bin/env bash
# compare-outputs.sh - two gflow binaries on every workflow in workflows/ under
# every schedule: each output file of the new one must be byte for byte the old
# one's (a refactor's promise). Ends with `N passed, N failed`.
#   scripts/compare-outputs.sh OLD_GFLOW NEW_GFLOW [cpu|gpu]
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_GFLOW NEW_GFLOW [cpu|gpu]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") backend=${3:-cpu}
cd "$(dirname "$0")/.."
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$out/gflow-compare-outputs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
for wf in workflows/*.yaml; do
  for schedule in sync streams events graph auto; do
    for which in old new; do
      gflow=$old
      [ $which = new ] && gflow=$new
      small=()
      [ "$(basename "$wf")" = ghost_exchange.yaml ] &&
        small=(--set 'grid.shape=[404,404]' --set decomposition=auto) # the seed's size is a benchmark
      if ! "$gflow" run "$wf" --backend "$backend" --quiet --out "$tmp/$which" \
        --set schedule=$schedule "${small[@]}" 2>"$tmp/err"; then
        echo "FAIL: $which $wf $schedule: $(tail -1 "$tmp/err")"
        failed=$((failed + 1))
      fi
    done
    for f in "$tmp"/old/*.dat; do
      [ -e "$f" ] || continue
      name=$(basename "$f")
      if cmp -s "$f" "$tmp/new/$name"; then
        passed=$((passed + 1))
      else
        echo "FAIL: $wf $schedule: $name differs"
        failed=$((failed + 1))
      fi
    done
    rm -rf "$tmp/old" "$tmp/new"
  done
done
echo "outputs: $passed passed, $failed failed"
[ $failed -eq 0 ]
