#!/usr/bin/env bash
# checkpoint.sh GFLOW REPO - checkpoint and restart end to end, on the CPU
# backend: under every schedule a run checkpointed every K steps and killed
# (SIGKILL, as a crash), one stopped by SIGUSR1 (exit 75) and one stopped by
# SIGTERM after a checkpoint are each restarted and finish bit-identical to an
# uninterrupted run (data and sidecar); so does a workflow whose Lua hook
# keeps state (save_state/restore_state), while the same hook without them is
# refused. A corrupted or mismatched checkpoint is refused with its message;
# restarting a complete run has nothing to do; --restart-if-present starts
# afresh or continues; a fresh run removes a stale checkpoint.
set -uo pipefail
gflow=$1 repo=$2
. "$(dirname "$0")/lib.sh"
wave=$repo/workflows/wave2d.yaml
noisy=$repo/tests/integration/noisy.yaml
# 192 x 192, 480 steps: long enough to be interrupted after its first checkpoint
# batches of 7 planes (staged directly on the CPU backend): a checkpoint
# or a stop flushes the open batch, a restart leaves out what the first run wrote
base=(--backend cpu --set 'grid.shape=[192,192]' --set checkpoint.every=40 --quiet
  --set loop.tasks.1.output.batch=7)

# same DIR REF WHAT [FILE]: the outputs of DIR are REF's, bit for bit, and
# complete; so is the sidecar, but for the free memory its "device" quotes.
same() {
  local f=${4:-array_out.dat}
  cmp -s "$1/$f" "$2/$f" && pass || fail "$3: $f differs from the uninterrupted run's"
  cmp -s <(grep -v '"device"' "$1/$f.json") <(grep -v '"device"' "$2/$f.json") && pass ||
    fail "$3: $f.json differs from the uninterrupted run's"
  expect_contains "$(cat "$1/run.json" 2>/dev/null)" '"complete": true' "$3: run.json complete"
}

# start DIR ARGS...: gflow run in the background ($pid), stderr in DIR.err
start() {
  local dir=$1
  shift
  "$gflow" run "$@" --out "$dir" 2>"$dir.err" &
  pid=$!
}

# signal SIGNAL: sends SIGNAL to the run $pid while SIGSTOP holds it where the
# wait before found it (SIGCONT then delivers SIGNAL), so that a fast build
# cannot finish its run in between. A Release build runs these 480 steps in
# about 0.25 s; a wait, then 0.2 s more, then the signal had let it finish.
signal() {
  kill -s STOP "$pid" 2>/dev/null
  kill -s "$1" "$pid" 2>/dev/null
  kill -s CONT "$pid" 2>/dev/null
}


for schedule in sync streams events graph auto; do
  args=("$wave" "${base[@]}" --set "schedule=$schedule")
  ref=$tmp/ref-$schedule
  expect_exit 0 "$schedule: uninterrupted" -- "$gflow" run "${args[@]}" --out "$ref"

  # a crash after a periodic checkpoint
  dir=$tmp/kill-$schedule
  start "$dir" "${args[@]}"
  if wait_for "$dir/checkpoint/checkpoint.txt"; then
    signal KILL
    wait "$pid" 2>/dev/null
    step=$(sed -n 's/^step //p' "$dir/checkpoint/checkpoint.txt")
    [ "$step" -gt 0 ] && [ "$step" -lt 480 ] && [ $((step % 40)) -eq 0 ] && pass ||
      fail "$schedule: checkpoint at step '$step'"
    expect_exit 0 "$schedule: restart after SIGKILL" -- "$gflow" run "${args[@]}" --restart "$dir"
    same "$dir" "$ref" "$schedule: killed at a checkpoint, restarted"
    expect_contains "$(cat "$dir/run.json")" "\"restarted_from_step\": $step," \
      "$schedule: run.json says from which step"
  else
    fail "$schedule: no checkpoint appeared: $(cat "$dir.err")"
  fi

  # SIGUSR1: a checkpoint at the next step boundary, then exit 75
  dir=$tmp/usr1-$schedule
  start "$dir" "${args[@]}"
  wait_for "$dir/.array_out.dat.partial*" && sleep 0.05
  signal USR1
  wait "$pid" && status=0 || status=$?
  err=$(cat "$dir.err")
  [ "$status" -eq 75 ] && pass || fail "$schedule: SIGUSR1: exit $status, expected 75: $err"
  step=$(sed -n 's/^step //p' "$dir/checkpoint/checkpoint.txt" 2>/dev/null)
  expect_contains "$err" "gflow: checkpointed at step $step (SIGUSR1) and stopped; outputs hold steps 0 to $((step - 1))" \
    "$schedule: SIGUSR1 message"
  expect_contains "$(cat "$dir/array_out.dat.json")" '"interrupted_by": "SIGUSR1"' \
    "$schedule: SIGUSR1 sidecar"
  expect_exit 0 "$schedule: restart after SIGUSR1" -- "$gflow" run "${args[@]}" --restart "$dir"
  same "$dir" "$ref" "$schedule: SIGUSR1, restarted"
  rm -rf "$tmp/kill-$schedule" "$dir"
done

# SIGTERM after a periodic checkpoint: the outputs get their final names
# (complete: false); the restart takes them back and continues from the
# checkpoint, rewriting the steps after it. Without FILE: the checkpoint names it.
args=("$wave" "${base[@]}" --set schedule=events)
dir=$tmp/term
start "$dir" "${args[@]}"
wait_for "$dir/checkpoint/checkpoint.txt"
signal TERM
wait "$pid" && status=0 || status=$?
[ "$status" -eq 143 ] && pass || fail "SIGTERM after a checkpoint: exit $status: $(cat "$dir.err")"
expect_exit 0 "restart after SIGTERM, no FILE" -- "$gflow" run --restart "$dir" --quiet
same "$dir" "$tmp/ref-events" "SIGTERM after a checkpoint, restarted"
[ -z "$(ls -A "$dir" | grep partial)" ] && pass || fail "temporaries left: $(ls -A "$dir")"

# A complete run: nothing to do, with or without a checkpoint of it.
expect_exit 0 "restart a complete run" -- "$gflow" run "${args[@]}" --restart "$dir"
expect_contains "$err" "gflow: $dir: the run is complete (480 steps); nothing to do" "nothing to do"
small=("$wave" --backend cpu --set 'grid.shape=[32,32]' --quiet)
expect_exit 0 "a run without checkpoints" -- "$gflow" run "${small[@]}" --out "$tmp/small"
[ ! -e "$tmp/small/checkpoint" ] && pass || fail "a run without checkpoint: has a checkpoint folder"
expect_exit 0 "restart a complete run without checkpoints" -- \
  "$gflow" run "${small[@]}" --restart "$tmp/small"
expect_contains "$err" "the run is complete" "nothing to do without a checkpoint"

# ---- a Lua hook that keeps state -------------------------------------------------
nref=$tmp/noisy-ref
expect_exit 0 "stateful hook: uninterrupted" -- "$gflow" run "$noisy" --quiet --out "$nref"
dir=$tmp/noisy
start "$dir" "$noisy" --quiet
wait_for "$dir/checkpoint/checkpoint.txt" # the hook has been called: its state changed
signal USR1
wait "$pid" && status=0 || status=$?
[ "$status" -eq 75 ] && pass || fail "stateful hook: SIGUSR1: exit $status: $(cat "$dir.err")"
ls "$dir"/checkpoint/step-*/hooks.lua >/dev/null 2>&1 && pass || fail "stateful hook: no hooks.lua"
expect_exit 0 "stateful hook: restart" -- "$gflow" run "$noisy" --quiet --restart "$dir"
same "$dir" "$nref" "stateful hook" u.dat
# without save_state: the checkpoint says the state changed, the restart refuses
unsaved=(--set "hooks.noisy.lua=$repo/tests/integration/noisy_unsaved.lua" --quiet)
dir=$tmp/unsaved
start "$dir" "$noisy" "${unsaved[@]}"
wait_for "$dir/checkpoint/checkpoint.txt"
signal USR1
wait "$pid"
expect_contains "$(cat "$dir.err")" "define no save_state(), so a restart from it will be refused" \
  "unsaved hook state: a note at the checkpoint"
expect_exit 65 "unsaved hook state: restart refused" -- "$gflow" run "$noisy" "${unsaved[@]}" --restart "$dir"
expect_contains "$err" "the hooks kept state that the checkpoint in $dir/checkpoint could not save" \
  "unsaved hook state: message"

# ---- refused checkpoints ----------------------------------------------------------
# a hook file edited after the checkpoint
cp "$repo/tests/integration/noisy.lua" "$tmp/edited.lua"
edited=(--set "hooks.noisy.lua=$tmp/edited.lua" --quiet)
dir=$tmp/edited
start "$dir" "$noisy" "${edited[@]}"
wait_for "$dir/checkpoint/checkpoint.txt"
signal KILL
wait "$pid" 2>/dev/null
echo "-- edited" >>"$tmp/edited.lua"
expect_exit 65 "a hook file edited since" -- "$gflow" run "$noisy" "${edited[@]}" --restart "$dir"
expect_contains "$err" "hook file $tmp/edited.lua changed since the checkpoint ($dir/checkpoint/checkpoint.txt)" \
  "a hook file edited since: message"
# the partial output removed (the hook file as it was)
cp "$repo/tests/integration/noisy.lua" "$tmp/edited.lua"
rm -f "$dir"/.u.dat.partial*
expect_exit 66 "the partial output removed" -- "$gflow" run "$noisy" "${edited[@]}" --restart "$dir"
expect_contains "$err" "the checkpoint's output u.dat is gone (neither $dir/.u.dat.partial nor $dir/u.dat is there)" \
  "the partial output removed: message"

dir=$tmp/bad
start "$dir" "${args[@]}"
wait_for "$dir/.array_out.dat.partial*" && sleep 0.05
signal USR1
wait "$pid"
expect_exit 65 "another workflow" -- "$gflow" run "${args[@]}" --set params.cfl=0.3 --restart "$dir"
expect_contains "$err" "the workflow differs from the one checkpointed ($dir/checkpoint/workflow.yaml): resolved line" \
  "another workflow: message"
expect_contains "$err" "line 9 is '  cfl: 0.29999999999999999' here and '  cfl: 0.40000000000000002' there" \
  "another workflow: the line"
expect_exit 64 "--restart and another --out" -- "$gflow" run "${args[@]}" --restart "$dir" --out "$tmp/x"
rank=$(ls "$dir"/checkpoint/step-*/rank-00000.bin)
cp "$rank" "$tmp/rank.bin"
size=$(stat -c %s "$rank")
printf '\x55' | dd of="$rank" bs=1 seek=$((size - 4000)) conv=notrunc 2>/dev/null
expect_exit 66 "a corrupted field" -- "$gflow" run "${args[@]}" --restart "$dir"
expect_contains "$err" "the checkpoint's $rank is corrupt: field 'V' instance 0 does not match its checksum" \
  "a corrupted field: message"
cp "$tmp/rank.bin" "$rank"
sed -i 's/^step /step 1/' "$dir/checkpoint/checkpoint.txt"
expect_exit 66 "a corrupted checkpoint.txt" -- "$gflow" run "${args[@]}" --restart "$dir"
expect_contains "$err" "$dir/checkpoint/checkpoint.txt is corrupt (its checksum does not match); remove $dir/checkpoint to start afresh" \
  "a corrupted checkpoint.txt: message"
expect_exit 66 "nothing to restart" -- "$gflow" run "${args[@]}" --restart "$tmp/none"
expect_contains "$err" "$tmp/none holds no checkpoint" "nothing to restart: message"

# ---- one batch script for the first run and the requeued ones ----------------------
dir=$tmp/requeue
start "$dir" "${args[@]}" --restart-if-present
wait_for "$dir/.array_out.dat.partial*" && sleep 0.05
signal USR1
wait "$pid" && status=0 || status=$?
[ "$status" -eq 75 ] && pass || fail "--restart-if-present, first run: exit $status"
expect_exit 0 "--restart-if-present continues" -- "$gflow" run "${args[@]}" --restart-if-present --out "$dir"
same "$dir" "$tmp/ref-events" "--restart-if-present"
expect_exit 0 "--restart-if-present, complete" -- "$gflow" run "${args[@]}" --restart-if-present --out "$dir"
expect_contains "$err" "nothing to do" "--restart-if-present, complete: nothing to do"

# A fresh run into a folder with a checkpoint removes it (and its partial files).
dir=$tmp/stale
start "$dir" "${args[@]}"
wait_for "$dir/checkpoint/checkpoint.txt"
signal KILL
wait "$pid" 2>/dev/null
expect_exit 0 "a fresh run over a stale checkpoint" -- "$gflow" run "${args[@]}" --out "$dir"
expect_contains "$err" "note: $dir held a checkpoint at step " "stale checkpoint: note"
same "$dir" "$tmp/ref-events" "a fresh run over a stale checkpoint"
[ -z "$(ls -A "$dir" | grep partial)" ] && pass || fail "stale partial files left: $(ls -A "$dir")"
finish
