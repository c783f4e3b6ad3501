#!/usr/bin/env bash
# scratch.sh - scratch fields and the run's pool, end to end on the CPU
# backend (its streams are threads, so a pool's mistakes show):
#  - the seed's demonstration (workflows/scratch_race.yaml): two streams stage
#    data through temporaries; the resource-aware pool's outputs are
#    bit-identical to the same workflow with the fields preallocated, the
#    naive pool's differ (it hands stream b the chunk stream a still reads)
#    and the report names that hazard; the async strategy matches too;
#  - workflows/wave2d_scratch.yaml (a kernel's work array and snapshot pack
#    buffers as scratch fields) writes the seed's bits under every schedule,
#    like workflows/wave2d.yaml and like itself preallocated;
#  - the pool's statistics in timings.json;
#  - a run with scratch fields killed after a checkpoint and restarted.
#   scratch.sh GFLOW REPO
set -uo pipefail
gflow=$1
repo=$2
. "$repo/tests/integration/lib.sh"
race="$repo/workflows/scratch_race.yaml"
prealloc=(--set fields.Ta.scratch=false --set fields.Tb.scratch=false)

same() { # same A B WHAT: the files hold the same bytes
  if cmp -s "$1" "$2"; then pass; else fail "$3: $1 and $2 differ"; fi
}

expect_exit 0 "race, preallocated" -- "$gflow" run "$race" --backend cpu --quiet --out "$tmp/ref" "${prealloc[@]}"
for strategy in resource-aware async; do
  expect_exit 0 "race, $strategy pool" -- "$gflow" run "$race" --backend cpu --out "$tmp/$strategy" \
    --set memory.pool.strategy=$strategy
  same "$tmp/ref/a.dat" "$tmp/$strategy/a.dat" "stream a's output with the $strategy pool"
  same "$tmp/ref/b.dat" "$tmp/$strategy/b.dat" "stream b's output with the $strategy pool"
done
expect_contains "$err" "pool (async): 16 temporaries" "the async pool's report line"
# The naive pool: b's fill lands while a's slow kernel holds up a's read, at
# every step when the threads get the cores in time. A loaded machine may
# delay b past a's kernel, so the race gets three tries to show.
for try in 1 2 3; do
  expect_exit 0 "race, naive pool" -- "$gflow" run "$race" --backend cpu --out "$tmp/naive" \
    --set memory.pool.strategy=naive
  cmp -s "$tmp/ref/a.dat" "$tmp/naive/a.dat" || break
  echo "the naive pool's race did not show on try $try" >&2
done
if cmp -s "$tmp/ref/a.dat" "$tmp/naive/a.dat"; then
  fail "the naive pool's output is the reference's: the race it should lose did not happen"
else
  pass
fi
expect_contains "$err" "the naive pool handed chunks freed on one stream to the next allocation at once, while work queued on the freeing stream may still use them" "the report names the hazard"
# What differs is stream b's data (Q < 0) where a's own (P > 0) belongs.
python3 - "$tmp/naive/a.dat" <<'PY' && pass || fail "the naive pool's a.dat does not hold stream b's data"
import struct, sys
data = open(sys.argv[1], "rb").read()
values = struct.unpack(f"{len(data) // 4}f", data)
plane = 64 * 64
planes = [values[k * plane:(k + 1) * plane] for k in range(len(values) // plane)]
sys.exit(0 if any(all(v < 0 for v in p) for p in planes) else 1)
PY

python3 - "$tmp/resource-aware/timings.json" <<'PY' && pass || fail "timings.json's pool statistics"
import json, sys
pool = json.load(open(sys.argv[1]))["pool"]
assert pool["strategy"] == "resource-aware", pool
assert pool["allocations"] == 16 and pool["frees"] == 16, pool
assert pool["reused_same_stream"] >= 12, pool           # each stream takes its chunk back at once
assert pool["in_use_peak_bytes"] == 64 * 64 * 4, pool  # Ta is back before Tb is taken
assert pool["pending_peak_bytes"] >= 64 * 64 * 4, pool
assert pool["blocks"] == 1, pool
PY

# A kernel argument and pack buffers from the pool: the seed's bits.
seed=(--set 'grid.shape=[48,48]')
expect_exit 0 "wave2d" -- "$gflow" run "$repo/workflows/wave2d.yaml" --backend cpu --quiet --out "$tmp/w" "${seed[@]}"
for schedule in events auto sync streams; do
  expect_exit 0 "wave2d_scratch, $schedule" -- "$gflow" run "$repo/workflows/wave2d_scratch.yaml" \
    --backend cpu --quiet --out "$tmp/ws-$schedule" --set schedule=$schedule "${seed[@]}"
  same "$tmp/w/array_out.dat" "$tmp/ws-$schedule/array_out.dat" "wave2d_scratch under $schedule"
done
expect_exit 0 "wave2d_scratch, preallocated" -- "$gflow" run "$repo/workflows/wave2d_scratch.yaml" \
  --backend cpu --quiet --out "$tmp/wp" "${seed[@]}" --set fields.W.scratch=false \
  --set fields.P.scratch=false --set fields.P.ring=5
same "$tmp/w/array_out.dat" "$tmp/wp/array_out.dat" "wave2d_scratch preallocated"
# A checkpoint keeps no scratch field (none outlives a step): a run killed
# after one and restarted writes the uninterrupted run's bits.
ck=(--backend cpu --quiet --set 'grid.shape=[192,192]' --set checkpoint.every=40)
expect_exit 0 "wave2d, 192^2" -- "$gflow" run "$repo/workflows/wave2d.yaml" --backend cpu --quiet \
  --out "$tmp/w192" --set 'grid.shape=[192,192]'
"$gflow" run "$repo/workflows/wave2d_scratch.yaml" "${ck[@]}" --out "$tmp/ck" 2>"$tmp/ck.err" &
pid=$!
if wait_for "$tmp/ck/checkpoint/checkpoint.txt"; then
  kill -s KILL "$pid"
  wait "$pid" 2>/dev/null
  expect_exit 0 "wave2d_scratch restarted" -- "$gflow" run "$repo/workflows/wave2d_scratch.yaml" \
    "${ck[@]}" --restart "$tmp/ck"
  same "$tmp/w192/array_out.dat" "$tmp/ck/array_out.dat" "wave2d_scratch killed after a checkpoint, restarted"
else
  fail "wave2d_scratch: no checkpoint appeared: $(cat "$tmp/ck.err")"
fi

expect_exit 0 "validate wave2d_scratch" -- "$gflow" validate "$repo/workflows/wave2d_scratch.yaml"
expect_contains "$out" "  scratch   W, P: taken at the first use in each step and given back after the last, from the resource-aware pool" "validate lists the scratch fields"
expect_exit 0 "validate the race with the naive pool" -- "$gflow" validate "$race" --set memory.pool.strategy=naive
expect_contains "$out" "note      the naive pool hands a chunk freed on one stream to the next allocation at once, on any stream, while work queued on the freeing stream may still use it" "validate notes the naive pool's race"
finish
