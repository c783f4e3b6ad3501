#!/usr/bin/env bash
# stages.sh REPO - scripts/test.sh's bookkeeping (scripts/stages.sh): a failed
# stage stops only itself, the others still run, and the summary counts what
# happened and names what failed.
set -uo pipefail
repo=$1
. "$(dirname "$0")/lib.sh"

cat >"$tmp/suite.sh" <<EOS
set -uo pipefail
. "$repo/scripts/stages.sh"
fails_midway() { echo before; false; echo "after the failure"; }
touch_it() { touch "$tmp/third-ran"; }
stage "first" true
stage "midway" fails_midway
stage "third" touch_it
skip "fourth" "its tool is not installed"
stage "fifth" sh -c 'exit 3'
stages_summary
EOS
expect_exit 1 "a failed stage fails the suite" -- bash "$tmp/suite.sh"
expect_contains "$out" "stages: 2 passed, 2 failed, 1 skipped" "counts"
expect_contains "$out" "failed: midway, fifth" "names the failed stages"
expect_contains "$out" "before" "a stage runs"
printf '%s' "$out" | grep -qF "after the failure" && fail "a stage went on after a failing command" || pass
[ -e "$tmp/third-ran" ] && pass || fail "the stage after a failed one did not run"
expect_contains "$err" "== fifth: FAILED, exit 3" "says how a stage failed"

cat >"$tmp/green.sh" <<EOS
set -uo pipefail
. "$repo/scripts/stages.sh"
stage "one" true
skip "two" "not here"
stages_summary
EOS
expect_exit 0 "all passed" -- bash "$tmp/green.sh"
expect_contains "$out" "stages: 1 passed, 0 failed, 1 skipped" "counts when green"
printf '%s' "$out" | grep -q "^failed:" && fail "a green suite names failed stages" || pass
finish
