#!/usr/bin/env bash
# wave2d.sh GFLOW WAVE2D_SEED COMPARE_RAW REPO
# The seed problem end to end on the CPU backend under every schedule:
# array_out.dat is bit-identical across schedules, has the seed's layout, and
# is bit-identical to the independent reference program's (ricker.lua rounds
# to float where the seed does, with the seed's pi = 3.141592f).
set -uo pipefail
gflow=$1 seed=$2 compare=$3 repo=$4
. "$(dirname "$0")/lib.sh"

"$seed" "$tmp/ref.dat" >/dev/null || fail "reference program"
# The stability condition: cfl 0.9 is refused by run, noted by validate
# (the default 0.4 runs below).
expect_exit 65 "run cfl 0.9" -- "$gflow" run "$repo/workflows/wave2d.yaml" --backend cpu \
  --set params.cfl=0.9 --out "$tmp/cfl" --quiet
expect_contains "$err" "wave2d.yaml:43:15: task 'step': kernel wave2d_4o is unstable with these arguments: |V|*dt*sqrt(1/dx0^2 + 1/dx1^2) is 1.273, above sqrt(3)/2 = 0.866, the stability limit of this scheme (4th order in space, leapfrog in time); pass --allow-unstable to run it anyway" "cfl 0.9 refused"
expect_exit 0 "validate cfl 0.9" -- "$gflow" validate "$repo/workflows/wave2d.yaml" --set params.cfl=0.9
expect_contains "$err" "note: task 'step': kernel wave2d_4o is unstable" "validate notes cfl 0.9"
for schedule in sync streams events graph auto; do
  expect_exit 0 "run $schedule" -- "$gflow" run "$repo/workflows/wave2d.yaml" --backend cpu \
    --set schedule=$schedule --out "$tmp/$schedule" --quiet
  "$compare" "$tmp/$schedule/array_out.dat" "$tmp/ref.dat" 65536 0 --zero-planes 0,1,639 \
    --nonzero 2 638 >"$tmp/cmp.txt" && pass || fail "$schedule vs reference: $(cat "$tmp/cmp.txt")"
  cmp -s "$tmp/$schedule/array_out.dat" "$tmp/ref.dat" && pass ||
    fail "$schedule output is not bit-identical to the reference"
  files=$(cd "$tmp/$schedule" && ls -A | tr '\n' ' ')
  [ "$files" = "array_out.dat array_out.dat.json run.json timings.json " ] && pass ||
    fail "$schedule: output folder holds '$files'"
  meta=$(cat "$tmp/$schedule/array_out.dat.json")
  expect_contains "$meta" '"shape": [640, 256, 256]' "$schedule sidecar shape"
  expect_contains "$meta" '"valid_planes": [[2, 638]]' "$schedule sidecar planes"
  expect_contains "$meta" '"complete": true' "$schedule sidecar complete"
  expect_contains "$meta" "\"schedule\": \"$schedule\"" "$schedule sidecar schedule"
done
for schedule in streams events graph auto; do
  cmp -s "$tmp/sync/array_out.dat" "$tmp/$schedule/array_out.dat" && pass ||
    fail "$schedule output differs from sync"
done
# The seed's own events pattern, spelled out with explicit events.
expect_exit 0 "run wave2d_seed_events" -- "$gflow" run "$repo/workflows/wave2d_seed_events.yaml" \
  --backend cpu --out "$tmp/seed_events" --quiet
cmp -s "$tmp/sync/array_out.dat" "$tmp/seed_events/array_out.dat" && pass ||
  fail "wave2d_seed_events output differs from wave2d"
rm -rf "$tmp/streams" "$tmp/events" "$tmp/auto" "$tmp/seed_events"

# A different grid through --set: the source moves to the new centre and the
# reference agrees.
"$seed" "$tmp/ref96.dat" 96 128 >/dev/null || fail "reference 96x128"
expect_exit 0 "run 96x128" -- "$gflow" run "$repo/workflows/wave2d.yaml" --backend cpu \
  --set 'grid.shape=[96,128]' --out "$tmp/g96" --quiet
"$compare" "$tmp/g96/array_out.dat" "$tmp/ref96.dat" 12288 0 >"$tmp/cmp.txt" && pass ||
  fail "96x128 vs reference: $(cat "$tmp/cmp.txt")"
cmp -s "$tmp/g96/array_out.dat" "$tmp/ref96.dat" && pass ||
  fail "96x128 output is not bit-identical to the reference"
finish
