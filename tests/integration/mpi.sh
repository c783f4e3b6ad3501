#!/usr/bin/env bash
# mpi.sh GFLOW BLUR_SEED SOURCE_DIR - runs split over MPI ranks (mpirun, CPU
# backend): every decomposed run's output bit-identical to one process's,
# which is bit-identical to an independent reference (blur_seed); the
# boundary conditions, corners, uneven and explicit splits, overlap on and
# off, wave2d, ghost cells over channels (exchange.transport); errors; a stop on one rank stops all; a killed rank ends the job.
set -u
gflow=$1
blur_seed=$2
cd "$3" || exit 1
. tests/integration/lib.sh
if ! command -v mpirun >/dev/null; then
  echo "mpi.sh: mpirun not installed (apt-get install openmpi-bin libopenmpi-dev)" >&2
  exit 1
fi
# Open MPI keeps thousands of allocations until exit, and matching each
# against suppressions takes LeakSanitizer minutes: ranks under mpirun run
# without the leak check (the one-process runs here keep it, and every other
# test checks gflow's own code for leaks).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
mpi_asan=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}
[ "$mpi_asan" = "$ASAN_OPTIONS" ] && mpi_asan="$ASAN_OPTIONS:detect_leaks=0"
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than cores: ranks that wait yield the core instead of spinning
# (MPI's progress loop and OpenMP's idle threads), one OpenMP thread each.
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
mpi() { # mpi NP ARGS...: gflow on NP ranks
  local np=$1
  shift
  ASAN_OPTIONS=$mpi_asan timeout 300 mpirun -np "$np" -x ASAN_OPTIONS -x OMP_NUM_THREADS \
    -x OMP_WAIT_POLICY "$gflow" "$@"
}
blur=tests/mpi/blur.yaml

echo "== one process against the reference"
for bc in copy periodic fixed:0.5; do
  set_bc=$bc
  [ "${bc%%:*}" = fixed ] && set_bc="{fixed: ${bc#fixed:}}"
  expect_exit 0 "blur $bc, one process" -- "$gflow" run $blur --quiet --out "$tmp/one-${bc%%:*}" \
    --set "grid.boundary=$set_bc"
  "$blur_seed" "$tmp/ref-${bc%%:*}.dat" 49 39 2 12 "$bc"
  cmp -s "$tmp/ref-${bc%%:*}.dat" "$tmp/one-${bc%%:*}/x.dat" && pass ||
    fail "blur $bc: one process differs from the reference"
done

same() { # same WHAT DIR REF: DIR/x.dat is REF's bits
  cmp -s "$3" "$2/x.dat" && pass || fail "$1: output differs from one process's"
}

echo "== split over ranks: bit-identical to one process"
for np in 1 2 3 4; do
  expect_exit 0 "blur copy on $np ranks" -- mpi $np run $blur --quiet --out "$tmp/copy-$np"
  same "blur copy, $np ranks" "$tmp/copy-$np" "$tmp/one-copy/x.dat"
done
expect_exit 0 "corners off" -- mpi 4 run $blur --quiet --out "$tmp/nocorners" \
  --set exchange.corners=false
same "corners off, 4 ranks (a 5-point stencil reads no corner)" "$tmp/nocorners" "$tmp/one-copy/x.dat"
expect_exit 0 "overlap off" -- mpi 4 run $blur --quiet --out "$tmp/nooverlap" \
  --set exchange.overlap=false
same "overlap off, 4 ranks" "$tmp/nooverlap" "$tmp/one-copy/x.dat"
# Overlap's plan: the edges, one task per strip, go ahead of the ghost cells
# on the halo stream (high priority), and the interior waits for the last
# step's edges alone, never for its ghost cells.
ghost=workflows/ghost_exchange.yaml
expect_exit 0 "validate the overlap" -- "$gflow" validate $ghost --ranks 4 --set 'grid.shape=[44,44]'
expect_contains "$out" "streams   2: compute halo (high priority)" "the halo stream's priority"
expect_contains "$out" "ranks     4 as [2, 2], the plan of rank 0, at [0, 0]; ghost cells over mpi, corners on, overlap on" \
  "the split and how ghost cells travel"
for k in 0 1 2 3; do
  expect_contains "$out" "blur.edges[$k]  kernel   blur           on halo" "edge strip $k on the halo stream"
done
expect_contains "$out" "blur           kernel   blur           on compute" "the interior on the compute stream"
expect_exit 0 "validate rank 3 over channels" -- "$gflow" validate $ghost --ranks 4 --rank 3 \
  --set 'grid.shape=[44,44]' --set exchange.transport=channel --set exchange.protocol=packets \
  --set schedule=events
expect_contains "$out" "the plan of rank 3, at [1, 1]; ghost cells over channel (protocol packets), corners on, overlap off" \
  "rank 3's place, the channel's protocol, no overlap outside auto"
expect_exit 0 "dag of the overlap" -- "$gflow" dag $ghost --ranks 4 --set 'grid.shape=[44,44]' \
  --format mermaid --step 2
waits=$(python3 - "$out" <<'PY'
import re, sys
text = sys.argv[1]
names = dict(re.findall(r'^\s*(t\d+_\d+)\["([^<"]+)', text, re.M))
interior = [node for node, name in names.items() if name == "blur"][0]
print(" ".join(sorted({names[a] for a, why in re.findall(r'(t\d+_\d+) -\.?-?>\|"([^"]*)"\| ' + interior, text)
                      if why.endswith("(event)")})))
PY
)
[ "$waits" = "blur.edges[0]@n-1 blur.edges[1]@n-1 blur.edges[2]@n-1 blur.edges[3]@n-1" ] && pass ||
  fail "the interior waits across streams for '$waits', not the last step's edges alone"
expect_exit 0 "schedule sync" -- mpi 3 run $blur --quiet --out "$tmp/sync" --set schedule=sync
same "schedule sync, 3 ranks" "$tmp/sync" "$tmp/one-copy/x.dat"
expect_exit 0 "decomposition [1, 4]" -- mpi 4 run $blur --quiet --out "$tmp/d14" \
  --set 'decomposition=[1,4]'
same "decomposition [1, 4]" "$tmp/d14" "$tmp/one-copy/x.dat"
expect_exit 0 "decomposition [3, 1]" -- mpi 3 run $blur --quiet --out "$tmp/d31" \
  --set 'decomposition=[3,1]'
same "decomposition [3, 1]" "$tmp/d31" "$tmp/one-copy/x.dat"
for np in 2 4; do
  expect_exit 0 "periodic on $np ranks" -- mpi $np run $blur --quiet --out "$tmp/periodic-$np" \
    --set grid.boundary=periodic
  same "periodic, $np ranks" "$tmp/periodic-$np" "$tmp/one-periodic/x.dat"
done
expect_exit 0 "periodic [1, 2]" -- mpi 2 run $blur --quiet --out "$tmp/periodic-12" \
  --set grid.boundary=periodic --set 'decomposition=[1,2]'
same "periodic, decomposition [1, 2] (one rank wraps onto itself)" "$tmp/periodic-12" \
  "$tmp/one-periodic/x.dat"
expect_exit 0 "fixed on 3 ranks" -- mpi 3 run $blur --quiet --out "$tmp/fixed-3" \
  --set 'grid.boundary={fixed: 0.5}'
same "fixed, 3 ranks" "$tmp/fixed-3" "$tmp/one-fixed/x.dat"
expect_exit 0 "a trace of 2 ranks" -- mpi 2 run $blur --quiet --out "$tmp/traced" --trace "$tmp/trace.json"
python3 - "$tmp/trace.json" <<'PY' >"$tmp/trace.txt" && pass || fail "the trace of 2 ranks: $(cat "$tmp/trace.txt")"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
launches = {pid: sum(1 for e in events if e["ph"] == "X" and e["pid"] == pid and e["cat"] == "launch") for pid in names}
print(names, launches)
ok = sorted(names) == [1, 2] and all(f"rank {p - 1}" in n for p, n in names.items()) and all(launches.values())
sys.exit(0 if ok else 1)
PY
grep -q '"ranks": 4' "$tmp/copy-4/timings.json" && pass || fail "timings.json says 4 ranks"
grep -q '"per_rank": \[' "$tmp/copy-4/timings.json" && pass || fail "timings.json has per-rank figures"
grep -q '"shape": \[12, 49, 39\]' "$tmp/copy-4/x.dat.json" && pass ||
  fail "the sidecar gives the whole grid's shape: $(grep shape "$tmp/copy-4/x.dat.json")"
[ "$(find "$tmp/copy-4" -name '.*partial*' | wc -l)" -eq 0 ] && pass || fail "temporary files left"

echo "== wave2d split over ranks"
wave=(workflows/wave2d.yaml --quiet --set 'grid.shape=[64,64]')
expect_exit 0 "wave2d, one process" -- "$gflow" run "${wave[@]}" --out "$tmp/wave-1"
for np in 2 4; do
  expect_exit 0 "wave2d on $np ranks (events)" -- mpi $np run "${wave[@]}" --out "$tmp/wave-$np"
  cmp -s "$tmp/wave-1/array_out.dat" "$tmp/wave-$np/array_out.dat" && pass ||
    fail "wave2d on $np ranks differs from one process"
done
expect_exit 0 "wave2d on 4 ranks (auto, overlap)" -- mpi 4 run "${wave[@]}" --set schedule=auto \
  --out "$tmp/wave-auto"
cmp -s "$tmp/wave-1/array_out.dat" "$tmp/wave-auto/array_out.dat" && pass ||
  fail "wave2d on 4 ranks under auto differs from one process"
# batches of 5 planes (staged directly on the CPU backend): each rank's
# batch holds its block's planes, a batch goes out plane by plane (MPI-IO), the last
# one (157 = 31 x 5 + 2 planes) flushed at the end
expect_exit 0 "wave2d on 4 ranks, batches of 5" -- mpi 4 run "${wave[@]}" \
  --set loop.tasks.1.output.batch=5 --out "$tmp/wave-batch"
cmp -s "$tmp/wave-1/array_out.dat" "$tmp/wave-batch/array_out.dat" && pass ||
  fail "wave2d on 4 ranks in batches of 5 differs from one process"

echo "== exchange.transport channel (shared memory between the ranks): the bits of mpi and of one process"
chan=(--set exchange.transport=channel)
for np in 2 4; do
  expect_exit 0 "blur over channels on $np ranks" -- mpi $np run $blur --quiet --out "$tmp/chan-$np" \
    "${chan[@]}"
  same "blur over channels, $np ranks" "$tmp/chan-$np" "$tmp/one-copy/x.dat"
  cmp -s "$tmp/copy-$np/x.dat" "$tmp/chan-$np/x.dat" && pass ||
    fail "blur over channels on $np ranks differs from transport mpi"
  expect_exit 0 "periodic over channels on $np ranks" -- mpi $np run $blur --quiet \
    --out "$tmp/chan-periodic-$np" --set grid.boundary=periodic "${chan[@]}"
  same "periodic over channels, $np ranks" "$tmp/chan-periodic-$np" "$tmp/one-periodic/x.dat"
done
# the strips here are small, so auto sends them as packets; signals (a put
# with signal into the inbox, waits, the inbox copied out) gives the same bits
for np in 2 4; do
  expect_exit 0 "blur over channels on $np ranks, protocol signals" -- mpi $np run $blur --quiet \
    --out "$tmp/chan-signals-$np" "${chan[@]}" --set exchange.protocol=signals
  same "blur over channels with signals, $np ranks" "$tmp/chan-signals-$np" "$tmp/one-copy/x.dat"
done
expect_exit 0 "periodic over channels on 2 ranks, protocol signals" -- mpi 2 run $blur --quiet \
  --out "$tmp/chan-periodic-signals" --set grid.boundary=periodic "${chan[@]}" \
  --set exchange.protocol=signals
same "periodic over channels with signals, 2 ranks" "$tmp/chan-periodic-signals" "$tmp/one-periodic/x.dat"
expect_exit 0 "channels, [1, 2] periodic" -- mpi 2 run $blur --quiet --out "$tmp/chan-periodic-12" \
  --set grid.boundary=periodic --set 'decomposition=[1,2]' "${chan[@]}"
same "channels, decomposition [1, 2] periodic (a rank's channel to itself)" \
  "$tmp/chan-periodic-12" "$tmp/one-periodic/x.dat"
expect_exit 0 "channels, one process, periodic" -- "$gflow" run $blur --quiet \
  --out "$tmp/chan-periodic-1" --set grid.boundary=periodic "${chan[@]}"
same "channels, one process (periodic: its own channel)" "$tmp/chan-periodic-1" "$tmp/one-periodic/x.dat"
expect_exit 0 "channels, 3 ranks, sync" -- mpi 3 run $blur --quiet --out "$tmp/chan-sync" \
  --set schedule=sync "${chan[@]}"
same "channels, schedule sync, 3 ranks" "$tmp/chan-sync" "$tmp/one-copy/x.dat"
expect_exit 0 "channels, 4 ranks, overlap off" -- mpi 4 run $blur --quiet --out "$tmp/chan-nooverlap" \
  --set exchange.overlap=false "${chan[@]}"
same "channels, overlap off, 4 ranks" "$tmp/chan-nooverlap" "$tmp/one-copy/x.dat"
expect_exit 0 "wave2d over channels on 4 ranks (auto)" -- mpi 4 run "${wave[@]}" --set schedule=auto \
  "${chan[@]}" --out "$tmp/wave-chan"
cmp -s "$tmp/wave-1/array_out.dat" "$tmp/wave-chan/array_out.dat" && pass ||
  fail "wave2d over channels on 4 ranks differs from one process"
# schedule graph: the exchange's host calls end the graphs; over MPI and over channels
for transport in mpi channel; do
  expect_exit 0 "wave2d on 2 ranks (graph, $transport)" -- mpi 2 run "${wave[@]}" \
    --set schedule=graph --set exchange.transport=$transport --set loop.tasks.1.output.batch=4 \
    --out "$tmp/wave-graph-$transport"
  cmp -s "$tmp/wave-1/array_out.dat" "$tmp/wave-graph-$transport/array_out.dat" && pass ||
    fail "wave2d on 2 ranks under graph ($transport) differs from one process"
done
leaked=""
for f in /dev/shm/gflow-chan-*; do # gflow-chan-PID-N whose process is gone: a region nobody removed
  [ -e "$f" ] || continue
  pid=${f#/dev/shm/gflow-chan-}
  pid=${pid%%-*}
  kill -0 "$pid" 2>/dev/null || leaked="$leaked $f"
done
[ -z "$leaked" ] && pass || fail "shared memory left behind by channel runs:$leaked"

echo "== the built-in kernels split over ranks (3-D, halo 4, point sources, a pattern field)"
for wf in wave3d heat; do
  expect_exit 0 "$wf, one process" -- "$gflow" run "workflows/$wf.yaml" --quiet --set schedule=auto \
    --out "$tmp/$wf-1"
  expect_exit 0 "$wf on 2 ranks" -- mpi 2 run "workflows/$wf.yaml" --quiet --set schedule=auto \
    --out "$tmp/$wf-2"
  cmp -s "$tmp/$wf-1/final.dat" "$tmp/$wf-2/final.dat" && pass || fail "$wf on 2 ranks differs"
done

echo "== hdf5 outputs split over ranks (parallel HDF5): the one-process file"
if command -v h5dump >/dev/null; then
  h5=(--set loop.tasks.1.output.format=hdf5 --set loop.tasks.1.output.file=x.h5)
  dataset() { h5dump -d "/$2" -b LE -o "$tmp/dataset.bin" "$1" >/dev/null 2>&1 && cat "$tmp/dataset.bin"; }
  scales() { h5dump -A 0 -d /step -d /time -d /x0 -d /x1 "$1" 2>&1 | sed 1d; }
  expect_exit 0 "blur hdf5, one process" -- "$gflow" run $blur "${h5[@]}" --quiet --out "$tmp/h5-1"
  dataset "$tmp/h5-1/x.h5" x | cmp -s - "$tmp/one-copy/x.dat" && pass ||
    fail "blur hdf5, one process: the dataset differs from the raw file"
  # uneven blocks (3 ranks), a split along the fast axis ([1, 4]), and wave2d
  for run in "3|" "4|--set decomposition=[1,4]"; do
    np=${run%%|*} extra=${run#*|}
    # shellcheck disable=SC2086
    expect_exit 0 "blur hdf5 on $np ranks $extra" -- mpi "$np" run $blur "${h5[@]}" $extra --quiet \
      --out "$tmp/h5-$np"
    dataset "$tmp/h5-$np/x.h5" x | cmp -s - "$tmp/one-copy/x.dat" && pass ||
      fail "blur hdf5 on $np ranks: the dataset differs from one process's"
    [ "$(scales "$tmp/h5-1/x.h5")" = "$(scales "$tmp/h5-$np/x.h5")" ] && pass ||
      fail "blur hdf5 on $np ranks: the step, time and cell scales differ from one process's"
    cmp -s "$tmp/h5-1/x.h5.xdmf" "$tmp/h5-$np/x.h5.xdmf" && pass ||
      fail "blur hdf5 on $np ranks: the XDMF differs from one process's"
    expect_contains "$(h5dump -a /ranks "$tmp/h5-$np/x.h5")" "(0): $np" "the file says $np ranks"
    expect_contains "$(h5dump -a /complete "$tmp/h5-$np/x.h5")" "(0): TRUE" "$np ranks: complete"
  done
  wave_h5=(--set loop.tasks.1.output.format=hdf5 --set loop.tasks.1.output.file=u.h5)
  expect_exit 0 "wave2d hdf5 on 2 ranks" -- mpi 2 run "${wave[@]}" "${wave_h5[@]}" --out "$tmp/wave-h5"
  dataset "$tmp/wave-h5/u.h5" U | cmp -s - "$tmp/wave-1/array_out.dat" && pass ||
    fail "wave2d hdf5 on 2 ranks differs from one process's raw file"
  expect_exit 0 "wave2d hdf5 on 2 ranks, batches of 5" -- mpi 2 run "${wave[@]}" "${wave_h5[@]}" \
    --set loop.tasks.1.output.batch=5 --out "$tmp/wave-h5-batch"
  dataset "$tmp/wave-h5-batch/u.h5" U | cmp -s - "$tmp/wave-1/array_out.dat" && pass ||
    fail "wave2d hdf5 on 2 ranks in batches of 5 differs from one process's raw file"
else
  echo "mpi.sh: h5dump not installed (apt-get install hdf5-tools): hdf5 under MPI not tested" >&2
  [ "${CI:-}" = true ] && fail "CI needs h5dump"
fi

echo "== errors"
expect_exit 65 "an unknown transport" -- mpi 2 run $blur --quiet --out "$tmp/transport" \
  --set exchange.transport=shm
expect_contains "$err" "--set exchange.transport=shm:1:20: unknown transport 'shm'; expected one of: mpi, channel" "the transport is checked at the key"
expect_exit 65 "decomposition for another rank count" -- mpi 3 run workflows/ghost_exchange.yaml \
  --set 'grid.shape=[44,44]' --out "$tmp/wrong"
expect_contains "$err" "ghost_exchange.yaml:22:16: decomposition [2, 2] needs 4 ranks; this run has 3 (start it with mpirun -np 4, or change the decomposition)" "the rank count is refused at the key"
[ "$(printf '%s\n' "$err" | grep -c 'needs 4 ranks')" -eq 1 ] && pass ||
  fail "the workflow's error is said once (rank 0), not by every rank: $err"
expect_exit 65 "a share smaller than the halo" -- "$gflow" validate $blur --ranks 512
expect_contains "$err" "blur.yaml:11:16: decomposition [32, 16] leaves a rank 1 cells along axis 0, fewer than the halo of 2: use fewer ranks along that axis" "a share below the halo"
expect_exit 64 "srun without PMI" -- env SLURM_STEP_NUM_TASKS=2 "$gflow" run $blur --out "$tmp/srun"
expect_contains "$err" "Slurm started 2 tasks for this step, but MPI sees one rank" "srun without --mpi=pmix"

echo "== stopping together"
long=(tests/mpi/blur.yaml --set 'grid.shape=[204,204]' --set params.steps=100000
  --set 'loop.tasks.1.when=n % 1000 == 0' --set 'loop.tasks.1.output.plane=n // 1000'
  --set loop.tasks.1.output.planes=100)
rank_pid() { # rank_pid R PATTERN: the pid of MPI rank R of the gflow whose command line has PATTERN
  local p
  for p in $(pgrep -f "gflow run .*$2"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo "$p"
  done | head -1
}
started() { # started DIR: the time loop runs (its output file is open)
  for _ in $(seq 600); do
    compgen -G "$1/.x.dat.partial-*" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}
signal_rank_1() { # signal_rank_1 SIGNAL NAME: a long run on 2 ranks, rank 1 signalled
  mpi 2 run "${long[@]}" --out "$tmp/$2" 2>"$tmp/$2.err" &
  local job=$!
  started "$tmp/$2" && sleep 1
  kill -"$1" "$(rank_pid 1 "$tmp/$2")" 2>/dev/null
  wait $job
}
signal_rank_1 TERM stop
status=$?
[ "$status" -ne 0 ] && pass || fail "SIGTERM to rank 1: mpirun exited 0"
expect_contains "$(cat "$tmp/stop.err")" "gflow: rank 0: interrupted by SIGTERM at step" "every rank stops on rank 1's signal"
grep -q '"complete": false' "$tmp/stop/x.dat.json" && pass || fail "the stopped run's sidecar says incomplete"
[ "$(grep -c 'interrupted by SIGTERM at step' "$tmp/stop.err")" -eq 1 ] && pass ||
  fail "rank 0 speaks for the job once: $(cat "$tmp/stop.err")"
if command -v h5dump >/dev/null; then # the same with an HDF5 output: complete FALSE
  mpi 2 run "${long[@]}" --set loop.tasks.1.output.format=hdf5 --set loop.tasks.1.output.file=x.h5 \
    --out "$tmp/stop-h5" 2>"$tmp/stop-h5.err" &
  job=$!
  for _ in $(seq 600); do # until the loop runs: its temporary file is there
    compgen -G "$tmp/stop-h5/.x.h5.partial-*" >/dev/null && break
    sleep 0.1
  done
  pid=$(rank_pid 1 "$tmp/stop-h5")
  sleep 1
  kill -TERM "$pid" 2>/dev/null
  wait $job
  expect_contains "$(h5dump -a /complete "$tmp/stop-h5/x.h5" 2>&1)" "(0): FALSE" \
    "a stopped hdf5 run on 2 ranks says complete FALSE"
  expect_contains "$(h5dump -a /interrupted_by "$tmp/stop-h5/x.h5" 2>&1)" '"SIGTERM"' \
    "a stopped hdf5 run on 2 ranks: interrupted_by"
fi

bad=(workflows/wave2d.yaml --set 'grid.shape=[64,64]' --set 'fields.V.init=vel + (i0 == 50 and i1 == 40) * 1e39'
  --set 'check={every: 7, fields: [U]}')
expect_exit 76 "the check on one rank stops all" -- mpi 2 run "${bad[@]}" --out "$tmp/check"
expect_contains "$err" "gflow: rank 1: check failed at step 6: field 'U' instance" "the failing rank names itself"
expect_contains "$err" "at cell [" "the cell is in the grid's indices"
grep -q '"complete": false' "$tmp/check/array_out.dat.json" && pass || fail "the checked run's sidecar says incomplete"

signal_rank_1 KILL kill
status=$?
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] && pass || fail "a killed rank: mpirun exit $status"
expect_contains "$(cat "$tmp/kill.err")" "exited on signal 9 (Killed)" "mpirun says which rank died"
[ ! -e "$tmp/kill/x.dat" ] && pass || fail "a killed job left x.dat under its final name"
finish
