# lib.sh - assertions for the integration scripts: each prints what failed and
# the script ends with `N passed, N failed` and a matching exit status. A
# script gets a folder $tmp, removed when it exits (unless it says it made
# its own, and its own trap, with own_tmp=1 before sourcing this).
if [ -z "${own_tmp:-}" ]; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/gflow-test.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
fi
passed=0
failed=0
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }
pass() { passed=$((passed + 1)); }

# expect_exit CODE DESCRIPTION -- COMMAND...: runs COMMAND, keeps stdout/stderr in $out/$err.
expect_exit() {
  local code=$1 what=$2
  shift 3
  out=$("$@" 2>"$tmp/stderr") && status=0 || status=$?
  err=$(cat "$tmp/stderr")
  if [ "$status" -eq "$code" ]; then pass; else fail "$what: exit $status, expected $code; stderr: $err"; fi
}

# expect_contains HAYSTACK NEEDLE DESCRIPTION
expect_contains() {
  # a here-string, not a pipe: grep -q stops reading at the first match, and
  # under pipefail the writer's SIGPIPE would fail a long haystack
  if grep -qF -- "$2" <<<"$1"; then pass; else fail "$3: missing '$2' in: $1"; fi
}

# wait_for PATTERN [SECONDS]: waits until a file matches PATTERN (a glob)
# while the background job $pid runs (at most SECONDS, default 60); fails
# when none appears.
wait_for() {
  for _ in $(seq $((${2:-60} * 50))); do
    compgen -G "$1" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  compgen -G "$1" >/dev/null
}

# interrupt_run GLOB ERRFILE COMMAND...: runs COMMAND in the background as
# $pid (its stderr into ERRFILE) until a file matching GLOB exists (its loop
# runs), half a second more, then sends it SIGINT and waits; $status is its
# exit status.
interrupt_run() {
  local glob=$1 errfile=$2
  shift 2
  set -m # job control: a background job gets SIGINT delivered, not ignored
  "$@" 2>"$errfile" &
  pid=$!
  set +m
  wait_for "$glob" 30
  sleep 0.5
  kill -s INT "$pid"
  wait "$pid" && status=0 || status=$?
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
