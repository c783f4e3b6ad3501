#!/usr/bin/env bash
# out_of_memory.sh GFLOW REPO - allocation failure is a status: with
# GFLOW_FAIL_ALLOC=N (a build with GFLOW_ALLOC_FAULTS) the N-th allocation
# fails. For every N up to the number of allocations `gflow validate` makes,
# and every N up to the number a short `gflow run` makes (--set included), the
# command ends 0 (the failure hit nothing) or 70 with `out of memory`, never
# a signal, a sanitizer report or another code, and a failed run leaves no
# output under its final name. wave2d.yaml covers the loader, the Lua hooks,
# the planner, the program compiler, the backend and the writer;
# ghost_exchange.yaml validated for 4 ranks covers the decomposition (blocks,
# generated ghost-cell tasks, the kernel split for overlap).
set -uo pipefail
gflow=$1 repo=$2
. "$(dirname "$0")/lib.sh"
wave=$repo/workflows/wave2d.yaml
ghost=$repo/workflows/ghost_exchange.yaml
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1

# check KIND N: one injected failure; prints a FAIL line or nothing.
check() {
  local kind=$1 n=$2 dir=$tmp/out$2 err=$tmp/err.$1.$2 status
  if [ "$kind" = validate ]; then
    GFLOW_FAIL_ALLOC=$n "$gflow" validate "$wave" >/dev/null 2>"$err" && status=0 || status=$?
  elif [ "$kind" = decompose ]; then
    GFLOW_FAIL_ALLOC=$n "$gflow" validate "$ghost" --ranks 4 --set 'grid.shape=[24,24]' \
      >/dev/null 2>"$err" && status=0 || status=$?
  else
    GFLOW_FAIL_ALLOC=$n "$gflow" run "$wave" --set params.nt=8 --backend cpu --quiet \
      --out "$dir" >/dev/null 2>"$err" && status=0 || status=$?
  fi
  if grep -qE 'Sanitizer|runtime error' "$err"; then
    echo "FAIL: $kind N=$n: sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error' "$err")"
  elif [ "$status" -eq 70 ]; then
    grep -q 'out of memory' "$err" || echo "FAIL: $kind N=$n: exit 70 without 'out of memory': $(tail -1 "$err")"
    [ "$(grep -c '^gflow: out of memory' "$err")" -le 1 ] || echo "FAIL: $kind N=$n: reported twice"
    if [ -d "$dir" ] && ls -A "$dir" | grep -qv '^\.'; then
      echo "FAIL: $kind N=$n: failed run left $(ls -A "$dir" | tr '\n' ' ')"
    fi
  elif [ "$status" -ne 0 ]; then
    echo "FAIL: $kind N=$n: exit $status: $(tail -1 "$err")"
  fi
  rm -rf "$dir" "$err"
}

# How many allocations a command makes: the first N whose failure never comes.
count_allocations() {
  local kind=$1 lo=1 hi=64 mid
  injected() {
    if [ "$kind" = validate ]; then
      GFLOW_FAIL_ALLOC=$1 "$gflow" validate "$wave" >/dev/null 2>"$tmp/probe"
    elif [ "$kind" = decompose ]; then
      GFLOW_FAIL_ALLOC=$1 "$gflow" validate "$ghost" --ranks 4 --set 'grid.shape=[24,24]' \
        >/dev/null 2>"$tmp/probe"
    else
      GFLOW_FAIL_ALLOC=$1 "$gflow" run "$wave" --set params.nt=8 --backend cpu --quiet \
        --out "$tmp/count" >/dev/null 2>"$tmp/probe"
    fi
    grep -q 'GFLOW_FAIL_ALLOC' "$tmp/probe"
  }
  while injected $hi; do lo=$hi hi=$((hi * 2)); done
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    if injected $mid; then lo=$mid; else hi=$mid; fi
  done
  rm -rf "$tmp/count"
  echo $lo
}

GFLOW_FAIL_ALLOC=1 "$gflow" validate "$wave" >/dev/null 2>"$tmp/probe"
if ! grep -q 'GFLOW_FAIL_ALLOC' "$tmp/probe"; then
  echo "gflow was built without GFLOW_ALLOC_FAULTS: nothing to test"
  exit 0
fi
nvalidate=$(count_allocations validate)
nrun=$(count_allocations run)
ndecompose=$(count_allocations decompose)
[ "$nvalidate" -gt 50 ] && pass || fail "validate makes only $nvalidate allocations?"
[ "$nrun" -gt 50 ] && pass || fail "run makes only $nrun allocations?"

# The injection points, split over two workers (the machine has two cores).
points() {
  for ((n = 1; n <= nvalidate; n++)); do echo "validate $n"; done
  for ((n = 1; n <= nrun; n++)); do echo "run $n"; done
  for ((n = 1; n <= ndecompose; n++)); do echo "decompose $n"; done
}
points >"$tmp/points"
total=$(wc -l <"$tmp/points")
export -f check
export gflow wave ghost tmp
xargs -P 2 -L 1 bash -c 'check "$0" "$1"' <"$tmp/points" >"$tmp/failures"
nfail=$(wc -l <"$tmp/failures")
cat "$tmp/failures" >&2
failed=$((failed + nfail))
passed=$((passed + total - nfail))
echo "$total injection points: validate 1..$nvalidate, run 1..$nrun, decompose 1..$ndecompose"
finish
