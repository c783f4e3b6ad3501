#!/usr/bin/env bash
# sweep.sh GFLOW REPO - `gflow sweep` run here: a 2x2 product and a zip with
# -j 2, the table, the generated config files (each loads back and runs to the
# same bits as the point run by hand), a second run skipping what is complete,
# a point that fails while the others complete, and located spec errors.
set -uo pipefail
gflow=$1 repo=$2
. "$(dirname "$0")/lib.sh"
wave=$repo/workflows/wave2d.yaml
cd "$tmp"

# The command-line form: a 2x2 product, two at a time.
expect_exit 0 "2x2 product" -- "$gflow" sweep "$wave" -m schedule=sync,events \
  -m 'grid.shape=[32,32],[40,40]' --set loop.steps=24 -j 2
expect_contains "$out" "p000    schedule=sync grid.shape=[32,32]" "table row p000"
expect_contains "$out" "p003    schedule=events grid.shape=[40,40]" "table row p003"
[ "$(printf '%s\n' "$out" | grep -c ' ok ')" -eq 4 ] && pass || fail "4 points ok: $out"
expect_contains "$err" "4 ok, 0 skipped, 0 failed" "summary"
p3=sweeps/wave2d/p003-schedule=events-grid.shape=40x40
for f in config.yaml gflow.log array_out.dat array_out.dat.json timings.json; do
  [ -f "$p3/$f" ] && pass || fail "$p3/$f missing"
done
expect_contains "$(cat "$p3/config.yaml")" "shape: [40, 40]" "config holds the point's value"
expect_contains "$(cat "$p3/config.yaml")" "schedule: events" "config holds the point's schedule"
# The generated file is the point: it runs to the bits of the same point run by hand.
"$gflow" run "$wave" --set loop.steps=24 --set 'grid.shape=[40,40]' --set schedule=events \
  --out direct --quiet 2>/dev/null
cmp -s direct/array_out.dat "$p3/array_out.dat" && pass || fail "p003 differs from the direct run"
"$gflow" validate "$p3/config.yaml" >/dev/null 2>&1 && pass || fail "config.yaml does not validate"

# Again: every point complete, so every point skipped.
expect_exit 0 "re-run" -- "$gflow" sweep "$wave" -m schedule=sync,events \
  -m 'grid.shape=[32,32],[40,40]' --set loop.steps=24 -j 2
[ "$(printf '%s\n' "$out" | grep -c ' skipped ')" -eq 4 ] && pass || fail "4 skipped: $out"
expect_contains "$err" "0 to run, 4 complete (skipped)" "re-run skips"
# An incomplete point is retried, the others skipped.
sed -i 's/"complete": true/"complete": false/' "$p3/timings.json"
expect_exit 0 "retry" -- "$gflow" sweep "$wave" -m schedule=sync,events \
  -m 'grid.shape=[32,32],[40,40]' --set loop.steps=24 -j 2
expect_contains "$err" "1 ok, 3 skipped, 0 failed" "the incomplete point is retried"

# A spec: a zip group times a matrix key, and a value one point refuses.
cat >spec.yaml <<YAML
workflow: $wave
name: zipped
jobs: 2
set: {loop.steps: 16}
matrix:
  schedule: [auto, bogus]
zip:
  - grid.shape: [[32, 32], [48, 48]]
    params.cfl: [0.3, 0.35]
YAML
expect_exit 65 "a refused value fails its points" -- "$gflow" sweep spec.yaml
expect_contains "$out" "p000    schedule=auto grid.shape=[32, 32] params.cfl=0.3    ok" "zip row 0"
expect_contains "$out" "p001    schedule=auto grid.shape=[48, 48] params.cfl=0.35   ok" "zip row 1"
expect_contains "$out" "p002    schedule=bogus grid.shape=[32, 32] params.cfl=0.3   failed (65)" "failed row"
expect_contains "$err" "unknown schedule 'bogus'" "the refusal is reported"
expect_contains "$err" "2 ok, 0 skipped, 2 failed" "summary with failures"
[ -f sweeps/zipped/p001-schedule=auto-grid.shape=48x48-params.cfl=0.35/array_out.dat ] && pass ||
  fail "the other points complete"

# Spec errors, located in the spec.
printf 'workflow: %s\nmatrix:\n  schedule: []\n' "$wave" >empty.yaml
expect_exit 65 "empty list" -- "$gflow" sweep empty.yaml
expect_contains "$err" "gflow: empty.yaml:3:13: 'schedule' has an empty list of values" "empty list located"
printf 'workflow: %s\nmatrix:\n  grid.shap: [[8, 8]]\n' "$wave" >unknown.yaml
expect_exit 65 "unknown key" -- "$gflow" sweep unknown.yaml
expect_contains "$err" "gflow: unknown.yaml:3:3: the workflow refuses every value of 'grid.shap'" "unknown key located"
expect_contains "$err" "unknown key 'shap' in grid" "the loader's reason"
printf 'workflow: %s\nmatrx: {schedule: [sync]}\n' "$wave" >typo.yaml
expect_exit 65 "unknown spec key" -- "$gflow" sweep typo.yaml
expect_contains "$err" "gflow: typo.yaml:2:1: unknown key 'matrx' in the sweep" "unknown spec key located"
printf 'workflow: %s\nzip:\n  - {schedule: [sync, auto], loop.steps: [4]}\n' "$wave" >ziplen.yaml
expect_exit 65 "zip lengths" -- "$gflow" sweep ziplen.yaml
expect_contains "$err" "zipped keys need lists of one length" "zip lengths"
expect_exit 64 "nothing to sweep" -- "$gflow" sweep "$wave"

# --slurm --dry-run: the job array over the points not yet complete.
expect_exit 0 "slurm dry run" -- "$gflow" sweep "$wave" -m schedule=sync,events,auto \
  --set loop.steps=8 --name dry --slurm --dry-run -j 2 --tasks 4 --gpus 1 --time 00:05:00
script=$(cat sweeps/dry/sweep.sbatch)
expect_contains "$script" "#SBATCH --array=0-2%2" "array line"
expect_contains "$script" "#SBATCH --gpus-per-task=1" "gpus line"
expect_contains "$script" "#SBATCH --time=00:05:00" "time line"
expect_contains "$script" "srun --mpi=pmix" "MPI points through srun"
[ "$(wc -l <sweeps/dry/points.txt)" -eq 3 ] && pass || fail "points.txt lists 3 points"
bash -n sweeps/dry/sweep.sbatch && pass || fail "the batch script is not valid bash"
finish
