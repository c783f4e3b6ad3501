#!/usr/bin/env bash
# faults.sh GFLOW REPO - hostile inputs and faults through the gflow command:
# input limits, Lua hooks that run away, a file size limit (a full disk), an
# output file removed underneath, SIGINT and SIGTERM, and the numerical check.
# Each asserts the exit code, the exact message and what the output folder
# holds afterwards: nothing under a final name unless the sidecar says what.
set -uo pipefail
gflow=$1 repo=$2
. "$(dirname "$0")/lib.sh"
wave=$repo/workflows/wave2d.yaml
runaway=$repo/tests/integration/runaway.yaml

# expect_files DIR "NAMES..." DESCRIPTION: the folder holds exactly these names.
expect_files() {
  local have
  have=$(cd "$1" 2>/dev/null && ls -A | tr '\n' ' ')
  if [ "$have" = "$2" ]; then pass; else fail "$3: $1 holds '$have', expected '$2'"; fi
}

# expect_last_line TEXT DESCRIPTION: the last line of $err.
expect_last_line() {
  local last
  last=$(printf '%s\n' "$err" | tail -1)
  if [ "$last" = "$1" ]; then pass; else fail "$2: last line '$last', expected '$1'"; fi
}

# ---- input limits ------------------------------------------------------------
truncate -s 17M "$tmp/big.yaml"
expect_exit 65 "17 MiB file" -- "$gflow" validate "$tmp/big.yaml"
expect_last_line "gflow: $tmp/big.yaml: workflow file is 17825792 bytes, more than the limit of 16 MiB" \
  "17 MiB file"
out=$(head -c 17M /dev/zero | "$gflow" validate /dev/stdin 2>&1 >/dev/null) && status=0 || status=$?
[ "$status" -eq 65 ] && pass || fail "17 MiB pipe: exit $status"
[ "$out" = "gflow: /dev/stdin: workflow file is more than 16777216 bytes, the limit of 16 MiB" ] &&
  pass || fail "17 MiB pipe: '$out'"
# root, gflow, 1, name, t, x and the sequence come first: the 100001st node is
# item 99993, at column 5 + 2 * 99993.
{
  printf 'gflow: 1\nname: t\nx: ['
  yes '0,' | head -n 99999 | tr -d '\n'
  printf '0]\n'
} >"$tmp/nodes.yaml"
expect_exit 65 "100000 nodes" -- "$gflow" validate "$tmp/nodes.yaml"
first=$(printf '%s\n' "$err" | head -1)
[ "$first" = "gflow: $tmp/nodes.yaml:3:199991: the workflow has more than 100000 YAML nodes" ] &&
  pass || fail "100000 nodes: '${first:0:200}'"

# ---- Lua hooks that run away ---------------------------------------------------
# The file's limit, then the command line's over it; no output keeps a name.
expect_exit 70 "spinning hook" -- "$gflow" run "$runaway" --backend cpu --out "$tmp/spin" --quiet
expect_last_line "gflow: hook 'spin' stopped: it exceeded its limit of 2000000 instructions (task 'runaway', step 3)" \
  "spinning hook"
expect_files "$tmp/spin" "" "spinning hook leaves nothing"
expect_exit 70 "--lua-instructions" -- "$gflow" run "$runaway" --backend cpu --out "$tmp/spin" \
  --quiet --lua-instructions 50000
expect_last_line "gflow: hook 'spin' stopped: it exceeded its limit of 50000 instructions (task 'runaway', step 3)" \
  "--lua-instructions wins over the file"
expect_exit 70 "default instruction limit" -- "$gflow" run "$runaway" --backend cpu --out "$tmp/spin" \
  --quiet --set 'limits={}'
expect_last_line "gflow: hook 'spin' stopped: it exceeded its limit of 100000000 instructions (task 'runaway', step 3)" \
  "default instruction limit"
expect_exit 70 "allocating hook" -- "$gflow" run "$runaway" --backend cpu --out "$tmp/hog" --quiet \
  --set loop.tasks.2.hook=hog --lua-memory 4194304
expect_last_line "gflow: hook 'hog' stopped: it exceeded its memory limit of 4194304 bytes (task 'runaway', step 3)" \
  "allocating hook"
expect_files "$tmp/hog" "" "allocating hook leaves nothing"
expect_exit 65 "hook file that never loads" -- "$gflow" validate "$runaway" \
  --set hooks.spin.lua=../hooks/spin_load.lua --lua-instructions 5000
expect_contains "$err" "gflow: --set hooks.spin.lua=../hooks/spin_load.lua:1:16: $repo/tests/integration/../hooks/spin_load.lua stopped while loading: it exceeded its limit of 5000 instructions" \
  "hook file that never loads"
expect_exit 64 "--lua-memory abc" -- "$gflow" validate "$runaway" --lua-memory abc
expect_contains "$err" "gflow: --lua-memory takes a positive integer, not 'abc'" "--lua-memory abc"
expect_exit 65 "--lua-memory 5" -- "$gflow" validate "$runaway" --lua-memory 5
expect_contains "$err" "gflow: --set limits.lua_memory=5:1:19: lua_memory must be between 1048576 and 1099511627776, got 5" \
  "--lua-memory 5"

# ---- a full disk, as a file size limit -----------------------------------------
# 64 x 64 f32 planes of 16 KiB: with 1024 KiB allowed, plane 64 is the first
# write past the limit. gflow ignores SIGXFSZ, so the write fails with EFBIG.
small=(run "$wave" --backend cpu --set 'grid.shape=[64,64]' --quiet)
expect_exit 74 "file size limit mid-run" -- bash -c 'ulimit -f 1024; exec "$@"' - "$gflow" \
  "${small[@]}" --out "$tmp/fsize"
expect_last_line "gflow: cannot write plane 64 of $tmp/fsize/array_out.dat: File too large (the file size limit, ulimit -f, is reached)" \
  "file size limit mid-run"
expect_files "$tmp/fsize" "" "file size limit mid-run leaves nothing"
# Planes 2..39 fit; the file's full size (160 planes) does not.
expect_exit 74 "file size limit at the end" -- bash -c 'ulimit -f 1024; exec "$@"' - "$gflow" \
  "${small[@]}" --set 'loop.tasks.1.when=n > 1 and n < 40' --out "$tmp/fsize2"
expect_last_line "gflow: cannot size $tmp/fsize2/array_out.dat to 2621440 bytes: File too large (the file size limit, ulimit -f, is reached)" \
  "file size limit at the end"
expect_files "$tmp/fsize2" "" "file size limit at the end leaves nothing"

# ---- an output folder that cannot be made ----------------------------------------
touch "$tmp/plain"
expect_exit 73 "output folder is a file" -- "$gflow" "${small[@]}" --out "$tmp/plain"
expect_last_line "gflow: cannot create output folder $tmp/plain: Not a directory" \
  "output folder is a file"
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
  mkdir "$tmp/readonly" && chmod 555 "$tmp/readonly"
  expect_exit 73 "read-only output folder" -- "$gflow" "${small[@]}" --out "$tmp/readonly"
  expect_contains "$err" "gflow: cannot create $tmp/readonly/.array_out.dat.partial-" \
    "read-only output folder"
  expect_contains "$err" ": Permission denied" "read-only output folder"
fi

# ---- signals and a file removed underneath ------------------------------------------
# A long CPU run (1024 x 1024, 2560 steps) that snapshots every 16th step; the
# test waits until the loop runs (its temporary output exists), then acts.
long=(run "$wave" --backend cpu --set 'grid.shape=[1024,1024]' --set 'loop.tasks.1.when=n % 16 == 2'
  --quiet)
start_long() { # OUTDIR: starts gflow in the background as $pid, waits for its loop
  set -m # job control: a background job gets SIGINT delivered, not ignored
  "$gflow" "${long[@]}" --out "$1" 2>"$tmp/long.err" &
  pid=$!
  set +m
  for _ in $(seq 300); do
    compgen -G "$1/.array_out.dat.partial-*" >/dev/null && return 0
    sleep 0.1
  done
  fail "the long run never started its loop: $(cat "$tmp/long.err")"
}

# The planes a run stopped before step N holds: 2, 18, 34, ... below N, as
# the sidecar lists them ($planes) and as the message sums them up ($summary).
planes_before() {
  local n=$1 p ranges="" count=0 last=0
  for ((p = 2; p < n; p += 16)); do
    ranges+="${ranges:+, }[$p, $p]"
    count=$((count + 1)) last=$p
  done
  planes="[$ranges]"
  if [ $count -eq 0 ]; then
    summary="holds no planes"
  elif [ $count -le 3 ]; then
    summary="planes $planes"
  else
    summary="holds $count planes from 2 to $last (array_out.dat.json lists them)"
  fi
}

for signal in INT TERM; do
  [ "$signal" = INT ] && code=130 || code=143
  start_long "$tmp/sig$signal"
  sleep 1
  kill -s "$signal" "$pid"
  wait "$pid" && status=0 || status=$?
  err=$(cat "$tmp/long.err")
  [ "$status" -eq "$code" ] && pass || fail "SIG$signal: exit $status, expected $code; stderr: $err"
  last=$(printf '%s\n' "$err" | tail -1)
  step=$(printf '%s' "$last" | sed -nE "s/^gflow: interrupted by SIG$signal at step ([0-9]+); .*/\1/p")
  if [ -z "$step" ]; then
    fail "SIG$signal: last line '$last'"
    continue
  fi
  planes_before "$step"
  want="gflow: interrupted by SIG$signal at step $step; outputs hold steps 0 to $((step - 1)): array_out.dat $summary"
  [ "$last" = "$want" ] && pass || fail "SIG$signal: '$last', expected '$want'"
  expect_files "$tmp/sig$signal" "array_out.dat array_out.dat.json run.json timings.json " "SIG$signal outputs"
  size=$(stat -c %s "$tmp/sig$signal/array_out.dat" 2>/dev/null)
  [ "$size" = $((2560 * 1024 * 1024 * 4)) ] && pass || fail "SIG$signal: array_out.dat is $size bytes"
  meta=$(cat "$tmp/sig$signal/array_out.dat.json" 2>/dev/null)
  expect_contains "$meta" '"complete": false' "SIG$signal sidecar complete"
  expect_contains "$meta" "\"steps_run\": $step," "SIG$signal sidecar steps_run"
  expect_contains "$meta" "\"interrupted_at_step\": $step," "SIG$signal sidecar step"
  expect_contains "$meta" "\"interrupted_by\": \"SIG$signal\"" "SIG$signal sidecar signal"
  expect_contains "$meta" "\"valid_planes\": $planes," "SIG$signal sidecar planes"
  expect_contains "$(cat "$tmp/sig$signal/timings.json" 2>/dev/null)" "\"steps\": $step," \
    "SIG$signal timings steps"
  rm -rf "$tmp/sig$signal"
done

# Two signals in quick succession (as `timeout` sends, to gflow and to its
# process group, or a Ctrl-C typed twice): the second changes nothing, the
# outputs so far are still written, marked incomplete.
start_long "$tmp/sig2"
sleep 1
kill -s INT "$pid"
kill -s INT "$pid"
wait "$pid" && status=0 || status=$?
err=$(cat "$tmp/long.err")
[ "$status" -eq 130 ] && pass || fail "two SIGINTs: exit $status, expected 130; stderr: $err"
expect_contains "$err" "gflow: interrupted by SIGINT at step " "two SIGINTs: message"
expect_files "$tmp/sig2" "array_out.dat array_out.dat.json run.json timings.json " "two SIGINTs outputs"
meta=$(cat "$tmp/sig2/array_out.dat.json" 2>/dev/null)
expect_contains "$meta" '"complete": false' "two SIGINTs sidecar complete"
expect_contains "$meta" '"valid_planes": [[2, 2]' "two SIGINTs: at least one valid plane"
rm -rf "$tmp/sig2"
# timeout signals gflow and its process group: gflow hears it twice.
# (a run of many seconds on any machine: compute only, 1024^2 x 20000 steps)
longer=(run "$repo/workflows/wave2d_compute.yaml" --backend cpu --set 'grid.shape=[1024,1024]'
  --set params.nt=20000 --quiet)
timeout --preserve-status -s INT 3 "$gflow" "${longer[@]}" --out "$tmp/timeout" 2>"$tmp/long.err" &&
  status=0 || status=$?
[ "$status" -eq 130 ] && pass || fail "timeout -s INT: exit $status; stderr: $(cat "$tmp/long.err")"
expect_contains "$(cat "$tmp/timeout/final.dat.json" 2>/dev/null)" '"complete": false' \
  "timeout -s INT: sidecar"
rm -rf "$tmp/timeout"

# ---- the output folder is locked for the run ----------------------------------------
# A second run into the folder of a running one is refused with the first's
# pid; once the first has finished, a run there succeeds; a lock left by a
# killed run (SIGKILL) is free, since flock dies with its holder.
start_long "$tmp/locked"
expect_exit 73 "second run into a locked folder" -- "$gflow" "${small[@]}" --out "$tmp/locked"
expect_contains "$err" "gflow: $tmp/locked is in use by gflow pid $pid (started " "locked folder: pid"
expect_contains "$err" "); wait for it or choose another --out" "locked folder: advice"
kill -s INT "$pid"
wait "$pid" && status=0 || status=$?
[ "$status" -eq 130 ] && pass || fail "the locked folder's holder: exit $status"
expect_exit 0 "a run after the holder finished" -- "$gflow" "${small[@]}" --out "$tmp/locked"
expect_files "$tmp/locked" "array_out.dat array_out.dat.json run.json timings.json " "the lock is removed"
start_long "$tmp/killed"
kill -s KILL "$pid"
wait "$pid" 2>/dev/null
[ -e "$tmp/killed/.gflow.lock" ] && pass || fail "a killed run leaves its lock file"
expect_exit 0 "a run into a killed run's folder" -- "$gflow" "${small[@]}" --out "$tmp/killed"
rm -rf "$tmp/locked" "$tmp/killed"

# ---- free space on the output file system ---------------------------------------------
# A 4 MiB tmpfs (as root, or in a user namespace) cannot take the seed's 160 MiB.
seed=(run "$wave" --backend cpu --quiet)
in_small_fs() { # DIR COMMAND...: runs COMMAND with a 4 MiB tmpfs mounted at DIR
  local dir=$1
  shift
  if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=4m tmpfs "$dir" 2>/dev/null; then
    "$@"
    local s=$?
    umount "$dir"
    return $s
  fi
  unshare --user --map-root-user --mount bash -c 'mount -t tmpfs -o size=4m tmpfs "$1" || exit 99; shift; exec "$@"' - "$dir" "$@"
}
mkdir -p "$tmp/small"
if in_small_fs "$tmp/small" true; then
  expect_exit 73 "outputs larger than the free space" -- in_small_fs "$tmp/small" "$gflow" "${seed[@]}" \
    --out "$tmp/small/wave2d"
  expect_last_line "gflow: outputs need 160.0 MiB in $tmp/small/wave2d/, 4.0 MiB are free; free space or pass --force" \
    "outputs larger than the free space"
  # --force writes anyway: the disk fills, as it would have.
  expect_exit 74 "--force on a small file system" -- in_small_fs "$tmp/small" "$gflow" "${seed[@]}" \
    --out "$tmp/small/wave2d" --force
  expect_contains "$err" "of $tmp/small/wave2d/array_out.dat: No space left on device" \
    "--force on a small file system"
  expect_exit 0 "outputs that fit" -- in_small_fs "$tmp/small" "$gflow" "${small[@]}" \
    --out "$tmp/small/wave2d"
  # 1 MiB of output fits; two checkpoints of 6 MiB of fields do not.
  one_plane=(run "$wave" --backend cpu --quiet --set 'grid.shape=[512,512]' --set loop.steps=10
    --set loop.tasks.1.output.planes=1 --set loop.tasks.1.output.plane=0 --set 'loop.tasks.1.when=n == 2')
  expect_exit 0 "outputs that fit, no checkpoints" -- in_small_fs "$tmp/small" "$gflow" "${one_plane[@]}" \
    --out "$tmp/small/one"
  expect_exit 73 "checkpoints larger than the free space" -- in_small_fs "$tmp/small" "$gflow" \
    "${one_plane[@]}" --set checkpoint.every=5 --out "$tmp/small/one"
  expect_last_line "gflow: outputs need 13.0 MiB in $tmp/small/one/, 4.0 MiB are free; free space or pass --force" \
    "checkpoints larger than the free space"
else
  echo "faults.sh: no tmpfs could be mounted (not root, no user namespaces): free space not tested" >&2
fi

# The temporary file removed while the loop runs: found when the run finishes
# (here at an interrupt), exit 74, nothing under a final name.
start_long "$tmp/removed"
temp=$(cd "$tmp/removed" && ls -A | grep '^\.array_out\.dat\.partial-')
rm -f "$tmp/removed/$temp"
sleep 0.5
kill -s INT "$pid"
wait "$pid" && status=0 || status=$?
err=$(cat "$tmp/long.err")
[ "$status" -eq 74 ] && pass || fail "removed output: exit $status, expected 74; stderr: $err"
expect_last_line "gflow: cannot finish $tmp/removed/array_out.dat: its temporary file $temp was removed during the run" \
  "removed output"
expect_files "$tmp/removed" "" "removed output leaves nothing"

# ---- the numerical check -------------------------------------------------------------
# V is infinite at one cell from the start: exact messages, every and fields.
bad_v=(--set 'fields.V.init=vel + (i0 == 12 and i1 == 40) * 1e39')
expect_exit 76 "check: inf in V" -- "$gflow" "${small[@]}" "${bad_v[@]}" --set 'check={fields: [V]}' \
  --out "$tmp/chk"
expect_contains "$err" "gflow: check failed at step 0: field 'V' instance 0 holds inf at cell [12, 40]" \
  "check: inf in V"
expect_last_line "gflow: stopped by the check after step 0; outputs hold steps 0 to 0: array_out.dat holds no planes" \
  "check: inf in V, what the outputs hold"
meta=$(cat "$tmp/chk/array_out.dat.json" 2>/dev/null)
expect_contains "$meta" '"complete": false' "check sidecar complete"
expect_contains "$meta" '"stopped_at_step": 0,' "check sidecar step"
expect_contains "$meta" "\"stopped_by_check\": \"check failed at step 0: field 'V' instance 0 holds inf at cell [12, 40]\"" \
  "check sidecar message"
expect_files "$tmp/chk" "array_out.dat array_out.dat.json run.json timings.json " "check outputs"
# 0 * inf: U turns NaN where V is infinite, in the instance step 0 writes.
expect_exit 76 "check: nan in U" -- "$gflow" "${small[@]}" "${bad_v[@]}" --set 'check={fields: [U]}' \
  --out "$tmp/chk2"
expect_contains "$err" "gflow: check failed at step 0: field 'U' instance 2 holds nan at cell [12, 40]" \
  "check: nan in U"
expect_exit 76 "check: every 7" -- "$gflow" "${small[@]}" "${bad_v[@]}" \
  --set 'check={every: 7, fields: [V]}' --out "$tmp/chk2"
expect_contains "$err" "gflow: check failed at step 6: field 'V' instance 0 holds inf at cell [12, 40]" \
  "check: every 7"
expect_last_line "gflow: stopped by the check after step 6; outputs hold steps 0 to 6: array_out.dat planes [[2, 6]]" \
  "check: every 7, what the outputs hold"
expect_exit 76 "check: max_abs" -- "$gflow" "${small[@]}" --set 'check={fields: [V], max_abs: 300}' \
  --out "$tmp/chk3"
expect_contains "$err" "gflow: check failed at step 0: field 'V' instance 0 holds 343 at cell [0, 0], beyond max_abs 300" \
  "check: max_abs"
expect_exit 0 "check: a healthy run" -- "$gflow" "${small[@]}" --set 'check={}' --out "$tmp/chk4"
expect_contains "$(cat "$tmp/chk4/array_out.dat.json" 2>/dev/null)" '"complete": true' \
  "check: a healthy run is complete"
# A real blow-up: cfl 2.5 grows without bound, caught within 10 steps of going infinite
# (run refuses it as unstable unless told to go ahead).
expect_exit 76 "check: cfl 2.5" -- "$gflow" "${small[@]}" --set params.cfl=2.5 --set loop.steps=400 \
  --set check.every=10 --out "$tmp/chk5" --allow-unstable
printf '%s\n' "$err" | grep -qE "^gflow: check failed at step [0-9]*9: field 'U' instance [0-4] holds (-?inf|-?nan) at cell \[[0-9]+, [0-9]+\]$" &&
  pass || fail "check: cfl 2.5: $err"
expect_contains "$(cat "$tmp/chk5/array_out.dat.json" 2>/dev/null)" '"complete": false' \
  "check: cfl 2.5 sidecar"
# The default check (no check: block): the seed at cfl 0.9 blows up; every
# written field is scanned every 128 steps, the result read 48 steps later.
expect_exit 76 "default check: cfl 0.9" -- "$gflow" "${seed[@]}" --set params.cfl=0.9 --allow-unstable \
  --out "$tmp/chk6"
printf '%s\n' "$err" | grep -qE "^gflow: check failed at step 127: field 'U' instance [0-4] holds (-?inf|-?nan) at cell \[[0-9]+, [0-9]+\]$" &&
  pass || fail "default check: cfl 0.9: $err"
expect_last_line "gflow: stopped by the check after step 175; outputs hold steps 0 to 175: array_out.dat planes [[2, 175]]" \
  "default check: what the outputs hold"
expect_contains "$(cat "$tmp/chk6/array_out.dat.json" 2>/dev/null)" '"complete": false' \
  "default check: sidecar"
# A blow-up in the last steps is caught at the end: V infinite from the start,
# 100 steps (the check after step 99, read once the loop is done).
expect_exit 76 "default check: after the last step" -- "$gflow" "${small[@]}" --set loop.steps=100 \
  --set 'fields.V.init=vel + (i0 == 12 and i1 == 40) * 1e39' --out "$tmp/chk7"
expect_contains "$err" "gflow: check failed at step 99: field 'U' instance 0 holds nan at cell [2, 2]" \
  "default check: after the last step"
expect_exit 0 "check: off" -- "$gflow" "${seed[@]}" --set params.cfl=0.9 --allow-unstable --set check=off --out "$tmp/chk8"
expect_exit 0 "check: {every: 0}" -- "$gflow" "${seed[@]}" --set params.cfl=0.9 --allow-unstable --set 'check={every: 0}' \
  --out "$tmp/chk8"
expect_exit 65 "check: on" -- "$gflow" "${seed[@]}" --set check=on --out "$tmp/chk8"
expect_contains "$err" "check takes a mapping of its keys, or off" "check: on"
finish
