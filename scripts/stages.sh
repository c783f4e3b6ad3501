# stages.sh - test.sh's bookkeeping, sourced: each stage runs to its end
# whatever the others did, and the summary counts what really happened.
#
#   stage NAME COMMAND...   runs COMMAND under `set -e` in a subshell: passed or failed
#   skip NAME WHY           a stage that could not run here, and why
#   stages_summary          prints what ran and what failed; returns 1 if any failed
stages_passed=()
stages_failed=()
stages_skipped=()

stage() {
  local name=$1 start=$SECONDS status
  shift
  echo "== $name"
  # Not in an `if`: there bash would ignore the subshell's set -e.
  (
    set -e
    "$@"
  )
  status=$?
  if [ "$status" -eq 0 ]; then
    stages_passed+=("$name")
    echo "== $name: passed ($((SECONDS - start)) s)"
  else
    stages_failed+=("$name")
    echo "== $name: FAILED, exit $status ($((SECONDS - start)) s)" >&2
  fi
}

skip() {
  stages_skipped+=("$1")
  echo "== $1: skipped: $2"
}

stages_summary() {
  local s
  echo
  for s in ${stages_passed[@]+"${stages_passed[@]}"}; do echo "  passed   $s"; done
  for s in ${stages_failed[@]+"${stages_failed[@]}"}; do echo "  FAILED   $s"; done
  for s in ${stages_skipped[@]+"${stages_skipped[@]}"}; do echo "  skipped  $s"; done
  echo "stages: ${#stages_passed[@]} passed, ${#stages_failed[@]} failed, ${#stages_skipped[@]} skipped"
  if [ ${#stages_failed[@]} -gt 0 ]; then
    printf 'failed: %s' "${stages_failed[0]}"
    printf ', %s' "${stages_failed[@]:1}"
    echo
    return 1
  fi
  return 0
}
