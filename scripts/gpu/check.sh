#!/usr/bin/env bash
# check.sh - the GPU test suite, run on a machine with a GPU (binaries from
# scripts/gpu/build-nvidia.sh in .device/bin, or BIN=DIR):
#   1. the GPU backend's ops-level test;
#   2. every workflow in workflows/ under every schedule and memory strategy on
#      the GPU: outputs bit-identical across GPU schedules and strategies, and
#      within 1e-5 of the field maximum against the CPU backend;
#   3. the pool's race (workflows/scratch_race.yaml, seed 002): the
#      resource-aware and async pools write the preallocated run's bits, the
#      naive pool does not and its report names the hazard; per-step
#      temporaries (wave2d_scratch.yaml) write wave2d.yaml's bits;
#   4. faults: out of memory, a device that does not exist.
# Ends with `N passed, N failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.device/bin}
gflow=$bin/gflow
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gflow-gpu-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. tests/integration/lib.sh

echo "== GPU backend, ops level"
"$bin/test_backend_gpu" --require-gpu && pass || fail "test_backend_gpu"

strategies=(device managed managed+prefetch pinned pool)
sets_for() {
  case $1 in
    managed+prefetch) echo "--set memory.default=managed --set memory.prefetch=true" ;;
    *) echo "--set memory.default=$1" ;;
  esac
}
# Workflows whose own size is a benchmark's run here small, on one process.
small_sets() {
  case $(basename "$1" .yaml) in
    ghost_exchange) echo "--set grid.shape=[404,404] --set decomposition=auto" ;;
  esac
}
for wf in workflows/*.yaml; do
  name=$(basename "$wf" .yaml)
  echo "== $name"
  cpu=$tmp/$name-cpu
  # shellcheck disable=SC2046
  expect_exit 0 "$name on the CPU backend" -- "$gflow" run "$wf" --backend cpu --quiet --out "$cpu" \
    $(small_sets "$wf")
  outputs=$(cd "$cpu" && ls ./*.dat 2>/dev/null | sed 's|^\./||')
  first=""
  for strategy in "${strategies[@]}"; do
    for schedule in sync streams events auto; do
      dir=$tmp/$name-$strategy-$schedule
      # shellcheck disable=SC2046
      expect_exit 0 "$name $strategy $schedule" -- "$gflow" run "$wf" --backend gpu --quiet \
        --out "$dir" --set schedule=$schedule $(sets_for "$strategy") $(small_sets "$wf")
      [ "$status" -eq 0 ] || continue
      for f in $outputs; do
        if [ -z "$first" ]; then
          first=$dir
          dims=$(sed -n 's/.*"shape": \[[0-9]*, \(.*\)\],/\1/p' "$cpu/$f.json" | tr -d ' ')
          plane=$((${dims//,/*}))
          "$bin/compare_raw" "$dir/$f" "$cpu/$f" "$plane" 1e-5 >"$tmp/cmp" && pass ||
            fail "$name $strategy $schedule $f vs CPU: $(cat "$tmp/cmp")"
          echo "   GPU vs CPU ($f): $(head -1 "$tmp/cmp")"
        else
          cmp -s "$first/$f" "$dir/$f" && pass || fail "$name $strategy $schedule $f differs from $(basename "$first")"
        fi
      done
    done
  done
  echo "   $(echo "$outputs" | wc -w) output file(s) compared over ${#strategies[@]} strategies x 4 schedules"
done

echo "== the pool's race on the GPU (scratch_race.yaml, a slow kernel of 8192^2)"
race=(workflows/scratch_race.yaml --backend gpu --set params.slow_edge=8192)
expect_exit 0 "race, preallocated" -- "$gflow" run "${race[@]}" --quiet --out "$tmp/race-ref" \
  --set fields.Ta.scratch=false --set fields.Tb.scratch=false
for strategy in resource-aware async naive; do
  expect_exit 0 "race, $strategy pool" -- "$gflow" run "${race[@]}" --out "$tmp/race-$strategy" \
    --set memory.pool.strategy=$strategy
  echo "   $strategy: $(echo "$err" | grep -m1 'pool (')"
  if [ $strategy = naive ]; then
    expect_contains "$err" "the naive pool handed chunks freed on one stream" "the naive report names the hazard"
    cmp -s "$tmp/race-ref/a.dat" "$tmp/race-naive/a.dat" &&
      fail "the naive pool's a.dat is the preallocated run's: the race did not happen on the GPU" || pass
  else
    cmp -s "$tmp/race-ref/a.dat" "$tmp/race-$strategy/a.dat" && cmp -s "$tmp/race-ref/b.dat" "$tmp/race-$strategy/b.dat" &&
      pass || fail "the $strategy pool's outputs differ from the preallocated run's"
  fi
done
expect_exit 0 "wave2d" -- "$gflow" run workflows/wave2d.yaml --backend gpu --quiet --out "$tmp/pool-w"
for strategy in resource-aware async; do
  expect_exit 0 "wave2d_scratch, $strategy" -- "$gflow" run workflows/wave2d_scratch.yaml --backend gpu \
    --quiet --out "$tmp/pool-ws-$strategy" --set memory.pool.strategy=$strategy
  cmp -s "$tmp/pool-w/array_out.dat" "$tmp/pool-ws-$strategy/array_out.dat" && pass ||
    fail "wave2d_scratch ($strategy) differs from wave2d"
done

echo "== numerical check on the GPU"
expect_exit 0 "check passes on a sound run" -- "$gflow" run workflows/wave2d.yaml --backend gpu --quiet \
  --set 'check={every: 64, fields: [U], max_abs: 100}' --out "$tmp/chk_ok"
expect_exit 76 "check stops a bad field" -- "$gflow" run workflows/wave2d.yaml --backend gpu \
  --set 'fields.V.init=vel + (i0 == 12 and i1 == 40) * 1e39' --set 'check={every: 7, fields: [U]}' \
  --out "$tmp/chk_bad"
expect_contains "$err" "gflow: check failed at step 6: field 'U' instance" "the GPU check names field and step"
echo "   $(echo "$err" | grep -m1 'check failed')"

echo "== MPI: ranks sharing the GPU, bit-identical to one rank"
if command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  mpi_runs=("tests/mpi/blur.yaml x.dat --set grid.shape=[1004,1004] --set params.steps=60"
    "workflows/wave2d.yaml array_out.dat --set schedule=events"
    "workflows/wave2d.yaml array_out.dat --set schedule=auto"
    "tests/mpi/blur.yaml x.dat --set grid.shape=[2004,2004] --set params.steps=40 --set grid.boundary=periodic")
  for row in "${mpi_runs[@]}"; do
    eval "set -- $row"
    wf=$1 file=$2
    shift 2
    one=$tmp/mpi-one
    rm -rf "$one"
    expect_exit 0 "$wf on one rank" -- "$gflow" run "$wf" --backend gpu --quiet --out "$one" "$@" \
      --set decomposition=auto
    for np in 2 4; do
      dir=$tmp/mpi-$np
      rm -rf "$dir"
      expect_exit 0 "$wf on $np ranks" -- mpirun -np "$np" "$gflow" run "$wf" --backend gpu --quiet \
        --out "$dir" "$@" --set decomposition=auto
      cmp -s "$one/$file" "$dir/$file" && pass || fail "$wf on $np ranks differs from one rank"
    done
    echo "   $wf $*: 2 and 4 ranks on the GPU, same bits as one rank"
  done
else
  echo "   mpirun not found: skipped"
fi

echo "== faults"
expect_exit 70 "out of device memory" -- "$gflow" run workflows/wave2d.yaml --backend gpu \
  --set 'grid.shape=[300000,300000]' --out "$tmp/oom"
expect_contains "$err" "field 'U' (" "out of memory names the field"
expect_contains "$err" "of device memory) does not fit:" "out of memory says how much"
echo "   $(echo "$err" | grep -m1 'does not fit')"
[ ! -e "$tmp/oom/array_out.dat" ] && pass || fail "a failed run left array_out.dat"
plugin=$(dirname "$bin")/plugins/gflow_heat2d.so
if [ -f "$plugin" ]; then
  # auto takes the CPU and says why; forced gpu is refused before anything runs.
  expect_exit 0 "auto with a kernel without a GPU implementation" -- "$gflow" run plugins/heat2d.yaml \
    --plugin "$plugin" --out "$tmp/heat-auto"
  expect_contains "$err" "gflow: backend cpu: kernel heat2d (task 'diffuse') has no GPU implementation; CPU backend:" "auto says why it takes the CPU"
  expect_exit 70 "a kernel without a GPU implementation" -- "$gflow" run plugins/heat2d.yaml \
    --plugin "$plugin" --backend gpu --out "$tmp/heat"
  expect_contains "$err" "gflow: --backend gpu cannot run here: kernel heat2d (task 'diffuse') has no GPU implementation" "forced gpu names the kernel"
  [ ! -e "$tmp/heat" ] && pass || fail "forced gpu with heat2d created its output folder"
  echo "   $(echo "$err" | head -1)"
fi
expect_exit 70 "a device that does not exist" -- "$gflow" run workflows/wave2d.yaml --backend gpu --device 99 --out "$tmp/nodev"
echo "   $(echo "$err" | head -1)"
finish
