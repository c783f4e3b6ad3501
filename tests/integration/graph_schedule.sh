#!/usr/bin/env bash
# graph_schedule.sh GFLOW REPO - schedule: graph on the CPU backend, whose graphs are
# recorded lists of its queue entries issued again at each launch (the GPU's
# are HIP graphs: scripts/gpu/check.sh). Every output is events' bit for bit:
#   - the seed with batched snapshots (runs of 16 steps between the host's
#     hand-offs of a batch) and with a copy per plane (a run of one kernel);
#   - compute only: few captures, many launches (a run's graph is launched
#     again when its instructions and scalars repeat: the ring's rotation);
#   - a forcing that never repeats (amplitude n): a launch that reused an
#     old scalar would change the output;
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
# graphs DIR: "launches captures" from timings.json
graphs() {
  python3 - "$1/timings.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["graphs"]
print(g["launches"] if g["on"] else -1, g["captures"])
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
  read -r launches captures <<<"$(graphs "$tmp/gr")"
}

small=(--set 'grid.shape=[64,48]' --set params.nt=400)
compare "seed, batches of 16" "$wave" "${small[@]}" --set loop.tasks.1.output.batch=16
[ "$launches" -gt "$captures" ] && pass ||
  fail "seed, batches of 16: $launches launches of $captures captures (expected graphs launched again)"
compare "seed, a copy per plane" "$wave" "${small[@]}" --set loop.tasks.1.output.batch=1
[ "$launches" -gt 0 ] && pass || fail "seed, a copy per plane: no graph launched"
compare "seed, batches of 7 (runs across a batch's hand-off)" "$wave" "${small[@]}" \
  --set loop.tasks.1.output.batch=7
compare "compute only" "$compute" --set 'grid.shape=[32,32]' --set params.nt=2000
[ "$launches" -gt "$((2 * captures))" ] && pass ||
  fail "compute only: $launches launches of $captures captures (expected graphs launched again)"
compare "forcing n, never the same" "$compute" --set 'grid.shape=[48,48]' --set params.nt=300 \
  --set 'loop.tasks.0.args.amplitude=n'
[ "$captures" -eq "$launches" ] && pass ||
  fail "forcing n: $launches launches of $captures captures (every run differs: one capture each)"
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
expect_exit 0 "graph, the report" -- "$gflow" run "$wave" --backend cpu "${small[@]}" \
  --set schedule=graph --out "$tmp/report"
printf '%s\n' "$err" | grep -qE "^gflow: graphs: [0-9]+ launches of [0-9]+ captures \([0-9]+ instantiated, [0-9]+ updated in place\)$" &&
  pass || fail "graph, the report line: $err"
finish
