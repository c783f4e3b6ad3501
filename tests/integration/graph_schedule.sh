#!/usr/bin/env bash
# graph_schedule.sh GFLOW REPO - schedule: graph on the CPU backend, whose graphs are
# recorded lists of its queue entries issued again at each launch (the GPU's
# are HIP graphs: scripts/gpu/check.sh). Every output is events' bit for bit:
#   - the seed with batched snapshots and with a copy per plane: on the CPU
#     backend each plane goes to the writer's staging buffer at its step (a
#     batch is staged directly), so a run holds one kernel, too short for
#     graphs: replay is off and says why;
#   - compute only: few graphs, many launches (a run's graph is launched
#     again when its instructions and scalars repeat: the ring's rotation),
#     every one prepared before the loop (its scalars are known ahead);
#   - a forcing that never repeats (amplitude n): a launch that reused an
#     old scalar would change the output; an impure forcing hook: nothing
#     prepared ahead, every run captured in the loop;
#   - the seed's explicit events and host waits (events recorded inside a
#     graph, waited for outside it);
#   - 3-D waves with point sources, heat with a source field, stencils;
#   - the numerical check stops at the same step with the same message.
# --trace turns replay off, and says so.
set -uo pipefail
gflow=$1
repo=$2
. "$repo/tests/integration/lib.sh"
wave=$repo/workflows/wave2d.yaml
compute=$repo/workflows/wave2d_compute.yaml

# same_outputs A B WHAT: every *.dat of A is B's, bit for bit
same_outputs() {
  local f any=0
  for f in "$1"/*.dat; do
    [ -e "$f" ] || continue
    any=1
    cmp -s "$f" "$2/$(basename "$f")" && pass || fail "$3: $(basename "$f") differs from events'"
  done
  [ "$any" = 1 ] && pass || fail "$3: no output"
}
# graphs DIR: "launches captures prepared" from timings.json (captures in
# the loop; prepared: captured and instantiated before it)
graphs() {
  python3 - "$1/timings.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["graphs"]
print(g["launches"] if g["on"] else -1, g["captures"], g["prepared"])
PY
}

# compare WHAT WORKFLOW ARGS...: the workflow under events and graph
compare() {
  local what=$1 wf=$2
  shift 2
  expect_exit 0 "$what, events" -- "$gflow" run "$wf" --backend cpu --quiet --out "$tmp/ev" \
    --set schedule=events "$@"
  expect_exit 0 "$what, graph" -- "$gflow" run "$wf" --backend cpu --quiet --out "$tmp/gr" \
    --set schedule=graph "$@"
  same_outputs "$tmp/gr" "$tmp/ev" "$what"
  read -r launches captures prepared <<<"$(graphs "$tmp/gr")"
}

small=(--set 'grid.shape=[64,48]' --set params.nt=400)
# A plane staged at every step leaves one kernel between two hand-offs: no
# run holds 4 launches, so the steps are issued as under events, and the
# report says so.
for batch in 1 7 16; do
  compare "seed, batches of $batch" "$wave" "${small[@]}" --set loop.tasks.1.output.batch=$batch
  [ "$launches" = -1 ] && pass || fail "seed, batches of $batch: $launches graphs launched (expected replay off)"
done
expect_exit 0 "seed, batches of 16, the report" -- "$gflow" run "$wave" --backend cpu \
  "${small[@]}" --set schedule=graph --set loop.tasks.1.output.batch=16 --out "$tmp/short"
expect_contains "$err" "gflow: graphs: off (no run between two host instructions holds 4 launches, which a graph would not speed up); the steps were issued as under events" \
  "seed, batches of 16: the report"
compare "compute only" "$compute" --set 'grid.shape=[32,32]' --set params.nt=2000
[ "$launches" -gt "$((2 * (captures + prepared)))" ] && pass ||
  fail "compute only: $launches launches of $prepared + $captures graphs (expected graphs launched again)"
# Every step's scalars are known ahead: each run's graph is prepared before
# the loop, none captured in it.
[ "$captures" -eq 0 ] && [ "$prepared" -gt 0 ] && pass ||
  fail "compute only: $prepared graphs prepared, $captures captured in the loop (expected all prepared)"
compare "forcing n, never the same" "$compute" --set 'grid.shape=[48,48]' --set params.nt=300 \
  --set 'loop.tasks.0.args.amplitude=n'
[ "$prepared" -eq "$launches" ] && [ "$captures" -eq 0 ] && pass ||
  fail "forcing n: $launches launches of $prepared prepared and $captures captured (every run differs: one graph each, prepared)"
# An impure hook may not be called ahead of the loop: nothing is prepared,
# every run is captured as the loop reaches it.
compare "an impure forcing hook" "$compute" --set 'grid.shape=[48,48]' --set params.nt=300 \
  --set hooks.ricker.pure=false
[ "$prepared" -eq 0 ] && [ "$captures" -gt 0 ] && pass ||
  fail "an impure hook: $prepared graphs prepared, $captures captured (expected none prepared)"
compare "the seed's events" "$repo/workflows/wave2d_seed_events.yaml" "${small[@]}"
for wf in wave3d heat stencil wave1d; do
  compare "$wf" "$repo/workflows/$wf.yaml" --set loop.steps=40
done

# The check: the same step, the same message, under both.
bad_v=(--set 'fields.V.init=vel + (i0 == 12 and i1 == 40) * 1e39' --set 'check={every: 7, fields: [V]}')
for s in events graph; do
  expect_exit 76 "check under $s" -- "$gflow" run "$wave" --backend cpu --quiet "${small[@]}" \
    "${bad_v[@]}" --set schedule=$s --out "$tmp/chk-$s"
  expect_contains "$err" "gflow: check failed at step 6: field 'V' instance 0 holds inf at cell [12, 40]" \
    "check under $s"
done

# --trace follows every operation: replay is off, and the report says why.
expect_exit 0 "graph with --trace" -- "$gflow" run "$wave" --backend cpu "${small[@]}" \
  --set schedule=graph --out "$tmp/trace" --trace "$tmp/trace.json"
expect_contains "$err" "gflow: graphs: off (--trace follows each operation); the steps were issued as under events" \
  "graph with --trace"
same_outputs "$tmp/trace" "$tmp/ev" "graph with --trace"
expect_exit 0 "graph, the report" -- "$gflow" run "$compute" --backend cpu \
  --set 'grid.shape=[32,32]' --set params.nt=200 --set schedule=graph --out "$tmp/report"
printf '%s\n' "$err" | grep -qE "^gflow: graphs: [0-9]+ launches of [0-9]+ graphs prepared before the loop \(in [0-9.]+ ms\) and [0-9]+ captures in it \([0-9]+ instantiated, [0-9]+ updated in place\)$" &&
  pass || fail "graph, the report line: $err"
expect_exit 0 "graph, an impure hook, the report" -- "$gflow" run "$compute" --backend cpu \
  --set 'grid.shape=[32,32]' --set params.nt=200 --set schedule=graph --set hooks.ricker.pure=false \
  --out "$tmp/report"
printf '%s\n' "$err" | grep -qE "^gflow: graphs: [0-9]+ launches of [0-9]+ captures \([0-9]+ instantiated, [0-9]+ updated in place\)$" &&
  pass || fail "graph, the report line without prepared graphs: $err"
finish
