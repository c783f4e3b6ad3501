#!/usr/bin/env bash
# check.sh - the GPU test suite, run on a machine with a GPU (binaries from
# scripts/gpu/build-nvidia.sh in .device/bin, or BIN=DIR):
#   1. the GPU backend's ops-level test;
#   2. every workflow in workflows/ under every schedule and memory strategy on
#      the GPU: outputs bit-identical across GPU schedules and strategies, and
#      within 1e-5 of the field maximum against the CPU backend;
#   3. seeing a run: pictures (the CPU's bits), --timing's sample, a trace,
#      NVTX ranges (counted by libnvtx_count.so);
#   4. checkpoint and restart: runs killed after a checkpoint (every schedule) or
#      stopped by SIGUSR1, restarted, bit-identical to an uninterrupted run;
#   5. the pool's race (workflows/scratch_race.yaml, seed 002): the
#      resource-aware and async pools write the preallocated run's bits, the
#      naive pool does not and its report names the hazard; per-step
#      temporaries (wave2d_scratch.yaml) write wave2d.yaml's bits;
#   6. faults: out of memory, a device that does not exist;
#   7. MPI: 2 and 4 ranks sharing the GPU, ghost cells through MPI and through
#      channels (exchange.transport: channel, IPC on one device; as packets
#      and with signals), bit-identical to one rank.
# After 2, batched snapshot IO: the seed under every schedule and batch (and
# hdf5, with h5dump) bit-identical to a copy per plane; in 4, the staging
# budget of 8192^2 planes.
# Ends with `N passed, N failed`.
# CHECK_SECTIONS (names, space- or comma-separated; default all) runs only
# those sections: backend, workflows, batched, pool, kernels, check, mpi,
# seeing, checkpoint, faults. `CHECK_SECTIONS=kernels scripts/gpu/check.sh`
# is the GPU-against-CPU bits of wave, heat and stencil alone (a few
# minutes).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-.device/bin}
gflow=$bin/gflow
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gflow-gpu-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. tests/integration/lib.sh

all_sections="backend workflows batched pool kernels check mpi seeing checkpoint faults"
wanted=" ${CHECK_SECTIONS:-$all_sections} "
wanted=${wanted//,/ }
for name in $wanted; do
  [[ " $all_sections " == *" $name "* ]] || { echo "CHECK_SECTIONS: no section '$name' (sections: $all_sections)" >&2; exit 64; }
done
# needs PROGRAM...: stops the run, saying which, when BIN lacks a program
# that build-nvidia.sh puts beside gflow (a folder of fd-tiles.sh's variants
# holds gflow alone)
needs() {
  for p in "$@"; do
    [ -x "$bin/$p" ] || { echo "check.sh: $bin/$p is missing (scripts/gpu/build-nvidia.sh builds it beside gflow)" >&2; exit 66; }
  done
}
# section NAME TITLE: true, with TITLE as a heading, when NAME is wanted
section() {
  [[ $wanted == *" $1 "* ]] || return 1
  echo "== $2"
}

if section backend "GPU backend, ops level"; then
  needs test_backend_gpu
  "$bin/test_backend_gpu" --require-gpu && pass || fail "test_backend_gpu"
fi
if section workflows "every workflow under every schedule and memory strategy"; then
  needs compare_raw
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
      for schedule in sync streams events graph auto; do
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
fi
if section batched "batched snapshot IO on the GPU (the seed workload)"; then
  # A copy per plane under events is the reference; every schedule with the
  # batch gflow chooses (16 planes), a batch that leaves a partial one at the
  # end (3: 637 = 212 x 3 + 1) and 64, bit for bit; hdf5 too (with h5dump).
  seed=("$gflow" run workflows/wave2d.yaml --backend gpu --quiet)
  expect_exit 0 "seed, a copy per plane" -- "${seed[@]}" --set loop.tasks.1.output.batch=1 --out "$tmp/b-ref"
  schedules="sync streams events graph auto"
  "$gflow" validate workflows/wave2d.yaml --set schedule=graph >/dev/null 2>&1 && schedules+=" graph"
  same_batches=0
  for schedule in $schedules; do
    for batch in auto 3 64; do
      sets=(--set schedule=$schedule)
      [ "$batch" = auto ] || sets+=(--set loop.tasks.1.output.batch=$batch)
      dir=$tmp/b-$schedule-$batch
      expect_exit 0 "seed $schedule batch $batch" -- "${seed[@]}" "${sets[@]}" --out "$dir"
      if cmp -s "$dir/array_out.dat" "$tmp/b-ref/array_out.dat"; then
        pass
        same_batches=$((same_batches + 1))
      else
        fail "seed $schedule batch $batch: array_out.dat differs from a copy per plane"
      fi
      rm -rf "$dir"
    done
  done
  echo "   $same_batches batched runs wrote the copy-per-plane run's array_out.dat bit for bit"
  if command -v h5dump >/dev/null; then
    h5=(--set loop.tasks.1.output.format=hdf5 --set loop.tasks.1.output.file=u.h5)
    for batch in 1 16 3; do
      expect_exit 0 "seed hdf5 batch $batch" -- "${seed[@]}" "${h5[@]}" \
        --set loop.tasks.1.output.batch=$batch --out "$tmp/h5-$batch"
      h5dump -d /U -b LE -o "$tmp/h5-$batch.bin" "$tmp/h5-$batch/u.h5" >/dev/null 2>&1
      cmp -s "$tmp/h5-$batch.bin" "$tmp/b-ref/array_out.dat" && pass ||
        fail "seed hdf5 batch $batch: the dataset differs from the raw file"
    done
    echo "   hdf5, batches 1, 16 and 3: the raw file's values"
  else
    echo "   (no h5dump: hdf5 not compared)"
  fi
fi
if section pool "the pool's race on the GPU (scratch_race.yaml, a slow kernel of 8192^2)"; then
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
fi
if section kernels "wave, heat, stencil: every dimension, order and dtype, GPU bits against the CPU"; then
  # One small workflow per variant (scripts/bench/kernel-workflow.sh), with a
  # pattern field, point sources (two on one cell) and a stencil of three
  # inputs; kernels are built without contraction, so the bits must match.
  # Two grids each: rows whose length is a multiple of 4 (the tiles' vector
  # loads, kernels/fd_gpu.h) and odd rows (one cell a thread).
  variants=0
  for shapes in "4099 131,97 37,29,45" "4096 132,96 37,29,44"; do
    for kernel in wave heat stencil; do
      for ndim in 1 2 3; do
        for dtype in f32 f64; do
          for order in 2 4 8; do
            shape=$(echo "$shapes" | cut -d' ' -f"$ndim")
            v=$kernel-$ndim-$dtype-$order-${shape//,/x}
            scripts/bench/kernel-workflow.sh "$kernel" "$dtype" "$order" "$shape" 30 --forcing >"$tmp/$v.yaml"
            expect_exit 0 "$v on the CPU" -- "$gflow" run "$tmp/$v.yaml" --backend cpu --quiet --out "$tmp/$v-cpu"
            expect_exit 0 "$v on the GPU" -- "$gflow" run "$tmp/$v.yaml" --backend gpu --quiet --out "$tmp/$v-gpu"
            cmp -s "$tmp/$v-cpu/final.dat" "$tmp/$v-gpu/final.dat" && pass || fail "$v: GPU and CPU bits differ"
            variants=$((variants + 1))
            rm -rf "$tmp/$v-cpu" "$tmp/$v-gpu"
          done
        done
      done
    done
  done
  echo "   $variants variants compared"
  # Random grids, halos and boxes (any sub-box), launched directly: where the
  # workflows' interiors do not reach (tests/gpu/fd_random.cpp)
  needs fd_random
  "$bin/fd_random" 1500 >"$tmp/fd_random" && pass || fail "fd_random: $(grep -m3 FAIL "$tmp/fd_random")"
  echo "   fd_random: $(tail -1 "$tmp/fd_random")"
fi
if section check "numerical check on the GPU"; then
  expect_exit 0 "check passes on a sound run" -- "$gflow" run workflows/wave2d.yaml --backend gpu --quiet \
    --set 'check={every: 64, fields: [U], max_abs: 100}' --out "$tmp/chk_ok"
  expect_exit 76 "check stops a bad field" -- "$gflow" run workflows/wave2d.yaml --backend gpu \
    --set 'fields.V.init=vel + (i0 == 12 and i1 == 40) * 1e39' --set 'check={every: 7, fields: [U]}' \
    --out "$tmp/chk_bad"
  expect_contains "$err" "gflow: check failed at step 6: field 'U' instance" "the GPU check names field and step"
  echo "   $(echo "$err" | grep -m1 'check failed')"
fi
if section mpi "MPI: ranks sharing the GPU, bit-identical to one rank"; then
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
        # The ghost cells through channels (IPC memory of the GPUs), as
        # packets (auto, for these strips) and with signals: the same bits. A
        # wait that never ends is a timeout.
        for protocol in auto signals; do
          rm -rf "$dir-chan"
          expect_exit 0 "$wf on $np ranks, transport channel, $protocol" -- timeout 300 mpirun \
            -np "$np" "$gflow" run "$wf" --backend gpu --quiet --out "$dir-chan" "$@" \
            --set decomposition=auto --set exchange.transport=channel --set exchange.protocol=$protocol
          cmp -s "$one/$file" "$dir-chan/$file" && pass ||
            fail "$wf on $np ranks over channels ($protocol) differs from one rank"
        done
      done
      echo "   $wf $*: 2 and 4 ranks on the GPU, transport mpi and channel (packets, signals), same bits as one rank"
    done
  else
    echo "   mpirun not found: skipped"
  fi
fi
if section seeing "seeing a run on the GPU"; then
  # the image task: the GPU run draws the CPU run's pictures, bit for bit
  expect_exit 0 "pictures on the CPU" -- "$gflow" run tests/integration/image.yaml --backend cpu --quiet --out "$tmp/im-cpu"
  expect_exit 0 "pictures on the GPU" -- "$gflow" run tests/integration/image.yaml --backend gpu --quiet --out "$tmp/im-gpu"
  pictures=$(cd "$tmp/im-cpu" && ls ./*.png | sed 's|^\./||')
  [ "$(echo "$pictures" | wc -w)" -eq 5 ] && pass || fail "pictures: $pictures"
  for f in $pictures; do cmp -s "$tmp/im-cpu/$f" "$tmp/im-gpu/$f" && pass || fail "$f differs between CPU and GPU"; done
  # --timing times one in 16 instances of each task and scales up
  expect_exit 0 "--timing" -- "$gflow" run workflows/wave2d.yaml --backend gpu --timing --out "$tmp/timing"
  expect_contains "$err" "busy times: measured on 1 in 16 instances of each task" "the report says it sampled"
  grep -q '"name": "step", "kind": "kernel", "count": 640, "timed": 40, "busy_ms": [0-9]' "$tmp/timing/timings.json" &&
    pass || fail "step: 40 of 640 timed: $(grep '"step"' "$tmp/timing/timings.json")"
  echo "   $(grep -m1 '^  step ' <<<"$err")"
  # a trace of steps 100..109: each launch and copy once with its arguments, counters
  # (a copy per plane, batch: 1: one copy per step; batched, every 16th step has two)
  expect_exit 0 "--trace" -- "$gflow" run workflows/wave2d.yaml --backend gpu --quiet --out "$tmp/trace" \
    --trace "$tmp/trace.json" --trace-steps 100:110 --set loop.tasks.1.output.batch=1
  python3 - "$tmp/trace.json" <<'PY' >"$tmp/trace.txt" && pass || fail "the GPU trace: $(cat "$tmp/trace.txt")"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
x = [e for e in events if e["ph"] == "X" and 100 <= e["args"]["step"] < 110]
launches = sorted(e["args"]["step"] for e in x if e["cat"] == "launch" and tracks[e["tid"]] == "compute" and "amplitude" in e["args"] and e["args"].get("dt", 0) > 0)
copies = sorted(e["args"]["step"] for e in x if e["cat"] == "copy" and tracks[e["tid"]].startswith("io["))
counters = {e["name"] for e in events if e["ph"] == "C"}
ok = launches == list(range(100, 110)) and copies == list(range(100, 110)) and {"memory held: device", "memory held: pinned", "output staging buffers in use"} <= counters
print(f"launches {launches}, copies {copies}, counters {sorted(counters)}")
sys.exit(0 if ok else 1)
PY
  # NVTX: a range per launch and copy, named by its task, the step its payload
  # (an injection library counts them: no Nsight Systems needed)
  if [ -f "$bin/libnvtx_count.so" ]; then
    expect_exit 0 "NVTX ranges" -- env NVTX_INJECTION64_PATH="$(realpath "$bin/libnvtx_count.so")" \
      "$gflow" run workflows/wave2d.yaml --backend gpu --quiet --out "$tmp/nvtx" \
      --set loop.tasks.1.output.batch=1
    expect_contains "$err" "nvtx_count: domain gflow: step 640 ranges (payload 0..639)" "a range per launch"
    expect_contains "$err" "nvtx_count: domain gflow: snapshot 637 ranges (payload 2..638)" "a range per copy"
    expect_contains "$err" "nvtx_count: 0 unbalanced, 0 unregistered" "ranges closed, names registered"
  fi
fi
if section checkpoint "checkpoint and restart on the GPU"; then
  # 8192^2 x 6000 steps (a few seconds), a plane every 1000 steps, a checkpoint
  # every 1500: long enough to be killed after a checkpoint or signalled.
  ck=("$gflow" run workflows/wave2d.yaml --backend gpu --quiet --set 'grid.shape=[8192,8192]'
    --set loop.steps=6000 --set 'loop.tasks.1.when=n % 1000 == 2'
    --set 'loop.tasks.1.output.plane=n // 1000' --set loop.tasks.1.output.planes=6
    --set checkpoint.every=1500)
  expect_exit 0 "checkpointed run, uninterrupted" -- "${ck[@]}" --out "$tmp/ck-ref"
  # 256 MiB planes: the default staging budget is two planes (512 MiB), not the
  # old rule's eight (2 GiB)
  expect_contains "$(cat "$tmp/ck-ref/run.json")" '"staging": 2, "staging_budget": 536870912}' \
    "8192^2 planes: two staging buffers"
  for schedule in sync streams events graph auto; do
    dir=$tmp/ck-kill-$schedule
    "${ck[@]}" --set schedule=$schedule --out "$dir" 2>"$dir.err" &
    pid=$!
    if wait_for "$dir/checkpoint/checkpoint.txt" 120; then
      kill -s KILL "$pid"
      wait "$pid" 2>/dev/null
      step=$(sed -n 's/^step //p' "$dir/checkpoint/checkpoint.txt")
      expect_exit 0 "$schedule: restart after SIGKILL at step $step" -- \
        "${ck[@]}" --set schedule=$schedule --restart "$dir"
      cmp -s "$dir/array_out.dat" "$tmp/ck-ref/array_out.dat" && pass ||
        fail "$schedule: killed at step $step and restarted: array_out.dat differs"
      echo "   $schedule: killed after the checkpoint at step $step, restarted: $(cmp -s "$dir/array_out.dat" "$tmp/ck-ref/array_out.dat" && echo bit-identical || echo DIFFERS)"
    else
      fail "$schedule: no checkpoint appeared: $(cat "$dir.err")"
    fi
    rm -rf "$dir"
  done
  dir=$tmp/ck-usr1
  "${ck[@]}" --out "$dir" 2>"$dir.err" &
  pid=$!
  wait_for "$dir/.array_out.dat.partial*" && sleep 1
  kill -s USR1 "$pid"
  wait "$pid" && status=0 || status=$?
  [ "$status" -eq 75 ] && pass || fail "SIGUSR1: exit $status, expected 75: $(cat "$dir.err")"
  expect_exit 0 "restart after SIGUSR1" -- "${ck[@]}" --restart "$dir"
  cmp -s "$dir/array_out.dat" "$tmp/ck-ref/array_out.dat" && pass || fail "SIGUSR1, restarted: array_out.dat differs"
  echo "   SIGUSR1: $(grep -m1 -o 'checkpointed at step [0-9]*' "$dir.err"), restarted: $(cmp -s "$dir/array_out.dat" "$tmp/ck-ref/array_out.dat" && echo bit-identical || echo DIFFERS)"
  rm -rf "$dir" "$tmp/ck-ref"
fi
if section faults "faults"; then
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
    needs compare_raw
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
fi
finish
