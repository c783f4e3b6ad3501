#!/usr/bin/env bash
# check.sh - the GPU test suite, run on a machine with a GPU (binaries from
# scripts/gpu/build-nvidia.sh in .device/bin, or BIN=DIR):
#   1. the GPU backend's ops-level test;
#   2. every workflow in workflows/ under every schedule and memory strategy on
#      the GPU: outputs bit-identical across GPU schedules and strategies, and
#      within 1e-5 of the field maximum against the CPU backend;
#   3. faults: out of memory, a device that does not exist.
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
for wf in workflows/*.yaml; do
  name=$(basename "$wf" .yaml)
  echo "== $name"
  cpu=$tmp/$name-cpu
  expect_exit 0 "$name on the CPU backend" -- "$gflow" run "$wf" --backend cpu --quiet --out "$cpu"
  outputs=$(cd "$cpu" && ls ./*.dat 2>/dev/null | sed 's|^\./||')
  first=""
  for strategy in "${strategies[@]}"; do
    for schedule in sync streams events auto; do
      dir=$tmp/$name-$strategy-$schedule
      # shellcheck disable=SC2046
      expect_exit 0 "$name $strategy $schedule" -- "$gflow" run "$wf" --backend gpu --quiet \
        --out "$dir" --set schedule=$schedule $(sets_for "$strategy")
      [ "$status" -eq 0 ] || continue
      for f in $outputs; do
        if [ -z "$first" ]; then
          first=$dir
          dims=$(sed -n 's/.*"shape": \[[0-9]*, \(.*\)\],/\1/p' "$cpu/$f.json" | tr -d ' ')
          plane=$((${dims//,/*}))
          f64=$(grep -q '"dtype": "float64"' "$cpu/$f.json" && echo --f64)
          # shellcheck disable=SC2086
          "$bin/compare_raw" "$dir/$f" "$cpu/$f" "$plane" 1e-5 $f64 >"$tmp/cmp" && pass ||
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

echo "== wave, heat, stencil: every dimension, order and dtype, GPU bits against the CPU"
# One small workflow per variant (scripts/bench/kernel-workflow.sh), with a
# pattern field, point sources (two on one cell) and a stencil of three
# inputs; kernels are built without contraction, so the bits must match.
variants=0
for kernel in wave heat stencil; do
  for ndim in 1 2 3; do
    for dtype in f32 f64; do
      for order in 2 4 8; do
        v=$kernel-$ndim-$dtype-$order
        shape=$(echo "4099 131,97 37,29,45" | cut -d' ' -f"$ndim")
        scripts/bench/kernel-workflow.sh "$kernel" "$dtype" "$order" "$shape" 30 --forcing >"$tmp/$v.yaml"
        expect_exit 0 "$v on the CPU" -- "$gflow" run "$tmp/$v.yaml" --backend cpu --quiet --out "$tmp/$v-cpu"
        expect_exit 0 "$v on the GPU" -- "$gflow" run "$tmp/$v.yaml" --backend gpu --quiet --out "$tmp/$v-gpu"
        cmp -s "$tmp/$v-cpu/final.dat" "$tmp/$v-gpu/final.dat" && pass || fail "$v: GPU and CPU bits differ"
        variants=$((variants + 1))
      done
    done
  done
done
echo "   $variants variants compared"

echo "== numerical check on the GPU"
expect_exit 0 "check passes on a sound run" -- "$gflow" run workflows/wave2d.yaml --backend gpu --quiet \
  --set 'check={every: 64, fields: [U], max_abs: 100}' --out "$tmp/chk_ok"
expect_exit 76 "check stops a bad field" -- "$gflow" run workflows/wave2d.yaml --backend gpu \
  --set 'fields.V.init=vel + (i0 == 12 and i1 == 40) * 1e39' --set 'check={every: 7, fields: [U]}' \
  --out "$tmp/chk_bad"
expect_contains "$err" "gflow: check failed at step 6: field 'U' instance" "the GPU check names field and step"
echo "   $(echo "$err" | grep -m1 'check failed')"

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
sponge=$(dirname "$bin")/plugins/gflow_sponge.so
if [ -f "$sponge" ]; then
  echo "== the example GPU plugin (sponge)"
  expect_exit 0 "sponge on the GPU" -- "$gflow" run plugins/sponge.yaml --plugin "$sponge" \
    --backend gpu --quiet --out "$tmp/sponge-gpu"
  expect_exit 0 "sponge on the CPU" -- "$gflow" run plugins/sponge.yaml --plugin "$sponge" \
    --backend cpu --quiet --out "$tmp/sponge-cpu"
  # exp() of the GPU's math library and of glibc may differ in the last bit.
  "$bin/compare_raw" "$tmp/sponge-gpu/final.dat" "$tmp/sponge-cpu/final.dat" 65536 1e-4 >"$tmp/cmp" &&
    pass || fail "sponge GPU vs CPU: $(cat "$tmp/cmp")"
  echo "   GPU vs CPU: $(head -1 "$tmp/cmp")"
fi
expect_exit 70 "a device that does not exist" -- "$gflow" run workflows/wave2d.yaml --backend gpu --device 99 --out "$tmp/nodev"
echo "   $(echo "$err" | head -1)"
finish
